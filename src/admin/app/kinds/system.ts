import { copiedText, firstAnswer, lineInput, lineQuestion, momentText, type PageKind, plainCell, plainWords, readLine, textOfValue } from "./kind";
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

const momentOf = momentText(new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }));

/** When the record was made or last changed, in the reader's format. */
export const momentKind: PageKind = {
  ...computedKind,
  cell: (_field, value) => (typeof value === "string" ? momentOf(value) : textOfValue(value)),
};

/** The record's number, counted by the server. */
export const autoNumberKind: PageKind = { ...computedKind, cell: numberCell, numeric: true };
