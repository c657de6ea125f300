import type { ChangeRequestView } from "../../changes/views";
import type { BaseView, FieldView } from "../../content/bases";
import { FIELD_TRAITS, FIELD_TYPES, type FieldType, traitsOf } from "../../shared/field-types";
import { slugFrom } from "../../shared/formats";
import { api } from "./api";
import { fill, h } from "./dom";
import type { ConversionPart, SettingsPart } from "./kinds/kind";
import { PAGE_KINDS } from "./kinds/registry";
import { checkbox, dialogForm, failureText, input, select } from "./ui";
import type { ConvertPreview } from "../../content/field-convert";
import { conversionWords } from "./field-previews";

/**
 * Fields managed from the grid (docs/admin.md, "Fields"): a field is added, edited, duplicated,
 * hidden or deleted from its column. Each change is a field change request: made, renamed or
 * given new options at once where the level allows; a conversion or a deletion always waits for
 * review, saying first what it loses. What each type asks for comes from its page kind (`kinds/`).
 */

export interface FieldChanges {
  base: BaseView;
  /** After a change: merged (the grid is drawn again) or waiting (its change request opens). */
  done(changeRequest: ChangeRequestView): void;
}

type Options = Record<string, unknown>;

const typeChoices = (types: readonly FieldType[]) => types.map((type) => ({ value: type, label: FIELD_TRAITS[type].label }));

/** What a type asks for beside its name (its kind's settings: choices, a link's target, a lookup's path, a formula, a rating's stars), or nothing. */
function optionsPart(type: FieldType, base: BaseView, bases: BaseView[], options: Options, field?: FieldView): SettingsPart | null {
  const links = base.fields.filter((candidate) => traitsOf(candidate.type).source === "links");
  return PAGE_KINDS[type].settings?.({ base, bases, links, options, field }) ?? null;
}

const propose = (changes: FieldChanges, body: Record<string, unknown>) => api<ChangeRequestView>("POST", `/bases/${changes.base.id}/fields/change-requests`, body).then(changes.done);

/** The "+" at the end of the header, and "Duplicate": a new field, its slug made from its name unless typed. */
export async function addField(changes: FieldChanges, from?: FieldView): Promise<void> {
  const { base } = changes;
  const bases = await api<BaseView[]>("GET", "/bases");
  const name = input("Name", "name", { required: true, value: from ? `${from.name} copy` : "" });
  const slug = input("Slug", "slug", { required: true, hint: "How agents and the API name it: lower-case letters, digits, dashes." });
  const nameInput = name.querySelector("input")!;
  const slugInput = slug.querySelector("input")!;
  let slugTyped = false;
  const deriveSlug = () => {
    if (slugTyped) return;
    let candidate = slugFrom(nameInput.value) || "field";
    for (let n = 2; base.fields.some((field) => field.slug === candidate); n++) candidate = `${slugFrom(nameInput.value) || "field"}-${n}`;
    slugInput.value = candidate;
  };
  nameInput.addEventListener("input", deriveSlug);
  slugInput.addEventListener("input", () => (slugTyped = true));
  deriveSlug();
  const type = select("Type", "type", typeChoices(FIELD_TYPES), from?.type ?? "text");
  const typeSelect = type.querySelector("select")!;
  const required = checkbox("Required", "required", from?.required ?? false);
  const optionsSlot = h("div", { class: "field-options" });
  let part: SettingsPart | null = null;
  const drawOptions = () => {
    const chosen = typeSelect.value as FieldType;
    part = optionsPart(chosen, base, bases, from && from.type === chosen ? from.options : {});
    fill(optionsSlot, part?.node ?? null);
    required.hidden = FIELD_TRAITS[chosen].computed;
  };
  typeSelect.addEventListener("change", drawOptions);
  drawOptions();
  dialogForm(from ? `Duplicate ${from.name}` : `New field in ${base.name}`, [name, slug, type, required, optionsSlot], "Add field", () => {
    const chosen = typeSelect.value as FieldType;
    const options = part?.read();
    return propose(changes, {
      operation: "create",
      name: nameInput.value.trim(),
      slug: slugInput.value.trim(),
      type: chosen,
      ...(FIELD_TRAITS[chosen].computed ? {} : { required: required.querySelector("input")!.checked }),
      ...(options ? { options } : {}),
    });
  });
}

