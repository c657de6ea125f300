import type { FieldView } from "../../content/bases";
import { RATING_MAX, traitsOf } from "../../shared/field-types";
import type { Child } from "./dom";
import { filePicker, idsIn, linkPicker } from "./pickers";
import { checkbox, input, select, textarea } from "./ui";

/** A field on a record's page: its input and the value the form holds, by the field's traits (`FIELD_TRAITS`). */

/** An input for one field, by its traits; computed fields are not edited. `saveFiles`: an attachment's files are saved as soon as they are chosen. */
export function fieldInput(field: FieldView, value: unknown, saveFiles?: (field: FieldView, ids: string[]) => Promise<string>): Child {
  const label = `${field.name}${field.required ? " (required)" : ""}`;
  const text = value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
  const { editor, label: typeLabel } = traitsOf(field.type);
  switch (editor) {
    case "checkbox":
      return checkbox(field.name, field.slug, value === true);
    case "number":
      return input(label, field.slug, { type: "number", value: text });
    case "rating": {
      const max = Number(field.options.max ?? RATING_MAX.default);
      return select(label, field.slug, [{ value: "", label: "—" }, ...Array.from({ length: max }, (_, i) => ({ value: String(i + 1), label: "★".repeat(i + 1) }))], text);
    }
    case "date":
      // The browser's own date picker, unless the value holds a time too (the picker would drop it).
      return /^(\d{4}-\d{2}-\d{2})?$/.test(text) ? input(label, field.slug, { type: "date", value: text }) : input(label, field.slug, { value: text, hint: "YYYY-MM-DD or an ISO date-time." });
    case "document":
      return textarea(label, field.slug, { value: text, hint: typeLabel === "Long text" ? undefined : `${typeLabel}, stored as written.` });
    case "code":
      return textarea(label, field.slug, { value: text, hint: `Code${field.options.code ? ` (${(field.options.code as { language?: string }).language ?? "any language"})` : ""}, stored as written.` });
    case "select": {
      const choices = ((field.options.choices as { name: string }[] | undefined) ?? []).map((choice) => ({ value: choice.name, label: choice.name }));
      return select(label, field.slug, [{ value: "", label: "—" }, ...choices], text);
    }
    case "multiselect":
      return input(label, field.slug, { value: Array.isArray(value) ? value.join(", ") : "", hint: "Comma-separated choices." });
    case "json":
      return textarea(label, field.slug, { value: text, hint: "JSON." });
    case "relation":
      return linkPicker(field, value);
    case "attachment":
      return filePicker(field, value, saveFiles && ((ids) => saveFiles(field, ids)));
    default:
      return input(label, field.slug, { type: editor === "email" || editor === "url" ? editor : "text", value: text });
  }
}

/** The form's value for a field, read by its traits; "" is no value. */
export function readField(field: FieldView, values: FormData): unknown {
  const { editor } = traitsOf(field.type);
  if (editor === "checkbox") return values.get(field.slug) === "on";
  const written = String(values.get(field.slug) ?? "");
  const raw = written.trim();
  if (raw === "") return null;
  if (editor === "document" || editor === "code") return written;
  if (editor === "number" || editor === "rating") return Number(raw);
  if (editor === "multiselect") return raw.split(",").map((part) => part.trim()).filter(Boolean);
  if (editor === "json" || editor === "relation" || editor === "attachment") return JSON.parse(raw);
  return raw;
}

/** A value as a change compares it: attachments by the ids of their files. */
export const comparable = (field: FieldView, value: unknown) => JSON.stringify(traitsOf(field.type).holdsFiles ? idsIn(value) : (value ?? null));
