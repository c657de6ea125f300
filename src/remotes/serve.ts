import { type Static, t } from "elysia";
import { instanceId } from "../changes/merge-log";
import { checkPushedStructure, proposal, proposePushedRecords, type Proposer, type PushedRecordChange, pushedRecordsWithFields } from "../changes/proposals";
import { type Proposal, propose, type ProposedOperation, REMOTE_CHANNEL } from "../changes/propose";
import { checkPushedTreeChange, treeKindOf } from "../changes/node-content";
import { and, eq } from "drizzle-orm";
import { changeRequests, operations } from "../tables/changes";
import { commits, OPERATION_KINDS } from "../tables/content";
import { same, threeWay } from "../changes/three-way";
import { DEFAULT_REVIEW_POLICY, findBase, type LoadedBase, type NewField } from "../content/bases";
import { findRecord, recordIdTaken, recordInSpace } from "../content/records/read";
import { linkLists } from "../content/records/validate";
import { currentFields } from "../content/records/view";
import type { AppContext } from "../context";
import { ApiError, badRequest, conflict, notFound } from "../shared/errors";
import { Nullable, WholeNumber } from "../shared/schemas";
import type { MergeConflict } from "../tables/changes";
import { peoplePage, storedPage } from "../transfer/dump-api";
import { DUMP_TABLES } from "../transfer/store";
import { spaceRow } from "../transfer/store";
import { mergeLogHead } from "./store";
import { adoptAsset, assetView, type AssetView } from "../assets/assets";
import { type Upload, uploadBytes } from "../assets/storage";

/**
 * The remote's half of the protocol (docs/remotes.md): snapshots a clone reads page by page, and
 * changes another instance pushes. The merge log's routes are `changes/merge-log.ts`.
 */

/** What a clone copies: a space's tables as a dump holds them, but for what stays the remote's own (its webhook rules and audit). */
export const SNAPSHOT_TABLES = ["users", ...DUMP_TABLES.map((table) => table.table).filter((name) => !["spaces", "webhook_rules", "audit_events"].includes(name))];

export const SNAPSHOT_PAGE = { default: 1000, most: 5000 } as const;

export const SnapshotSchema = t.Object({
  snapshotId: t.String({ description: "Names the snapshot in the page routes; closed after two idle minutes, or by DELETE." }),
  instanceId: t.String(),
  seq: WholeNumber({ description: "The space's merge-log seq the snapshot shows: a follower pulls commits after it." }),
  space: t.Object({ id: t.String(), name: t.String(), slug: t.String() }),
  tables: t.Array(t.String(), { description: "The tables to read, in an order that satisfies their references." }),
});

export const SnapshotPageSchema = t.Object({
  rows: t.Array(t.Record(t.String(), t.Unknown()), { description: "Rows as stored (snake_case columns, JSON columns as text); `users` rows are { id, email, name }." }),
  nextCursor: Nullable(t.String()),
});

export function beginSnapshot(ctx: AppContext, who: Proposer): Static<typeof SnapshotSchema> {
  const spaceId = who.scope.space.id;
  let seq = 0;
  let space: Record<string, unknown> | null = null;
  const snapshotId = ctx.snapshots.begin(spaceId, who.actor.user.id, (store) => {
    seq = mergeLogHead(store, spaceId);
    space = spaceRow(store, spaceId);
  });
  if (snapshotId === null) throw new ApiError(429, "TOO_MANY_REQUESTS", `${ctx.snapshots.most} snapshots are open on this instance; try again when a clone has finished.`);
  const row = space as unknown as { id: string; name: string; slug: string };
  return { snapshotId, instanceId: instanceId(ctx), seq, space: { id: row.id, name: row.name, slug: row.slug }, tables: SNAPSHOT_TABLES };
}

