import { fieldsNamedByViews } from "./store";
import { FIELD_KINDS, FILLED_BY_UPKEEP } from "./fields/registry";
import { and, eq, inArray, isNull, lt, notInArray, or, sql } from "drizzle-orm";
import type { AppContext, Tx } from "../context";
import { writeInBackground } from "../db/tx";
import { type FieldRow, forgetBases } from "./bases";
import { isIndexable } from "./field-sql";
import { fields, records } from "../tables/content";

/**
 * When a field gets an index (its values in `field_values`, which listings walk and seek) and when
 * it loses it. An index costs every create of its base (docs/performance.md), so a field is indexed
 * only when something asks for it:
 * - a saved view filters or sorts by it (at the view's merge);
 * - listings filtered or sorted by it `queries` times within `windowMs` (noted in memory, per
 *   process: a restart starts the count again);
 * and, unless a view still names it, it loses its index after `unusedMs` without a listing using
 * it (a daily job). A stored formula keeps its index: the upkeep that fills it also computes its
 * values. A query on a field without an index is still exact: it checks each record.
 */
export const INDEX_RULE = { queries: 3, windowMs: 10 * 60_000, unusedMs: 30 * 24 * 60 * 60_000, touchMs: 60 * 60_000 } as const;

/** Inside a write: the fields become indexed, at once in a base without records, else filled by the upkeep. */
export function indexFields(tx: Tx, fieldRows: FieldRow[]): void {
  const wanted = fieldRows.filter((field) => (field.indexState === "none" || field.indexState === "dropping") && !FIELD_KINDS[field.type].filledByUpkeep && !field.convertFrom && isIndexable(field));
  if (wanted.length === 0) return;
  const byBase = new Map<string, string[]>();
  for (const field of wanted) byBase.set(field.baseId, [...(byBase.get(field.baseId) ?? []), field.id]);
  const at = new Date(tx.clock.now()).toISOString();
  for (const [baseId, ids] of byBase) {
    const empty = tx.db.select({ one: sql`1` }).from(records).where(eq(records.baseId, baseId)).limit(1).all().length === 0;
    tx.db
      .update(fields)
      .set({ indexState: empty ? "ready" : "building", indexUsedAt: at })
      .where(and(inArray(fields.id, ids), eq(fields.indexState, "none")))
      .run();
    // An index being dropped is filled again: what the drop removed comes back, what it kept stays exact.
    tx.db
      .update(fields)
      .set({ indexState: "building", indexUsedAt: at })
      .where(and(inArray(fields.id, ids), eq(fields.indexState, "dropping")))
      .run();
  }
  forgetBases(tx);
  tx.afterCommit(tx.fieldUpkeep.wake);
}

/**
 * A listing's fields (filtered by a range or equality, or sorted by): an unindexed one asked for
 * often enough is indexed (in a write of its own, after the answer); an indexed one is noted as used.
 */
export function noteFieldsQueried(ctx: AppContext, queried: FieldRow[]): void {
  const now = ctx.clock.now();
  const demand = ctx.indexDemand;
  const toIndex: FieldRow[] = [];
  const toTouch: string[] = [];
  for (const field of queried) {
    if (field.indexState === "ready") {
      if (now - (demand.touched.get(field.id) ?? 0) < INDEX_RULE.touchMs) continue;
      demand.touched.set(field.id, now);
      toTouch.push(field.id);
    } else if (field.indexState === "none" && !FIELD_KINDS[field.type].filledByUpkeep && isIndexable(field)) {
      const recent = (demand.asked.get(field.id) ?? []).filter((at) => now - at < INDEX_RULE.windowMs);
      recent.push(now);
      demand.asked.set(field.id, recent);
      if (recent.length >= INDEX_RULE.queries) {
        demand.asked.delete(field.id);
        toIndex.push(field);
      }
    }
  }
  forgetOldDemand(demand, now);
  if (toIndex.length > 0) writeInBackground(ctx, "indexing a field listings ask for", (tx) => indexFields(tx, toIndex));
  if (toTouch.length > 0) {
    const at = new Date(now).toISOString();
    writeInBackground(ctx, "noting an index's use", (tx) => tx.db.update(fields).set({ indexUsedAt: at }).where(inArray(fields.id, toTouch)).run());
  }
}

/** The most fields `indexDemand` notes (each list of times holds at most `INDEX_RULE.queries`). */
const MAX_NOTED_FIELDS = 10_000;

/** Keeps what listings asked bounded: past `MAX_NOTED_FIELDS`, what is out of its window goes, then the earliest noted. */
function forgetOldDemand(demand: AppContext["indexDemand"], now: number): void {
  for (const [notes, windowMs] of [
    [demand.asked, INDEX_RULE.windowMs],
    [demand.touched, INDEX_RULE.touchMs],
  ] as const) {
    if (notes.size <= MAX_NOTED_FIELDS) continue;
    for (const [id, at] of notes) if (now - (Array.isArray(at) ? at[at.length - 1] : at) >= windowMs) notes.delete(id);
    for (const id of notes.keys()) if (notes.size > MAX_NOTED_FIELDS) notes.delete(id);
  }
}

/** The fields every active view filters or sorts by (by the id the view saved), which keep their indexes. */
const fieldsViewsName = (ctx: AppContext): Set<string> => new Set(fieldsNamedByViews(ctx));

/** Daily: indexes no listing used for `unusedMs`, and no view names, are dropped (by the upkeep, a batch a step). Answers how many. */
export function dropUnusedIndexes(tx: Tx): number {
  const cutoff = new Date(tx.clock.now() - INDEX_RULE.unusedMs).toISOString();
  const kept = [...fieldsViewsName(tx)];
  const dropped = tx.db
    .update(fields)
    .set({ indexState: "dropping" })
    .where(
      and(
        eq(fields.indexState, "ready"),
        notInArray(fields.type, [...FILLED_BY_UPKEEP]),
        or(lt(fields.indexUsedAt, cutoff), and(isNull(fields.indexUsedAt), lt(fields.createdAt, cutoff))),
        kept.length > 0 ? sql`${fields.id} NOT IN (SELECT "value" FROM json_each(${JSON.stringify(kept)}))` : undefined,
      ),
    )
    .returning({ id: fields.id })
    .all().length;
  if (dropped > 0) {
    forgetBases(tx);
    tx.afterCommit(tx.fieldUpkeep.wake);
  }
  return dropped;
}
