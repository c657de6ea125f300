import { EMAIL_PATTERN } from "../../shared/formats";
import { anyOptions, type Checked, type FieldKind, plainText, textOf } from "./kind";

const PHONE_PATTERN = /^\+?[\d\s().-]{6,}$/;

/** A line of text of a known shape: an address to write to or call. */
const contactKind = (accepts: (text: string) => boolean, error: string, searched: boolean): FieldKind => ({
  checkOptions: anyOptions,
  checkValue: (value): Checked => (typeof value === "string" && accepts(value) ? { value } : { error }),
  fromText: (text) => ({ value: text.trim() }),
  toText: plainText,
  formulaType: "text",
  searched,
  convertsFrom: textOf,
});

export const urlKind = contactKind((text) => /^https?:\/\//i.test(text) && URL.canParse(text), "must be an absolute http(s) URL", true);
export const emailKind = contactKind((text) => EMAIL_PATTERN.test(text), "must be an e-mail address", true);
export const phoneKind = contactKind((text) => PHONE_PATTERN.test(text), "must be a phone number", false);
