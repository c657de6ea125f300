import { convertField } from "../content/field-convert";
import { eq, sql } from "drizzle-orm";
import { preparedWrite } from "../db/client";
import { findBase, type LoadedBase } from "../content/bases";
import { addField, createBaseForNode, deleteField, reorderFields, updateField } from "../content/field-changes";
import { checkRecordInput, linkLists, recordsDerivingFrom } from "../content/links";
import { archiveNode, createNode, moveNode, renameNode, restoreNode } from "../content/nodes";
import { currentFields, findRecord, insertRecord, type RecordView, snapshot, writeRecord, writtenView } from "../content/records";
import { createView, setViewStatus, updateView } from "../content/views";
import type { AppContext, Tx } from "../context";
import { ApiError, conflict } from "../shared/errors";
import { recordEvent } from "../events/outbox";
import { type CommitRow, findRecordCommit, loadCommits, type UserRef, userRefs } from "../content/commits";
import { type FieldValues, type OperationChange, storedChange } from "./operations";
import { changeRequests, type MergeConflict, operations } from "../tables/changes";

export type ChangeRequestRow = typeof changeRequests.$inferSelect;
export type OperationRow = typeof operations.$inferSelect;

/** `records` holds the records as the merge left them, when this merge (not an earlier one) ran. */
export type MergeOutcome = { merged: true; recordIds: string[]; records?: RecordView[]; viewIds?: string[] } | { merged: false; conflict: MergeConflict };

const same = (a: unknown, b: unknown) => Bun.deepEquals(a ?? null, b ?? null);

/** A list both sides changed: ours, less what theirs removed, plus what theirs added (in their order). */
function mergedList(base: unknown, ours: unknown, theirs: unknown): unknown[] {
  const [was, now, wanted] = [base, ours, theirs].map((list) => (Array.isArray(list) ? list : []));
  const removed = new Set(was.filter((item) => !wanted.includes(item)));
  const kept = now.filter((item) => !removed.has(item));
  return [...kept, ...wanted.filter((item) => !was.includes(item) && !kept.includes(item))];
}

/**
 * Three-way merge of a record update: base = the record at `baseCommitId`, ours = the record now,
 * theirs = the proposal. A field both sides changed to different values is a conflict, but for
 * `lists` (a relation's links): there each side's additions and removals are both applied, so two
 * proposals linking different records both land, and removing a link already removed is no change.
 */
export function threeWay(
  base: Record<string, unknown>,
  ours: Record<string, unknown>,
  theirs: Record<string, unknown>,
  lists: ReadonlySet<string> = new Set(),
): { values: Record<string, unknown>; conflicts: string[] } {
  const values: Record<string, unknown> = {};
  const conflicts: string[] = [];
  for (const [slug, value] of Object.entries(theirs)) {
    const oursChanged = !same(base[slug], ours[slug]);
    const theirsChanged = !same(base[slug], value);
    if (oursChanged && theirsChanged && lists.has(slug)) values[slug] = mergedList(base[slug], ours[slug], value);
    else if (oursChanged && theirsChanged && !same(value, ours[slug])) conflicts.push(slug);
    else if (theirsChanged) values[slug] = value;
  }
  return { values, conflicts };
}

/** What an operation proposes now: its head commit's change, who wrote that commit, and the commit when it is at hand. */
export interface Proposed {
  change: OperationChange;
  author: UserRef;
  head?: CommitRow;
}

interface MergeContext {
  tx: Tx;
  cr: ChangeRequestRow;
  at: string;
  /** Node ids created by this change request, by their `ref`. */
  refs: Map<string, string>;
  bases: Map<string, LoadedBase>;
  people: Map<string, UserRef>;
  /** The records whose derived values the merge's record changes alter, by base (`recordsDerivingFrom`). */
  derived: Map<string, Set<string>>;
}

/** Adds what a record's change alters in other records to the merge's account of them. */
function noteDerived(m: MergeContext, loaded: LoadedBase, before: Record<string, unknown> | null, after: Record<string, unknown> | null, valuesChanged: boolean): void {
  for (const [baseId, ids] of recordsDerivingFrom(m.tx, loaded, before, after, valuesChanged)) {
    const noted = m.derived.get(baseId);
    if (noted) for (const id of ids) noted.add(id);
    else m.derived.set(baseId, ids);
  }
}

/** How many record ids one `records.recomputed` event names; past it the event says how many there were. */
export const RECOMPUTED_IDS = 1000;

/** The base an operation changes; one archived since the proposal refuses the merge (409), as the change request still exists. */
function baseOf(m: MergeContext, baseId: string): LoadedBase {
  let loaded = m.bases.get(baseId);
  if (!loaded) {
    loaded = findBase(m.tx, m.cr.spaceId, baseId, { archived: true });
    if (loaded.node.status !== "active") throw conflict(`The base "${loaded.node.slug}" is archived; restore it before merging.`, { reason: "NOT_MERGEABLE" });
    m.bases.set(baseId, loaded);
  }
  return loaded;
}

