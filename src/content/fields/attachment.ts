import { attachmentIds, checkAttachmentOptions } from "../../assets/values";
import { type FieldKind, listItems } from "./kind";

/** Files of the space, by asset id (upload with POST /api/v1/assets); exported by their names. */
export const attachmentKind: FieldKind = {
  checkOptions: checkAttachmentOptions,
  checkValue(value) {
    const ids = attachmentIds(value);
    return ids ? { value: ids } : { error: "must be a list of files: asset ids, or objects with an id (upload with POST /api/v1/assets)" };
  },
  fromText: (text) => ({ value: listItems(text) }),
  toText: (value) => (Array.isArray(value) ? value.map((file) => (file as { fileName: string }).fileName).join(", ") : JSON.stringify(value)),
  formulaType: "list",
  searched: false,
};

/** Whether a field holds files: its values are asset ids. */
export const isAttachment = (field: { type: string }): boolean => field.type === "attachment";
