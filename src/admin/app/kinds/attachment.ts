import { filePicker, idsIn } from "../pickers";
import { fileButton, type ShownFile } from "../preview";
import { copiedText, firstAnswer, lineQuestion, type PageKind, textOfValue } from "./kind";
import { readJson } from "./json";

const fileName = (file: unknown) => (typeof file === "object" && file !== null ? String((file as { fileName?: string; id?: string }).fileName ?? (file as { id?: string }).id) : String(file));

/** Files of the space: images as thumbnails, other files as chips, each opening its preview. */
export const attachmentKind: PageKind = {
  cell: (_field, value) => (Array.isArray(value) ? value.map((file: ShownFile) => fileButton(file)) : textOfValue(value)),
  input: (field, value, saveFiles) => filePicker(field, value, saveFiles && ((ids) => saveFiles(field, ids))),
  readInput: readJson,
  comparable: idsIn,
  copied: copiedText,
  words: (value) => (Array.isArray(value) ? value.map(fileName).join(", ") : textOfValue(value)),
  question: lineQuestion("text"),
  answer: firstAnswer,
};