function parentOf(m: MergeContext, target: { parentNodeId?: string; parentNodeRef?: string }): string | undefined {
  if (target.parentNodeRef === undefined) return target.parentNodeId;
  const id = m.refs.get(target.parentNodeRef);
  if (!id) throw conflict(`No node of this change request has the ref "${target.parentNodeRef}".`);
  return id;
}

type Applied = { record?: RecordView; nodeId?: string; baseId?: string; viewId?: string };

/** Applies one operation; answers the record it produced, if any. */
function apply(m: MergeContext, op: OperationRow, { change, author, head }: Proposed): Applied {
  const { tx, cr, at } = m;
  const by = { actorId: author.id, operationId: op.id, message: (cr.sourceMeta.message as string | undefined) ?? null, at };
  const spaceId = cr.spaceId;
  const origin = { spaceId, baseId: op.baseId, at };
  switch (change.kind) {
    case "record_create": {
      const loaded = baseOf(m, op.baseId!);
      const values = checkRecordInput(tx, loaded, change.payload, "create");
      // Merged in the write that proposed it, unchanged: the proposal's commit becomes the record's first, not a copy of it.
      const adopted = head && op.createdAt === at && same(values, change.payload) ? head : null;
      const { row, commit, links } = insertRecord(tx, loaded, values, by, adopted);
      const record = writtenView(tx, loaded, row, commit, m.people, links);
      recordEvent(tx, "record.created", origin, { record: snapshot(record), changeRequestId: cr.id });
      noteDerived(m, loaded, null, values, true);
      return { record };
    }
    case "record_update": {
      const loaded = baseOf(m, op.baseId!);
      const current = findRecord(tx, spaceId, op.targetRecordId!);
      if (current.status !== "active") throw conflict("The record is archived; restore it before updating it.", { reason: "RECORD_ARCHIVED" });
      const ours = currentFields(tx, loaded, current);
      const theirs = checkRecordInput(tx, loaded, change.payload, "update", { current: () => ours });
      // Nothing moved since the proposal, so the record now is its base: its head commit may still
      // hold a deleted field's value under a slug that a new field took.
      const base = current.headCommitId === op.baseCommitId ? ours : (baseOfUpdate(tx, op) ?? ours);
      const { values } = threeWay(base, ours, theirs, linkLists(loaded));
      const changedFields = Object.keys(values).filter((slug) => !same(values[slug], ours[slug]));
      const { row, commit } = writeRecord(tx, current, loaded, { data: { ...current.data, ...values }, status: current.status, archivedAt: current.archivedAt }, by, "record_update");
      const previous = Object.fromEntries(changedFields.map((slug) => [slug, ours[slug]]));
      const record = writtenView(tx, loaded, row, commit, m.people);
      recordEvent(tx, "record.updated", origin, { record: snapshot(record), changeRequestId: cr.id, previous, changedFields });
      noteDerived(m, loaded, ours, { ...ours, ...values }, changedFields.length > 0);
      return { record };
    }
    case "record_delete":
    case "record_restore": {
      const loaded = baseOf(m, op.baseId!);
      const current = findRecord(tx, spaceId, op.targetRecordId!);
      const archive = change.kind === "record_delete";
      if ((current.status === "archived") === archive) throw conflict(`The record is already ${current.status}.`, { reason: "RECORD_STATE" });
      // An archived record drops out of every value and lookup that names it, and comes back with it.
      const linked = currentFields(tx, loaded, current);
      noteDerived(m, loaded, archive ? linked : null, archive ? null : linked, true);
      const { row, commit } = writeRecord(tx, current, loaded, { data: current.data, status: archive ? "archived" : "active", archivedAt: archive ? at : null }, by, change.kind);
      const record = writtenView(tx, loaded, row, commit, m.people);
      recordEvent(tx, archive ? "record.deleted" : "record.restored", origin, { record: snapshot(record), changeRequestId: cr.id });
      return { record };
    }
    case "node_create": {
      const { payload } = change;
      const node = createNode(tx, spaceId, { ...payload, parentId: parentOf(m, payload) }, at);
      if (payload.ref !== undefined) m.refs.set(payload.ref, node.id);
      if (node.type !== "base") return { nodeId: node.id };
      const base = createBaseForNode(tx, node, { fields: payload.fields, reviewPolicy: payload.reviewPolicy }, at);
      recordEvent(tx, "base.created", { spaceId, baseId: base.id, at }, { base: { id: base.id, nodeId: node.id, slug: node.slug, name: node.name }, changeRequestId: cr.id });
      return { nodeId: node.id, baseId: base.id };
    }
    case "node_rename":
      return { nodeId: renameNode(tx, spaceId, change.payload, at).id };
    case "node_move":
      return { nodeId: moveNode(tx, spaceId, { nodeId: change.payload.nodeId, parentId: parentOf(m, change.payload), position: change.payload.position }, at).id };
    case "node_delete":
      return { nodeId: archiveNode(tx, spaceId, change.payload.nodeId, at).id };
    case "node_restore":
      return { nodeId: restoreNode(tx, spaceId, change.payload.nodeId, at).id };
    case "view_create":
      return { viewId: createView(tx, baseOf(m, op.baseId!), change.payload, author.id, at).id };
    case "view_update": {
      const { viewId, ...patch } = change.payload;
      return { viewId: updateView(tx, baseOf(m, op.baseId!), viewId, patch, at).id };
    }
    case "view_delete":
    case "view_restore":
      baseOf(m, op.baseId!);
      return { viewId: setViewStatus(tx, spaceId, change.payload.viewId, change.kind === "view_delete" ? "archived" : "active", at).id };
    case "base_add_field":
      addField(tx, baseOf(m, op.baseId!), change.payload, at);
      break;
    case "base_update_field":
      updateField(tx, baseOf(m, op.baseId!), change.payload.fieldId, change.payload.patch, at);
      break;
    case "base_delete_field":
      deleteField(tx, baseOf(m, op.baseId!), change.payload.fieldId, at);
      break;
    case "base_convert_field":
      convertField(tx, baseOf(m, op.baseId!), change.payload);
      break;
    case "base_reorder_fields":
      reorderFields(tx, baseOf(m, op.baseId!).base.id, change.payload.fieldIds, at);
      break;
  }
  m.bases.delete(op.baseId!);
  return {};
}

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

