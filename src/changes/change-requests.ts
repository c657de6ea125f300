import { OPERATIONS } from "./operation-kinds";
import { type AuditActor, recordAudit } from "../audit/audit";
import type { Static } from "@sinclair/typebox";
import { and, count, desc, eq, inArray, lt, type SQL, sql } from "drizzle-orm";
import { t } from "elysia";
import type { Actor } from "../auth/actor";
import { atLeast, type Level } from "../shared/levels";
import { findBase, type LoadedBase } from "../content/bases";
import { checkRecordInput } from "../content/links";
import { findRecord, getRecord } from "../content/records/read";
import { RecordSchema, type RecordView } from "../content/records/view";
import type { ReviewPolicy, SourceAttribution, TargetType } from "../tables/content";
import { iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { preparedFor } from "../db/client";
import { write } from "../db/tx";
import { newId } from "../db/ids";
import { ApiError, badRequest, conflict, forbidden, notFound } from "../shared/errors";
import { JsonObject, Nullable, WholeNumber } from "../shared/schemas";
import { recordEvent } from "../events/outbox";
import type { SpaceScope } from "../spaces/resolve";
import { checkBaseCommit, type CommitRow, insertCommit, type UserRef } from "../content/commits";
import { directCount, directCounts, directOfRecord, directOperations, directPage, findDirect, newestFirst, proposalStorage } from "./direct";
import { type ChangeRequestRow, mergeInTransaction, type MergeOutcome, type OperationRow } from "./merge";
import type { OperationChange } from "./operations";
import { changeRequests, type ChangeStatus, operations, reviews, type Verdict } from "../tables/changes";
import { ChangeRequestSchema, type ChangeRequestView, changeRequestViews, mergedRecordIds } from "./views";

export const CHANNELS = ["api", "cli", "sdk", "mcp", "agent"] as const;

/** Who proposed, as reviewers see it: the key's name (or the user's, for a session) and the channel. */
export function sourceAttribution(actor: Actor, channelHeader: string | undefined): SourceAttribution {
  if (actor.credential.type === "session") return { displayName: actor.user.name, ownerName: actor.user.name, channel: "web_ui" };
  if (actor.credential.type === "operator") return { displayName: actor.user.name, ownerName: actor.user.name, channel: "cli" };
  const channel = channelHeader ?? "api";
  if (!(CHANNELS as readonly string[]).includes(channel)) throw badRequest(`x-basalt-channel must be one of ${CHANNELS.join(", ")}.`);
  return { displayName: actor.credential.key.name, ownerName: actor.user.name, channel };
}

/** One operation of a proposal: what it targets, and its kind with its payload. */
export type ProposedOperation = {
  targetType: TargetType;
  baseId: string | null;
  nodeId: string | null;
  targetRecordId?: string | null;
  targetViewId?: string | null;
  baseCommitId?: string | null;
  deleteMode?: "archive" | null;
} & OperationChange;

export interface Proposal {
  scope: SpaceScope;
  actor: Actor;
  attribution: SourceAttribution;
  targetType: TargetType;
  baseId: string | null;
  nodeId: string | null;
  reviewPolicy: ReviewPolicy;
  operations: ProposedOperation[];
  /**
   * Checks the operations' values in the write that stores them, and sets their payloads: a merge
   * in that write then takes them as they are, so a value is checked once and against the base as
   * the write finds it (a merge later checks them again).
   */
  prepare?: (tx: Tx) => void;
  message?: string;
  idempotencyKey?: string;
  /** Omitted: merge at once with write or more. `false` forces review; `true` without write waits too. */
  autoMerge?: boolean;
  /** Why this proposal always waits for review, besides what its operations' kinds say (its kinds' `review`): archiving a base. */
  reviewAlways?: string;
}

/**
 * Why the proposal may not ask for `autoMerge: true`, and whether it waits for review anyway: the
 * operations that destroy or rewrite values (Busabase's rule, contract §2.5) say so in their kind's
 * `review` (`operation-kinds.ts`); `autoMerge: true` is then refused with a 400 giving the reason,
 * never merged and never quietly sent to review.
 */
function refusedAutoMerge(p: Pick<Proposal, "reviewAlways"> & { operations?: Pick<ProposedOperation, "kind">[] }): { reason: string; waits: boolean } | undefined {
  if (p.reviewAlways !== undefined) return { reason: p.reviewAlways, waits: true };
  return (p.operations ?? []).map((op) => OPERATIONS[op.kind].review).find((rule) => rule !== undefined);
}

export interface Proposed {
  changeRequest: ChangeRequestRow;
  outcome: MergeOutcome | null;
}

const authorOf = ({ user }: Actor): UserRef => ({ id: user.id, name: user.name, email: user.email });

const loadRow = (ctx: AppContext, id: string) => ctx.db.select().from(changeRequests).where(eq(changeRequests.id, id)).get()!;

/** Whether a proposal is merged in the write that stores it: asked for (or not refused) at write or more. */
export const mergesAtOnce = (level: Level, review: Pick<Proposal, "autoMerge"> & Partial<Pick<Proposal, "operations" | "reviewAlways">>): boolean =>
  !refusedAutoMerge(review)?.waits && review.autoMerge !== false && atLeast(level, "write");

/**
 * Creates a change request with one commit per operation; when auto-merge applies it is merged in
 * the same transaction. A repeated idempotency key (per base and user) answers the first result.
 * How its rows are stored is `proposalStorage`'s to say (a direct create's commit stands for them).
 */
export function propose(ctx: AppContext, p: Proposal): Promise<Proposed> {
  const refused = refusedAutoMerge(p);
  if (refused && p.autoMerge === true) return Promise.reject(badRequest(`\`autoMerge: true\` is not accepted here: ${refused.reason}`));
  const autoMerge = mergesAtOnce(p.scope.level, p);
  const storage = proposalStorage(autoMerge, p);
  const at = iso(ctx.clock.now());
  const cr: ChangeRequestRow = {
    id: storage.changeRequestId,
    spaceId: p.scope.space.id,
    baseId: p.baseId,
    nodeId: p.nodeId,
    targetType: p.targetType,
    status: "in_review",
    submittedBy: p.actor.user.id,
    sourceAttribution: p.attribution,
    sourceMeta: p.message ? { message: p.message } : {},
    reviewPolicySnapshot: { ...p.reviewPolicy },
    mergeSummary: {},
    rejectedReason: null,
    idempotencyKey: p.idempotencyKey ?? null,
    reviewedAt: null,
    mergedAt: null,
    createdAt: at,
    updatedAt: at,
  };
  return write(ctx, (tx): Proposed => {
    if (p.idempotencyKey && p.baseId) {
      const earlier = tx.db
        .select()
        .from(changeRequests)
        .where(and(eq(changeRequests.baseId, p.baseId), eq(changeRequests.submittedBy, p.actor.user.id), eq(changeRequests.idempotencyKey, p.idempotencyKey)))
        .get();
      if (earlier) return { changeRequest: earlier, outcome: earlier.status === "merged" ? { merged: true, recordIds: mergedRecordIds(operationsOf(tx, earlier.id)) } : null };
    }
    p.prepare?.(tx);

    const heads: CommitRow[] = [];
    const rows: OperationRow[] = p.operations.map((op, position) => {
      const id = storage.operationId();
      const commit = insertCommit(tx, {
        spaceId: cr.spaceId,
        baseId: op.baseId,
        nodeId: op.nodeId,
        operationId: id,
        recordId: null,
        parentCommitId: null,
        message: p.message ?? null,
        authorId: p.actor.user.id,
        targetType: op.targetType,
        kind: op.kind,
        payload: op.payload,
        createdAt: at,
      }, storage.commitStandsFor(cr));
      heads.push(commit);
      return {
        id,
        changeRequestId: cr.id,
        baseId: op.baseId,
        nodeId: op.nodeId,
        targetType: op.targetType,
        kind: op.kind,
        status: "pending",
        targetRecordId: op.targetRecordId ?? null,
        targetViewId: op.targetViewId ?? null,
        // An update that names no base commit is made on the record's head as this write finds it: a direct write applies to what is there, never to what was there when the request was read.
        baseCommitId: op.baseCommitId ?? (op.kind === "record_update" && op.targetRecordId ? findRecord(tx, cr.spaceId, op.targetRecordId).headCommitId : null),
        headCommitId: commit.id,
        deleteMode: op.deleteMode ?? null,
        position,
        createdAt: at,
        updatedAt: at,
      };
    });
    storage.store(tx, cr, rows);
    recordEvent(tx, "change_request.created", { spaceId: cr.spaceId, baseId: cr.baseId, at }, { changeRequestId: cr.id, operationCount: rows.length, submittedBy: cr.submittedBy });
    const author = authorOf(p.actor);
    const outcome = autoMerge ? mergeInTransaction(tx, cr, rows, at, new Map(rows.map((row, i) => [row.id, { change: p.operations[i], author, head: heads[i] }]))) : null;
    // A direct write made on a base commit that is no longer the head, whose fields changed since: refused whole, never stored as a proposal in conflict under a 2xx.
    if (outcome && !outcome.merged) throw conflict("The record changed since the baseCommitId you sent: nothing was written. Read it again and send its headCommitId.", { reason: "MERGE_CONFLICT", conflict: outcome.conflict });
    return { changeRequest: cr, outcome };
  });
}

/** The change request of the space (a stored one, or a direct create's), or 404 (another space's ids are not found). */
export function findChangeRequest(ctx: AppContext, spaceId: string, id: string): ChangeRequestRow {
  const row = ctx.db.select().from(changeRequests).where(and(eq(changeRequests.id, id), eq(changeRequests.spaceId, spaceId))).get() ?? findDirect(ctx, spaceId, id, "changeRequest")?.changeRequest;
  if (!row) throw notFound("No such change request in this space.");
  return row;
}

function operationsOf(ctx: AppContext, crId: string): OperationRow[] {
  const stored = ctx.db.select().from(operations).where(eq(operations.changeRequestId, crId)).orderBy(operations.position).all();
  return stored.length > 0 ? stored : [...directOperations(ctx, [crId]).values()];
}

export const viewOf = (ctx: AppContext, row: ChangeRequestRow): ChangeRequestView => changeRequestViews(ctx, [row])[0];

export function getChangeRequest(ctx: AppContext, spaceId: string, id: string): ChangeRequestView {
  return viewOf(ctx, findChangeRequest(ctx, spaceId, id));
}

/** What to do next, for a change request that is still open but not approved. */
const NEXT_STEP: Partial<Record<ChangeStatus, string>> = {
  in_review: "approve it first (POST /api/v1/change-requests/{id}/reviews with verdict approved)",
  changes_requested: "revise it (POST /api/v1/operations/{operationId}/revisions), then have it approved",
  conflict: "revise it on the record's current state (POST /api/v1/operations/{operationId}/revisions), then have it approved",
};

const notAllowedIn = (row: ChangeRequestRow, action: string) => {
  const next = action === "merged" ? NEXT_STEP[row.status]?.replace("{id}", row.id) : undefined;
  return conflict(`A change request that is ${row.status} cannot be ${action}${next ? `; ${next}` : ""}.`, { reason: "INVALID_STATUS", status: row.status });
};

const OPEN: ChangeStatus[] = ["in_review", "changes_requested", "approved", "conflict"];
const REVIEWABLE: ChangeStatus[] = ["in_review", "changes_requested", "approved"];

const headsOf = (ops: OperationRow[]): Record<string, string> => Object.fromEntries(ops.map((op) => [op.id, op.headCommitId]));

/**
 * The status the current verdicts give: a verdict counts only for the revision it saw. Any current
 * rejection → changes_requested; enough distinct approvers → approved; else in_review. With two or
 * more approvals required, the submitter's own approval is recorded but not counted.
 */
function derivedStatus(ctx: AppContext, cr: ChangeRequestRow, ops: OperationRow[]): ChangeStatus {
  const heads = headsOf(ops);
  const current = ctx.db
    .select()
    .from(reviews)
    .where(eq(reviews.changeRequestId, cr.id))
    .all()
    .filter((review) => Bun.deepEquals(review.visibleOperationHeads, heads));
  if (current.some((review) => review.verdict === "rejected")) return "changes_requested";
  const required = Number(cr.reviewPolicySnapshot.requiredApprovals ?? 1);
  const approvers = new Set(current.filter((r) => r.verdict === "approved" && !(required >= 2 && r.reviewerId === cr.submittedBy)).map((r) => r.reviewerId));
  return approvers.size >= required ? "approved" : "in_review";
}

const STATUS_EVENTS: Partial<Record<ChangeStatus, "change_request.approved" | "change_request.changes_requested">> = {
  approved: "change_request.approved",
  changes_requested: "change_request.changes_requested",
};

export async function reviewChangeRequest(ctx: AppContext, scope: SpaceScope, actor: Actor, id: string, input: { verdict: Verdict; reason?: string }): Promise<ChangeRequestView> {
  const row = await write(ctx, (tx) => {
    const cr = findChangeRequest(tx, scope.space.id, id);
    if (!REVIEWABLE.includes(cr.status)) throw notAllowedIn(cr, "reviewed");
    const ops = operationsOf(tx, cr.id);
    const at = iso(ctx.clock.now());
    const review = { verdict: input.verdict, reason: input.reason ?? null, visibleOperationHeads: headsOf(ops), createdAt: at };
    tx.db
      .insert(reviews)
      .values({ id: newId("rev"), changeRequestId: cr.id, reviewerId: actor.user.id, ...review })
      .onConflictDoUpdate({ target: [reviews.changeRequestId, reviews.reviewerId], set: review })
      .run();
    const status = derivedStatus(tx, cr, ops);
    tx.db.update(changeRequests).set({ status, reviewedAt: at, updatedAt: at }).where(eq(changeRequests.id, cr.id)).run();
    const event = STATUS_EVENTS[status];
    if (event && status !== cr.status) recordEvent(tx, event, { spaceId: cr.spaceId, baseId: cr.baseId, at }, { changeRequestId: cr.id, reviewerId: actor.user.id });
    return loadRow(tx, cr.id);
  });
  return viewOf(ctx, row);
}

export async function closeChangeRequest(ctx: AppContext, scope: SpaceScope, id: string, reason: string | undefined, actor: AuditActor): Promise<ChangeRequestView> {
  const row = await write(ctx, (tx) => {
    const cr = findChangeRequest(tx, scope.space.id, id);
    if (!OPEN.includes(cr.status)) throw notAllowedIn(cr, "closed");
    const at = iso(ctx.clock.now());
    tx.db.update(changeRequests).set({ status: "rejected", rejectedReason: reason ?? null, updatedAt: at }).where(eq(changeRequests.id, cr.id)).run();
    recordEvent(tx, "change_request.rejected", { spaceId: cr.spaceId, baseId: cr.baseId, at }, { changeRequestId: cr.id, reason: reason ?? null });
    recordAudit(tx, { action: "change_request.closed", actor, spaceId: cr.spaceId, baseId: cr.baseId, targetType: "change_request", targetId: cr.id, metadata: { from: cr.status, reason: reason ?? null } });
    return loadRow(tx, cr.id);
  });
  return viewOf(ctx, row);
}

/** The record a merge produced (the first, for a bulk change request), as the merge answer shows it. */
export function mergedRecord(ctx: AppContext, spaceId: string, outcome: MergeOutcome | null): RecordView | null {
  if (!outcome?.merged || outcome.recordIds.length === 0) return null;
  return outcome.records?.[0] ?? getRecord(ctx, spaceId, outcome.recordIds[0]);
}

/**
 * Merges an approved change request in one transaction. Merging a merged one answers it again.
 * Data that moved underneath makes it `conflict` (409); values that no longer fit the base's
 * fields make the merge fail (409) and change nothing.
 */
export const MergeResultSchema = t.Object({
  changeRequest: ChangeRequestSchema,
  record: Nullable(RecordSchema),
});

export async function mergeChangeRequest(ctx: AppContext, scope: SpaceScope, id: string, actor: AuditActor): Promise<Static<typeof MergeResultSchema>> {
  const outcome = await write(ctx, (tx): MergeOutcome => {
    const cr = findChangeRequest(tx, scope.space.id, id);
    if (cr.status === "merged") return { merged: true, recordIds: mergedRecordIds(operationsOf(tx, cr.id)) };
    if (cr.status !== "approved") throw notAllowedIn(cr, "merged");
    try {
      const ops = operationsOf(tx, cr.id);
      const merged = mergeInTransaction(tx, cr, ops, iso(ctx.clock.now()));
      if (merged.merged) {
        const metadata = { operationCount: ops.length, recordIds: merged.recordIds, ...(merged.viewIds?.length ? { viewIds: merged.viewIds } : {}) };
        recordAudit(tx, { action: "change_request.merged", actor, spaceId: cr.spaceId, baseId: cr.baseId, targetType: "change_request", targetId: cr.id, metadata });
      }
      return merged;
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) throw conflict(`The change request no longer fits the base: ${error.message}`, { reason: "NOT_MERGEABLE", ...error.data });
      throw error;
    }
  });
  const changeRequest = getChangeRequest(ctx, scope.space.id, id);
  if (!outcome.merged) {
    throw conflict("The data changed since this was proposed: the change request is now in conflict.", { reason: "MERGE_CONFLICT", conflict: outcome.conflict, changeRequestId: id });
  }
  return { changeRequest, record: mergedRecord(ctx, scope.space.id, outcome) };
}

