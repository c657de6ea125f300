import type { FieldView } from "../../../content/bases";
import { textarea } from "../ui";
import { copiedText, firstAnswer, labelOf, lineQuestion, type PageKind, plainWords, textOfValue } from "./kind";

/** A form's JSON, parsed; null when blank. */
export const readJson = (field: FieldView, values: FormData): unknown => {
  const raw = String(values.get(field.slug) ?? "").trim();
  return raw === "" ? null : JSON.parse(raw);
};

/** Any JSON value, edited on the record's page as its text. */
export const jsonKind: PageKind = {
  cell: (_field, value) => (typeof value === "string" ? value : JSON.stringify(value)),
  input: (field, value) => textarea(labelOf(field), field.slug, { value: textOfValue(value), hint: "JSON." }),
  readInput: readJson,
  copied: copiedText,
  pasted: (field, text) => {
    const trimmed = text.trim();
    try {
      return { value: JSON.parse(trimmed) };
    } catch {
      return { refused: `"${trimmed.slice(0, 40)}" is not JSON for ${field.name}` };
    }
  },
  words: plainWords,
  question: lineQuestion("text"),
  answer: firstAnswer,
};
