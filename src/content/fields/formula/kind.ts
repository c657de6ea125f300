import { badRequest } from "../../../shared/errors";
import type { FormulaType } from "./parse";
import { type Compared, computedKind } from "../kind";

/** What a formula field knows of its formula: the expression the client gave, and what the server found it yields. */
export interface FormulaOptions {
  expression: string;
  /** Set by the server when the field is made: number, text, boolean, date, list or any. */
  resultType?: FormulaType;
  /** Set by the server: the formula reads the clock or linked records, so it is computed when read, never stored, filtered or sorted. */
  computedAtRead?: boolean;
}

export const formulaOf = (options: Record<string, unknown>): FormulaOptions => options.formula as FormulaOptions;

/** A formula's options as a client gives them: `formula { expression }`; the expression is checked against the base when the field is made. */
function checkFormulaOptions(options: Record<string, unknown>): Record<string, unknown> {
  const formula = options.formula as { expression?: unknown } | undefined;
  if (typeof formula !== "object" || formula === null || typeof formula.expression !== "string" || formula.expression.trim() === "") {
    throw badRequest('A formula field needs options.formula: { "expression": "…" }, e.g. "{price} * {quantity}".');
  }
  return { ...options, formula: { expression: formula.expression } };
}

/** A value computed from the record's other fields (`plan.ts`; its language is `parse.ts`, `check.ts`, `functions.ts` and `evaluate.ts`). */
export const formulaKind = computedKind({
  checkOptions: checkFormulaOptions,
  formulaType: "any",
  comparison(options): Compared {
    const { resultType, computedAtRead } = formulaOf(options);
    if (computedAtRead) return "read";
    return resultType === "number" ? "number" : resultType === "boolean" ? "flag" : resultType === "list" || resultType === "any" ? "list" : "text";
  },
  readAtRead: () => "its formula reads linked records or the clock, so its values are computed when read, not stored.",
  filledByUpkeep: true,
});

/** Whether a field is a formula: its options hold one. */
export const isFormula = (field: { type: string }): boolean => field.type === "formula";