export function snapshotPage(ctx: AppContext, who: Proposer, snapshotId: string, table: string, cursor: string | undefined, limit: number): Static<typeof SnapshotPageSchema> {
  const spaceId = who.scope.space.id;
  if (!SNAPSHOT_TABLES.includes(table)) throw badRequest(`table must be one of ${SNAPSHOT_TABLES.join(", ")}.`);
  const store = ctx.snapshots.find(snapshotId, spaceId, who.actor.user.id);
  if (!store) throw notFound(`No snapshot ${snapshotId} is open for you in this space (they close after ${ctx.snapshots.idleMs / 1000} idle seconds); begin another.`);
  if (table === "users") return peoplePage(store, spaceId, cursor, limit);
  const page = storedPage(store, table, spaceId, cursor, limit);
  if (table !== "commits") return page;
  // Where each commit was made: here when the row names no other instance.
  const here = instanceId(ctx);
  return { ...page, rows: page.rows.map((row) => (row.origin === null ? { ...row, origin: here } : row)) };
}

export function endSnapshot(ctx: AppContext, who: Proposer, snapshotId: string): { ok: boolean } {
  if (!ctx.snapshots.find(snapshotId, who.scope.space.id, who.actor.user.id)) throw notFound(`No snapshot ${snapshotId} is open for you in this space.`);
  return { ok: ctx.snapshots.end(snapshotId) };
}

const RecordId = t.String({ pattern: "^rec_[0-9A-Za-z]{10,40}$" });

export const PushedFileQuery = t.Object({
  fileName: t.String({ minLength: 1, maxLength: 1000 }),
  mimeType: t.Optional(t.String({ maxLength: 255 })),
  contentHash: t.String({ pattern: "^(sha256:)?[0-9a-f]{64}$", description: "The bytes' SHA-256: bytes that do not match it are refused." }),
});

/**
 * A file another instance pushes with the records that name it (docs/remotes.md): kept with its
 * id there, so the pushed values name it here too; its bytes checked against their SHA-256 first.
 * Sent again, the same file answers as it is.
 */
export async function acceptFile(ctx: AppContext, who: Proposer, assetId: string, query: Static<typeof PushedFileQuery>, body: Upload): Promise<AssetView> {
  if (!/^ast_[0-9A-Za-z]{10,40}$/.test(assetId)) throw badRequest("A pushed file's id is its asset's id there (ast_...).");
  const max = ctx.config.maxFileBytes;
  const bytes = await uploadBytes(body, max, () => new ApiError(413, "PAYLOAD_TOO_LARGE", `The file is larger than ${max} bytes, the most one file may be here.`));
  const row = await adoptAsset(ctx, who.scope.space.id, { id: assetId, fileName: query.fileName, declaredType: query.mimeType ?? "application/octet-stream", createdBy: who.actor.user.id, contentHash: query.contentHash }, bytes);
  return assetView(row);
}
const Values = t.Record(t.String(), t.Unknown());

export const MAX_PUSHED_OPERATIONS = 1000;

export const PushSchema = t.Object({
  changeRequestId: t.String({ pattern: "^crq_[0-9A-Za-z]{10,40}$", description: "The change's id on the pushing instance: its idempotency key here, so a push sent again answers the first result." }),
  origin: t.String({ pattern: "^ins_[0-9a-f]{20}$", description: "The pushing instance's id." }),
  baseId: t.String(),
  message: t.Optional(t.String({ maxLength: 2000 })),
  operations: t.Array(
    t.Union([
      t.Object({ kind: t.Literal("record_create"), recordId: RecordId, fields: Values }),
      t.Object({ kind: t.Literal("record_update"), recordId: RecordId, fields: Values, base: Values }),
      t.Object({ kind: t.Union([t.Literal("record_delete"), t.Literal("record_restore")]), recordId: RecordId }),
    ]),
    { minItems: 1, maxItems: MAX_PUSHED_OPERATIONS, description: "An update sends the fields it changed and what they held where it was made (`base`): fields the record here changed since are a conflict." },
  ),
});

export const PushedSchema = t.Object({
  changeRequestId: t.String({ description: "The change request it became here." }),
  status: t.String({ description: "merged, in_review (waiting in the Inbox), conflict, or where a review took it." }),
  with: t.Optional(t.Array(t.String(), { description: "A change of structure sent with `records`: the change ids of those its change request holds (sent again, those it held the first time)." })),
});

const STRUCTURE_KINDS = OPERATION_KINDS.filter((kind) => !kind.startsWith("record_"));

