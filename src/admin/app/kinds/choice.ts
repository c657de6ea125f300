import type { FieldView } from "../../../content/bases";
import { CHOICE_COLORS, colorOfChoice, traitsOf } from "../../../shared/field-types";
import { fill, h } from "../dom";
import { api, query } from "../api";
import { checkbox, confirmDialog, input, select } from "../ui";
import {
  choicesQuestion,
  type ConversionContext,
  type ConversionPart,
  copiedText,
  firstAnswer,
  labelOf,
  lineQuestion,
  type PageKind,
  pastedAsWritten,
  plainWords,
  questionLabel,
  readLine,
  type SettingsContext,
  type SettingsPart,
  textOfValue,
} from "./kind";

type Choice = { id?: string; name: string; color?: string };

const choiceNames = (field: FieldView) => ((field.options.choices as { name: string }[] | undefined) ?? []).map((choice) => choice.name);

const chip = (field: FieldView, choice: unknown) => h("span", { class: `chip color-${colorOfChoice(field.options, choice)}` }, String(choice));

/** How many records of the base hold a choice of the field (`operator`: eq for one choice, contains for several). */
const holding = (context: SettingsContext, operator: "eq" | "contains", name: string) =>
  api<{ total: number }>(
    "GET",
    `/records/count${query({ baseId: context.base.id, "filters[0][fieldSlug]": context.field!.slug, "filters[0][operator]": operator, "filters[0][value]": name })}`,
  ).then((answer) => answer.total);

/**
 * A list of choices, each with its colour, to add to and remove from. Removing a choice records
 * hold says first how many do and what becomes of them: they keep it as written, but it is no
 * longer a choice (it leaves a board's columns and a filter's list until it is added again).
 */
function choicesSettings(context: SettingsContext, operator: "eq" | "contains"): SettingsPart {
  const given = (context.options.choices as Choice[] | undefined) ?? [{ name: "" }];
  const list = h("ol", { class: "choice-list" });
  const row = (choice: Choice) => {
    const name = h("input", { type: "text", value: choice.name, "aria-label": "Choice", required: true, "data-id": choice.id ?? "" });
    const color = h("select", { "aria-label": `Colour of ${choice.name || "the choice"}` }, ...CHOICE_COLORS.map((c) => h("option", { value: c, selected: c === (choice.color ?? CHOICE_COLORS[0]) }, c)));
    const remove = h("button", { type: "button", class: "secondary", "aria-label": `Remove ${choice.name || "the choice"}` }, "×");
    remove.addEventListener("click", async () => {
      const held = context.field && choice.name ? await holding(context, operator, choice.name).catch(() => 0) : 0;
      const sure =
        held === 0 ||
        (await confirmDialog(
          `Remove ${choice.name}?`,
          `${held.toLocaleString()} record${held === 1 ? " holds" : "s hold"} “${choice.name}”. Once saved they keep it as written, but it is no longer a choice: they leave the board's columns and the filter's list until it is added again.`,
          `Remove ${choice.name}`,
          true,
        ));
      if (sure) item.remove();
    });
    const item = h("li", {}, name, color, remove);
    return item;
  };
  fill(list, ...given.map(row));
  const add = h("button", { type: "button", class: "secondary", onclick: () => list.appendChild(row({ name: "" })).querySelector("input")!.focus() }, "Add a choice");
  return {
    node: h("fieldset", { class: "choices" }, h("legend", {}, "Choices"), list, add),
    read: () => ({
      choices: [...list.querySelectorAll("li")].map((item) => {
        const name = item.querySelector("input")!;
        return { ...(name.dataset.id ? { id: name.dataset.id } : {}), name: name.value.trim(), color: item.querySelector("select")!.value };
      }),
    }),
  };
}

/**
 * A conversion into choices: a value the choices lack becomes one (else it is lost); into several
 * choices (`many`), a field that held no choices may have its text split on commas, only when asked.
 */
function choicesConversion({ field }: ConversionContext, many: boolean): ConversionPart {
  const addChoices = checkbox("Add the values the choices lack as choices", "auto-create", true);
  const splitText = many && traitsOf(field.type).choices === "none" ? checkbox("Split text on commas into several choices", "split-text", false) : null;
  return {
    node: h("div", {}, addChoices, splitText),
    read: () => ({
      selectChoiceMode: addChoices.querySelector("input")!.checked ? "auto_create" : "null_on_missing",
      ...(splitText?.querySelector("input")!.checked ? { splitText: true } : {}),
    }),
  };
}

/** One choice of the field's list: a chip in its colour, picked from a list. */
export const selectKind: PageKind = {
  cell: chip,
  cellEditor: (field, value) => h("select", { "aria-label": field.name }, h("option", { value: "" }, "—"), ...choiceNames(field).map((choice) => h("option", { value: choice, selected: choice === value }, choice))),
  typed: (_field, raw) => ({ value: raw }),
  input: (field, value) => select(labelOf(field), field.slug, [{ value: "", label: "—" }, ...choiceNames(field).map((choice) => ({ value: choice, label: choice }))], textOfValue(value)),
  readInput: readLine,
  copied: copiedText,
  pasted: pastedAsWritten,
  words: plainWords,
  settings: (context) => choicesSettings(context, "eq"),
  conversion: (context) => choicesConversion(context, false),
  question: (item) =>
    item.choices.length > 0
      ? h("label", {}, questionLabel(item), h("select", { name: item.inputName, required: item.required }, h("option", { value: "" }, "—"), item.choices.map((choice) => h("option", { value: choice }, choice))))
      : lineQuestion("text")(item),
  answer: firstAnswer,
};

/** Any of the field's choices: chips, typed as a comma-separated list, pasted split on commas or semicolons. */
export const multiselectKind: PageKind = {
  cell: (field, value) => (Array.isArray(value) ? value.map((choice) => chip(field, choice)) : textOfValue(value)),
  input: (field, value) => input(labelOf(field), field.slug, { value: Array.isArray(value) ? value.join(", ") : "", hint: "Comma-separated choices." }),
  readInput: (field, values) => {
    const raw = String(values.get(field.slug) ?? "").trim();
    return raw === "" ? null : raw.split(",").map((part) => part.trim()).filter(Boolean);
  },
  copied: copiedText,
  pasted: (_field, text) => ({ value: text.trim().split(/\s*[,;]\s*/).filter(Boolean) }),
  words: plainWords,
  settings: (context) => choicesSettings(context, "contains"),
  conversion: (context) => choicesConversion(context, true),
  question: (item) => (item.choices.length > 0 ? choicesQuestion(item) : lineQuestion("text")(item)),
  answer: (given, item) => (item.choices.length > 0 ? given : firstAnswer(given)),
};
