import { and, eq, inArray, sql } from "drizzle-orm";
import type { AppContext, Tx } from "../../../context";
import { type Static, t } from "elysia";
import { ApiError, badRequest } from "../../../shared/errors";
import { Nullable } from "../../../shared/schemas";
import { type FieldRow, findBase, findBaseOrNull, forgetBases, type LoadedBase, prepareField } from "../../bases";
import { iso } from "../../../shared/clock";
import { checkFormula } from "./check";
import { evaluateFormula } from "./evaluate";
import { FormulaError, type FormulaTree, type FormulaType, parseFormula, referencesOf } from "./parse";
import { isLookup, lookupOf } from "../lookup";
import { FIELD_KINDS, FILLED_BY_UPKEEP } from "../registry";
import { formulaOf, type FormulaOptions, isFormula } from "./kind";
import { isIndexable } from "../../field-sql";
import { targetBaseOf } from "../../relations/schema";
import { fields } from "../../../tables/content";

/**
 * Formula fields (`parse.ts`, `check.ts`, `functions.ts` and `evaluate.ts` are their language). A formula reads fields of its own record by
 * `{slug}`. When it yields a number, text, true/false or a date and reads neither the clock nor
 * linked records, its value is stored in the record at every write, so listings filter and sort by
 * it like any field; otherwise it is computed when read (`computedAtRead`), and cannot be. Either
 * way a record shows the value computed from its current formula. What a formula yields and whether
 * it is stored are decided when the field is made and never change, so stored values and their index
 * always agree with the field; changing a formula rewrites the stored values in the background,
 * a batch at a time (`FieldUpkeep`).
 */

const STORABLE: ReadonlySet<FormulaType> = new Set(["number", "text", "boolean", "date"]);

/** What a lookup yields: a rollup's number or text, else its values (a list). */
function lookupType(ctx: AppContext, spaceId: string, lookup: FieldRow, siblings: FieldRow[]): FormulaType {
  const { relationFieldSlug, targetFieldSlug, rollup } = lookupOf(lookup.options);
  if (rollup === "count" || rollup === "sum" || rollup === "average") return "number";
  if (rollup === "concatenate") return "text";
  if (rollup === "values") return "list";
  const relation = siblings.find((field) => field.slug === relationFieldSlug);
  const looked = relation && findBaseOrNull(ctx, spaceId, targetBaseOf(relation))?.fields.find((field) => field.slug === targetFieldSlug);
  return looked && FIELD_KINDS[looked.type].formulaType === "number" ? "number" : "any";
}

const formulaError = (slug: string, error: unknown) => (error instanceof FormulaError ? badRequest(`The formula of "${slug}": ${error.message}`) : error);

