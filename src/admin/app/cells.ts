import type { FieldView } from "../../content/bases";
import { colorOfChoice, RATING_MAX, traitsOf } from "../../shared/field-types";
import { type Child, h } from "./dom";
import { fileButton, type ShownFile } from "./preview";
import { shown } from "./ui";

/** A field's cell and its editor, by the field's traits (`FIELD_TRAITS`): the grid asks them, never the type's name. */

/** Edited in a cell; the others (links, files, JSON, long documents, computed values) are edited on the record's page, or not at all. */
export const editable = (field: FieldView) => traitsOf(field.type).cellEdited;
/** Edited by a click or Space in its cell, without an editor. */
export const toggled = (field: FieldView) => traitsOf(field.type).editor === "checkbox";
/** Cells aligned as numbers. */
export const numeric = (field: FieldView) => {
  const { cell } = traitsOf(field.type);
  return cell === "number" || cell === "rating";
};

/** A value as its cell shows it, by the field's type; `names` are linked records' primary values. */
export function cellContent(field: FieldView, value: unknown, names: Map<string, string | null>): Child {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return "";
  switch (traitsOf(field.type).cell) {
    case "checkbox":
      return h("span", { class: "tick", "aria-label": value ? "yes" : "no" }, value ? "✓" : "");
    case "number":
      // Numbers as written (a year is not 2,017), in the reader's decimal sign.
      return typeof value === "number" ? value.toLocaleString(undefined, { useGrouping: false, maximumFractionDigits: 20 }) : shown(value);
    case "rating":
      return typeof value === "number" ? h("span", { class: "stars", "aria-label": `${value} of ${field.options.max ?? RATING_MAX.default}` }, "★".repeat(value)) : shown(value);
    case "date":
      return typeof value === "string" ? new Date(value).toLocaleDateString(undefined, { dateStyle: "medium" }) : shown(value);
    case "moment":
      return typeof value === "string" ? new Date(value).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : shown(value);
    case "choice":
      return h("span", { class: `chip color-${colorOfChoice(field.options, value)}` }, String(value));
    case "choices":
      return Array.isArray(value) ? value.map((choice) => h("span", { class: `chip color-${colorOfChoice(field.options, choice)}` }, String(choice))) : shown(value);
    case "links": {
      const ids = (Array.isArray(value) ? value : [value]).map(String);
      return ids.map((id) => h("span", { class: "chip link-chip" }, names.get(id) ?? "a record without a name"));
    }
    case "files":
      return Array.isArray(value) ? value.map((file: ShownFile) => fileButton(file)) : shown(value);
    default:
      return typeof value === "string" ? value : JSON.stringify(value);
  }
}

/** The editor a cell opens, holding the value now. */
export function cellEditor(field: FieldView, value: unknown): HTMLInputElement | HTMLSelectElement {
  const label = `${field.name}`;
  const { editor } = traitsOf(field.type);
  if (editor === "select") {
    const choices = ((field.options.choices as { name: string }[] | undefined) ?? []).map((choice) => choice.name);
    return h("select", { "aria-label": label }, h("option", { value: "" }, "—"), ...choices.map((choice) => h("option", { value: choice, selected: choice === value }, choice)));
  }
  // A number is typed as text and read here: a browser's number input answers "" for text it cannot read, which would clear the cell.
  const type = editor === "date" || editor === "email" || editor === "url" ? editor : "text";
  const text = value === null || value === undefined ? "" : editor === "date" && typeof value === "string" ? value.slice(0, 10) : String(value);
  return h("input", { type, value: text, "aria-label": label, inputmode: editor === "number" ? "decimal" : editor === "rating" ? "numeric" : undefined });
}

/** What an editor holds, as the field's value ("" is none), or why the field's type refuses it: the cell then keeps its value. */
export function editedValue(field: FieldView, editor: HTMLInputElement | HTMLSelectElement): { value: unknown } | { refused: string } {
  const raw = editor.value.trim();
  if (editor instanceof HTMLInputElement && !editor.validity.valid) return { refused: `${field.name} keeps its value: ${editor.validationMessage || `that is not a ${field.type}`}` };
  if (raw === "") return { value: null };
  const { editor: kind } = traitsOf(field.type);
  if (kind === "number" || kind === "rating") {
    const number = Number(raw.replace(",", "."));
    return Number.isFinite(number) ? { value: number } : { refused: `${field.name} keeps its value: "${raw}" is not a number.` };
  }
  return { value: kind === "document" ? editor.value : raw };
}
