import { MAX_VALUE_SIZE, textTooLarge } from "../../../shared/limits";
import { FUNCTIONS, isBlank, Moment, RuntimeError, shown, toMoment, toNumber, toText, truthy, type Value } from "./functions";
import { ARITHMETIC, type FormulaTree, type FormulaType, type Node } from "./parse";

/** A checked formula run for one record: an error while it runs makes the record's value null. */

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
