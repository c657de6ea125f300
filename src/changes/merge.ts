import { eq, sql } from "drizzle-orm";
import { preparedFor } from "../db/client";
import { addField, createBaseForNode, deleteField, findBase, type LoadedBase, type NewField, reorderFields, updateField } from "../content/bases";
import { checkRecordValues } from "../content/field-types";
import { archiveNode, createNode, moveNode, type NewNode, renameNode, restoreNode } from "../content/nodes";
import { findRecord, insertRecord, recordFields, type RecordView, recordView, writeRecord } from "../content/records";
import type { ReviewPolicy } from "../content/schema";
import type { AppContext } from "../context";
import { ApiError, conflict } from "../http/errors";
import { recordEvent } from "../events/outbox";
import { findRecordCommit, loadCommits, type UserRef, userRefs } from "./commits";
import { changeRequests, operations } from "./schema";

export type ChangeRequestRow = typeof changeRequests.$inferSelect;
export type OperationRow = typeof operations.$inferSelect;

export interface MergeConflict {
  recordId: string;
  fields: string[];
}

/** `records` holds the records as the merge left them, when this merge (not an earlier one) ran. */
export type MergeOutcome = { merged: true; recordIds: string[]; records?: RecordView[] } | { merged: false; conflict: MergeConflict };

const same = (a: unknown, b: unknown) => Bun.deepEquals(a ?? null, b ?? null);

/**
 * Three-way merge of a record update: base = the record at `baseCommitId`, ours = the record now,
 * theirs = the proposal. A field both sides changed to different values is a conflict.
 */
export function threeWay(base: Record<string, unknown>, ours: Record<string, unknown>, theirs: Record<string, unknown>): { values: Record<string, unknown>; conflicts: string[] } {
  const values: Record<string, unknown> = {};
  const conflicts: string[] = [];
  for (const [slug, value] of Object.entries(theirs)) {
    const oursChanged = !same(base[slug], ours[slug]);
    const theirsChanged = !same(base[slug], value);
    if (oursChanged && theirsChanged && !same(value, ours[slug])) conflicts.push(slug);
    else if (theirsChanged) values[slug] = value;
  }
  return { values, conflicts };
}

/** What an operation proposes now: its head commit's payload, and who wrote that commit. */
export interface Proposed {
  payload: Record<string, unknown>;
  author: UserRef;
}

interface MergeContext {
  ctx: AppContext;
  cr: ChangeRequestRow;
  at: string;
  /** Node ids created by this change request, by their `ref`. */
  refs: Map<string, string>;
  bases: Map<string, LoadedBase>;
  people: Map<string, UserRef>;
}

function baseOf(m: MergeContext, baseId: string): LoadedBase {
  let loaded = m.bases.get(baseId);
  if (!loaded) {
    loaded = findBase(m.ctx, m.cr.spaceId, baseId);
    m.bases.set(baseId, loaded);
  }
  return loaded;
}

const parentOf = (m: MergeContext, payload: Record<string, unknown>): string | undefined => {
  const ref = payload.parentNodeRef as string | undefined;
  if (ref !== undefined) {
    const id = m.refs.get(ref);
    if (!id) throw conflict(`No node of this change request has the ref "${ref}".`);
    return id;
  }
  return payload.parentNodeId as string | undefined;
};

