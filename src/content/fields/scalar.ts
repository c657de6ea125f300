import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../shared/json";
import { textTooLarge } from "../../shared/limits";
import { anyOptions, type FieldKind, NOT_CONVERTIBLE, plainText, textOf, TOO_LARGE } from "./kind";

const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const BOOLEAN_WORDS = new Map([["true", true], ["false", false], ["yes", true], ["no", false], ["1", true], ["0", false], ["x", true], ["y", true], ["n", false]]);

/** Whether a cell's text reads as a number, and as true or false (an import suggests the types by them). */
export const readsAsNumber = (text: string) => NUMBER.test(text);
export const readsAsFlag = (text: string) => BOOLEAN_WORDS.has(text.toLowerCase());
const quoted = (text: string) => `"${text.trim().slice(0, 40)}"`;

export const numberKind: FieldKind = {
  checkOptions: anyOptions,
  checkValue: (value) => (typeof value === "number" && Number.isFinite(value) ? { value } : { error: "must be a finite number" }),
  fromText: (text) => (NUMBER.test(text.trim()) ? { value: Number(text.trim()) } : { error: `${quoted(text)} is not a number` }),
  toText: plainText,
  formulaType: "number",
  searched: false,
  convertsFrom(value) {
    if (typeof value === "number" || typeof value === "boolean") return Number(value);
    const number = typeof value === "string" && value.trim() !== "" ? Number(value.trim()) : Number.NaN;
    return Number.isFinite(number) ? number : NOT_CONVERTIBLE;
  },
};

export const checkboxKind: FieldKind = {
  checkOptions: anyOptions,
  checkValue: (value) => (typeof value === "boolean" ? { value } : { error: "must be true or false" }),
  fromText(text) {
    const flag = BOOLEAN_WORDS.get(text.trim().toLowerCase());
    return flag === undefined ? { error: `${quoted(text)} is not true or false (true/false, yes/no, 1/0)` } : { value: flag };
  },
  toText: plainText,
  formulaType: "boolean",
  searched: false,
  convertsFrom(value) {
    if (typeof value === "boolean") return value;
    if (typeof value === "number") return value !== 0;
    const word = textOf(value).trim().toLowerCase();
    return ["true", "yes", "1"].includes(word) ? true : ["false", "no", "0"].includes(word) ? false : NOT_CONVERTIBLE;
  },
};

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))?)?$/;

/** An ISO 8601 date or date-time that names a real moment: no 30 February, no 25 o'clock (Date.parse rolls both over). */
export function isIsoDate(text: string): boolean {
  const parts = DATE_PATTERN.exec(text);
  if (!parts) return false;
  const [year, month, day] = [parts[1], parts[2], parts[3]].map(Number);
  const upTo = (part: string | undefined, max: number) => part === undefined || Number(part) <= max;
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= lastDay && upTo(parts[4], 23) && upTo(parts[5], 59) && upTo(parts[6], 59) && upTo(parts[7], 23) && upTo(parts[8], 59);
}

export const dateKind: FieldKind = {
  checkOptions: anyOptions,
  checkValue: (value) => (typeof value === "string" && isIsoDate(value) ? { value } : { error: "must be an ISO 8601 date or date-time" }),
  fromText: (text) => ({ value: text.trim() }),
  toText: plainText,
  formulaType: "date",
  searched: false,
  convertsFrom: textOf,
};


export const jsonKind: FieldKind = {
  checkOptions: anyOptions,
  checkValue(value) {
    if (typeof value === "object" && textTooLarge(JSON.stringify(value))) return TOO_LARGE;
    return nestsDeeperThan(value, MAX_JSON_DEPTH) ? { error: `may nest at most ${MAX_JSON_DEPTH} levels` } : { value };
  },
  fromText(text) {
    try {
      return { value: JSON.parse(text.trim()) };
    } catch {
      return { error: "is not valid JSON" };
    }
  },
  toText: plainText,
  formulaType: "any",
  searched: false,
  convertsFrom: (value) => value,
};
