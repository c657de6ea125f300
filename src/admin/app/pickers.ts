import type { AssetView } from "../../assets/assets";
import type { BaseView, FieldView } from "../../content/bases";
import { fileButton, type ShownFile } from "./preview";
import { holdsMany, primaryField } from "../../shared/field-types";
import type { RecordView } from "../../content/records/view";
import { api, query, send } from "./api";
import { fill, h } from "./dom";
import { failureText, recordName } from "./ui";

/** What a relation or attachment value names: its ids, in order. */
export const idsIn = (value: unknown): string[] =>
  (Array.isArray(value) ? value : value === null || value === undefined ? [] : [value]).map((item) => (typeof item === "object" && item !== null ? String((item as { id: unknown }).id) : String(item)));

/** Candidates a picker offers at once. */
const CANDIDATES = 8;

/**
 * A relation field's editor: the linked records as chips (by their primary value, each with a
 * button to remove it) and a box that finds records of the target base by the start of their
 * primary value. The value travels in a hidden input named by the field's slug (JSON).
 */
export function linkPicker(field: FieldView, value: unknown): HTMLElement {
  const many = holdsMany(field.options);
  let ids = idsIn(value);
  const names = new Map<string, string>();
  const hidden = h("input", { type: "hidden", name: field.slug });
  const chips = h("ul", { class: "chips", "aria-label": `${field.name}: linked records` });
  const found = h("ul", { class: "candidates" });
  const status = h("small", { role: "status" });
  const finder = h("input", { type: "search", "aria-label": `Find a record to link in ${field.name}`, placeholder: "Find a record to link" });
  let target: BaseView | null = null;

  const draw = () => {
    hidden.value = JSON.stringify(many ? ids : (ids[0] ?? null));
    fill(
      chips,
      ...ids.map((id) => {
        const name = names.get(id) ?? id;
        const remove = h("button", { type: "button", class: "secondary small", "aria-label": `Remove ${name}` }, "×");
        remove.addEventListener("click", () => {
          ids = ids.filter((other) => other !== id);
          draw();
        });
        return h("li", { class: "chip link-chip" }, name, " ", remove);
      }),
    );
  };
  const named = (record: RecordView) => names.set(record.id, recordName(target?.fields ?? [], record.fields, record.id));

  const ready = (async () => {
    target = await api<BaseView>("GET", `/bases/${encodeURIComponent(String(field.options.targetBaseId))}`);
    finder.placeholder = `Find a record of ${target.name}`;
    await Promise.all(ids.map((id) => api<RecordView>("GET", `/records/${id}`).then(named, () => undefined)));
    draw();
  })().catch((failure) => (status.textContent = failureText(failure)));

  let typing: ReturnType<typeof setTimeout> | null = null;
  finder.addEventListener("input", () => {
    if (typing) clearTimeout(typing);
    typing = setTimeout(async () => {
      await ready;
      const text = finder.value.trim();
      const primary = target && primaryField(target.fields);
      if (!target || !text || !primary) return fill(found);
      try {
        const page = await api<{ records: RecordView[] }>(
          "GET",
          `/records${query({ baseId: target.id, limit: CANDIDATES, include: "none", "filters[0][fieldSlug]": primary.slug, "filters[0][operator]": "contains", "filters[0][value]": text })}`,
        );
        fill(
          found,
          ...page.records.map((record) => {
            named(record);
            const add = h("button", { type: "button", class: "secondary" }, `Link ${names.get(record.id)}`);
            add.addEventListener("click", () => {
              ids = many ? [...ids.filter((id) => id !== record.id), record.id] : [record.id];
              finder.value = "";
              fill(found);
              draw();
            });
            return h("li", {}, add);
          }),
        );
        status.textContent = page.records.length ? "" : "No record starts with that.";
      } catch (failure) {
        status.textContent = failureText(failure);
      }
    }, 200);
  });
  draw();
  // What the record holds now (a hidden input's value is its attribute, so it is kept apart): a change from it is not yet sent, and the screen is not drawn over it.
  hidden.dataset.sent = hidden.value;
  return h("fieldset", { class: "field picker" }, h("legend", {}, field.name), chips, finder, found, status, hidden);
}

/**
 * An attachment field's editor: its files (each opens its preview) with a button to remove each,
 * and an upload (`POST /assets`, the bytes as the body) whose files join the value once stored.
 * With `save` (a record that exists), a file chosen or removed is saved at once as the field's new
 * files; without it (a new record), the form's Save keeps them.
 */
export function filePicker(field: FieldView, value: unknown, save?: (ids: string[]) => Promise<string>): HTMLElement {
  let files = (Array.isArray(value) ? value : []) as ShownFile[];
  const hidden = h("input", { type: "hidden", name: field.slug });
  const list = h("ul", { class: "chips", "aria-label": `${field.name}: files` });
  const status = h("small", { role: "status" });
  const upload = h("input", { type: "file", multiple: true, "aria-label": `Upload to ${field.name}` });
  const draw = () => {
    hidden.value = JSON.stringify(files.map((file) => file.id));
    fill(
      list,
      ...files.map((file) => {
        const remove = h("button", { type: "button", class: "secondary small", "aria-label": `Remove ${file.fileName ?? file.id}` }, "×");
        remove.addEventListener("click", async () => {
          files = files.filter((other) => other.id !== file.id);
          draw();
          await keep(`${file.fileName ?? "The file"} removed`);
        });
        const image = file.mimeType?.startsWith("image/") && file.url ? fileButton(file) : null;
        return h("li", { class: "chip" }, image, image ? ` ${file.fileName ?? file.id}` : fileButton(file, false), " ", remove);
      }),
    );
  };
  /** Saves the files as the field's value now (with `save`), saying what happened. */
  const keep = async (what: string) => {
    if (!save) return;
    status.textContent = `${what}: saving…`;
    try {
      status.textContent = `${what}: ${await save(files.map((file) => file.id))}`;
      hidden.dataset.sent = hidden.value;
    } catch (failure) {
      status.textContent = failureText(failure);
    }
  };
  upload.addEventListener("change", async () => {
    const added: string[] = [];
    for (const file of upload.files ?? []) {
      status.textContent = `Uploading ${file.name}…`;
      try {
        const asset = (await (await send("POST", `/assets${query({ fileName: file.name })}`, file, file.type || "application/octet-stream")).json()) as AssetView;
        files = [...files, asset];
        added.push(file.name);
        status.textContent = `${file.name} uploaded: save to keep it.`;
      } catch (failure) {
        status.textContent = failureText(failure);
      }
    }
    upload.value = "";
    draw();
    if (added.length) await keep(`${added.join(", ")} added`);
  });
  draw();
  // What the record holds now (a hidden input's value is its attribute, so it is kept apart): a change from it is not yet sent, and the screen is not drawn over it.
  hidden.dataset.sent = hidden.value;
  return h("fieldset", { class: "field picker" }, h("legend", {}, field.name), list, upload, status, hidden);
}