export const PushStructureSchema = t.Object({
  changeRequestId: t.String({ pattern: "^crq_[0-9A-Za-z]{10,40}$", description: "The change's id on the pushing instance." }),
  origin: t.String({ pattern: "^ins_[0-9a-f]{20}$", description: "The pushing instance's id." }),
  message: t.Optional(t.String({ maxLength: 2000 })),
  operations: t.Array(
    t.Object({
      commitId: t.String({ pattern: "^cmt_[0-9A-Za-z]{10,40}$", description: "The operation's commit there: kept here, so what its merge makes has the same ids on both sides." }),
      kind: t.Union(STRUCTURE_KINDS.map((kind) => t.Literal(kind))),
      targetType: t.Union([t.Literal("node"), t.Literal("base")]),
      baseId: Nullable(t.String({ maxLength: 100 })),
      nodeId: Nullable(t.String({ maxLength: 100 })),
      payload: t.Record(t.String(), t.Unknown()),
    }),
    { minItems: 1, maxItems: MAX_PUSHED_OPERATIONS },
  ),
  records: t.Optional(
    t.Array(PushSchema, {
      maxItems: 100,
      description:
        "Record changes that fill the fields this change adds, each as `POST /sync/proposals` takes it, made after it there: they go in its change request, after its own operations (only with a change that adds fields to one base, and only creates and updates). Each keeps its own change id.",
    }),
  ),
});

/**
 * A change of structure (nodes, fields, views, documents, files of a tree) pushed from another
 * instance: a change request here as any proposal of it is, channel `remote`, merged at once where
 * the key's level, the base and the kinds allow, else waiting in the Inbox; its merge checks it as
 * any merge does. Its commits keep their ids, so the fields, views and nodes it makes have the ids
 * they have there, and come back to it as its own. Sent again, it answers the change request it made.
 */
export async function acceptStructure(ctx: AppContext, who: Proposer, push: Static<typeof PushStructureSchema>): Promise<Static<typeof PushedSchema>> {
  const spaceId = who.scope.space.id;
  const earlier = ctx.db.select({ crId: operations.changeRequestId }).from(commits).innerJoin(operations, eq(operations.id, commits.operationId)).where(and(eq(commits.id, push.operations[0].commitId), eq(commits.spaceId, spaceId))).get();
  const before = earlier ? ctx.db.select().from(changeRequests).where(eq(changeRequests.id, earlier.crId)).get() : undefined;
  if (before) return { changeRequestId: before.id, status: before.status, ...(Array.isArray(before.sourceMeta.pushedWith) ? { with: before.sourceMeta.pushedWith.map(String) } : {}) };
  const refs = new Set<string>();
  const ops = push.operations.map((op, index): ProposedOperation => {
    if (commitHere(ctx, op.commitId)) throw conflict(`operations[${index}]: a commit ${op.commitId} exists already.`, { reason: "COMMIT_EXISTS" });
    if ((op.nodeId && who.scope.sight.hiddenNodes.has(op.nodeId)) || (op.baseId && who.scope.sight.hiddenBases.has(op.baseId))) throw notFound(`operations[${index}] names what this space does not hold.`);
    let payload: Record<string, unknown>;
    try {
      payload = treeKindOf(op.kind) ? checkPushedTreeChange(ctx, spaceId, op) : checkPushedStructure(ctx, spaceId, op, refs);
    } catch (error) {
      if (error instanceof ApiError && push.operations.length > 1) throw new ApiError(error.status, error.code, `operations[${index}] (${op.kind}): ${error.message}`, error.data);
      throw error;
    }
    const viewId = payload.viewId;
    return { targetType: op.targetType, baseId: op.baseId, nodeId: op.nodeId, targetViewId: typeof viewId === "string" ? viewId : null, kind: op.kind, payload, commit: { id: op.commitId, origin: push.origin } } as ProposedOperation;
  });
  const first = ops[0];
  const loaded = first.targetType === "base" && first.baseId ? findBase(ctx, spaceId, first.baseId) : null;
  const records = push.records ?? [];
  let found: MergeConflict | undefined;
  if (records.length > 0) {
    // Records go with a change that adds fields to one base, which they fill: the reviewer sees the fields with the values they are for.
    if (!loaded || ops.some((op) => op.kind !== "base_add_field" || op.baseId !== loaded.base.id) || records.some((body) => body.baseId !== loaded.base.id)) throw badRequest("records go only with a change that adds fields to one base, and only records of that base.");
    const seen = new Set<string>();
    for (const body of records) {
      if (body.operations.some((op) => op.kind !== "record_create" && op.kind !== "record_update")) throw badRequest("records with a change of structure create or update records only.");
      const pushed = pushedChanges(ctx, spaceId, loaded, body, seen);
      found ??= pushed.found;
      ops.push(...pushedRecordsWithFields(ctx, spaceId, loaded, ops.filter((op) => op.kind === "base_add_field").map((op) => op.payload as unknown as NewField), pushed.changes));
    }
  }
  const asked = (autoMerge?: boolean): Proposal =>
    proposal({ ...who, attribution: { ...who.attribution, channel: REMOTE_CHANNEL } }, { message: push.message, idempotencyKey: push.changeRequestId, autoMerge }, {
      targetType: first.targetType,
      baseId: loaded?.base.id ?? null,
      nodeId: loaded?.node.id ?? first.nodeId,
      reviewPolicy: loaded?.base.reviewPolicy ?? DEFAULT_REVIEW_POLICY,
      operations: ops,
      meta: { origin: push.origin, pushedChangeRequestId: push.changeRequestId, ...(records.length > 0 ? { pushedWith: records.map((body) => body.changeRequestId) } : {}) },
      conflict: found,
      checkAtMerge: records.length > 0,
    });
  let proposed;
  try {
    proposed = await propose(ctx, asked());
  } catch (error) {
    // Its merge met a change made here since (a tree's file changed since the bytes it was made on): it waits in the Inbox for a person, as a pushed record change in conflict does, rather than refused each time it is sent.
    if (!(error instanceof ApiError) || error.reason !== "MERGE_CONFLICT") throw error;
    proposed = await propose(ctx, asked(false));
  }
  return { changeRequestId: proposed.changeRequest.id, status: proposed.changeRequest.status, ...(records.length > 0 ? { with: records.map((body) => body.changeRequestId) } : {}) };
}