/**
 * "Edit field": its name, whether it is required and its options, changed at once where the level
 * allows; another type is a conversion, previewed first (how many values carry over, how many are
 * lost) and always left for review.
 */
export async function editField(changes: FieldChanges, field: FieldView): Promise<void> {
  const { base } = changes;
  const bases = await api<BaseView[]>("GET", "/bases");
  const traits = traitsOf(field.type);
  const name = input("Name", "name", { required: true, value: field.name });
  const required = traits.computed ? null : checkbox("Required", "required", field.required);
  const convertible = FIELD_TYPES.filter((type) => !FIELD_TRAITS[type].computed);
  const type = traits.computed ? null : select("Type", "type", typeChoices(convertible), field.type, "Another type converts every value: you see what carries over before it is proposed.");
  // A link keeps the base it links to (its inverse lives there); what else a type asks for may change.
  const part = traits.source === "links" ? null : optionsPart(field.type as FieldType, base, bases, field.options, field);
  const preview = h("p", { class: "convert-preview", role: "status" });
  const typeSelect = type?.querySelector("select");
  // What a conversion into the type chosen asks (its kind's part): drawn while that type is chosen, and only then.
  const convertSlot = h("div", { class: "convert-options" });
  let converting: ConversionPart | null = null;
  const conversion = () => ({ fieldId: field.id, newType: typeSelect!.value as FieldType, ...converting?.read() });
  let asked = 0;
  const showPreview = async () => {
    const mine = ++asked;
    preview.textContent = "";
    const newType = typeSelect!.value as FieldType;
    if (newType === field.type) return;
    try {
      const seen = await api<ConvertPreview>("POST", `/bases/${base.id}/fields/convert/preview`, conversion());
      if (mine !== asked) return;
      preview.textContent = `${conversionWords({ fieldName: field.name, fromType: field.type, toType: newType, counts: seen, lost: seen.conflicts, unmatched: seen.unmatched, ambiguous: seen.ambiguous })} The conversion waits for review.`;
    } catch (failure) {
      if (mine === asked) preview.textContent = failureText(failure);
    }
  };
  typeSelect?.addEventListener("change", () => {
    const newType = typeSelect.value as FieldType;
    converting = newType === field.type ? null : (PAGE_KINDS[newType].conversion?.({ base, bases, field }) ?? null);
    fill(convertSlot, converting?.node ?? null);
    void showPreview();
  });
  convertSlot.addEventListener("change", showPreview);
  dialogForm(`Edit ${field.name}`, [name, type, convertSlot, preview, required, part?.node ?? null], "Save", async () => {
    if (typeSelect && typeSelect.value !== field.type) {
      // Its own title in the Inbox: which field becomes what.
      const to = FIELD_TRAITS[typeSelect.value as FieldType].label;
      await propose(changes, { operation: "convert", ...conversion(), autoMerge: false, message: `Convert ${field.name} from ${traits.label} to ${to} in ${base.name}` });
      return;
    }
    const options = part?.read();
    await propose(changes, {
      operation: "update",
      fieldId: field.id,
      patch: { name: name.querySelector("input")!.value.trim(), ...(required ? { required: required.querySelector("input")!.checked } : {}), ...(options ? { options: { ...field.options, ...options } } : {}) },
    });
  });
}

/** "Delete field": says what it clears, and proposes it for review (a manager can restore the field with its values). */
export async function deleteField(changes: FieldChanges, field: FieldView): Promise<void> {
  const { total } = await api<{ total: number }>("GET", `/records/page?baseId=${changes.base.id}&page=1&pageSize=1&include=none`);
  // How many hold a value (a field that cannot be filtered, a lookup's, says the base's count).
  const holding = await api<{ total: number }>("GET", `/records/count?baseId=${changes.base.id}&filters[0][fieldSlug]=${encodeURIComponent(field.slug)}&filters[0][operator]=isNotEmpty`)
    .then((counted) => counted.total)
    .catch(() => total);
  dialogForm(
    `Delete ${field.name}?`,
    [h("p", {}, `Its values in ${holding.toLocaleString()} of ${total.toLocaleString()} record${total === 1 ? "" : "s"} are cleared. The deletion is proposed for review; until it is merged nothing changes, and a deleted field can be restored with its values.`)],
    "Propose deletion",
    () => propose(changes, { operation: "delete", fieldId: field.id, autoMerge: false, message: `Delete the field ${field.name} of ${changes.base.name}` }),
    true,
  );
}
