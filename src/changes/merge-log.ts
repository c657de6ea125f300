import { and, asc, count, eq, gt, inArray, max, sql } from "drizzle-orm";
import { type Static, t } from "elysia";
import { commitColumns, CommitSchema, commitView, userRefs } from "../content/commits";
import type { AppContext, Tx } from "../context";
import { insertRow, preparedFor } from "../db/client";
import { Nullable, WholeNumber } from "../shared/schemas";
import { seenWhere, type Sight } from "../spaces/sight";
import { seenCommits } from "../content/records/seen";
import { commits } from "../tables/content";
import { changeRequests, instance, mergeLog, operations } from "../tables/changes";

/**
 * The merge log (docs/remotes.md): each merged commit's place in its space's order of merges,
 * written by the merge itself, and read by a follower from a cursor. The read side of remotes.
 */

/** Appends the commits a merge landed, in its operations' order (`insertRow`: every merge runs it; SQLite gives each the next seq). */
export function logMerged(tx: Tx, spaceId: string, changeRequestId: string, commitIds: string[]): void {
  for (const commitId of commitIds) insertRow(tx, mergeLog, { spaceId, commitId, changeRequestId });
}

const instanceRow = preparedFor((db) => db.select({ id: instance.id }).from(instance).prepare());

/** This instance's lasting id (made by its first migration to hold one). */
export const instanceId = (ctx: AppContext): string => instanceRow(ctx).get()!.id;

const headOf = preparedFor((db) =>
  db
    .select({ seq: max(mergeLog.seq) })
    .from(mergeLog)
    .where(eq(mergeLog.spaceId, sql.placeholder("spaceId")))
    .prepare(),
);

/** The most commits one page of the merge log gives. */
export const MERGE_LOG_PAGE = { default: 500, most: 1000 } as const;

export const SyncStateSchema = t.Object({
  instanceId: t.String({ description: "This instance's lasting id: the origin of what it merged." }),
  spaceId: t.String(),
  head: WholeNumber({ description: "The space's last merge-log seq (0 before any merge since the log began); seqs only grow, with gaps where other spaces merged." }),
  pageLimit: WholeNumber({ description: "The most commits one GET /sync/commits page gives." }),
  behind: t.Optional(WholeNumber({ description: "With `after`: how many commits merged after it (what a follower at that cursor has not pulled)." })),
});

const MergedCommitSchema = t.Composite([
  CommitSchema,
  t.Object({
    seq: WholeNumber({ minimum: 1 }),
    changeRequestId: t.String(),
    recordId: Nullable(t.String({ description: "The record a record commit is of: its payload is the record's whole values after it." })),
    origin: t.String({ description: "The instance where the commit was made." }),
    pushed: Nullable(
      t.Object(
        { origin: t.String(), changeRequestId: t.String(), with: t.Optional(t.Array(t.String(), { description: "The changes of records pushed in the same proposal (filling the fields it adds): that instance's change ids." })) },
        { description: "The change another instance pushed that this commit merged (its instance and its own change id): that instance knows it as its own change coming back." },
      ),
    ),
  }),
]);

export const MergedPageSchema = t.Object({
  commits: t.Array(MergedCommitSchema),
  head: WholeNumber(),
  next: Nullable(WholeNumber({ description: "The `after` of the next page; null when this page reached the head." })),
});

const countAfter = preparedFor((db) =>
  db
    .select({ n: count() })
    .from(mergeLog)
    .where(and(eq(mergeLog.spaceId, sql.placeholder("spaceId")), gt(mergeLog.seq, sql.placeholder("after"))))
    .prepare(),
);

export const syncState = (ctx: AppContext, spaceId: string, after?: number): Static<typeof SyncStateSchema> => ({
  instanceId: instanceId(ctx),
  spaceId,
  head: headOf(ctx).get({ spaceId })?.seq ?? 0,
  pageLimit: MERGE_LOG_PAGE.most,
  ...(after === undefined ? {} : { behind: countAfter(ctx).get({ spaceId, after })?.n ?? 0 }),
});

/** Of these change requests, those another instance pushed (`acceptPush`'s meta): by id, the instance and its change's id there. */
function pushedFrom(ctx: AppContext, changeRequestIds: string[]): Map<string, { origin: string; changeRequestId: string; with?: string[] }> {
  const ids = [...new Set(changeRequestIds)];
  const rows = ids.length ? ctx.db.select({ id: changeRequests.id, meta: changeRequests.sourceMeta }).from(changeRequests).where(inArray(changeRequests.id, ids)).all() : [];
  return new Map(
    rows.flatMap(({ id, meta }) =>
      typeof meta.origin === "string" && typeof meta.pushedChangeRequestId === "string"
        ? [[id, { origin: meta.origin, changeRequestId: meta.pushedChangeRequestId, ...(Array.isArray(meta.pushedWith) ? { with: meta.pushedWith.map(String) } : {}) }] as const]
        : [],
    ),
  );
}

/**
 * `GET /sync/commits`: merged commits after `after`, in merge order, at most `limit`; those of a
 * node or base hidden from the caller are left out (the page still moves past them).
 */
export function mergedSince(ctx: AppContext, spaceId: string, sight: Sight, after: number, limit: number): Static<typeof MergedPageSchema> {
  const logged = ctx.db
    .select({ seq: mergeLog.seq, changeRequestId: mergeLog.changeRequestId, commitId: mergeLog.commitId })
    .from(mergeLog)
    .where(and(eq(mergeLog.spaceId, spaceId), gt(mergeLog.seq, after)))
    .orderBy(asc(mergeLog.seq))
    .limit(limit)
    .all();
  const ids = logged.map((row) => row.commitId);
  // A commit that made a node or a base names it only through its operation, which the merge gave it.
  const place = { nodeId: sql`coalesce(${commits.nodeId}, ${operations.nodeId})`, baseId: sql`coalesce(${commits.baseId}, ${operations.baseId})` };
  const read = ids.length ? ctx.db.select(commitColumns).from(commits).leftJoin(operations, eq(operations.id, commits.operationId)).where(and(inArray(commits.id, ids), ...seenWhere(place, sight))).all() : [];
  const rows = seenCommits(ctx, spaceId, sight, read);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const people = userRefs(ctx, rows.map((row) => row.authorId));
  const head = headOf(ctx).get({ spaceId })?.seq ?? 0;
  const last = logged.at(-1)?.seq ?? after;
  const here = instanceId(ctx);
  const pushed = pushedFrom(ctx, logged.map((row) => row.changeRequestId));
  return {
    commits: logged.flatMap((entry) => {
      const row = byId.get(entry.commitId);
      return row ? [{ ...commitView(row, people), seq: entry.seq, changeRequestId: entry.changeRequestId, recordId: row.recordId, origin: row.origin ?? here, pushed: pushed.get(entry.changeRequestId) ?? null }] : [];
    }),
    head,
    next: last < head ? last : null,
  };
}