const commitHere = (ctx: AppContext, id: string) => ctx.db.select({ id: commits.id }).from(commits).where(eq(commits.id, id)).get() !== undefined;

/** The id a pushed record takes here when another space holds the id it was given: the same each time (a push sent again finds it), this space's alone. */
const ownRecordId = (spaceId: string, given: string): string => `rec_${given.slice(4, 14)}${new Bun.CryptoHasher("sha256").update(`${spaceId}\n${given}`).digest("hex").slice(0, 8).toUpperCase()}`;

/**
 * A change pushed from another instance becomes a change request here, channel `remote`, from the
 * key's owner: merged at once where the key's level and the base allow, else waiting in the Inbox,
 * or stored in `conflict` when a field it changed was changed here too since it was made. The
 * pushing instance's change id is its idempotency key: a push sent again creates nothing twice.
 */
export async function acceptPush(ctx: AppContext, who: Proposer, push: Static<typeof PushSchema>): Promise<Static<typeof PushedSchema>> {
  const loaded = findBase(ctx, who.scope.space.id, push.baseId);
  if (who.scope.sight.hiddenBases.has(loaded.base.id)) throw notFound(`No base ${push.baseId} in this space.`);
  const { changes, found } = pushedChanges(ctx, who.scope.space.id, loaded, push, new Set());
  const proposed = await proposePushedRecords(ctx, { ...who, attribution: { ...who.attribution, channel: REMOTE_CHANNEL } }, loaded, changes, { message: push.message, idempotencyKey: push.changeRequestId }, {
    meta: { origin: push.origin, pushedChangeRequestId: push.changeRequestId },
    conflict: found,
  });
  return { changeRequestId: proposed.changeRequest.id, status: proposed.changeRequest.status };
}

/**
 * A pushed change's operations as this space takes them: a create keeps its id where it is free;
 * an update sends the fields it changed, and those the record here changed since differently are
 * its conflict (`found`, the first). `seen` holds the records named before: one operation a record.
 */