function baseForOperation(ctx: AppContext, spaceId: string, op: OperationRow): LoadedBase {
  return findBase(ctx, spaceId, op.baseId!, { archived: true });
}

/**
 * Appends a commit to an operation: `fields` is the whole new proposal. A record update is
 * re-based on the record's current head unless `baseCommitId` is given. Earlier verdicts stop
 * counting, and the change request goes back to in_review.
 */
const operationInSpace = preparedFor((db) =>
  db
    .select({ op: operations })
    .from(operations)
    .innerJoin(changeRequests, eq(changeRequests.id, operations.changeRequestId))
    .where(and(eq(operations.id, sql.placeholder("id")), eq(changeRequests.spaceId, sql.placeholder("spaceId"))))
    .prepare(),
);

/** An operation of the space (a stored one, or a direct create's), or 404. */
export function findOperation(ctx: AppContext, spaceId: string, id: string): OperationRow {
  const op = operationInSpace(ctx.db).get({ id, spaceId })?.op ?? findDirect(ctx, spaceId, id, "operation")?.operation;
  if (!op) throw notFound("No such operation in this space.");
  return op;
}

/**
 * Appends a commit to a record operation: `fields` is the whole new proposal, authored by whoever
 * sends it. At the changeRequest level only the submitter may revise; others need write. A record
 * update is re-based on the record's current head unless `baseCommitId` (a commit of that record)
 * is given. Earlier verdicts stop counting, and the change request goes back to in_review.
 */
