import { applyOperation, baseOfUpdate, type MergeContext, OPERATIONS } from "./operation-kinds";
import { threeWay } from "./three-way";
import { logMerged } from "./merge-log";
import { eq, sql } from "drizzle-orm";
import { preparedWrite } from "../db/client";
import { findBase } from "../content/bases";
import { linkLists } from "../content/records/validate";
import { findRecord } from "../content/records/read";
import { currentFields, type RecordView } from "../content/records/view";
import type { AppContext, Tx } from "../context";
import { ApiError } from "../shared/errors";
import { recordEvent } from "../events/outbox";
import { loadCommits, type UserRef, userRefs } from "../content/commits";
import { type FieldValues, type Proposed, storedChange } from "./operations";
import { type ChangeRequestRow, changeRequests, type MergeConflict, type OperationRow, operations } from "../tables/changes";

/** `records` holds the records as the merge left them, when this merge (not an earlier one) ran. */
export type MergeOutcome = { merged: true; recordIds: string[]; records?: RecordView[]; viewIds?: string[] } | { merged: false; conflict: MergeConflict };

const markOperation = preparedWrite((db) =>
  db
    .update(operations)
    .set({
      status: sql.placeholder("status"),
      targetRecordId: sql.placeholder("targetRecordId"),
      targetViewId: sql.placeholder("targetViewId"),
      nodeId: sql.placeholder("nodeId"),
      baseId: sql.placeholder("baseId"),
      updatedAt: sql.placeholder("at"),
    } as never)
    .where(eq(operations.id, sql.placeholder("id")))
    .prepare(),
);

const markMerged = preparedWrite((db) =>
  db
    .update(changeRequests)
    .set({
      status: "merged",
      mergedAt: sql.placeholder("at"),
      updatedAt: sql.placeholder("at"),
      nodeId: sql.placeholder("nodeId"),
      baseId: sql.placeholder("baseId"),
      mergeSummary: {},
    } as never)
    .where(eq(changeRequests.id, sql.placeholder("id")))
    .prepare(),
);

/** How many record ids one `records.recomputed` event names; past it the event says how many there were. */
export const RECOMPUTED_IDS = 1000;

/** Record updates whose fields moved underneath them; checked before anything is applied. */
function findConflict(ctx: AppContext, cr: ChangeRequestRow, ops: OperationRow[], proposed: Map<string, Proposed>): MergeConflict | null {
  for (const op of ops) {
    if (!OPERATIONS[op.kind].mergesThreeWay || !op.baseCommitId) continue;
    const current = findRecord(ctx, cr.spaceId, op.targetRecordId!);
    if (current.headCommitId === op.baseCommitId) continue;
    const loaded = findBase(ctx, cr.spaceId, op.baseId!);
    const base = baseOfUpdate(ctx, op) ?? {};
    const change = proposed.get(op.id)?.change;
    const { conflicts } = threeWay(base, currentFields(ctx, loaded, current), (change?.payload as FieldValues | undefined) ?? {}, linkLists(loaded));
    if (conflicts.length > 0) return { recordId: current.id, fields: conflicts };
  }
  return null;
}

/** Each operation's head commit with its author, read in two queries. */
function proposedByHeads(ctx: AppContext, ops: OperationRow[]): Map<string, Proposed> {
  const heads = loadCommits(ctx, ops.map((op) => op.headCommitId));
  const people = userRefs(ctx, [...heads.values()].map((head) => head.authorId));
  const unknown = (id: string): UserRef => ({ id, name: "", email: "" });
  return new Map(
    ops.map((op) => {
      const head = heads.get(op.headCommitId);
      return [op.id, { change: storedChange(op.kind, head?.payload ?? {}), author: people.get(head?.authorId ?? "") ?? unknown(head?.authorId ?? "") }];
    }),
  );
}