/** Applies one operation; answers the record it produced, if any. */
function apply(m: MergeContext, op: OperationRow, { payload, author }: Proposed): { record?: RecordView; nodeId?: string; baseId?: string } {
  const { ctx, cr, at } = m;
  const by = { actorId: author.id, operationId: op.id, message: (cr.sourceMeta.message as string | undefined) ?? null, at };
  const spaceId = cr.spaceId;
  switch (op.kind) {
    case "record_create": {
      const loaded = baseOf(m, op.baseId!);
      const values = checkRecordValues(loaded.fields, payload, "create");
      const { row, commit } = insertRecord(ctx, loaded, values, by);
      const record = recordView(row, loaded.fields, commit, m.people);
      recordEvent(ctx, { spaceId, baseId: row.baseId, type: "record.created", data: { record, changeRequestId: cr.id }, at });
      return { record };
    }
    case "record_update": {
      const loaded = baseOf(m, op.baseId!);
      const current = findRecord(ctx, spaceId, op.targetRecordId!);
      if (current.status !== "active") throw conflict("The record is archived; restore it before updating it.", { reason: "RECORD_ARCHIVED" });
      const theirs = checkRecordValues(loaded.fields, payload, "update");
      const ours = recordFields(current, loaded.fields);
      const base = baseOfUpdate(ctx, op) ?? ours;
      const { values } = threeWay(base, ours, theirs);
      const changedFields = Object.keys(values).filter((slug) => !same(values[slug], ours[slug]));
      const { row, commit } = writeRecord(ctx, current, loaded.fields, { data: { ...current.data, ...values }, status: current.status, archivedAt: current.archivedAt }, by, "record_update");
      const previous = Object.fromEntries(changedFields.map((slug) => [slug, ours[slug]]));
      const record = recordView(row, loaded.fields, commit, m.people);
      recordEvent(ctx, { spaceId, baseId: row.baseId, type: "record.updated", data: { record, changeRequestId: cr.id, previous, changedFields }, at });
      return { record };
    }
    case "record_delete":
    case "record_restore": {
      const loaded = baseOf(m, op.baseId!);
      const current = findRecord(ctx, spaceId, op.targetRecordId!);
      const archive = op.kind === "record_delete";
      if ((current.status === "archived") === archive) throw conflict(`The record is already ${current.status}.`, { reason: "RECORD_STATE" });
      const { row, commit } = writeRecord(ctx, current, loaded.fields, { data: current.data, status: archive ? "archived" : "active", archivedAt: archive ? at : null }, by, op.kind);
      const record = recordView(row, loaded.fields, commit, m.people);
      recordEvent(ctx, { spaceId, baseId: row.baseId, type: archive ? "record.deleted" : "record.restored", data: { record, changeRequestId: cr.id }, at });
      return { record };
    }
    case "node_create": {
      const node = createNode(ctx, spaceId, { ...(payload as unknown as NewNode), parentId: parentOf(m, payload) }, at);
      if (typeof payload.ref === "string") m.refs.set(payload.ref, node.id);
      if (node.type !== "base") return { nodeId: node.id };
      const base = createBaseForNode(ctx, spaceId, node.id, { fields: payload.fields as NewField[] | undefined, reviewPolicy: payload.reviewPolicy as ReviewPolicy | undefined }, at);
      const loaded = findBase(ctx, spaceId, base.id);
      recordEvent(ctx, { spaceId, baseId: base.id, type: "base.created", data: { base: { id: base.id, nodeId: node.id, slug: node.slug, name: node.name }, changeRequestId: cr.id }, at });
      m.bases.set(base.id, loaded);
      return { nodeId: node.id, baseId: base.id };
    }
    case "node_rename":
      return { nodeId: renameNode(ctx, spaceId, payload as { nodeId: string }, at).id };
    case "node_move":
      return { nodeId: moveNode(ctx, spaceId, { nodeId: payload.nodeId as string, parentId: parentOf(m, payload), position: payload.position as number | undefined }, at).id };
    case "node_delete":
      return { nodeId: archiveNode(ctx, spaceId, payload.nodeId as string, at).id };
    case "node_restore":
      return { nodeId: restoreNode(ctx, spaceId, payload.nodeId as string, at).id };
    case "base_add_field":
      addField(ctx, op.baseId!, payload as unknown as NewField, at);
      break;
    case "base_update_field":
      updateField(ctx, op.baseId!, payload.fieldId as string, (payload.patch ?? {}) as Record<string, never>, at);
      break;
    case "base_delete_field":
      deleteField(ctx, op.baseId!, payload.fieldId as string, at);
      break;
    case "base_reorder_fields":
      reorderFields(ctx, op.baseId!, payload.fieldIds as string[], at);
      break;
  }
  m.bases.delete(op.baseId!);
  return {};
}

const markOperation = preparedFor((db) =>
  db
    .update(operations)
    .set({
      status: sql.placeholder("status"),
      mergedRecordId: sql.placeholder("mergedRecordId"),
      targetRecordId: sql.placeholder("targetRecordId"),
      nodeId: sql.placeholder("nodeId"),
      baseId: sql.placeholder("baseId"),
      updatedAt: sql.placeholder("at"),
    } as never)
    .where(eq(operations.id, sql.placeholder("id")))
    .prepare(),
);

const markMerged = preparedFor((db) =>
  db
    .update(changeRequests)
    .set({
      status: "merged",
      mergedAt: sql.placeholder("at"),
      updatedAt: sql.placeholder("at"),
      nodeId: sql.placeholder("nodeId"),
      baseId: sql.placeholder("baseId"),
      mergeSummary: sql.placeholder("summary"),
    } as never)
    .where(eq(changeRequests.id, sql.placeholder("id")))
    .prepare(),
);