/** The formulas among `fieldRows`, each with its parse, in an order where each comes after the formulas it reads; a circle is a 400 naming it. */
function inOrder(fieldRows: FieldRow[]): { field: FieldRow; tree: FormulaTree }[] {
  const formulas = new Map(
    fieldRows
      .filter(isFormula)
      .map((field) => {
        try {
          return [field.slug, { field, tree: parseFormula(formulaOf(field.options).expression) }] as const;
        } catch (error) {
          throw formulaError(field.slug, error);
        }
      }),
  );
  const ordered: { field: FieldRow; tree: FormulaTree }[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (slug: string, path: string[]) => {
    const formula = formulas.get(slug);
    if (!formula || state.get(slug) === "done") return;
    if (state.get(slug) === "visiting") {
      const circle = [...path.slice(path.indexOf(slug)), slug].map((s) => `{${s}}`).join(" -> ");
      throw badRequest(`The formulas ${circle} read each other in a circle; a formula may not depend on itself.`, { cycle: path.slice(path.indexOf(slug)) });
    }
    state.set(slug, "visiting");
    for (const ref of referencesOf(formula.tree)) visit(ref, [...path, slug]);
    state.set(slug, "done");
    ordered.push(formula);
  };
  for (const slug of formulas.keys()) visit(slug, []);
  return ordered;
}

/**
 * Checks every formula of a base whose fields (all of them, as a change leaves them) are
 * `fieldRows`, and answers each formula's options as the server completes them: what it yields and
 * whether it is computed when read. An unknown field, a type error or a circle is a 400 naming the
 * formula; so is a change that would alter what an existing formula (in `before`) yields or where
 * its value lives.
 */
export function resolveFormulas(ctx: AppContext, spaceId: string, fieldRows: FieldRow[], before: FieldRow[] = []): Map<string, Record<string, unknown>> {
  const resolved = new Map<string, Record<string, unknown>>();
  const found = new Map<string, { type: FormulaType; computedAtRead: boolean }>();
  const bySlug = new Map(fieldRows.map((field) => [field.slug, field]));
  for (const { field } of inOrder(fieldRows)) {
    const { expression } = formulaOf(field.options);
    let readsAtRead = false;
    const typeOf = (slug: string): FormulaType | undefined => {
      const other = bySlug.get(slug);
      if (!other) return undefined;
      if (isFormula(other)) {
        readsAtRead ||= found.get(slug)!.computedAtRead;
        return found.get(slug)!.type;
      }
      if (FIELD_KINDS[other.type].unlinked) readsAtRead = true;
      return isLookup(other) ? lookupType(ctx, spaceId, other, fieldRows) : FIELD_KINDS[other.type].formulaType;
    };
    let checked: ReturnType<typeof checkFormula>;
    try {
      checked = checkFormula(expression, typeOf);
    } catch (error) {
      throw formulaError(field.slug, error);
    }
    const computedAtRead = checked.readsClock || readsAtRead || !STORABLE.has(checked.type);
    found.set(field.slug, { type: checked.type, computedAtRead });
    const options: FormulaOptions = { expression, resultType: checked.type, computedAtRead };
    const was = before.find((other) => other.id === field.id);
    const had = was && isFormula(was) ? formulaOf(was.options) : undefined;
    if (had && (had.resultType !== options.resultType || had.computedAtRead !== options.computedAtRead)) {
      const where = (stored: boolean | undefined) => (stored ? "computed when read" : "stored");
      const change = had.resultType !== options.resultType ? `yield ${options.resultType} instead of ${had.resultType}` : `be ${where(options.computedAtRead)} instead of ${where(had.computedAtRead)}`;
      throw badRequest(`The formula of "${field.slug}" would ${change}; a formula field keeps what it yields and where its value lives: make a new field for this formula.`);
    }
    resolved.set(field.id, { ...field.options, formula: options });
  }
  return resolved;
}

export const FormulaCheckSchema = t.Object(
  {
    valid: t.Boolean(),
    resultType: Nullable(t.String({ description: "number, text, boolean, date, list or any: what the formula yields." })),
    computedAtRead: Nullable(t.Boolean({ description: "It reads the clock or linked records: computed when a record is read, so neither filtered nor sorted." })),
    error: Nullable(t.String({ description: "Why the formula cannot be a field of this base, as a field change would say it." })),
  },
  { $id: "FormulaCheck" },
);

/** `POST /bases/{id}/formulas/check`: what a new formula field of the base would yield, or why it could not be made (the page's editor asks as one types). */
export function checkNewFormula(ctx: AppContext, loaded: LoadedBase, expression: string): Static<typeof FormulaCheckSchema> {
  const slug = "formula-being-checked";
  try {
    const draft = prepareField(loaded.base.id, { slug, name: slug, type: "formula", options: { formula: { expression } } }, loaded.fields, loaded.fields.length, iso(ctx.clock.now()));
    const options = formulaOf(resolveFormulas(ctx, loaded.base.spaceId, [...loaded.fields, draft]).get(draft.id)!);
    return { valid: true, resultType: options.resultType ?? null, computedAtRead: options.computedAtRead ?? null, error: null };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400) throw error;
    return { valid: false, resultType: null, computedAtRead: null, error: error.message.replace(`The formula of "${slug}": `, "") };
  }
}

/** Completes new fields' formula options (in place: the rows are not yet written); one that is computed when read has no index. */
export function resolveNewFormulas(ctx: AppContext, spaceId: string, newRows: FieldRow[], baseFields: FieldRow[]): void {
  if (!newRows.some(isFormula)) return;
  const resolved = resolveFormulas(ctx, spaceId, baseFields);
  for (const row of newRows) {
    const options = resolved.get(row.id);
    if (!options) continue;
    row.options = options;
    if (!isIndexable(row)) row.indexState = "none";
  }
}

