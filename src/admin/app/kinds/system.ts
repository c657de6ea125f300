import { copiedText, firstAnswer, lineInput, lineQuestion, type PageKind, plainCell, plainWords, readLine, textOfValue } from "./kind";
import { numberCell } from "./number";

/** A value the server computes: shown, never edited, copied as it is shown. */
export const computedKind: PageKind = {
  cell: plainCell,
  input: lineInput("text"),
  readInput: readLine,
  copied: copiedText,
  words: plainWords,
  question: lineQuestion("text"),
  answer: firstAnswer,
};

/** When the record was made or last changed, in the reader's format. */
export const momentKind: PageKind = {
  ...computedKind,
  cell: (_field, value) => (typeof value === "string" ? new Date(value).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : textOfValue(value)),
};

/** The record's number, counted by the server. */
export const autoNumberKind: PageKind = { ...computedKind, cell: numberCell, numeric: true };
