import { convertField } from "../content/field-convert";
import { findBase, type LoadedBase } from "../content/bases";
import { findRecordCommit, type UserRef } from "../content/commits";
import { addField, createBaseForNode, deleteField, reorderFields, restoreField, updateField } from "../content/field-changes";
import { checkRecordInput, linkLists } from "../content/records/validate";
import { recordsDerivingFrom } from "../content/relations/schema";
import { archiveNode, createNode, findNode, moveNode, renameNode, restoreNode, touchNode } from "../content/nodes";
import { checkDocument, writeDocument } from "../content/documents";
import { changeTreeFile, findTree, mountFiles, setTreeMetadata, type TreeFileChange, type TreeMetadata } from "../content/file-trees";
import { findRecord, recordIdTaken } from "../content/records/read";
import { currentFields, type RecordView } from "../content/records/view";
import { createRecord, type MergeWrite, setRecordArchived, updateRecord } from "../content/records/write";
import { createView, setViewStatus, updateView } from "../content/views";
import type { AppContext, Tx } from "../context";
import { conflict } from "../shared/errors";
import type { DocumentType, OperationKind } from "../tables/content";
import type { FieldValues, OperationPayloads, Proposed } from "./operations";
import type { ChangeRequestRow, OperationRow } from "../tables/changes";
import { threeWay } from "./three-way";
import { derivedIds } from "../db/ids";

/** What one merge holds while it applies its operations in order. */
export interface MergeContext {
  tx: Tx;
  cr: ChangeRequestRow;
  at: string;
  /** Whether the merge runs in the write that proposed the change request: its payloads were checked in this write. */
  proposedNow: boolean;
  /** Node ids created by this change request, by their `ref`. */
  refs: Map<string, string>;
  bases: Map<string, LoadedBase>;
  people: Map<string, UserRef>;
  /** The records whose derived values the merge's record changes alter, by base (`recordsDerivingFrom`). */
  derived: Map<string, Set<string>>;
}

/** What applying an operation produced. */
export type Applied = { record?: RecordView; nodeId?: string; baseId?: string; viewId?: string };

/**
 * A kind of operation: what a proposal of it may ask and how a merge applies it. `apply` calls the
 * owning domain's write, which writes and records its event; the merge marks the operation.
 */
interface OperationSpec<K extends OperationKind> {
  apply(m: MergeContext, op: OperationRow, payload: OperationPayloads[K], proposed: Proposed): Applied;
  /** Its merge is three-way (`three-way.ts`) when it names a base commit: fields both sides changed differently are a conflict, found before anything is written. */
  mergesThreeWay?: true;
  /** The operation's status once merged: `archived` for what removes, else `merged`. */
  archives?: true;
  /** Why it always waits for review, whoever asks: it destroys or rewrites values, so `autoMerge: true` is refused (a 400 with this reason). */
  review?: string;
}

/** Adds what a record's change alters in other records to the merge's account of them. */
function noteDerived(m: MergeContext, loaded: LoadedBase, before: Record<string, unknown> | null, after: Record<string, unknown> | null, valuesChanged: boolean): void {
  for (const [baseId, ids] of recordsDerivingFrom(m.tx, loaded, before, after, valuesChanged)) {
    const noted = m.derived.get(baseId);
    if (noted) for (const id of ids) noted.add(id);
    else m.derived.set(baseId, ids);
  }
}

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

/** What merging an operation makes is named by ids derived from its commit: a follower that pulls the commit makes the same (docs/remotes.md). */
const madeIds = (op: OperationRow) => derivedIds(op.headCommitId);

/** A base's schema changed: later operations read it again. */
function schemaChanged(m: MergeContext, op: OperationRow): Applied {
  m.bases.delete(op.baseId!);
  return {};
}

function parentOf(m: MergeContext, target: { parentNodeId?: string; parentNodeRef?: string }): string | undefined {
  if (target.parentNodeRef === undefined) return target.parentNodeId;
  const id = m.refs.get(target.parentNodeRef);
  if (!id) throw conflict(`No node of this change request has the ref "${target.parentNodeRef}".`);
  return id;
}

/** A record's write in this merge, as the author of the operation's head commit. */
const mergeWrite = (m: MergeContext, op: OperationRow, { author }: Proposed): MergeWrite => ({
  by: { actorId: author.id, operationId: op.id, message: (m.cr.sourceMeta.message as string | undefined) ?? null, at: m.at },
  changeRequestId: m.cr.id,
  people: m.people,
});

/** The record as a `record_update` saw it: its base commit, read only from that record's own history. */
export const baseOfUpdate = (ctx: AppContext, op: OperationRow): FieldValues | undefined =>
  op.baseCommitId ? findRecordCommit(ctx, op.targetRecordId!, op.baseCommitId)?.payload : undefined;

