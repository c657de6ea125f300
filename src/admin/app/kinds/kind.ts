import type { BaseView, FieldView } from "../../../content/bases";
import type { Child } from "../dom";
import { h } from "../dom";
import { input, shown } from "../ui";

/**
 * What a type of field is on the page: how its cell shows a value, how it is edited in a cell and
 * on a record's page, how it is copied and pasted, and what its settings ask. One object per type
 * (`registry.ts`), beside its browser-safe traits (`shared/field-types.ts`), as the server's kinds
 * are (`content/fields/`): a rule about a type lives in its kind, and the page asks it.
 */
export interface PageKind {
  /** A value (never empty) as its grid cell shows it; `names` are linked records' primary values. */
  cell(field: FieldView, value: unknown, names: Map<string, string | null>): Child;
  /** Its cell is aligned as a number. */
  numeric?: true;
  /** The editor its grid cell opens, holding the value now; without it the field is edited on the record's page (or not at all). */
  cellEditor?: (field: FieldView, value: unknown) => HTMLInputElement | HTMLSelectElement;
  /** Edited by a click or Space in its cell, without an editor. */
  toggled?: true;
  /** What a cell's editor holds (trimmed, never empty) as the field's value, or why it is refused. */
  typed?: (field: FieldView, raw: string, written: string) => Read;
  /** Its input on a record's page (a computed field is shown, not edited). */
  input(field: FieldView, value: unknown, saveFiles?: (field: FieldView, ids: string[]) => Promise<string>): Child;
  /** The value its input holds in a form ("" is none). */
  readInput(field: FieldView, values: FormData): unknown;
  /** A value as a change compares it. */
  comparable?: (value: unknown) => unknown;
  /** A value (never null) as a spreadsheet's cell holds it. */
  copied(value: unknown): string;
  /** A pasted cell's text (never blank) as the value, or why it cannot be one; without it (and without `pastedTogether`) a paste leaves the field alone (computed, files). */
  pasted?: (field: FieldView, text: string) => Read;
  /** A paste's cells of the field (never blank) read together, when the server is asked first (a link's names): the reader of each cell. */
  pastedTogether?: (field: FieldView, texts: string[]) => Promise<(text: string) => Read>;
  /** A value (never empty) as words: a change request's, a history's, a proposal's; `names` are linked records' primary values. */
  words(value: unknown, names: Record<string, string | null>): string;
  /** What a field of the type asks for beside its name (its options), or nothing. */
  settings?: (context: SettingsContext) => SettingsPart | null;
  /** What a conversion of `field` into the type asks (the base a link's names name, whether text is split, ...), drawn only while the type is chosen; without it, nothing. */
  conversion?: (context: ConversionContext) => ConversionPart;
  /** A public form's question for a field of the type. */
  question(item: Question): HTMLElement;
  /** A public form's answer: the values its inputs hold, as the field's value; undefined when none. */
  answer(given: string[], item: Question): unknown;
}

/** A value read from what a person typed or pasted: the value, or why the field refuses it. */
export type Read = { value: unknown } | { refused: string };

/** What a field's settings are drawn from: the base, every base (a link's targets), its links and the options it has now. */
export interface SettingsContext {
  base: BaseView;
  bases: BaseView[];
  /** The base's fields that link records (a lookup reads through one). */
  links: FieldView[];
  options: Record<string, unknown>;
  /** The field edited, when it exists (a new one has no records yet). */
  field?: FieldView;
}

/** The part of a field's dialog its type adds (its options), read back into `options` when sent. */
export interface SettingsPart {
  node: Child;
  read(): Record<string, unknown> | undefined;
}

/** What a conversion's options are drawn from: the base, every base, and the field converted, as it is. */
export interface ConversionContext {
  base: BaseView;
  bases: BaseView[];
  field: FieldView;
}

/** The part of the "Edit field" dialog a conversion into a type adds, read back into the conversion's request (its inputs' changes preview it again). */
export interface ConversionPart {
  node: Child;
  read(): Record<string, unknown>;
}

/** A public form's question, as `GET /forms/{node}/public` gives it. */
export interface Question {
  inputName: string;
  label: string;
  type: string;
  required: boolean;
  choices: string[];
}

export const labelOf = (field: FieldView) => `${field.name}${field.required ? " (required)" : ""}`;
export const questionLabel = (item: Question) => `${item.label}${item.required ? " (required)" : ""}`;
/**
 * A moment in the reader's format, by one formatter made once per format (`toLocale…String` with
 * options makes one for each value: a grid draws hundreds); "Invalid Date" for text that is none,
 * as `toLocaleString` says.
 */
export function momentText(format: Intl.DateTimeFormat): (iso: string) => string {
  return (iso) => {
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? String(date) : format.format(date);
  };
}

export const textOfValue = (value: unknown) => (value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value));

/** A value as words when its kind says nothing more: text as it is, a list's items joined ("a, b", never `["a","b"]`), the rest as JSON. */
export const plainWords = (value: unknown): string =>
  Array.isArray(value) ? value.map((item) => (item === null || item === undefined ? "" : typeof item === "object" ? JSON.stringify(item) : String(item))).filter(Boolean).join(", ") : shown(value);

/** A value as its cell shows it when its kind says nothing more: its words. */
export const plainCell = (_field: FieldView, value: unknown): Child => plainWords(value);

/** A one-line input in a cell, of the browser's `type` (a number is typed as text and read by its kind). */
export const lineEditor =
  (type: "text" | "email" | "url" | "date", inputmode?: string) =>
  (field: FieldView, value: unknown): HTMLInputElement =>
    h("input", { type, value: value === null || value === undefined ? "" : String(value), "aria-label": field.name, inputmode });

/** A one-line input on a record's page. */
export const lineInput =
  (type: "text" | "email" | "url") =>
  (field: FieldView, value: unknown): Child =>
    input(labelOf(field), field.slug, { type, value: textOfValue(value) });

/** A form's text, trimmed; null when blank. */
export const readLine = (field: FieldView, values: FormData): unknown => {
  const raw = String(values.get(field.slug) ?? "").trim();
  return raw === "" ? null : raw;
};

/** A spreadsheet's cell for a value: lists joined (files by their names), objects as JSON. */
export function copiedText(value: unknown): string {
  if (Array.isArray(value)) return value.map((item) => (typeof item === "object" && item !== null ? ((item as { fileName?: string }).fileName ?? JSON.stringify(item)) : String(item))).join(", ");
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** A pasted cell taken as it was written. */
export const pastedAsWritten = (_field: FieldView, text: string): Read => ({ value: text });

/** A public form's one-line question, of the browser's `type`. */
export const lineQuestion =
  (type: "text" | "email" | "url" | "date" | "number") =>
  (item: Question): HTMLElement =>
    h("label", {}, questionLabel(item), h("input", { type, name: item.inputName, required: item.required, step: type === "number" ? "any" : null }));

/** A public form's answer: its one value, as written. */
export const firstAnswer = (given: string[]): unknown => (given[0] === undefined || given[0] === "" ? undefined : given[0]);

/** A public form's question with its choices as boxes (several at once), for any type the form lists choices of. */
export const choicesQuestion = (item: Question): HTMLElement =>
  h("fieldset", {}, h("legend", {}, questionLabel(item)), item.choices.map((choice) => h("label", { class: "check" }, h("input", { type: "checkbox", name: item.inputName, value: choice }), ` ${choice}`)));