function pushedChanges(ctx: AppContext, spaceId: string, loaded: LoadedBase, push: Static<typeof PushSchema>, seen: Set<string>): { changes: PushedRecordChange[]; found?: MergeConflict } {
  let found: MergeConflict | undefined;
  const changes = push.operations.map((op, index): PushedRecordChange => {
    if (seen.has(op.recordId)) throw badRequest(`operations[${index}] names ${op.recordId} again: one operation a record.`);
    seen.add(op.recordId);
    if (op.kind === "record_create") {
      // An id another space holds is answered as one that exists nowhere: the record is made under an id of this space's own.
      if (recordIdTaken(ctx, op.recordId) && !recordInSpace(ctx, spaceId, op.recordId)) return { ...op, recordId: ownRecordId(spaceId, op.recordId) };
      return op;
    }
    if (op.kind !== "record_update") return op;
    const record = findRecord(ctx, spaceId, op.recordId);
    const ours = currentFields(ctx, loaded, record);
    const { conflicts } = threeWay(op.base, ours, op.fields, linkLists(loaded));
    if (conflicts.length > 0 && !found) found = { recordId: record.id, fields: conflicts };
    const changed = Object.fromEntries(Object.entries(op.fields).filter(([slug, value]) => !same(op.base[slug], value)));
    return { kind: "record_update", recordId: record.id, fields: changed, baseCommitId: record.headCommitId };
  });
  return { changes, found };
}

/** The most proposals one batch carries. */
export const MAX_PUSHED_BATCH = 100;

export const PushBatchSchema = t.Object({
  proposals: t.Array(PushSchema, { minItems: 1, maxItems: MAX_PUSHED_BATCH, description: "Pushed changes in the order they were made, each as `POST /sync/proposals` takes it." }),
});

const PushRefusal = t.Object({
  error: t.Object({ status: WholeNumber(), code: t.String(), error: t.String(), data: t.Optional(t.Record(t.String(), t.Unknown())) }),
});

export const PushedBatchSchema = t.Object({
  results: t.Array(t.Union([PushedSchema, PushRefusal]), {
    description: "One a proposal, in order: what it became, or why it was refused. A refusal of the change itself (400, 404, 409 but a conflict met while merging) does not stop the batch; any other failure is the last result, and the proposals after it are not taken: send them again.",
  }),
});

/** A refusal of the pushed change itself: the pusher keeps it as refused and goes on; any other failure is tried again later. */
const refusesTheChange = (error: ApiError) => [400, 404, 409].includes(error.status) && error.reason !== "MERGE_CONFLICT";

/**
 * Several pushed changes in one request, each taken as `acceptPush` takes it (its own change
 * request, review and idempotency key). A push of 10,000 changes one request each spent most of its
 * time between the two instances, and the remote committed each change alone. Here the changes are
 * taken in waves of consecutive ones that name no record another of the wave names: a wave's
 * checks all read the records before any of its changes merges, which is only right when none
 * touches another's record, and its writes commit together in one transaction.
 */
export async function acceptPushes(ctx: AppContext, who: Proposer, proposals: Static<typeof PushSchema>[]): Promise<Static<typeof PushedBatchSchema>> {
  const results: Static<typeof PushedBatchSchema>["results"] = [];
  for (let next = 0; next < proposals.length; ) {
    const wave: Static<typeof PushSchema>[] = [];
    const named = new Set<string>();
    while (next < proposals.length && (wave.length === 0 || proposals[next].operations.every((op) => !named.has(op.recordId)))) {
      for (const op of proposals[next].operations) named.add(op.recordId);
      wave.push(proposals[next++]);
    }
    const settled = await Promise.allSettled(wave.map((push) => acceptPush(ctx, who, push)));
    for (const outcome of settled) {
      if (outcome.status === "fulfilled") {
        results.push(outcome.value);
        continue;
      }
      const error = outcome.reason;
      if (!(error instanceof ApiError)) throw error;
      results.push({ error: { status: error.status, code: error.code, error: error.message, ...(error.data ? { data: error.data } : {}) } });
      if (!refusesTheChange(error)) return { results };
    }
  }
  return { results };
}