function archiveRecord(archive: boolean) {
  return (m: MergeContext, op: OperationRow, _payload: unknown, proposed: Proposed): Applied => {
    const loaded = baseOf(m, op.baseId!);
    const current = findRecord(m.tx, m.cr.spaceId, op.targetRecordId!);
    // An archived record drops out of every value and lookup that names it, and comes back with it.
    if ((current.status === "archived") !== archive) {
      const linked = currentFields(m.tx, loaded, current);
      noteDerived(m, loaded, archive ? linked : null, archive ? null : linked, true);
    }
    return { record: setRecordArchived(m.tx, loaded, current, archive, mergeWrite(m, op, proposed)) };
  };
}

function viewStatus(archive: boolean) {
  return (m: MergeContext, op: OperationRow, payload: { viewId: string }): Applied => {
    baseOf(m, op.baseId!);
    return { viewId: setViewStatus(m.tx, m.cr.spaceId, payload.viewId, archive ? "archived" : "active", m.at).id };
  };
}

/** A document node's content, replaced whole: checked again unless this write proposed it. */
function updateDocument<T extends DocumentType>(type: T) {
  return (m: MergeContext, op: OperationRow, payload: { body?: string; document?: unknown }): Applied => {
    const node = findNode(m.tx, m.cr.spaceId, op.nodeId!, "active");
    if (node.type !== type) throw conflict(`The node "${node.slug}" is no longer a ${type}.`, { reason: "NOT_MERGEABLE" });
    const content = type === "doc" ? payload.body : payload.document;
    writeDocument(m.tx, node.id, type, m.proposedNow ? content : checkDocument(type, content), m.at);
    touchNode(m.tx, node.id, m.at);
    return { nodeId: node.id };
  };
}

/** A file tree's file mounted, replaced or unmounted at its path, or its entry file, visibility or version set. */
function treeFile(change: TreeFileChange["change"]) {
  return (m: MergeContext, op: OperationRow, payload: Omit<TreeFileChange, "change">): Applied => {
    const node = findTree(m.tx, m.cr.spaceId, op.nodeId!);
    changeTreeFile(m.tx, node, { ...payload, change } as TreeFileChange, m.at);
    return { nodeId: node.id };
  };
}

const treeMetadata = (m: MergeContext, op: OperationRow, payload: { metadata: TreeMetadata }): Applied => {
  const node = findTree(m.tx, m.cr.spaceId, op.nodeId!);
  setTreeMetadata(m.tx, node, payload.metadata, m.at);
  return { nodeId: node.id };
};

const FILE_DELETE_REVIEW = "removing a mounted file destroys content, so the whole batch requires review. Split the deletes into their own change request, or omit the flag.";