export async function reviseOperation(
  ctx: AppContext,
  scope: SpaceScope,
  actor: Actor,
  operationId: string,
  input: { fields: Record<string, unknown>; message?: string; baseCommitId?: string },
): Promise<ChangeRequestView> {
  const row = await write(ctx, (tx) => {
    const op = findOperation(tx, scope.space.id, operationId);
    const cr = findChangeRequest(tx, scope.space.id, op.changeRequestId);
    if (cr.submittedBy !== actor.user.id && !atLeast(scope.level, "write")) {
      throw forbidden(`Only the submitter may revise this change request at the ${scope.level} level; anyone else needs write.`, { required: "write", effective: scope.level });
    }
    if (!OPEN.includes(cr.status)) throw notAllowedIn(cr, "revised");
    if (op.kind !== "record_create" && op.kind !== "record_update") {
      throw badRequest(`A ${op.kind} operation cannot be revised; close the change request and propose again.`);
    }
    if (input.baseCommitId !== undefined && op.kind !== "record_update") throw badRequest("baseCommitId applies only to record updates.");
    const loaded = baseForOperation(tx, cr.spaceId, op);
    const payload = checkRecordInput(tx, loaded, input.fields, op.kind === "record_create" ? "create" : "update");
    const baseCommitId =
      op.kind !== "record_update"
        ? op.baseCommitId
        : input.baseCommitId !== undefined
          ? checkBaseCommit(tx, op.targetRecordId!, input.baseCommitId)
          : findRecord(tx, cr.spaceId, op.targetRecordId!).headCommitId;
    const at = iso(ctx.clock.now());
    const commit = insertCommit(tx, {
      spaceId: cr.spaceId,
      baseId: op.baseId,
      nodeId: op.nodeId,
      operationId: op.id,
      recordId: null,
      parentCommitId: op.headCommitId,
      message: input.message ?? null,
      authorId: actor.user.id,
      targetType: op.targetType,
      kind: op.kind,
      payload,
      createdAt: at,
    });
    tx.db.update(operations).set({ headCommitId: commit.id, baseCommitId, updatedAt: at }).where(eq(operations.id, op.id)).run();
    tx.db.update(changeRequests).set({ status: "in_review", mergeSummary: {}, updatedAt: at }).where(eq(changeRequests.id, cr.id)).run();
    return loadRow(tx, cr.id);
  });
  return viewOf(ctx, row);
}