/** Refuses to delete fields a formula of their base reads: the formula goes first. */
export function requireNoFormulaOf(ctx: AppContext, spaceId: string, going: FieldRow[]): void {
  const ids = new Set(going.map((field) => field.id));
  for (const baseId of new Set(going.map((field) => field.baseId))) {
    const base = findBase(ctx, spaceId, baseId, { archived: true });
    const goingSlugs = new Set(base.fields.filter((field) => ids.has(field.id)).map((field) => field.slug));
    for (const { field, refs } of formulaPlans(base.fields)) {
      if (ids.has(field.id)) continue;
      const read = [...refs].find((slug) => goingSlugs.has(slug));
      if (read) throw badRequest(`The formula "${field.slug}" of the base "${base.node.slug}" reads "${read}"; change or delete that formula first.`);
    }
  }
}

interface FormulaPlan {
  field: FieldRow;
  /** Null when the stored formula no longer parses (it was checked when made): its value is null. */
  tree: FormulaTree | null;
  refs: Set<string>;
  type: FormulaType;
  computedAtRead: boolean;
}

const plans = new WeakMap<readonly FieldRow[], FormulaPlan[]>();

/** A base's formulas in the order they are computed, parsed once per loaded list of fields. */
function formulaPlans(fieldRows: readonly FieldRow[]): FormulaPlan[] {
  let plan = plans.get(fieldRows);
  if (!plan) {
    let ordered: { field: FieldRow; tree: FormulaTree | null }[];
    try {
      ordered = inOrder([...fieldRows]);
    } catch {
      ordered = fieldRows.filter(isFormula).map((field) => ({ field, tree: null }));
    }
    plan = ordered.map(({ field, tree }) => {
      const options = formulaOf(field.options);
      return { field, tree, refs: tree ? referencesOf(tree) : new Set<string>(), type: options.resultType ?? "any", computedAtRead: options.computedAtRead ?? true };
    });
    plans.set(fieldRows, plan);
  }
  return plan;
}

export const hasFormulas = (fieldRows: readonly FieldRow[]): boolean => fieldRows.some(isFormula);

/** The formulas that read any of `slugs`, directly or through another formula. */
export function formulasReading(fieldRows: readonly FieldRow[], slugs: ReadonlySet<string>): FieldRow[] {
  const read = new Set(slugs);
  const reading: FieldRow[] = [];
  for (const { field, refs } of formulaPlans(fieldRows)) {
    if (![...refs].some((ref) => read.has(ref))) continue;
    read.add(field.slug);
    reading.push(field);
  }
  return reading;
}

/**
 * Computes a record's formulas into `values` (its other fields by slug), in order. Without `now`
 * (what commits keep and writes store) a formula computed when read is null.
 */
export function computeFormulas(fieldRows: readonly FieldRow[], values: Record<string, unknown>, now: number | null): void {
  for (const plan of formulaPlans(fieldRows)) {
    const slug = plan.field.slug;
    values[slug] = plan.tree && !(plan.computedAtRead && now === null) ? evaluateFormula(plan.tree, plan.type, (ref) => values[ref], now ?? 0) : null;
  }
}

/** The formulas of a base whose values are stored. */
export const storedFormulas = (fieldRows: readonly FieldRow[]): FieldRow[] => formulaPlans(fieldRows).filter((plan) => !plan.computedAtRead).map((plan) => plan.field);

/**
 * After a change that alters stored formula values of a base's records (a formula changed, choices
 * renamed), its stored formulas are computed again in the background, a batch at a time; until
 * then records show the new values and listings compare the old ones of records not yet reached.
 */
export function recomputeFormulas(tx: Tx, baseId: string): void {
  // A base without records is walked in one step of the upkeep, which finds nothing and marks them ready.
  const marked = tx.db
    .update(fields)
    .set({ indexState: "building" })
    .where(and(eq(fields.baseId, baseId), inArray(fields.type, FILLED_BY_UPKEEP), sql`${fields.indexState} != 'none'`))
    .returning({ id: fields.id })
    .all();
  if (marked.length === 0) return;
  forgetBases(tx);
  tx.afterCommit(tx.fieldUpkeep.wake);
}
