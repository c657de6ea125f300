import { wholeBase } from "../records/seen-base";
import type { Sight } from "../../spaces/sight";
import { recordData } from "../store";
import { type LinkRow, linkRows, storedValues } from "./store";
import { ownership, targetBaseOf } from "./schema";
import { isLookup, lookupOf, type Rollup } from "../fields/lookup";
import { isRelation } from "../fields/relation";
import { FIELD_KINDS } from "../fields/registry";
import type { AppContext } from "../../context";
import { MAX_VALUE_BYTES, ValueBudget } from "../../shared/limits";
import { type FieldRow, findBaseOrNull, type LoadedBase } from "../bases";
import { holdsMany, isEmpty, primaryField } from "../../shared/field-types";
import { records } from "../../tables/content";

/** Reading linked values: a page's relation and lookup values in one statement, rolled up, kept per store; the names linked records go by. */

/** The relation values of records, read in one statement; lookups too when asked. */
export type LinkedValues = Map<string, Readonly<Record<string, unknown>>>;

const EMPTY: LinkedValues = new Map();

/** Whether records of the base have values read from links (a relation or lookup field). */
export const hasLinkedFields = (loaded: LoadedBase): boolean => loaded.fields.some((field) => FIELD_KINDS[field.type].unlinked !== undefined);

/** Each lookup of the base that resolves, with the relation it reads through and the field it reads. */
function lookupPlans(ctx: AppContext, loaded: LoadedBase) {
  return loaded.fields.flatMap((field) => {
    if (!isLookup(field)) return [];
    const options = lookupOf(field.options);
    const relation = loaded.fields.find((other) => other.slug === options.relationFieldSlug && isRelation(other));
    const target = relation && findBaseOrNull(ctx, loaded.base.spaceId, targetBaseOf(relation));
    const looked = target?.fields.find((other) => other.slug === options.targetFieldSlug);
    return relation && looked ? [{ field, options, relation, looked }] : [];
  });
}

/** Whether a lookup reads the field from a linked record's own columns rather than its data. */
const inColumn = (field: FieldRow) => FIELD_KINDS[field.type].column !== undefined;

/**
 * The stored values lookups read, of each linked record once (however many records of the page
 * link to it), and only the fields they read: a linked record's whole data, read for each link,
 * multiplied its text by the links (issue 35).
 */
