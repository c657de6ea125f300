import type { FieldView } from "../../../content/bases";
import { h } from "../dom";
import { input } from "../ui";
import { copiedText, firstAnswer, labelOf, lineQuestion, momentText, type PageKind, pastedAsWritten, plainWords, readLine, textOfValue } from "./kind";

const dayText = momentText(new Intl.DateTimeFormat(undefined, { dateStyle: "medium" }));

/** A date: in the reader's format, picked with the browser's own date picker. */
export const dateKind: PageKind = {
  cell: (_field, value) => (typeof value === "string" ? dayText(value) : textOfValue(value)),
  cellEditor: (field: FieldView, value: unknown) => h("input", { type: "date", value: typeof value === "string" ? value.slice(0, 10) : textOfValue(value), "aria-label": field.name }),
  typed: (_field, raw) => ({ value: raw }),
  input: (field, value) => {
    const text = textOfValue(value);
    // The browser's own date picker, unless the value holds a time too (the picker would drop it).
    return /^(\d{4}-\d{2}-\d{2})?$/.test(text) ? input(labelOf(field), field.slug, { type: "date", value: text }) : input(labelOf(field), field.slug, { value: text, hint: "YYYY-MM-DD or an ISO date-time." });
  },
  readInput: readLine,
  copied: copiedText,
  pasted: pastedAsWritten,
  words: plainWords,
  question: lineQuestion("date"),
  answer: firstAnswer,
};
