/**
 * The formula language of `formula` fields: parsed once into a tree by the small recursive-descent
 * parser below (never `eval`), checked for types against the fields it reads (`check.ts`), then
 * evaluated per record (`evaluate.ts`, with the values and functions of `functions.ts`). Nothing in
 * the language knows about records or the database.
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

export type Node =
  | { kind: "literal"; value: number | string | boolean; at: number }
  | { kind: "ref"; slug: string; at: number }
  | { kind: "call"; name: string; args: Node[]; at: number }
  | { kind: "binary"; op: string; left: Node; right: Node; at: number }
  | { kind: "negate"; operand: Node; at: number };

/** A formula that cannot be parsed or checked: the message names what and where. */
export class FormulaError extends Error {}

/** What one formula may be: its work and the parser's depth grow with these. */
export const FORMULA_BOUNDS = { length: 4000, nodes: 1000, depth: 64 } as const;

const OPERATORS = ["<=", ">=", "!=", "<>", "=", "<", ">", "&", "+", "-", "*", "/", "%"];
export const COMPARISONS = new Set(["=", "!=", "<>", "<", "<=", ">", ">="]);
export const ARITHMETIC = new Set(["+", "-", "*", "/", "%"]);

type Token = { kind: "number"; value: number; at: number } | { kind: "string"; value: string; at: number } | { kind: "ref"; slug: string; at: number } | { kind: "name"; name: string; at: number } | { kind: "punct"; text: string; at: number };

export const where = (at: number) => `at character ${at + 1}`;

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