function lookedUpValues(ctx: AppContext, rows: LinkRow[], slugs: string[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  if (slugs.length === 0 || rows.length === 0) return out;
  const far = [...new Set(rows.map((row) => row[3]))];
  for (const [id, ...values] of storedValues(ctx, far, slugs)) {
    out.set(id, values.map((value) => (value === null ? null : JSON.parse(value))));
  }
  return out;
}

/** A linked record's value of the field a lookup reads: stored in its data, or kept by the record itself. */
function farValue(row: LinkRow, looked: Map<string, unknown[]>, slugs: string[], field: FieldRow): unknown {
  const column = FIELD_KINDS[field.type].column;
  if (column) return column.read({ createdAt: records.createdAt.mapFromDriverValue(row[5]!) as string, updatedAt: records.updatedAt.mapFromDriverValue(row[6]!) as string, createdBy: row[7]!, updatedBy: row[8]!, autoNumber: row[9]! });
  return looked.get(row[3])?.[slugs.indexOf(field.slug)] ?? null;
}

/**
 * Every relation value (and, with `lookups`, every lookup value) of the records. Outside a write,
 * each record's values are kept (a cache emptied by any change to the database, `StampedCache`) and
 * only the records not kept are read; a write reads them all. Every reader shares kept values, so
 * none may change them (they are typed read-only; freezing them measured 3.7x slower JSON of a page).
 */
export function linkedValues(ctx: AppContext, seen: LoadedBase, recordIds: string[], options: { lookups: boolean }): LinkedValues {
  // Kept values are every caller's: they are read for the whole base, and a caller's fields pick from them.
  const loaded = wholeBase(seen);
  if (recordIds.length === 0 || !hasLinkedFields(loaded)) return EMPTY;
  const cache = ctx.linked.values;
  if (!cache.open()) return readLinkedValues(ctx, loaded, recordIds, options);
  const keyOf = (id: string) => `${options.lookups ? "+" : "-"}${id}`;
  const out: LinkedValues = new Map();
  const missing: string[] = [];
  for (const id of recordIds) {
    const kept = cache.get(keyOf(id));
    if (kept) out.set(id, kept);
    else missing.push(id);
  }
  if (missing.length === 0) return out;
  for (const [id, values] of readLinkedValues(ctx, loaded, missing, options)) {
    cache.set(keyOf(id), values);
    out.set(id, values);
  }
  return out;
}

/**
 * The values of `linkedValues` read from the database, in one statement whatever the number of
 * records: the links of all of them, with the linked records' columns when lookups read them.
 */
function readLinkedValues(ctx: AppContext, loaded: LoadedBase, recordIds: string[], options: { lookups: boolean }): LinkedValues {
  const relations = loaded.fields.filter(isRelation);
  const lookups = options.lookups ? loaded.fields.filter(isLookup) : [];
  const out = new Map<string, Record<string, unknown>>();
  for (const id of recordIds) {
    const values: Record<string, unknown> = {};
    for (const field of relations) values[field.slug] = holdsMany(field.options) ? [] : null;
    for (const field of lookups) values[field.slug] = null;
    out.set(id, values);
  }
  if (relations.length === 0) return out;
  const slugs = [new Map<string, string>(), new Map<string, string>()];
  const owned: string[] = [];
  const inverse: string[] = [];
  for (const field of relations) {
    const { ownerId, owns } = ownership(field);
    (owns ? owned : inverse).push(ownerId);
    slugs[owns ? 0 : 1].set(ownerId, field.slug);
  }
  const plans = lookups.length > 0 ? lookupPlans(ctx, loaded) : [];
  const far = plans.some((plan) => inColumn(plan.looked)) ? "columns" : "none";
  // Rows are put in list order below: a sort in SQL cost a third of the read.
  const rows = linkRows(ctx, far, recordIds, owned, inverse);
  const lookedSlugs = [...new Set(plans.filter((plan) => !inColumn(plan.looked)).map((plan) => plan.looked.slug))];
  const looked = lookedUpValues(ctx, rows, lookedSlugs);
  // Each record's rows of each field, put in list order (a lookup reads the linked records' columns from them).
  const held = new Map<string, Record<string, LinkRow[]>>();
  for (const row of rows) {
    const slug = slugs[row[0]].get(row[1])!;
    let lists = held.get(row[2]);
    if (!lists) held.set(row[2], (lists = {}));
    (lists[slug] ??= []).push(row);
  }
  const none: LinkRow[] = [];
  for (const [id, values] of out) {
    const lists = held.get(id) ?? {};
    for (const field of relations) {
      const list = lists[field.slug];
      if (!list) continue;
      if (list.length > 1) list.sort((a, b) => a[4] - b[4]);
      values[field.slug] = Array.isArray(values[field.slug]) ? list.map((row) => row[3]) : list[0][3];
    }
    for (const plan of plans) {
      const list = firstOrAll(lists[plan.relation.slug] ?? none, plan.options.limit);
      values[plan.field.slug] = rollUp(plan.options.rollup, list.map((row) => farValue(row, looked, lookedSlugs, plan.looked)));
    }
  }
  return out;
}

/** The last item of a lookup's list (or text) cut at `MAX_VALUE_BYTES`. */
const TRUNCATED = "…";

const firstOrAll = <T>(items: T[], limit: "all" | "first") => (limit === "first" ? items.slice(0, 1) : items);

/**
 * Rolls the looked-up values (one per linked record, in link order) into the lookup's value. The
 * values a list or a text gathers are bounded like a stored value (`MAX_VALUE_BYTES`): past it the
 * rest is left out and the value ends with `TRUNCATED`, so a read never multiplies stored text.
 */
export function rollUp(rollup: Rollup, looked: unknown[]): unknown {
  if (rollup === "count") return looked.length;
  const values: unknown[] = [];
  let bytes = 0;
  let cut = false;
  const gather = (item: unknown) => {
    if (cut || isEmpty(item)) return;
    const size = typeof item === "string" ? item.length : typeof item === "object" ? JSON.stringify(item).length : 8;
    if (bytes + size > MAX_VALUE_BYTES) return void (cut = true);
    bytes += size + 2;
    values.push(item);
  };
  for (const value of looked) {
    if (Array.isArray(value)) for (const item of value) gather(item);
    else gather(value);
  }
  if (rollup === "values") return cut ? [...values, TRUNCATED] : values;
  if (rollup === "concatenate") return values.map((value) => (typeof value === "string" ? value : JSON.stringify(value))).join(", ") + (cut ? `, ${TRUNCATED}` : "");
  const numbers = values.filter((value): value is number => typeof value === "number");
  switch (rollup) {
    case "sum":
      return numbers.reduce((sum, n) => sum + n, 0);
    case "average":
      return numbers.length === 0 ? null : numbers.reduce((sum, n) => sum + n, 0) / numbers.length;
    case "min":
    case "max": {
      const pool: (number | string)[] = numbers.length > 0 ? numbers : values.filter((value): value is string => typeof value === "string");
      if (pool.length === 0) return null;
      return pool.reduce((best, value) => ((rollup === "min" ? value < best : value > best) ? value : best));
    }
  }
}

/**
 * The primary value (the base's first text field) of each record of the space that `ids` names, for
 * showing links by name: one statement for all of them. Ids that name no record, records of a
 * base hidden from the caller, and names past the answer's `budget` are left out.
 */
export function recordNames(ctx: AppContext, spaceId: string, sight: Sight, ids: string[], budget = new ValueBudget()): Record<string, string | null> {
  const names: Record<string, string | null> = {};
  if (ids.length === 0) return names;
  for (const row of recordData(ctx, spaceId, [...new Set(ids)])) {
    if (sight.hiddenBases.has(row.baseId)) continue;
    const primary = primaryField(findBaseOrNull(ctx, spaceId, row.baseId)?.fields ?? []);
    const value = primary ? (JSON.parse(row.data) as Record<string, unknown>)[primary.slug] : null;
    const name = typeof value === "string" && value !== "" ? value : null;
    // Past the answer's budget a name is left out: the client shows the id.
    if (budget.spend(name?.length ?? 4)) names[row.id] = name;
  }
  return names;
}
