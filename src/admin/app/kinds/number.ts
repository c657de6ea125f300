import type { FieldView } from "../../../content/bases";
import { input } from "../ui";
import { copiedText, labelOf, lineEditor, lineQuestion, type PageKind, type Read, plainWords, textOfValue } from "./kind";

/** Made once: `toLocaleString` with options makes a formatter for each number (a grid's first draw made hundreds). */
const AS_WRITTEN = new Intl.NumberFormat(undefined, { useGrouping: false, maximumFractionDigits: 20 });

/** A number as written (a year is not 2,017), in the reader's decimal sign. */
export const numberCell = (_field: FieldView, value: unknown) => (typeof value === "number" ? AS_WRITTEN.format(value) : textOfValue(value));

/** A number as people write it: thousands grouped by commas or spaces ("1,234", "1 234"), a decimal comma ("3,5"). */
const numberOf = (text: string): number => Number(text.replace(/[\s,](?=\d{3}\b)/g, "").replace(",", "."));

/** A number typed in a cell, read as a pasted one is. */
export const typedNumber = (field: FieldView, raw: string): Read => {
  const number = numberOf(raw);
  return Number.isFinite(number) ? { value: number } : { refused: `${field.name} keeps its value: "${raw}" is not a number.` };
};

/** A number pasted from a spreadsheet. */
export const pastedNumber = (field: FieldView, text: string): Read => {
  const trimmed = text.trim();
  const number = numberOf(trimmed);
  return Number.isFinite(number) ? { value: number } : { refused: `"${trimmed}" is not a number for ${field.name}` };
};

/** A number of a form's input; null when blank. */
export const readNumber = (field: FieldView, values: FormData): unknown => {
  const raw = String(values.get(field.slug) ?? "").trim();
  return raw === "" ? null : Number(raw);
};

/** A public form's answer as a number. */
export const numberAnswer = (given: string[]): unknown => (given[0] === undefined || given[0] === "" ? undefined : Number(given[0]));

export const numberKind: PageKind = {
  cell: numberCell,
  numeric: true,
  cellEditor: lineEditor("text", "decimal"),
  typed: typedNumber,
  input: (field, value) => input(labelOf(field), field.slug, { type: "number", value: textOfValue(value) }),
  readInput: readNumber,
  copied: copiedText,
  pasted: pastedNumber,
  words: plainWords,
  question: lineQuestion("number"),
  answer: numberAnswer,
};

