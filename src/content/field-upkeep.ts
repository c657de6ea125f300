import { fillIndexedValues, removeIndexedValues, storeValue } from "./store";
import { FIELD_KINDS } from "./fields/registry";
import { convertRows, finishConversion } from "./field-convert";
import { eq, inArray, isNotNull, sql } from "drizzle-orm";
import { BackgroundTask } from "../shared/background-task";
import type { AppContext, Tx } from "../context";
import { preparedFor } from "../db/client";
import { write } from "../db/tx";
import { type FieldRow, forgetBases, loadFields } from "./bases";
import { sortableSql } from "./field-sql";
import { dropLinks } from "./relations/store";
import { recordFields } from "./records/view";
import { droppedFields, fields, records } from "../tables/content";
import { keepDeletedValues } from "./field-changes";

/**
 * Rows one step clearing a deleted field removes (links, indexed values, or records' values). A
 * step is one write of its own, queued with the requests' writes, so this bounds how long the
 * upkeep holds the writer (docs/performance.md: about 10 ms for 1,000 records of five fields).
 */
export const UPKEEP_BATCH = 1000;

/**
 * How long one step filling a field may work before it commits and lets other writes in: a step
 * does parts of `FILL_PART` records (`FORMULA_PART` for a stored formula, whose every record
 * written also rewrites its indexed values) until this is spent. A record's cost grows with the
 * base (0.27 ms a formula record at 20,000 records, 0.78 ms at 200,000: index pages no longer in
 * the cache), so a step is bounded by time, not by a count (bench/results/links.md).
 */
export const FILL_STEP_MS = 40;
const FILL_PART = 250;
export const FORMULA_PART = 25;
/** A conversion's part: each record converted may be rewritten, with its indexed values and search entry (0.2-0.3 ms a record at 20,000). */
const CONVERT_PART = 50;

/** Where a walk over a base's records stands: the last record done, in the order of `records_created_idx`. */
type Position = [status: string, createdAt: number, id: string];

const positionTerms = sql`(${records.status}, ${records.createdAt}, ${records.id})`;
const after = (from: Position | null) => (from ? sql` AND ${positionTerms} > (${from[0]}, ${from[1]}, ${from[2]})` : sql``);

/** A part of a walk: its records' ids, and the last one's position (null when no records are left after it). */
type Part = { ids: string[]; end: Position | null };

/**
 * The next part of a walk: up to `size` records after `from`, read from `records_created_idx`
 * alone. The part's statements then name its records by id: a range between two positions was
 * planned on `records_updated_idx` and read every record of the base's status, so a part of 25
 * records cost 72 ms at 200,000 records against 4 ms at 20,000 (docs/performance.md).
 */
function nextPart(tx: Tx, baseId: string, from: Position | null, size = UPKEEP_BATCH): Part {
  const rows = tx.db.values<Position>(
    sql`SELECT ${records.status}, ${records.createdAt}, ${records.id} FROM ${records} WHERE ${records.baseId} = ${baseId}${after(from)} ORDER BY 1, 2, 3 LIMIT ${size}`,
  );
  return { ids: rows.map((row) => row[2]), end: rows.length === size ? rows[size - 1] : null };
}

const partOf = (part: Part) => inArray(records.id, part.ids);

const nextConverting = preparedFor((db) => db.select().from(fields).where(isNotNull(fields.convertFrom)).limit(1).prepare());
const nextDropping = preparedFor((db) => db.select().from(fields).where(eq(fields.indexState, "dropping")).limit(1).prepare());
const nextBuilding = preparedFor((db) => db.select().from(fields).where(eq(fields.indexState, "building")).limit(1).prepare());
const nextDropped = preparedFor((db) => db.select().from(droppedFields).limit(1).prepare());

/** Writes a stored formula's values into a batch of its base's records, where they differ from those stored (the triggers keep its index). */
function storeFormula(tx: Tx, field: FieldRow, part: Part): void {
  const fieldRows = loadFields(tx, field.baseId);
  const path = `$."${field.slug}"`;
  for (const row of tx.db.select().from(records).where(partOf(part)).all()) {
    const value = recordFields(row, fieldRows)[field.slug] ?? null;
    if (JSON.stringify(value) !== JSON.stringify(row.data[field.slug] ?? null)) storeValue(tx, row.id, path, JSON.stringify(value));
  }
}

/**
 * Background upkeep of the fields' indexed values, a bounded step at a time, so that creating or
 * deleting a field never holds the writer however many records its base has:
 * - a field created in a base with records is `building`: its values are filled in from the
 *   records, a batch at a time (the triggers keep every record written meanwhile), then it is
 *   `ready` and listings use it; a stored formula made or changed is `building` too, and each
 *   batch first computes and stores its values (`fields/formula/plan.ts`);
 * - a field deleted (with its base or space too) is in `dropped_fields`: its links (a relation's)
 *   and indexed values are removed, then its values under its slug are cleared from the base's records.
 * Walks resume from memory; after a restart they start over, and every step is idempotent.
 */
export class FieldUpkeep {
  private readonly filled = new Map<string, Position>();
  private readonly converted = new Map<string, Position>();
  private readonly cleared = new Map<string, Position>();
  private readonly task = new BackgroundTask(() => this.run());
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  /** The context it works in, from `start` on: until then a wake does nothing and no listing waits. */
  private ctx!: AppContext;
  private started = false;

  /** Listings waiting for fields being indexed: each is told once none of its fields is building, or when its time is up. */
  private readonly waiting = new Set<{ fieldIds: string[]; done: () => void }>();

