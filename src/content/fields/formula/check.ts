import { ARITHMETIC, FormulaError, type FormulaType, type Node, parseFormula, where } from "./parse";
import { FORMULA_FUNCTIONS, FUNCTIONS, UNIT_NAMES, unitOf } from "./functions";

/** A formula's types, checked against the fields it reads before any record is: what it yields, and whether it reads the clock. */

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
