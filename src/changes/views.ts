import { asc, inArray } from "drizzle-orm";
import { type BaseView, baseView, findBase } from "../content/bases";
import { type NodeView, nodeSummary } from "../content/nodes";
import type { AppContext } from "../context";
import { type CommitRow, type CommitView, commitView, loadCommits, type UserRef, type UserRefView, userRefs, userRefView } from "./commits";
import type { ChangeRequestRow, OperationRow } from "./merge";
import { operations, reviews } from "./schema";

type ReviewRow = typeof reviews.$inferSelect;

export interface OperationView {
  id: string;
  changeRequestId: string;
  baseId: string | null;
  nodeId: string | null;
  targetType: string;
  operation: string;
  status: string;
  targetRecordId: string | null;
  targetViewId: null;
  filePath: null;
  sourceRecordId: null;
  sourceCommitId: null;
  baseCommitId: string | null;
  headCommitId: string;
  mergedRecordId: string | null;
  mergedViewId: null;
  deleteMode: string | null;
  position: number;
  createdAt: string;
  updatedAt: string;
  headCommit: CommitView | null;
  baseFields: Record<string, unknown>;
}

export interface ReviewView {
  id: string;
  changeRequestId: string;
  reviewerId: string;
  reason: string | null;
  reviewer: UserRefView | null;
  verdict: string;
  visibleOperationHeads: Record<string, string>;
  createdAt: string;
}

export interface ChangeRequestView {
  id: string;
  baseId: string | null;
  targetType: string;
  nodeId: string | null;
  status: string;
  submittedBy: string;
  submittedByUser: UserRefView | null;
  sourceAttribution: Record<string, unknown>;
  sourceMeta: Record<string, unknown>;
  reviewPolicySnapshot: Record<string, unknown>;
  mergeSummary: Record<string, unknown>;
  rejectedReason: string | null;
  reviewedAt: string | null;
  mergedAt: string | null;
  createdAt: string;
  updatedAt: string;
  base: BaseView | null;
  node: NodeView | null;
  operations: OperationView[];
  primaryOperation: OperationView | null;
  operationCount: number;
  reviews: ReviewView[];
}

function operationView(op: OperationRow, commits: Map<string, CommitRow>, people: Map<string, UserRef>): OperationView {
  const head = commits.get(op.headCommitId);
  const base = op.baseCommitId ? commits.get(op.baseCommitId) : undefined;
  const proposed = Object.keys(head?.payload ?? {});
  return {
    id: op.id,
    changeRequestId: op.changeRequestId,
    baseId: op.baseId,
    nodeId: op.nodeId,
    targetType: op.targetType,
    operation: op.kind,
    status: op.status,
    targetRecordId: op.targetRecordId,
    targetViewId: null,
    filePath: null,
    sourceRecordId: null,
    sourceCommitId: null,
    baseCommitId: op.baseCommitId,
    headCommitId: op.headCommitId,
    mergedRecordId: op.mergedRecordId,
    mergedViewId: null,
    deleteMode: op.deleteMode,
    position: op.position,
    createdAt: op.createdAt,
    updatedAt: op.updatedAt,
    headCommit: head ? commitView(head, people) : null,
    baseFields: base ? Object.fromEntries(proposed.map((slug) => [slug, base.payload[slug] ?? null])) : {},
  };
}

const reviewView = (row: ReviewRow, people: Map<string, UserRef>): ReviewView => ({
  id: row.id,
  changeRequestId: row.changeRequestId,
  reviewerId: row.reviewerId,
  reason: row.reason,
  reviewer: userRefView(people.get(row.reviewerId)),
  verdict: row.verdict,
  visibleOperationHeads: row.visibleOperationHeads,
  createdAt: row.createdAt,
});

function groupBy<T>(rows: T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group) group.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}

/** Full views of change requests, their operations, commits and reviews read in a few queries. */
export function changeRequestViews(ctx: AppContext, rows: ChangeRequestRow[]): ChangeRequestView[] {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const ops = groupBy(ctx.db.select().from(operations).where(inArray(operations.changeRequestId, ids)).orderBy(asc(operations.position)).all(), (op) => op.changeRequestId);
  const reviewRows = groupBy(ctx.db.select().from(reviews).where(inArray(reviews.changeRequestId, ids)).orderBy(asc(reviews.createdAt)).all(), (r) => r.changeRequestId);
  const allOps = [...ops.values()].flat();
  const commits = loadCommits(ctx, allOps.flatMap((op) => (op.baseCommitId ? [op.headCommitId, op.baseCommitId] : [op.headCommitId])));
  const people = userRefs(ctx, [...rows.map((row) => row.submittedBy), ...[...reviewRows.values()].flat().map((r) => r.reviewerId), ...[...commits.values()].map((c) => c.authorId)]);
  const basesById = new Map<string, BaseView | null>();
  const baseOf = (row: ChangeRequestRow) => {
    if (!row.baseId) return null;
    if (!basesById.has(row.baseId)) {
      try {
        basesById.set(row.baseId, baseView(findBase(ctx, row.spaceId, row.baseId, { archived: true })));
      } catch {
        basesById.set(row.baseId, null);
      }
    }
    return basesById.get(row.baseId)!;
  };
  return rows.map((row) => {
    const operationViews = (ops.get(row.id) ?? []).map((op) => operationView(op, commits, people));
    return {
      id: row.id,
      baseId: row.baseId,
      targetType: row.targetType,
      nodeId: row.nodeId,
      status: row.status,
      submittedBy: row.submittedBy,
      submittedByUser: userRefView(people.get(row.submittedBy)),
      sourceAttribution: { ...row.sourceAttribution },
      sourceMeta: row.sourceMeta,
      reviewPolicySnapshot: row.reviewPolicySnapshot,
      mergeSummary: row.mergeSummary,
      rejectedReason: row.rejectedReason,
      reviewedAt: row.reviewedAt,
      mergedAt: row.mergedAt,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      base: baseOf(row),
      node: row.nodeId ? nodeSummary(ctx, row.spaceId, row.nodeId) : null,
      operations: operationViews,
      primaryOperation: operationViews[0] ?? null,
      operationCount: operationViews.length,
      reviews: (reviewRows.get(row.id) ?? []).map((r) => reviewView(r, people)),
    };
  });
}
