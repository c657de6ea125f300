import type { FieldView } from "../../../content/bases";
import { traitsOf } from "../../../shared/field-types";
import { h } from "../dom";
import { textarea } from "../ui";
import { copiedText, firstAnswer, labelOf, lineEditor, lineInput, lineQuestion, type PageKind, pastedAsWritten, plainCell, plainWords, questionLabel, readLine, textOfValue } from "./kind";

/** One line of text, edited in its cell. */
export const textKind: PageKind = {
  cell: plainCell,
  cellEditor: lineEditor("text"),
  typed: (_field, raw) => ({ value: raw }),
  input: lineInput("text"),
  readInput: readLine,
  copied: copiedText,
  pasted: pastedAsWritten,
  words: plainWords,
  question: lineQuestion("text"),
  answer: firstAnswer,
};

/** A phone number: a line of text, edited on the record's page. */
export const phoneKind: PageKind = { ...textKind, cellEditor: undefined, typed: undefined };

/** A document's text as written (not trimmed); "" is none. */
const readWritten = (field: FieldView, values: FormData): unknown => {
  const written = String(values.get(field.slug) ?? "");
  return written.trim() === "" ? null : written;
};

/** A document (long text, markdown, HTML, YAML): a text area on the record's page, stored as written. */
export const documentKind: PageKind = {
  ...textKind,
  cellEditor: undefined,
  typed: undefined,
  input: (field, value) => {
    const { label } = traitsOf(field.type);
    return textarea(labelOf(field), field.slug, { value: textOfValue(value), hint: label === "Long text" ? undefined : `${label}, stored as written.` });
  },
  readInput: readWritten,
  question: (item) => h("label", {}, questionLabel(item), h("textarea", { name: item.inputName, rows: 4, required: item.required })),
};

/** Long text: a document that is also edited in its cell, one line there. */
export const longTextKind: PageKind = { ...documentKind, cellEditor: lineEditor("text"), typed: (_field, _raw, written) => ({ value: written }) };

/** Code: a text area that names its language. */
export const codeKind: PageKind = {
  ...documentKind,
  input: (field, value) =>
    textarea(labelOf(field), field.slug, { value: textOfValue(value), hint: `Code${field.options.code ? ` (${(field.options.code as { language?: string }).language ?? "any language"})` : ""}, stored as written.` }),
  question: lineQuestion("text"),
};

/** An e-mail address, checked by the browser as typed. */
export const emailKind: PageKind = { ...textKind, cellEditor: lineEditor("email"), input: lineInput("email"), question: lineQuestion("email") };

/** A URL, checked by the browser as typed. */
export const urlKind: PageKind = { ...textKind, cellEditor: lineEditor("url"), input: lineInput("url"), question: lineQuestion("url") };