export interface ChangeRequestQuery {
  status?: ChangeStatus[];
  mine?: boolean;
  baseId?: string;
  limit: number;
  cursor?: string;
}

export const ChangeRequestPageSchema = t.Object({ changeRequests: t.Array(ChangeRequestSchema), nextCursor: Nullable(t.String()) });

/** A listing's filters resolved in the space: its base by id, `mine` as the caller. */
export interface ChangeRequestFilter {
  spaceId: string;
  status: ChangeStatus[];
  submittedBy?: string;
  baseId?: string;
}

function filterOf(ctx: AppContext, scope: SpaceScope, actor: Actor, query: Omit<ChangeRequestQuery, "limit" | "cursor">): ChangeRequestFilter {
  return {
    spaceId: scope.space.id,
    status: query.status ?? [],
    submittedBy: query.mine ? actor.user.id : undefined,
    baseId: query.baseId ? findBase(ctx, scope.space.id, query.baseId, { archived: true }).base.id : undefined,
  };
}

function storedWhere(filter: ChangeRequestFilter): SQL[] {
  const where: SQL[] = [eq(changeRequests.spaceId, filter.spaceId)];
  if (filter.status.length > 0) where.push(inArray(changeRequests.status, filter.status));
  if (filter.submittedBy) where.push(eq(changeRequests.submittedBy, filter.submittedBy));
  if (filter.baseId) where.push(eq(changeRequests.baseId, filter.baseId));
  return where;
}

