import { seenRecord } from "../content/records/seen";
import { seenBase } from "../content/records/seen-base";
import type { Sight } from "../spaces/sight";
import { getView, ViewSchema, type ViewView } from "../content/views";
import { type AuditActor, recordAudit } from "../audit/audit";
import type { Static } from "@sinclair/typebox";
import { and, eq, sql } from "drizzle-orm";
import { t } from "elysia";
import type { Actor } from "../auth/actor";
import { atLeast } from "../shared/levels";
import { findBase, type LoadedBase } from "../content/bases";
import { checkRecordInput } from "../content/records/validate";
import { findRecord, getRecord } from "../content/records/read";
import { RecordSchema, type RecordView } from "../content/records/view";
import { iso } from "../shared/clock";
import type { AppContext } from "../context";
import { preparedFor } from "../db/client";
import { write } from "../db/tx";
import { newId } from "../db/ids";
import { ApiError, badRequest, conflict, forbidden, notInSpace } from "../shared/errors";
import { Nullable } from "../shared/schemas";
import { recordEvent } from "../events/outbox";
import type { SpaceScope } from "../spaces/resolve";
import { checkBaseCommit, insertCommit } from "../content/commits";
import { directOperations, findDirect } from "./direct";
import { mergeInTransaction, type MergeOutcome } from "./merge";
import { type ChangeRequestRow, changeRequests, type ChangeStatus, type OperationRow, operations, reviews, type Verdict } from "../tables/changes";
import { ChangeRequestSchema, type ChangeRequestView, changeRequestViews, mergedRecordIds } from "./views";

/** A change request's life after it is proposed: found, reviewed, revised, merged or closed. */

/** The change request of the space (a stored one, or a direct create's), or 404 (another space's ids are not found). */
export function findChangeRequest(ctx: AppContext, spaceId: string, id: string): ChangeRequestRow {
  const row = ctx.db.select().from(changeRequests).where(and(eq(changeRequests.id, id), eq(changeRequests.spaceId, spaceId))).get() ?? findDirect(ctx, spaceId, id, "changeRequest")?.changeRequest;
  if (!row) throw notInSpace("change request", id);
  return row;
}

const loadRow = (ctx: AppContext, id: string) => ctx.db.select().from(changeRequests).where(eq(changeRequests.id, id)).get()!;

export function operationsOf(ctx: AppContext, crId: string): OperationRow[] {
  const stored = ctx.db.select().from(operations).where(eq(operations.changeRequestId, crId)).orderBy(operations.position).all();
  return stored.length > 0 ? stored : [...directOperations(ctx, [crId]).values()];
}

/** A change request as the caller sees it (`changeRequestViews`). */
export const viewOf = (ctx: AppContext, sight: Sight, row: ChangeRequestRow): ChangeRequestView => changeRequestViews(ctx, sight, [row])[0];

export function getChangeRequest(ctx: AppContext, spaceId: string, sight: Sight, id: string): ChangeRequestView {
  return viewOf(ctx, sight, findChangeRequest(ctx, spaceId, id));
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
  return viewOf(ctx, scope.sight, row);
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
  return viewOf(ctx, scope.sight, row);
}

/** The record a merge produced (the first, for a bulk change request), as the merge answer shows it to the caller (`seenRecord`). */
export function mergedRecord(ctx: AppContext, spaceId: string, sight: Sight, outcome: MergeOutcome | null): RecordView | null {
  if (!outcome?.merged || outcome.recordIds.length === 0) return null;
  return outcome.records?.[0] ? seenRecord(ctx, spaceId, sight, outcome.records[0]) : getRecord(ctx, spaceId, outcome.recordIds[0], undefined, sight);
}

/**
 * Merges an approved change request in one transaction. Merging a merged one answers it again.
 * Data that moved underneath makes it `conflict` (409); values that no longer fit the base's
 * fields make the merge fail (409) and change nothing.
 */
export const MergeResultSchema = t.Object({
  changeRequest: ChangeRequestSchema,
  record: Nullable(RecordSchema),
  view: Nullable(ViewSchema, { description: "The view a view change request made or changed; null for others." }),
});

/** The view a merged change request made or changed, if any (a merge that ran now names it; an earlier one's operations do). */
function mergedView(ctx: AppContext, spaceId: string, sight: Sight, outcome: MergeOutcome & { merged: true }, ops: () => OperationRow[]): ViewView | null {
  const viewId = outcome.viewIds?.[0] ?? ops().find((op) => op.targetViewId)?.targetViewId;
  return viewId ? getView(ctx, spaceId, sight, viewId) : null;
}

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
  const changeRequest = getChangeRequest(ctx, scope.space.id, scope.sight, id);
  if (!outcome.merged) {
    throw conflict("The data changed since this was proposed: the change request is now in conflict.", { reason: "MERGE_CONFLICT", conflict: outcome.conflict, changeRequestId: id });
  }
  return { changeRequest, record: mergedRecord(ctx, scope.space.id, scope.sight, outcome), view: mergedView(ctx, scope.space.id, scope.sight, outcome, () => operationsOf(ctx, id)) };
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
  const op = operationInSpace(ctx).get({ id, spaceId })?.op ?? findDirect(ctx, spaceId, id, "operation")?.operation;
  if (!op) throw notInSpace("operation", id);
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
    // Checked as the reviser sees the base, as a proposal is (`checkedValues`).
    const payload = checkRecordInput(tx, seenBase(loaded, scope.sight), input.fields, op.kind === "record_create" ? "create" : "update");
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
  return viewOf(ctx, scope.sight, row);
}
