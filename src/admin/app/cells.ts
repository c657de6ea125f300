import type { FieldView } from "../../content/bases";
import type { Child } from "./dom";
import { pageKindOf } from "./kinds/registry";

/** A field's grid cell and its editor, asked of its page kind (`kinds/`): the grid never names a type. */

/** Edited in a cell; the others (links, files, JSON, long documents, computed values) are edited on the record's page, or not at all. */
export const editable = (field: FieldView) => {
  const kind = pageKindOf(field.type);
  return kind.cellEditor !== undefined || kind.toggled === true;
};
/** Edited by a click or Space in its cell, without an editor. */
export const toggled = (field: FieldView) => pageKindOf(field.type).toggled === true;
/** Cells aligned as numbers. */
export const numeric = (field: FieldView) => pageKindOf(field.type).numeric === true;

/** A value as its cell shows it, by the field's kind; `names` are linked records' primary values. */
export function cellContent(field: FieldView, value: unknown, names: Map<string, string | null>): Child {
  if (value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return "";
  return pageKindOf(field.type).cell(field, value, names);
}

/** The editor a cell opens, holding the value now (a field its kind edits elsewhere gets a line of text). */
export function cellEditor(field: FieldView, value: unknown): HTMLInputElement | HTMLSelectElement {
  const kind = pageKindOf(field.type);
  return (kind.cellEditor ?? pageKindOf("text").cellEditor!)(field, value);
}

/** What an editor holds, as the field's value ("" is none), or why the field's type refuses it: the cell then keeps its value. */
export function editedValue(field: FieldView, editor: HTMLInputElement | HTMLSelectElement): { value: unknown } | { refused: string } {
  const raw = editor.value.trim();
  if (editor instanceof HTMLInputElement && !editor.validity.valid) return { refused: `${field.name} keeps its value: ${editor.validationMessage || `that is not a ${field.type}`}` };
  if (raw === "") return { value: null };
  const { typed } = pageKindOf(field.type);
  return typed ? typed(field, raw, editor.value) : { value: raw };
}