/** Direct creates are merged change requests: a status filter without `merged` leaves them out. */
const includesDirect = (filter: ChangeRequestFilter) => filter.status.length === 0 || filter.status.includes("merged");

/** The first `limit` change requests after `before`, newest first, stored ones and direct creates interleaved. */
export function newestChangeRequests(ctx: AppContext, filter: ChangeRequestFilter, limit: number, before?: string): ChangeRequestRow[] {
  const where = storedWhere(filter);
  if (before) where.push(lt(changeRequests.id, before));
  const stored = ctx.db.select().from(changeRequests).where(and(...where)).orderBy(desc(changeRequests.id)).limit(limit).all();
  const direct = includesDirect(filter) ? directPage(ctx, { ...filter, before, limit }) : [];
  return [...stored, ...direct].sort(newestFirst).slice(0, limit);
}

/** Newest first, stored change requests and direct creates interleaved; the cursor is the last id of the previous page. */
export function listChangeRequests(ctx: AppContext, scope: SpaceScope, actor: Actor, query: ChangeRequestQuery): Static<typeof ChangeRequestPageSchema> {
  const rows = newestChangeRequests(ctx, filterOf(ctx, scope, actor, query), query.limit + 1, query.cursor ? decodeIdCursor(query.cursor) : undefined);
  const page = rows.slice(0, query.limit);
  return { changeRequests: changeRequestViews(ctx, page), nextCursor: rows.length > query.limit ? Buffer.from(page.at(-1)!.id).toString("base64url") : null };
}