/** The record as a `record_update` saw it: its base commit, read only from that record's own history. */
const baseOfUpdate = (ctx: AppContext, op: OperationRow): Record<string, unknown> | undefined =>
  op.baseCommitId ? findRecordCommit(ctx, op.targetRecordId!, op.baseCommitId)?.payload : undefined;

/** Record updates whose fields moved underneath them; checked before anything is applied. */
function findConflict(ctx: AppContext, cr: ChangeRequestRow, ops: OperationRow[], proposed: Map<string, Proposed>): MergeConflict | null {
  for (const op of ops) {
    if (op.kind !== "record_update" || !op.baseCommitId) continue;
    const current = findRecord(ctx, cr.spaceId, op.targetRecordId!);
    if (current.headCommitId === op.baseCommitId) continue;
    const loaded = findBase(ctx, cr.spaceId, op.baseId!);
    const base = baseOfUpdate(ctx, op) ?? {};
    const { conflicts } = threeWay(base, recordFields(current, loaded.fields), proposed.get(op.id)?.payload ?? {});
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
      return [op.id, { payload: head?.payload ?? {}, author: people.get(head?.authorId ?? "") ?? unknown(head?.authorId ?? "") }];
    }),
  );
}

/**
 * Lands every operation of a change request, or none: runs inside the caller's transaction, and a
 * failing operation throws (rolling all back). A conflict is found before anything is written; the
 * change request then becomes `conflict` and nothing else changes. `cr` is updated in place to
 * match what was written. Each operation lands as written by the author of its head commit (the
 * submitter, or whoever revised it last), so a record never credits anyone with words they did
 * not write. `known` spares reading the heads when the caller has just written them.
 */
export function mergeInTransaction(ctx: AppContext, cr: ChangeRequestRow, ops: OperationRow[], at: string, known?: Map<string, Proposed>): MergeOutcome {
  const proposed = known ?? proposedByHeads(ctx, ops);
  const found = findConflict(ctx, cr, ops, proposed);
  if (found) {
    Object.assign(cr, { status: "conflict", mergeSummary: { conflict: found }, updatedAt: at });
    ctx.db.update(changeRequests).set({ status: "conflict", mergeSummary: { conflict: found }, updatedAt: at }).where(eq(changeRequests.id, cr.id)).run();
    recordEvent(ctx, { spaceId: cr.spaceId, baseId: cr.baseId, type: "change_request.conflict", data: { changeRequestId: cr.id, conflict: found }, at });
    return { merged: false, conflict: found };
  }
  const people = new Map([...proposed.values()].map(({ author }) => [author.id, author]));
  const m: MergeContext = { ctx, cr, at, refs: new Map(), bases: new Map(), people };
  const records: RecordView[] = [];
  let nodeId = cr.nodeId;
  let baseId = cr.baseId;
  for (const op of ops) {
    let result;
    try {
      result = apply(m, op, proposed.get(op.id)!);
    } catch (error) {
      if (error instanceof ApiError && ops.length > 1) throw new ApiError(error.status, error.code, `Operation ${op.position + 1} (${op.kind}): ${error.message}`, error.data);
      throw error;
    }
    const recordId = result.record?.id ?? null;
    if (result.record) records.push(result.record);
    markOperation(ctx.db).run({
      id: op.id,
      status: op.kind === "record_delete" || op.kind === "node_delete" ? "archived" : "merged",
      mergedRecordId: recordId,
      targetRecordId: op.targetRecordId ?? recordId,
      nodeId: op.nodeId ?? result.nodeId ?? null,
      baseId: op.baseId ?? result.baseId ?? null,
      at,
    });
    nodeId ??= result.nodeId ?? null;
    baseId ??= result.baseId ?? null;
  }
  const recordIds = records.map((record) => record.id);
  const mergeSummary = { mergedAt: at, operationCount: ops.length, recordIds };
  Object.assign(cr, { status: "merged", mergedAt: at, updatedAt: at, nodeId, baseId, mergeSummary });
  markMerged(ctx.db).run({ id: cr.id, at, nodeId, baseId, summary: mergeSummary });
  recordEvent(ctx, { spaceId: cr.spaceId, baseId, type: "change_request.merged", data: { changeRequestId: cr.id, recordIds }, at });
  return { merged: true, recordIds, records };
}
