import { isRelation } from "../content/fields/relation";
import type { Static } from "@sinclair/typebox";
import { asc, inArray } from "drizzle-orm";
import { t } from "elysia";
import { BaseSchema, type BaseView, baseView, findBase } from "../content/bases";
import { recordNames } from "../content/relations/read";
import { idsOf } from "../content/relations/schema";
import { NodeSchema, nodeSummary } from "../content/nodes";
import type { AppContext } from "../context";
import { JsonObject, Nullable, oneOf, Timestamp, WholeNumber } from "../shared/schemas";
import { CommitSchema, type CommitRow, commitView, loadCommits, type UserRef, UserRefSchema, userRefs, userRefView } from "../content/commits";
import { directOperations } from "./direct";
import { ValueBudget } from "../shared/limits";
import { seenCommits } from "../content/records/seen";
import { seenBase } from "../content/records/seen-base";
import type { Sight } from "../spaces/sight";
import { CHANGE_STATUSES, type ChangeRequestRow, OPERATION_STATUSES, type OperationRow, operations, reviews, VERDICTS } from "../tables/changes";
import { OPERATION_KINDS, TARGET_TYPES } from "../tables/content";

type ReviewRow = typeof reviews.$inferSelect;

export const OperationSchema = t.Object(
  {
    id: t.String(),
    changeRequestId: t.String(),
    baseId: Nullable(t.String()),
    nodeId: Nullable(t.String()),
    targetType: oneOf(TARGET_TYPES),
    operation: oneOf(OPERATION_KINDS),
    status: oneOf(OPERATION_STATUSES),
    targetRecordId: Nullable(t.String()),
    targetViewId: Nullable(t.String()),
    filePath: t.Null(),
    sourceRecordId: t.Null(),
    sourceCommitId: t.Null(),
    baseCommitId: Nullable(t.String({ description: "The commit the proposal was made against (updates)." })),
    headCommitId: t.String({ description: "The latest revision of the proposal." }),
    mergedRecordId: Nullable(t.String()),
    mergedViewId: Nullable(t.String()),
    deleteMode: t.Literal("archive", { description: "Busabase's: how a delete removes (it archives); the same on every operation." }),
    position: WholeNumber(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    headCommit: Nullable(CommitSchema),
    baseFields: t.Record(t.String(), t.Unknown(), { description: "For each proposed field, its value in the base commit: what the proposal changes it from." }),
  },
  { $id: "Operation", description: "One change of a change request, with its proposed values (headCommit.payload)." },
);
export type OperationView = Static<typeof OperationSchema>;

export const ReviewSchema = t.Object(
  {
    id: t.String(),
    changeRequestId: t.String(),
    reviewerId: t.String(),
    reason: Nullable(t.String()),
    reviewer: Nullable(UserRefSchema),
    verdict: oneOf(VERDICTS),
    visibleOperationHeads: t.Record(t.String(), t.String(), { description: "The head commit of each operation the reviewer saw." }),
    createdAt: Timestamp,
  },
  { $id: "Review" },
);
export type ReviewView = Static<typeof ReviewSchema>;

export const ChangeRequestSchema = t.Object(
  {
    id: t.String(),
    baseId: Nullable(t.String()),
    targetType: oneOf(TARGET_TYPES),
    nodeId: Nullable(t.String()),
    status: oneOf(CHANGE_STATUSES),
    submittedBy: t.String(),
    submittedByUser: Nullable(UserRefSchema),
    sourceAttribution: t.Object(
      { displayName: t.String({ description: "The key's name, or the user's for the admin page." }), ownerName: t.String(), channel: t.String({ description: "api, cli, sdk, mcp, agent or web_ui." }) },
      { additionalProperties: true },
    ),
    sourceMeta: JsonObject,
    reviewPolicySnapshot: JsonObject,
    mergeSummary: JsonObject,
    rejectedReason: Nullable(t.String()),
    reviewedAt: Nullable(Timestamp),
    mergedAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    base: Nullable(BaseSchema),
    node: Nullable(NodeSchema),
    operations: t.Array(OperationSchema),
    primaryOperation: Nullable(OperationSchema),
    operationCount: WholeNumber(),
    reviews: t.Array(ReviewSchema),
    linkedRecords: t.Record(t.String(), Nullable(t.String()), {
      description: "The records its relation values name (proposed and before), by id: each one's primary value (its base's first text field), null when it has none.",
    }),
  },
  { $id: "ChangeRequest", description: "A proposal: its operations, their revisions, its reviews and its status." },
);
export type ChangeRequestView = Static<typeof ChangeRequestSchema>;

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
    targetViewId: op.targetViewId,
    filePath: null,
    sourceRecordId: null,
    sourceCommitId: null,
    baseCommitId: op.baseCommitId,
    headCommitId: op.headCommitId,
    mergedRecordId: mergedRecordOf(op),
    mergedViewId: op.status === "pending" ? null : op.targetViewId,
    deleteMode: "archive",
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

/** The record a landed operation made or changed: its target (a merge sets the target of a create), so it is not stored twice. */
const mergedRecordOf = (op: OperationRow): string | null => (op.status === "pending" ? null : op.targetRecordId);

/** The records a merge made or changed, in operation order. */
export const mergedRecordIds = (ops: OperationRow[]): string[] => ops.flatMap((op) => mergedRecordOf(op) ?? []);

/** A merged change request's summary is read from its operations, not stored a second time; a conflict's is stored. */
function mergeSummaryOf(row: ChangeRequestRow, ops: OperationRow[]): Record<string, unknown> {
  if (row.status !== "merged") return row.mergeSummary;
  const viewIds = ops.flatMap((op) => op.targetViewId ?? []);
  return { mergedAt: row.mergedAt, operationCount: ops.length, recordIds: mergedRecordIds(ops), ...(viewIds.length > 0 ? { viewIds } : {}) };
}

/** The names of the records the operations' relation values name, before and after. */
function linkedRecordsOf(ctx: AppContext, spaceId: string, sight: Sight, base: BaseView | null, ops: OperationView[], budget: ValueBudget): Record<string, string | null> {
  const relations = (base?.fields ?? []).filter(isRelation).map((field) => field.slug);
  if (relations.length === 0) return {};
  const ids = ops.flatMap((op) => relations.flatMap((slug) => [...idsOf(op.headCommit?.payload[slug]), ...idsOf(op.baseFields[slug])]));
  return recordNames(ctx, spaceId, sight, ids, budget);
}

/**
 * Full views of change requests, their operations, commits and reviews read in a few queries, as
 * the caller sees them: their bases without the fields hidden from the caller, their commits
 * through `seenCommits`, their linked names through `recordNames`.
 */
export function changeRequestViews(ctx: AppContext, sight: Sight, rows: ChangeRequestRow[]): ChangeRequestView[] {
  if (rows.length === 0) return [];
  // The names of linked records are what multiplies an answer: they share one budget (`ValueBudget`).
  const budget = new ValueBudget();
  const ids = rows.map((row) => row.id);
  const ops = groupBy(ctx.db.select().from(operations).where(inArray(operations.changeRequestId, ids)).orderBy(asc(operations.position)).all(), (op) => op.changeRequestId);
  // A change request without operation rows is a direct create: its operation is read from its commit.
  for (const [id, op] of directOperations(ctx, ids.filter((id) => !ops.has(id)))) ops.set(id, [op]);
  const reviewRows = groupBy(ctx.db.select().from(reviews).where(inArray(reviews.changeRequestId, ids)).orderBy(asc(reviews.createdAt)).all(), (r) => r.changeRequestId);
  const allOps = [...ops.values()].flat();
  const loaded = loadCommits(ctx, allOps.flatMap((op) => (op.baseCommitId ? [op.headCommitId, op.baseCommitId] : [op.headCommitId])));
  const commits = new Map(rows.length > 0 ? seenCommits(ctx, rows[0].spaceId, sight, [...loaded.values()]).map((row) => [row.id, row]) : []);
  const people = userRefs(ctx, [...rows.map((row) => row.submittedBy), ...[...reviewRows.values()].flat().map((r) => r.reviewerId), ...[...commits.values()].map((c) => c.authorId)]);
  const basesById = new Map<string, BaseView | null>();
  const baseOf = (row: ChangeRequestRow) => {
    if (!row.baseId) return null;
    if (!basesById.has(row.baseId)) {
      try {
        basesById.set(row.baseId, baseView(seenBase(findBase(ctx, row.spaceId, row.baseId, { archived: true }), sight)));
      } catch {
        basesById.set(row.baseId, null);
      }
    }
    return basesById.get(row.baseId)!;
  };
  return rows.map((row) => {
    const rowOps = ops.get(row.id) ?? [];
    const operationViews = rowOps.map((op) => operationView(op, commits, people));
    const base = baseOf(row);
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
      reviewPolicySnapshot: { ...row.reviewPolicySnapshot },
      mergeSummary: mergeSummaryOf(row, rowOps),
      rejectedReason: row.rejectedReason,
      reviewedAt: row.reviewedAt,
      mergedAt: row.mergedAt,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      base,
      linkedRecords: linkedRecordsOf(ctx, row.spaceId, sight, base, operationViews, budget),
      node: row.nodeId ? nodeSummary(ctx, row.spaceId, row.nodeId) : null,
      operations: operationViews,
      primaryOperation: operationViews[0] ?? null,
      operationCount: operationViews.length,
      reviews: (reviewRows.get(row.id) ?? []).map((r) => reviewView(r, people)),
    };
  });
}