  /** Starts the upkeep in `ctx`, whose `fieldUpkeep` is this one (the `serve` command wires both). */
  start(ctx: AppContext): this {
    this.ctx = ctx;
    this.started = true;
    this.wake();
    return this;
  }

  /** Resolves once none of `fieldIds` is being indexed (they are ready, or no longer asked for), or after `ms`. */
  readonly whenIndexed = (fieldIds: string[], ms: number): Promise<void> => {
    if (!this.started || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = {
        fieldIds,
        done: () => {
          clearTimeout(timer);
          this.waiting.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, ms);
      this.waiting.add(waiter);
      this.wake();
    });
  };

  /** Tells the waiters whose fields are no longer building. */
  private answerWaiting(): void {
    if (this.waiting.size === 0) return;
    const building = new Set(this.ctx.db.select({ id: fields.id }).from(fields).where(eq(fields.indexState, "building")).all().map((row) => row.id));
    for (const waiter of [...this.waiting]) if (!waiter.fieldIds.some((id) => building.has(id))) waiter.done();
  }

  /** Runs the upkeep soon: after a commit that made work for it, or the timer of a retry. */
  readonly wake = (): void => {
    if (this.started && !this.stopped) this.task.wake();
  };

  /** Resolves once no work is left (for tests and shutdown). */
  settled(): Promise<void> {
    return this.task.idle();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.task.stop();
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopped && (await write(this.ctx, (tx) => this.step(tx)))) {
        this.answerWaiting();
        await new Promise((resolve) => setImmediate(resolve));
      }
      this.answerWaiting();
    } catch (error) {
      this.ctx.log.error(`field upkeep: ${error instanceof Error ? error.message : String(error)}; trying again in 1 s`);
      this.timer = setTimeout(() => this.wake(), 1000);
    }
  }

  /** One bounded step of whatever work there is; answers whether any was found. */
  private step(tx: Tx): boolean {
    const converting = nextConverting(tx).get();
    if (converting) {
      this.convertStep(tx, converting);
      return true;
    }
    const dropping = nextDropping(tx).get();
    if (dropping) {
      // The last batch and the state change share a write, so no value is left behind.
      if (removeIndexedValues(tx, dropping.id, UPKEEP_BATCH) < UPKEEP_BATCH) {
        tx.db.update(fields).set({ indexState: "none" }).where(eq(fields.id, dropping.id)).run();
        forgetBases(tx);
      }
      return true;
    }
    const building = nextBuilding(tx).get();
    if (building) {
      this.fillStep(tx, building);
      return true;
    }
    const dropped = nextDropped(tx).get();
    if (dropped) {
      this.dropStep(tx, dropped);
      return true;
    }
    return false;
  }

  private fillStep(tx: Tx, field: FieldRow): void {
    const began = performance.now();
    let from = this.filled.get(field.id) ?? null;
    do {
      const { filledByUpkeep } = FIELD_KINDS[field.type];
      const part = nextPart(tx, field.baseId, from, filledByUpkeep ? FORMULA_PART : FILL_PART);
      if (filledByUpkeep) storeFormula(tx, field, part);
      fillIndexedValues(tx, field.id, sortableSql(field), partOf(part));
      if (!part.end) {
        tx.db.update(fields).set({ indexState: "ready" }).where(eq(fields.id, field.id)).run();
        forgetBases(tx);
        tx.afterCommit(() => this.filled.delete(field.id));
        return;
      }
      from = part.end;
    } while (performance.now() - began < FILL_STEP_MS);
    const reached = from;
    tx.afterCommit(() => this.filled.set(field.id, reached));
  }

  /** A conversion: the field's old indexed values removed (a batch a step), then its records converted in parts until `FILL_STEP_MS` is spent. */
  private convertStep(tx: Tx, field: FieldRow): void {
    if (removeIndexedValues(tx, field.id, UPKEEP_BATCH) > 0) return;
    const began = performance.now();
    let from = this.converted.get(field.id) ?? null;
    let current = field;
    do {
      const part = nextPart(tx, field.baseId, from, CONVERT_PART);
      current = convertRows(tx, current, tx.db.select({ id: records.id, data: records.data }).from(records).where(partOf(part)).all());
      if (!part.end) {
        finishConversion(tx, current);
        tx.afterCommit(() => this.converted.delete(field.id));
        return;
      }
      from = part.end;
    } while (performance.now() - began < FILL_STEP_MS);
    const reached = from;
    tx.afterCommit(() => this.converted.set(field.id, reached));
  }

  private dropStep(tx: Tx, dropped: typeof droppedFields.$inferSelect): void {
    if (dropLinks(tx, dropped.fieldId, UPKEEP_BATCH) > 0) return;
    if (removeIndexedValues(tx, dropped.fieldId, UPKEEP_BATCH) > 0) return;
    const from = this.cleared.get(dropped.fieldId) ?? null;
    const part = nextPart(tx, dropped.baseId, from);
    const path = `$."${dropped.slug}"`;
    keepDeletedValues(tx, dropped.fieldId, path, partOf(part));
    tx.db.run(sql`UPDATE ${records} SET "data" = json_remove("data", ${path}) WHERE ${partOf(part)} AND json_type("data", ${path}) IS NOT NULL`);
    const to = part.end;
    if (to) {
      tx.afterCommit(() => this.cleared.set(dropped.fieldId, to));
      return;
    }
    tx.db.delete(droppedFields).where(eq(droppedFields.fieldId, dropped.fieldId)).run();
    tx.afterCommit(() => this.cleared.delete(dropped.fieldId));
  }
}
