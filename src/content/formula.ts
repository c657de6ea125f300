import { MAX_VALUE_SIZE, textTooLarge } from "../shared/limits";

/**
 * The formula language of `formula` fields: parsed once into a tree by the small recursive-descent
 * parser below (never `eval`), checked for types against the fields it reads, then evaluated per
 * record. Nothing here knows about records or the database.
 *
 *   expression  := comparison
 *   comparison  := concat (("=" | "!=" | "<>" | "<" | "<=" | ">" | ">=") concat)*
 *   concat      := sum ("&" sum)*
 *   sum         := product (("+" | "-") product)*
 *   product     := unary (("*" | "/" | "%") unary)*
 *   unary       := "-" unary | primary
 *   primary     := number | string | TRUE | FALSE | "{" slug "}" | NAME "(" arguments ")" | "(" expression ")"
 */

/** What a formula and each of its parts yields, as far as is known before any record is read. */
export type FormulaType = "number" | "text" | "boolean" | "date" | "list" | "any";

/** A moment as a formula holds it; `dateOnly` when it carries no time of day (shown as YYYY-MM-DD). */
class Moment {
  constructor(
    readonly ms: number,
    readonly dateOnly: boolean,
  ) {}
}

type Value = number | string | boolean | null | Moment | readonly unknown[] | { readonly [key: string]: unknown };

type Node =
  | { kind: "literal"; value: number | string | boolean; at: number }
  | { kind: "ref"; slug: string; at: number }
  | { kind: "call"; name: string; args: Node[]; at: number }
  | { kind: "binary"; op: string; left: Node; right: Node; at: number }
  | { kind: "negate"; operand: Node; at: number };

/** A formula that cannot be parsed or checked: the message names what and where. */
export class FormulaError extends Error {}

/** A value a record cannot be given (division by zero, a date that is not one): the record's value is null. */
class RuntimeError extends Error {}

/** What one formula may be: its work and the parser's depth grow with these. */
export const FORMULA_BOUNDS = { length: 4000, nodes: 1000, depth: 64 } as const;

const OPERATORS = ["<=", ">=", "!=", "<>", "=", "<", ">", "&", "+", "-", "*", "/", "%"];
const COMPARISONS = new Set(["=", "!=", "<>", "<", "<=", ">", ">="]);
const ARITHMETIC = new Set(["+", "-", "*", "/", "%"]);

type Token = { kind: "number"; value: number; at: number } | { kind: "string"; value: string; at: number } | { kind: "ref"; slug: string; at: number } | { kind: "name"; name: string; at: number } | { kind: "punct"; text: string; at: number };

const where = (at: number) => `at character ${at + 1}`;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (/\s/.test(c)) {
      i++;
    } else if (/[0-9.]/.test(c)) {
      const match = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(source.slice(i));
      if (!match) throw new FormulaError(`Unexpected "${c}" ${where(i)}.`);
      tokens.push({ kind: "number", value: Number(match[0]), at: i });
      i += match[0].length;
    } else if (c === '"' || c === "'") {
      let text = "";
      let j = i + 1;
      for (; j < source.length && source[j] !== c; j++) {
        if (source[j] === "\\" && j + 1 < source.length) {
          j++;
          text += source[j] === "n" ? "\n" : source[j] === "t" ? "\t" : source[j];
        } else text += source[j];
      }
      if (j >= source.length) throw new FormulaError(`The text starting ${where(i)} is not closed with ${c}.`);
      tokens.push({ kind: "string", value: text, at: i });
      i = j + 1;
    } else if (c === "{") {
      const end = source.indexOf("}", i);
      if (end < 0) throw new FormulaError(`The field reference starting ${where(i)} is not closed with }.`);
      tokens.push({ kind: "ref", slug: source.slice(i + 1, end).trim(), at: i });
      i = end + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i))![0];
      tokens.push({ kind: "name", name: name.toUpperCase(), at: i });
      i += name.length;
    } else {
      const op = OPERATORS.find((candidate) => source.startsWith(candidate, i)) ?? ("(),".includes(c) ? c : null);
      if (!op) throw new FormulaError(`Unexpected "${c}" ${where(i)}.`);
      tokens.push({ kind: "punct", text: op, at: i });
      i += op.length;
    }
  }
  return tokens;
}