export const NumberedChangeRequestPageSchema = t.Object(
  { changeRequests: t.Array(ChangeRequestSchema), total: WholeNumber(), totalPages: WholeNumber(), page: WholeNumber({ minimum: 1 }), pageSize: WholeNumber({ minimum: 1 }) },
  { description: "Busabase's numbered page of change requests, newest first, and how many match." },
);

/** How far a numbered page of change requests may reach: it reads every one before it. */
export const CHANGE_REQUEST_PAGE_REACH = 10_000;

/** `GET /change-requests/page`: page `page` (from 1) of `pageSize`, newest first, with the count of all that match. */
export function numberedChangeRequests(ctx: AppContext, scope: SpaceScope, actor: Actor, query: Omit<ChangeRequestQuery, "limit" | "cursor">, page: number, pageSize: number): Static<typeof NumberedChangeRequestPageSchema> {
  const offset = (page - 1) * pageSize;
  if (offset + pageSize > CHANGE_REQUEST_PAGE_REACH) {
    throw badRequest(`A numbered page of change requests reaches at most the ${CHANGE_REQUEST_PAGE_REACH.toLocaleString("en")}th; walk further with GET /change-requests and its nextCursor.`);
  }
  const filter = filterOf(ctx, scope, actor, query);
  const stored = ctx.db.select({ n: count() }).from(changeRequests).where(and(...storedWhere(filter))).get()!.n;
  const total = stored + (includesDirect(filter) ? directCount(ctx, filter) : 0);
  const rows = offset < total ? newestChangeRequests(ctx, filter, offset + pageSize).slice(offset) : [];
  return { changeRequests: changeRequestViews(ctx, rows), total, totalPages: Math.ceil(total / pageSize), page, pageSize };
}

function decodeIdCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^crq_[0-9A-Z]{18}(?:[0-9A-Z]{8})?$/.test(id)) throw badRequest("The cursor is not valid; pass back a nextCursor from a previous page.");
  return id;
}

export const InboxCountsSchema = t.Object({
  review: WholeNumber({ description: "in_review" }),
  changes: WholeNumber({ description: "changes_requested" }),
  created: WholeNumber({ description: "The caller's own, in any status." }),
  approved: WholeNumber(),
  merged: WholeNumber(),
  rejected: WholeNumber(),
});

/** The Inbox tabs: the space's change requests by status, and the caller's own in any status. */
export function inboxCounts(ctx: AppContext, scope: SpaceScope, actor: Actor): Static<typeof InboxCountsSchema> {
  const byStatus = new Map(
    ctx.db
      .select({ status: changeRequests.status, n: count() })
      .from(changeRequests)
      .where(eq(changeRequests.spaceId, scope.space.id))
      .groupBy(changeRequests.status)
      .all()
      .map((row) => [row.status, row.n]),
  );
  const created = ctx.db.select({ n: count() }).from(changeRequests).where(and(eq(changeRequests.spaceId, scope.space.id), eq(changeRequests.submittedBy, actor.user.id))).get()!.n;
  const direct = directCounts(ctx, scope.space.id, actor.user.id);
  return {
    review: byStatus.get("in_review") ?? 0,
    changes: byStatus.get("changes_requested") ?? 0,
    created: created + direct.mine,
    approved: byStatus.get("approved") ?? 0,
    merged: (byStatus.get("merged") ?? 0) + direct.merged,
    rejected: byStatus.get("rejected") ?? 0,
  };
}

export function recordChangeRequests(ctx: AppContext, scope: SpaceScope, recordId: string): ChangeRequestView[] {
  findRecord(ctx, scope.space.id, recordId);
  const ids = ctx.db.selectDistinct({ id: operations.changeRequestId }).from(operations).where(eq(operations.targetRecordId, recordId)).all().map((row) => row.id);
  const stored = ids.length === 0 ? [] : ctx.db.select().from(changeRequests).where(inArray(changeRequests.id, ids)).all();
  return changeRequestViews(ctx, [...stored, ...directOfRecord(ctx, recordId)].sort(newestFirst));
}

export const BatchResultsSchema = t.Object({
  results: t.Array(
    t.Union([
      t.Object({ changeRequestId: t.String(), ok: t.Literal(true), status: t.String(), changeRequest: ChangeRequestSchema, record: t.Optional(Nullable(RecordSchema)) }),
      t.Object({ changeRequestId: t.String(), ok: t.Literal(false), error: t.String(), code: t.String(), data: t.Optional(JsonObject) }),
    ]),
    { description: "One per id, in order: one failing does not stop the others." },
  ),
});
export type BatchResult = Static<typeof BatchResultsSchema>["results"][number];

/** What one item of a batch answers: the change request, and for a merge the record it produced. */
type BatchOutcome = { changeRequest: ChangeRequestView; record?: RecordView | null };

/** Runs one action per id, each on its own and in order: one failing does not stop the others. */
export async function eachChangeRequest(ids: string[], action: (id: string) => Promise<BatchOutcome>): Promise<{ results: BatchResult[] }> {
  const results: BatchResult[] = [];
  for (const changeRequestId of ids) {
    try {
      const outcome = await action(changeRequestId);
      results.push({ changeRequestId, ok: true, status: outcome.changeRequest.status, ...outcome });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      results.push({ changeRequestId, ok: false, error: error.message, code: error.code, ...(error.data ? { data: error.data } : {}) });
    }
  }
  return { results };
}