/** The record as a `record_update` saw it: its base commit, read only from that record's own history. */
const baseOfUpdate = (ctx: AppContext, op: OperationRow): FieldValues | undefined =>
  op.baseCommitId ? findRecordCommit(ctx, op.targetRecordId!, op.baseCommitId)?.payload : undefined;

/** Record updates whose fields moved underneath them; checked before anything is applied. */
function findConflict(ctx: AppContext, cr: ChangeRequestRow, ops: OperationRow[], proposed: Map<string, Proposed>): MergeConflict | null {
  for (const op of ops) {
    if (op.kind !== "record_update" || !op.baseCommitId) continue;
    const current = findRecord(ctx, cr.spaceId, op.targetRecordId!);
    if (current.headCommitId === op.baseCommitId) continue;
    const loaded = findBase(ctx, cr.spaceId, op.baseId!);
    const base = baseOfUpdate(ctx, op) ?? {};
    const change = proposed.get(op.id)?.change;
    const { conflicts } = threeWay(base, currentFields(ctx, loaded, current), change?.kind === "record_update" ? change.payload : {}, linkLists(loaded));
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
      return [op.id, { change: storedChange(op.kind, head?.payload ?? {}), author: people.get(head?.authorId ?? "") ?? unknown(head?.authorId ?? ""), head }];
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
export function mergeInTransaction(tx: Tx, cr: ChangeRequestRow, ops: OperationRow[], at: string, known?: Map<string, Proposed>): MergeOutcome {
  const proposed = known ?? proposedByHeads(tx, ops);
  const found = findConflict(tx, cr, ops, proposed);
  if (found) {
    Object.assign(cr, { status: "conflict", mergeSummary: { conflict: found }, updatedAt: at });
    tx.db.update(changeRequests).set({ status: "conflict", mergeSummary: { conflict: found }, updatedAt: at }).where(eq(changeRequests.id, cr.id)).run();
    recordEvent(tx, "change_request.conflict", { spaceId: cr.spaceId, baseId: cr.baseId, at }, { changeRequestId: cr.id, conflict: found });
    return { merged: false, conflict: found };
  }
  const people = new Map([...proposed.values()].map(({ author }) => [author.id, author]));
  const m: MergeContext = { tx, cr, at, refs: new Map(), bases: new Map(), people, derived: new Map() };
  const records: RecordView[] = [];
  const viewIds: string[] = [];
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
    if (result.viewId) viewIds.push(result.viewId);
    // A direct create has no operation or change request row (`direct.ts`): this and `markMerged` then update nothing.
    markOperation(tx).run({
      id: op.id,
      status: op.kind === "record_delete" || op.kind === "node_delete" || op.kind === "view_delete" ? "archived" : "merged",
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
  markMerged(tx).run({ id: cr.id, at, nodeId, baseId });
  recordEvent(tx, "change_request.merged", { spaceId: cr.spaceId, baseId, at }, { changeRequestId: cr.id, recordIds });
  for (const [derivedBase, ids] of m.derived) {
    const named = [...ids].slice(0, RECOMPUTED_IDS);
    recordEvent(tx, "records.recomputed", { spaceId: cr.spaceId, baseId: derivedBase, at }, { recordIds: named, count: ids.size, truncated: ids.size > named.length, changeRequestId: cr.id });
  }
  return { merged: true, recordIds, records, viewIds };
}