/** Every kind of operation: a kind without one does not compile. */
export const OPERATIONS: { readonly [K in OperationKind]: OperationSpec<K> } = {
  record_create: {
    apply(m, op, payload, proposed) {
      const loaded = baseOf(m, op.baseId!);
      const values = m.proposedNow ? payload : checkRecordInput(m.tx, loaded, payload, "create");
      // A record made on another instance and pushed here keeps its id (docs/remotes.md), where it is free.
      const id = op.targetRecordId ?? undefined;
      if (id !== undefined && recordIdTaken(m.tx, id)) throw conflict(`A record ${id} exists already.`, { reason: "RECORD_EXISTS" });
      // Merged in the write that proposed it: the proposal's commit, not written yet, becomes the record's first, not a copy of it.
      const record = createRecord(m.tx, loaded, values, mergeWrite(m, op, proposed), m.proposedNow ? (proposed.unwritten ?? null) : null, id);
      noteDerived(m, loaded, null, values, true);
      return { record };
    },
  },
  record_update: {
    apply(m, op, payload, proposed) {
      const loaded = baseOf(m, op.baseId!);
      const current = findRecord(m.tx, m.cr.spaceId, op.targetRecordId!);
      if (current.status !== "active") throw conflict("The record is archived; restore it before updating it.", { reason: "RECORD_ARCHIVED" });
      const ours = currentFields(m.tx, loaded, current);
      const theirs = m.proposedNow ? payload : checkRecordInput(m.tx, loaded, payload, "update", { current: () => ours });
      // Nothing moved since the proposal, so the record now is its base: its head commit may still
      // hold a deleted field's value under a slug that a new field took.
      const base = current.headCommitId === op.baseCommitId ? ours : (baseOfUpdate(m.tx, op) ?? ours);
      const { values } = threeWay(base, ours, theirs, linkLists(loaded));
      const { record, changedFields } = updateRecord(m.tx, loaded, current, ours, values, mergeWrite(m, op, proposed));
      noteDerived(m, loaded, ours, { ...ours, ...values }, changedFields.length > 0);
      return { record };
    },
    mergesThreeWay: true,
  },
  record_delete: {
    apply: archiveRecord(true),
    archives: true,
    review: "archiving a record removes user content from every listing, so it always requires review. Omit the flag.",
  },
  record_restore: {
    apply: archiveRecord(false),
    review: "restoring a record brings archived content back into every listing, so it always requires review. Omit the flag.",
  },
  node_create: {
    apply(m, op, payload) {
      const { tx, cr, at } = m;
      const ids = madeIds(op);
      const node = createNode(tx, cr.spaceId, { ...payload, parentId: parentOf(m, payload) }, at, ids);
      if (payload.ref !== undefined) m.refs.set(payload.ref, node.id);
      // Checked again unless this write proposed it, as a document's update is: a pulled commit carries what another instance took.
      if (payload.document !== undefined) writeDocument(tx, node.id, node.type as DocumentType, m.proposedNow ? payload.document : checkDocument(node.type as DocumentType, payload.document), at);
      if (payload.files) mountFiles(tx, node.id, payload.files, at);
      if (node.type !== "base") return { nodeId: node.id };
      const base = createBaseForNode(tx, node, { fields: payload.fields, reviewPolicy: payload.reviewPolicy }, at, cr.id, ids);
      return { nodeId: node.id, baseId: base.id };
    },
  },
  node_rename: { apply: (m, _op, payload) => ({ nodeId: renameNode(m.tx, m.cr.spaceId, payload, m.at).id }) },
  node_move: { apply: (m, _op, payload) => ({ nodeId: moveNode(m.tx, m.cr.spaceId, { nodeId: payload.nodeId, parentId: parentOf(m, payload), position: payload.position }, m.at).id }) },
  node_delete: { apply: (m, _op, payload) => ({ nodeId: archiveNode(m.tx, m.cr.spaceId, payload.nodeId, m.at).id }), archives: true },
  node_restore: { apply: (m, _op, payload) => ({ nodeId: restoreNode(m.tx, m.cr.spaceId, payload.nodeId, m.at).id }) },
  view_create: { apply: (m, op, payload, { author }) => ({ viewId: createView(m.tx, baseOf(m, op.baseId!), payload, author.id, m.at, madeIds(op)).id }) },
  view_update: {
    apply(m, op, { viewId, ...patch }) {
      return { viewId: updateView(m.tx, baseOf(m, op.baseId!), viewId, patch, m.at).id };
    },
  },
  view_delete: { apply: viewStatus(true), archives: true },
  view_restore: { apply: viewStatus(false) },
  base_add_field: {
    apply(m, op, payload) {
      addField(m.tx, baseOf(m, op.baseId!), payload, m.at, madeIds(op));
      return schemaChanged(m, op);
    },
  },
  base_update_field: {
    apply(m, op, payload) {
      updateField(m.tx, baseOf(m, op.baseId!), payload.fieldId, payload.patch, m.at);
      return schemaChanged(m, op);
    },
  },
  base_delete_field: {
    apply(m, op, payload) {
      deleteField(m.tx, baseOf(m, op.baseId!), payload.fieldId, m.at);
      return schemaChanged(m, op);
    },
    review: "deleting a field soft-deletes its stored values with it, so it always requires review. Omit the flag.",
  },
  base_convert_field: {
    apply(m, op, payload) {
      convertField(m.tx, baseOf(m, op.baseId!), payload, m.at, m.cr.id);
      return schemaChanged(m, op);
    },
    review: "converting a field's type can drop values, so it always requires review. Run previewFieldConversion first, then omit the flag.",
  },
  base_restore_field: {
    apply(m, op, payload) {
      restoreField(m.tx, baseOf(m, op.baseId!), payload.fieldId, m.at);
      return schemaChanged(m, op);
    },
  },
  base_reorder_fields: {
    apply(m, op, payload) {
      reorderFields(m.tx, baseOf(m, op.baseId!).base.id, payload.fieldIds, m.at);
      return schemaChanged(m, op);
    },
  },
  doc_update: { apply: updateDocument("doc") },
  whiteboard_document_update: { apply: updateDocument("whiteboard") },
  workflow_document_update: { apply: updateDocument("workflow") },
  html_document_update: { apply: updateDocument("html") },
  skill_file_create: { apply: treeFile("create") },
  skill_file_update: { apply: treeFile("update") },
  skill_file_delete: { apply: treeFile("delete"), archives: true, review: FILE_DELETE_REVIEW },
  skill_metadata_update: { apply: treeMetadata },
  drive_file_create: { apply: treeFile("create") },
  drive_file_update: { apply: treeFile("update") },
  drive_file_delete: { apply: treeFile("delete"), archives: true, review: FILE_DELETE_REVIEW },
  drive_metadata_update: { apply: treeMetadata },
  airapp_file_create: { apply: treeFile("create") },
  airapp_file_update: { apply: treeFile("update") },
  airapp_file_delete: { apply: treeFile("delete"), archives: true, review: FILE_DELETE_REVIEW },
  airapp_metadata_update: { apply: treeMetadata },
};

/** Applies one operation through its kind. */
export function applyOperation(m: MergeContext, op: OperationRow, proposed: Proposed): Applied {
  const { kind, payload } = proposed.change;
  return (OPERATIONS[kind].apply as OperationSpec<typeof kind>["apply"])(m, op, payload as never, proposed);
}
