import type { FormulaType } from "./parse";

/** The values a formula computes with, and its functions: what each takes and yields (checked before any record is read) and how it runs. */

/** A moment as a formula holds it; `dateOnly` when it carries no time of day (shown as YYYY-MM-DD). */
export class Moment {
  constructor(
    readonly ms: number,
    readonly dateOnly: boolean,
  ) {}
}

export type Value = number | string | boolean | null | Moment | readonly unknown[] | { readonly [key: string]: unknown };

/** A value a record cannot be given (division by zero, a date that is not one): the record's value is null. */
export class RuntimeError extends Error {}

export const isBlank = (value: Value): boolean => value === null || value === "" || (Array.isArray(value) && value.length === 0);

export function truthy(value: Value): boolean {
  if (value instanceof Moment) return true;
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}

export function toNumber(value: Value): number | null {
  if (value === null || value === "") return null;
  if (typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  throw new RuntimeError("not a number");
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

function momentText(moment: Moment): string {
  const date = new Date(moment.ms);
  return moment.dateOnly ? `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}` : date.toISOString();
}

export function toText(value: Value): string {
  if (value === null) return "";
  if (value instanceof Moment) return momentText(value);
  if (Array.isArray(value)) return value.map((item) => toText(item as Value)).join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

export function toMoment(value: Value): Moment | null {
  if (value === null || value === "") return null;
  if (value instanceof Moment) return value;
  if (typeof value === "string") {
    const ms = Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
    if (Number.isFinite(ms)) return new Moment(ms, DATE_ONLY.test(value));
  }
  throw new RuntimeError("not a date");
}

/**
 * A formula's value as a record shows and stores it, as the type the formula was found to yield (a
 * branch of unknown type is made one): moments as ISO text, numbers only when finite.
 */
export function shown(value: Value, type: FormulaType): unknown {
  if (value === null) return null;
  switch (type) {
    case "number": {
      const number = toNumber(value);
      return number !== null && Number.isFinite(number) ? number : null;
    }
    case "text":
      return toText(value);
    case "boolean":
      return truthy(value);
    case "date": {
      const moment = toMoment(value);
      return moment && Number.isFinite(moment.ms) ? momentText(moment) : null;
    }
    default:
      return value instanceof Moment ? momentText(value) : value;
  }
}

// ---- functions ----

interface FunctionSpec {
  args: [min: number, max: number];
  /** Each argument's expected type (the last repeats); "any" takes anything. */
  takes: FormulaType[];
  returns: (args: FormulaType[]) => FormulaType;
  run?: (args: Value[], now: number) => Value;
  /** Reads the clock: a formula using it is computed when read, never stored. */
  clock?: true;
}

const UNITS: Record<string, number> = { millisecond: 1, second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000, month: 0, quarter: 0, year: 0 };
const MONTHS_OF: Record<string, number> = { month: 1, quarter: 3, year: 12 };
export const UNIT_NAMES = Object.keys(UNITS).join(", ");

export function unitOf(value: Value): string {
  const text = toText(value).toLowerCase().trim();
  const unit = text.endsWith("s") ? text.slice(0, -1) : text;
  if (!Object.hasOwn(UNITS, unit)) throw new RuntimeError("unknown unit");
  return unit;
}

function addMonths(ms: number, months: number): number {
  const date = new Date(ms);
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay));
  return date.getTime();
}

function dateAdd([date, count, unitValue]: Value[]): Value {
  const moment = toMoment(date);
  const amount = toNumber(count);
  if (moment === null || amount === null) return null;
  const unit = unitOf(unitValue);
  if (MONTHS_OF[unit]) return new Moment(addMonths(moment.ms, Math.trunc(amount) * MONTHS_OF[unit]), moment.dateOnly);
  return new Moment(moment.ms + amount * UNITS[unit], moment.dateOnly && UNITS[unit] >= UNITS.day && Number.isInteger(amount));
}

function dateDiff([first, second, unitValue]: Value[]): Value {
  const [a, b] = [toMoment(first), toMoment(second)];
  if (a === null || b === null) return null;
  const unit = unitOf(unitValue ?? "seconds");
  if (MONTHS_OF[unit]) {
    const [x, y] = [new Date(a.ms), new Date(b.ms)];
    let months = (x.getUTCFullYear() - y.getUTCFullYear()) * 12 + x.getUTCMonth() - y.getUTCMonth();
    // A month is only whole once its day (and time) is reached.
    if (months > 0 && addMonths(b.ms, months) > a.ms) months--;
    if (months < 0 && addMonths(b.ms, months) < a.ms) months++;
    return Math.trunc(months / MONTHS_OF[unit]);
  }
  return Math.trunc((a.ms - b.ms) / UNITS[unit]);
}

const MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

function dateFormat([date, formatValue]: Value[]): Value {
  const moment = toMoment(date);
  if (moment === null) return null;
  if (formatValue === undefined || formatValue === null) return momentText(moment);
  const d = new Date(moment.ms);
  const hours = d.getUTCHours();
  const tokens: Record<string, () => string> = {
    YYYY: () => pad(d.getUTCFullYear(), 4),
    YY: () => pad(d.getUTCFullYear() % 100),
    MMMM: () => MONTH_NAMES[d.getUTCMonth()],
    MMM: () => MONTH_NAMES[d.getUTCMonth()].slice(0, 3),
    MM: () => pad(d.getUTCMonth() + 1),
    M: () => String(d.getUTCMonth() + 1),
    DD: () => pad(d.getUTCDate()),
    D: () => String(d.getUTCDate()),
    HH: () => pad(hours),
    H: () => String(hours),
    hh: () => pad(hours % 12 || 12),
    h: () => String(hours % 12 || 12),
    mm: () => pad(d.getUTCMinutes()),
    ss: () => pad(d.getUTCSeconds()),
    SSS: () => pad(d.getUTCMilliseconds(), 3),
    A: () => (hours < 12 ? "AM" : "PM"),
  };
  return toText(formatValue).replace(/\[([^\]]*)\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|HH|H|hh|h|mm|ss|SSS|A/g, (token, literal: string | undefined) => literal ?? tokens[token]());
}

const numbers = (args: Value[]) => args.map(toNumber);
/** The type both branches of an IF share; a branch of unknown type (a blank, a json value) goes with the other. */
function branchesType(types: FormulaType[]): FormulaType {
  const known = types.filter((type) => type !== "any");
  return known.length > 0 && known.every((type) => type === known[0]) ? known[0] : "any";
}

export const FUNCTIONS: Record<string, FunctionSpec> = {
  IF: { args: [2, 3], takes: ["any"], returns: ([, then, otherwise]) => (otherwise === undefined ? then : branchesType([then, otherwise])) },
  AND: { args: [1, 64], takes: ["any"], returns: () => "boolean", run: (args) => args.every(truthy) },
  OR: { args: [1, 64], takes: ["any"], returns: () => "boolean", run: (args) => args.some(truthy) },
  NOT: { args: [1, 1], takes: ["any"], returns: () => "boolean", run: ([value]) => !truthy(value) },
  BLANK: { args: [0, 0], takes: [], returns: () => "any", run: () => null },
  CONCAT: { args: [1, 64], takes: ["any"], returns: () => "text", run: (args) => args.map(toText).join("") },
  LEN: { args: [1, 1], takes: ["any"], returns: () => "number", run: ([value]) => [...toText(value)].length },
  UPPER: { args: [1, 1], takes: ["any"], returns: () => "text", run: ([value]) => toText(value).toUpperCase() },
  LOWER: { args: [1, 1], takes: ["any"], returns: () => "text", run: ([value]) => toText(value).toLowerCase() },
  TRIM: { args: [1, 1], takes: ["any"], returns: () => "text", run: ([value]) => toText(value).trim() },
  ABS: { args: [1, 1], takes: ["number"], returns: () => "number", run: ([value]) => nullOr(toNumber(value), Math.abs) },
  ROUND: {
    args: [1, 2],
    takes: ["number"],
    returns: () => "number",
    run: (args) => {
      const [value, digits = 0] = numbers(args);
      if (value === null || digits === null) return null;
      const scale = 10 ** Math.trunc(digits);
      return Math.sign(value) * (Math.round(Math.abs(value) * scale) / scale);
    },
  },
  MIN: { args: [1, 64], takes: ["number"], returns: () => "number", run: (args) => extreme(args, Math.min) },
  MAX: { args: [1, 64], takes: ["number"], returns: () => "number", run: (args) => extreme(args, Math.max) },
  NOW: { args: [0, 0], takes: [], returns: () => "date", run: (_, now) => new Moment(now, false), clock: true },
  TODAY: { args: [0, 0], takes: [], returns: () => "date", run: (_, now) => new Moment(now - (now % 86_400_000), true), clock: true },
  DATEADD: { args: [3, 3], takes: ["date", "number", "text"], returns: () => "date", run: dateAdd },
  DATETIME_DIFF: { args: [2, 3], takes: ["date", "date", "text"], returns: () => "number", run: dateDiff },
  DATETIME_FORMAT: { args: [1, 2], takes: ["date", "text"], returns: () => "text", run: dateFormat },
};

export const FORMULA_FUNCTIONS = Object.keys(FUNCTIONS);

function nullOr(value: number | null, fn: (n: number) => number): number | null {
  return value === null ? null : fn(value);
}

/** MIN and MAX over their arguments, lists (a lookup's values) spread; blanks skipped. */
function extreme(args: Value[], pick: (...values: number[]) => number): Value {
  const values = args.flatMap((arg) => (Array.isArray(arg) ? (arg as Value[]) : [arg])).map(toNumber).filter((n): n is number => n !== null);
  return values.length === 0 ? null : pick(...values);
}

// ---- checking ----