class Parser {
  private i = 0;
  private nodes = 0;
  private depth = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly length: number,
  ) {}

  parse(): Node {
    if (this.tokens.length === 0) throw new FormulaError("The formula is empty.");
    const node = this.comparison();
    const extra = this.tokens[this.i];
    if (extra) throw new FormulaError(`Unexpected ${describe(extra)} ${where(extra.at)}: an operator or the end was expected.`);
    return node;
  }

  private node<N extends Node>(node: N): N {
    if (++this.nodes > FORMULA_BOUNDS.nodes) throw new FormulaError(`A formula may have at most ${FORMULA_BOUNDS.nodes} parts.`);
    return node;
  }

  private peekOp(ops: Set<string> | string[]): string | null {
    const token = this.tokens[this.i];
    const list = Array.isArray(ops) ? ops : [...ops];
    return token?.kind === "punct" && list.includes(token.text) ? token.text : null;
  }

  private binary(ops: Set<string> | string[], next: () => Node): Node {
    let left = next();
    for (let op = this.peekOp(ops); op; op = this.peekOp(ops)) {
      const at = this.tokens[this.i++].at;
      left = this.node({ kind: "binary", op: op === "<>" ? "!=" : op, left, right: next(), at });
    }
    return left;
  }

  private comparison = (): Node => this.binary(COMPARISONS, this.concat);
  private concat = (): Node => this.binary(["&"], this.sum);
  private sum = (): Node => this.binary(["+", "-"], this.product);
  private product = (): Node => this.binary(["*", "/", "%"], this.unary);

  private unary = (): Node => {
    const token = this.tokens[this.i];
    if (token?.kind === "punct" && token.text === "-") {
      this.i++;
      return this.node({ kind: "negate", operand: this.nested(this.unary), at: token.at });
    }
    return this.primary();
  };

  private nested<T>(parse: () => T): T {
    if (++this.depth > FORMULA_BOUNDS.depth) throw new FormulaError(`A formula may nest at most ${FORMULA_BOUNDS.depth} levels.`);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private expect(text: string): void {
    const token = this.tokens[this.i];
    if (token?.kind !== "punct" || token.text !== text) throw new FormulaError(`"${text}" was expected ${token ? where(token.at) : "at the end"}.`);
    this.i++;
  }

  private primary(): Node {
    const token = this.tokens[this.i++];
    if (!token) throw new FormulaError(`The formula ends ${where(this.length)} where a value was expected.`);
    switch (token.kind) {
      case "number":
        return this.node({ kind: "literal", value: token.value, at: token.at });
      case "string":
        return this.node({ kind: "literal", value: token.value, at: token.at });
      case "ref":
        return this.node({ kind: "ref", slug: token.slug, at: token.at });
      case "name": {
        const next = this.tokens[this.i];
        if (next?.kind !== "punct" || next.text !== "(") {
          if (token.name === "TRUE" || token.name === "FALSE") return this.node({ kind: "literal", value: token.name === "TRUE", at: token.at });
          throw new FormulaError(`"${token.name}" ${where(token.at)} is not a value: fields are written {slug}, functions NAME(…).`);
        }
        this.i++;
        const args: Node[] = [];
        if (!this.peekOp([")"])) {
          args.push(this.nested(this.comparison));
          while (this.peekOp([","])) {
            this.i++;
            args.push(this.nested(this.comparison));
          }
        }
        this.expect(")");
        return this.node({ kind: "call", name: token.name, args, at: token.at });
      }
      case "punct":
        if (token.text === "(") {
          const inner = this.nested(this.comparison);
          this.expect(")");
          return inner;
        }
        throw new FormulaError(`Unexpected ${describe(token)} ${where(token.at)}: a value was expected.`);
    }
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case "number":
      return `number ${token.value}`;
    case "string":
      return "text";
    case "ref":
      return `{${token.slug}}`;
    case "name":
      return `"${token.name}"`;
    case "punct":
      return `"${token.text}"`;
  }
}

// ---- values ----

const isBlank = (value: Value): boolean => value === null || value === "" || (Array.isArray(value) && value.length === 0);

function truthy(value: Value): boolean {
  if (value instanceof Moment) return true;
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}