/**
 * Lands every operation of a change request, or none: runs inside the caller's transaction, and a
 * failing operation throws (rolling all back). A conflict is found before anything is written; the
 * change request then becomes `conflict` and nothing else changes. `cr` is updated in place to
 * match what was written. Each operation lands as written by the author of its head commit (the
 * submitter, or whoever revised it last), so a record never credits anyone with words they did
 * not write. `known` spares reading the heads when the caller has just made them (a record create's, not written yet: `UnwrittenCommit`). A proposal
 * stored without rows (`asRows` false, `proposalStorage`) has none to mark merged: its commit,
 * merged here, stands for them.
 */
export function mergeInTransaction(tx: Tx, cr: ChangeRequestRow, ops: OperationRow[], at: string, known?: Map<string, Proposed>, asRows = true): MergeOutcome {
  const proposed = known ?? proposedByHeads(tx, ops);
  const found = findConflict(tx, cr, ops, proposed);
  if (found) {
    Object.assign(cr, { status: "conflict", mergeSummary: { conflict: found }, updatedAt: at });
    tx.db.update(changeRequests).set({ status: "conflict", mergeSummary: { conflict: found }, updatedAt: at }).where(eq(changeRequests.id, cr.id)).run();
    recordEvent(tx, "change_request.conflict", { spaceId: cr.spaceId, baseId: cr.baseId, at }, { changeRequestId: cr.id, conflict: found });
    return { merged: false, conflict: found };
  }
  const people = new Map<string, UserRef>();
  for (const { author } of proposed.values()) people.set(author.id, author);
  const m: MergeContext = { tx, cr, at, proposedNow: known !== undefined, refs: new Map(), bases: new Map(), people, derived: new Map() };
  const records: RecordView[] = [];
  const viewIds: string[] = [];
  // What the merge made, in order: a record's new commit, else the operation's own (docs/remotes.md).
  const landed: string[] = [];
  let nodeId = cr.nodeId;
  let baseId = cr.baseId;
  for (const op of ops) {
    let result;
    try {
      result = applyOperation(m, op, proposed.get(op.id)!);
    } catch (error) {
      if (error instanceof ApiError && ops.length > 1) throw new ApiError(error.status, error.code, `Operation ${op.position + 1} (${op.kind}): ${error.message}`, error.data);
      throw error;
    }
    const recordId = result.record?.id ?? null;
    if (result.record) records.push(result.record);
    landed.push(result.record?.headCommitId ?? op.headCommitId);
    if (result.viewId) viewIds.push(result.viewId);
    if (asRows) markOperation(tx).run({
      id: op.id,
      status: OPERATIONS[op.kind].archives ? "archived" : "merged",
      targetRecordId: op.targetRecordId ?? recordId,
      targetViewId: op.targetViewId ?? result.viewId ?? null,
      nodeId: op.nodeId ?? result.nodeId ?? null,
      baseId: op.baseId ?? result.baseId ?? null,
      at,
    });
    nodeId ??= result.nodeId ?? null;
    baseId ??= result.baseId ?? null;
  }
  const recordIds = records.map((record) => record.id);
  Object.assign(cr, { status: "merged", mergedAt: at, updatedAt: at, nodeId, baseId, mergeSummary: {} });
  if (asRows) markMerged(tx).run({ id: cr.id, at, nodeId, baseId });
  logMerged(tx, cr.spaceId, cr.id, landed);
  recordEvent(tx, "change_request.merged", { spaceId: cr.spaceId, baseId, at }, { changeRequestId: cr.id, recordIds });
  for (const [derivedBase, ids] of m.derived) {
    const named = [...ids].slice(0, RECOMPUTED_IDS);
    recordEvent(tx, "records.recomputed", { spaceId: cr.spaceId, baseId: derivedBase, at }, { recordIds: named, count: ids.size, truncated: ids.size > named.length, changeRequestId: cr.id });
  }
  return { merged: true, recordIds, records, viewIds };
}
