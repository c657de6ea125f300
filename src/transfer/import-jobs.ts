import { and, desc, eq } from "drizzle-orm";
import { type Static, t } from "elysia";
import { iso } from "../shared/clock";
import type { AppContext } from "../context";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { conflict, notInSpace } from "../shared/errors";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import { IMPORT_STATUSES, imports } from "../tables/transfer";

export const ImportJobSchema = t.Object(
  {
    id: t.String(),
    baseId: t.String(),
    status: oneOf(IMPORT_STATUSES),
    rowCount: t.Integer({ description: "The rows of the file." }),
    rowsMerged: t.Integer({ description: "The rows merged (or proposed, when the import waits for review) so far." }),
    changeRequests: t.Array(t.Object({ id: t.String(), status: t.String(), operationCount: t.Integer() }), { description: "Its parts so far, in the file's order." }),
    reason: Nullable(t.String({ description: "Why a failed import stopped." })),
    idempotencyKey: t.String({ description: "Send the same file again with this key (Idempotency-Key) to finish a failed import: parts already merged are not merged again." }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "ImportJob", description: "An import of a file into a base, and how far it went." },
);
export type ImportJob = Static<typeof ImportJobSchema>;
type ImportRow = typeof imports.$inferSelect;
type Part = ImportRow["changeRequests"][number];

const view = (row: ImportRow): ImportJob => ({
  id: row.id,
  baseId: row.baseId,
  status: row.status,
  rowCount: row.rowCount,
  rowsMerged: row.rowsMerged,
  changeRequests: row.changeRequests,
  reason: row.reason,
  idempotencyKey: row.idempotencyKey,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

/** The imports this process is running now: a job `running` in the table and not here was cut short. */
const runningHere = new Set<string>();

/**
 * Starts (or takes up again) the job of an import: a new one, or, for a key already used by the
 * same person on the same base, that job: answered as it is when done, refused while it runs, run
 * again when it failed (its merged parts are then answered by their keys, never merged twice).
 */
export async function startImportJob(ctx: AppContext, who: { spaceId: string; userId: string }, baseId: string, key: string | undefined, rowCount: number): Promise<{ job: ImportJob; done: boolean }> {
  const at = iso(ctx.clock.now());
  const row = await write(ctx, (tx) => {
    const earlier = key === undefined ? undefined : tx.db.select().from(imports).where(and(eq(imports.baseId, baseId), eq(imports.createdBy, who.userId), eq(imports.idempotencyKey, key))).get();
    if (earlier?.status === "done") return earlier;
    if (earlier && runningHere.has(earlier.id)) throw conflict(`The import ${earlier.id} with this key is still running; read it with GET /api/v1/imports/${earlier.id}.`, { reason: "IMPORT_RUNNING", importId: earlier.id });
    if (earlier) {
      const again = { ...earlier, status: "running" as const, rowCount, reason: null, updatedAt: at };
      tx.db.update(imports).set({ status: again.status, rowCount, reason: null, updatedAt: at }).where(eq(imports.id, earlier.id)).run();
      return again;
    }
    const id = newId("imp");
    const made: ImportRow = { id, spaceId: who.spaceId, baseId, createdBy: who.userId, idempotencyKey: key ?? id, status: "running", rowCount, rowsMerged: 0, changeRequests: [], reason: null, createdAt: at, updatedAt: at };
    tx.db.insert(imports).values(made).run();
    return made;
  });
  if (row.status !== "done") runningHere.add(row.id);
  return { job: view(row), done: row.status === "done" };
}

/** The key of a job's part `n`: the same part of the same file sent again is the same change request. */
export const partKey = (job: ImportJob, n: number) => `${job.idempotencyKey}#${n}`;

/** Records a part proposed: the job's parts, in order, and the rows merged so far. */
export function recordImportPart(ctx: AppContext, job: ImportJob, n: number, part: Part): Promise<void> {
  job.changeRequests[n] = part;
  job.rowsMerged = job.changeRequests.reduce((sum, each) => sum + each.operationCount, 0);
  return write(ctx, (tx) => void tx.db.update(imports).set({ changeRequests: job.changeRequests, rowsMerged: job.rowsMerged, updatedAt: iso(tx.clock.now()) }).where(eq(imports.id, job.id)).run());
}

/** Ends a job: done, or failed with the reason a client is told. */
export async function endImportJob(ctx: AppContext, job: ImportJob, failure?: unknown): Promise<void> {
  runningHere.delete(job.id);
  job.status = failure === undefined ? "done" : "failed";
  job.reason = failure === undefined ? null : failure instanceof Error ? failure.message : String(failure);
  await write(ctx, (tx) => void tx.db.update(imports).set({ status: job.status, reason: job.reason, updatedAt: iso(tx.clock.now()) }).where(eq(imports.id, job.id)).run());
}

/** When `serve` starts: every job still `running` was cut short by the stop before. */
export function failInterruptedImports(ctx: AppContext): Promise<number> {
  return write(ctx, (tx) =>
    tx.db
      .update(imports)
      .set({ status: "failed", reason: "The server stopped while this import ran. Send the same file again with the same Idempotency-Key to finish it: the parts already merged are not merged again.", updatedAt: iso(tx.clock.now()) })
      .where(eq(imports.status, "running"))
      .returning({ id: imports.id })
      .all().length,
  );
}

export function getImportJob(ctx: AppContext, spaceId: string, id: string): ImportJob {
  const row = ctx.db.select().from(imports).where(and(eq(imports.id, id), eq(imports.spaceId, spaceId))).get();
  if (!row) throw notInSpace("import", id);
  return view(row);
}

/** A base's imports, newest first (at most 20): what the page shows, a failed one first of all. */
export function listImportJobs(ctx: AppContext, baseId: string): ImportJob[] {
  return ctx.db.select().from(imports).where(eq(imports.baseId, baseId)).orderBy(desc(imports.id)).limit(20).all().map(view);
}