function toNumber(value: Value): number | null {
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

function toText(value: Value): string {
  if (value === null) return "";
  if (value instanceof Moment) return momentText(value);
  if (Array.isArray(value)) return value.map((item) => toText(item as Value)).join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

function toMoment(value: Value): Moment | null {
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
function shown(value: Value, type: FormulaType): unknown {
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
const UNIT_NAMES = Object.keys(UNITS).join(", ");

function unitOf(value: Value): string {
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

const FUNCTIONS: Record<string, FunctionSpec> = {
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

const FORMULA_FUNCTIONS = Object.keys(FUNCTIONS);

function nullOr(value: number | null, fn: (n: number) => number): number | null {
  return value === null ? null : fn(value);
}

/** MIN and MAX over their arguments, lists (a lookup's values) spread; blanks skipped. */
function extreme(args: Value[], pick: (...values: number[]) => number): Value {
  const values = args.flatMap((arg) => (Array.isArray(arg) ? (arg as Value[]) : [arg])).map(toNumber).filter((n): n is number => n !== null);
  return values.length === 0 ? null : pick(...values);
}

// ---- checking ----

/** Which types a place that wants `wanted` accepts: text stands for dates (ISO text) and numbers for nothing else. */
function accepts(wanted: FormulaType, given: FormulaType): boolean {
  if (wanted === "any" || given === "any") return true;
  if (wanted === "date") return given === "date" || given === "text";
  if (wanted === "number") return given === "number" || given === "boolean";
  if (wanted === "text") return given !== "list";
  return given === wanted;
}

/** Two types a comparison may meet: the same, numbers with true/false, dates with text (ISO dates), anything with a value of unknown type. */
function comparable(left: FormulaType, right: FormulaType): boolean {
  const pair = new Set([left, right]);
  if (pair.size === 1 || pair.has("any")) return true;
  return (pair.has("number") && pair.has("boolean")) || (pair.has("date") && pair.has("text"));
}

const TYPE_NAMES: Record<FormulaType, string> = { number: "a number", text: "text", boolean: "true or false", date: "a date", list: "a list", any: "any value" };

/** A formula parsed and checked: what it yields, and whether it reads the clock. */
export interface CheckedFormula {
  tree: Node;
  type: FormulaType;
  readsClock: boolean;
}

/** A parsed formula. */
export type FormulaTree = Node;

/** The field slugs a parsed formula reads. */
export function referencesOf(tree: FormulaTree): Set<string> {
  const refs = new Set<string>();
  const walk = (node: Node): void => {
    if (node.kind === "ref") refs.add(node.slug);
    else if (node.kind === "negate") walk(node.operand);
    else if (node.kind === "binary") [node.left, node.right].forEach(walk);
    else if (node.kind === "call") node.args.forEach(walk);
  };
  walk(tree);
  return refs;
}

export function parseFormula(expression: string): FormulaTree {
  if (expression.length > FORMULA_BOUNDS.length) throw new FormulaError(`A formula may be at most ${FORMULA_BOUNDS.length} characters long.`);
  return new Parser(tokenize(expression), expression.length).parse();
}

/** Parses and checks a formula; `typeOf` answers a field's type by slug, or undefined for no such field. */
export function checkFormula(expression: string, typeOf: (slug: string) => FormulaType | undefined): CheckedFormula {
  const tree = parseFormula(expression);
  let readsClock = false;
  const check = (node: Node): FormulaType => {
    switch (node.kind) {
      case "literal":
        return typeof node.value === "number" ? "number" : typeof node.value === "boolean" ? "boolean" : "text";
      case "ref": {
        const type = typeOf(node.slug);
        if (type === undefined) throw new FormulaError(`{${node.slug}} ${where(node.at)} is not a field of this base.`);
        return type;
      }
      case "negate": {
        const type = check(node.operand);
        if (!accepts("number", type)) throw new FormulaError(`"-" ${where(node.at)} needs a number, not ${TYPE_NAMES[type]}.`);
        return "number";
      }
      case "binary": {
        const [left, right] = [check(node.left), check(node.right)];
        if (node.op === "&") return "text";
        if (ARITHMETIC.has(node.op)) {
          const wrong = !accepts("number", left) ? left : !accepts("number", right) ? right : null;
          if (wrong) throw new FormulaError(`"${node.op}" ${where(node.at)} needs numbers, not ${TYPE_NAMES[wrong]}.`);
          return "number";
        }
        if (!comparable(left, right)) throw new FormulaError(`"${node.op}" ${where(node.at)} compares ${TYPE_NAMES[left]} with ${TYPE_NAMES[right]}.`);
        return "boolean";
      }
      case "call": {
        const spec = Object.hasOwn(FUNCTIONS, node.name) ? FUNCTIONS[node.name] : undefined;
        if (!spec) throw new FormulaError(`${node.name} ${where(node.at)} is not a function; use one of ${FORMULA_FUNCTIONS.join(", ")}.`);
        const [min, max] = spec.args;
        if (node.args.length < min || node.args.length > max) {
          const count = min === max ? `${min}` : max >= 64 ? `at least ${min}` : `${min} to ${max}`;
          throw new FormulaError(`${node.name} ${where(node.at)} takes ${count} argument${min === 1 && max === 1 ? "" : "s"}, not ${node.args.length}.`);
        }
        if (spec.clock) readsClock = true;
        const types = node.args.map((arg, i) => {
          const type = check(arg);
          const wanted = spec.takes[Math.min(i, spec.takes.length - 1)];
          const listOfNumbers = (node.name === "MIN" || node.name === "MAX") && type === "list";
          if (!accepts(wanted, type) && !listOfNumbers) throw new FormulaError(`${node.name} ${where(node.at)} needs ${TYPE_NAMES[wanted]} as argument ${i + 1}, not ${TYPE_NAMES[type]}.`);
          if (wanted === "text" && arg.kind === "literal" && (node.name === "DATEADD" || node.name === "DATETIME_DIFF")) {
            try {
              unitOf(arg.value);
            } catch {
              throw new FormulaError(`"${arg.value}" ${where(arg.at)} is not a unit; use one of ${UNIT_NAMES} (or their plurals).`);
            }
          }
          return type;
        });
        return spec.returns(types);
      }
    }
  };
  const type = check(tree);
  return { tree, type, readsClock };
}

// ---- evaluation ----

function compare(op: string, left: Value, right: Value): boolean | null {
  if (op === "=" || op === "!=") {
    const equal = isBlank(left) || isBlank(right) ? isBlank(left) && isBlank(right) : order(left, right) === 0;
    return op === "=" ? equal : !equal;
  }
  if (left === null || right === null) return null;
  const sign = order(left, right);
  return op === "<" ? sign < 0 : op === "<=" ? sign <= 0 : op === ">" ? sign > 0 : sign >= 0;
}

/** Orders two values: as moments when either is one, as numbers when both are, else as text. */
function order(left: Value, right: Value): number {
  if (left instanceof Moment || right instanceof Moment) return Math.sign(toMoment(left)!.ms - toMoment(right)!.ms);
  if ((typeof left === "number" || typeof left === "boolean") && (typeof right === "number" || typeof right === "boolean")) return Math.sign(Number(left) - Number(right));
  const [a, b] = [toText(left), toText(right)];
  return a < b ? -1 : a > b ? 1 : 0;
}

function arithmetic(op: string, left: Value, right: Value): Value {
  const [a, b] = [toNumber(left), toNumber(right)];
  if (a === null || b === null) return null;
  if ((op === "/" || op === "%") && b === 0) throw new RuntimeError("division by zero");
  const result = op === "+" ? a + b : op === "-" ? a - b : op === "*" ? a * b : op === "/" ? a / b : a % b;
  if (!Number.isFinite(result)) throw new RuntimeError("not a finite number");
  return result;
}

/** A text a formula makes is bounded like a stored value: past it the formula's value is null, as for any error while it runs. */
const bounded = (value: Value): Value => {
  if (typeof value === "string" && textTooLarge(value)) throw new RuntimeError(`A formula's text may hold at most ${MAX_VALUE_SIZE}.`);
  return value;
};

/**
 * A checked formula's value for one record, whose values (by slug) `valueOf` answers; any error
 * within (division by zero, a value that is not a date) makes it null, never a failed read.
 */
export function evaluateFormula(tree: FormulaTree, type: FormulaType, valueOf: (slug: string) => unknown, now: number): unknown {
  const run = (node: Node): Value => {
    switch (node.kind) {
      case "literal":
        return node.value;
      case "ref":
        return (valueOf(node.slug) ?? null) as Value;
      case "negate": {
        const value = toNumber(run(node.operand));
        return value === null ? null : -value;
      }
      case "binary": {
        const [left, right] = [run(node.left), run(node.right)];
        if (node.op === "&") return bounded(toText(left) + toText(right));
        if (ARITHMETIC.has(node.op)) return arithmetic(node.op, left, right);
        return compare(node.op, left, right);
      }
      case "call": {
        // IF reads only the branch it takes, so an error in the other one does not matter.
        if (node.name === "IF") return truthy(run(node.args[0])) ? run(node.args[1]) : node.args[2] ? run(node.args[2]) : null;
        return bounded(FUNCTIONS[node.name].run!(node.args.map(run), now));
      }
    }
  };
  try {
    return shown(run(tree), type);
  } catch (error) {
    if (error instanceof RuntimeError) return null;
    throw error;
  }
}
