import { isRelation } from "../content/fields/relation";
import { checkConversion, conversionSummary, type FieldConversion } from "../content/field-convert";
import type { Actor } from "../auth/actor";
import { checkReviewPolicy, DEFAULT_REVIEW_POLICY, type FieldPatch, type FieldRow, fieldOf, fieldOrder, findBase, type LoadedBase, type NewField, prepareField, sourceOf } from "../content/bases";
import { deletionSummary, fieldChanges, fieldsToDelete, restorableField } from "../content/field-changes";
import { type FieldError, invalidValues } from "../content/field-types";
import { checkJsonDepth } from "../shared/json";
import { resolveNewFormulas } from "../content/fields/formula/plan";
import { recordInputErrors } from "../content/records/validate";
import { seenBase } from "../content/records/seen-base";
import { resolveLinkedField } from "../content/relations/schema";
import { findNode } from "../content/nodes";
import { checkDocument, DOCUMENT_KINDS } from "../content/documents";
import { findAsset } from "../assets/assets";
import { FILE_TREE_KINDS, mountable, type MountedFile } from "../content/file-trees";
import { findRecord } from "../content/records/read";
import { currentFields } from "../content/records/view";
import { isDocumentType, isFileTree, NODE_TYPES, type NodeType, type OperationKind, type SourceAttribution, type ViewType } from "../tables/content";
import type { AppContext, Tx } from "../context";
import { checkName, checkSlug } from "../shared/formats";
import { badRequest, invalid, within } from "../shared/errors";
import type { SpaceScope } from "../spaces/resolve";
import { type Proposal, type Proposed, type ProposedOperation, propose } from "./propose";
import { checkBaseCommit } from "../content/commits";
import type { OperationChange } from "./operations";
import { checkNewView, checkViewConfig, findView, type ViewConfigInput } from "../content/views";

/** Who proposes, where, and how they are shown to reviewers. */
export interface Proposer {
  scope: SpaceScope;
  actor: Actor;
  attribution: SourceAttribution;
}

export interface Review {
  message?: string;
  idempotencyKey?: string;
  autoMerge?: boolean;
}

export const proposal = (who: Proposer, review: Review, rest: Omit<Proposal, "scope" | "actor" | "attribution">): Proposal => ({
  scope: who.scope,
  actor: who.actor,
  attribution: who.attribution,
  message: review.message,
  idempotencyKey: review.idempotencyKey,
  autoMerge: review.autoMerge,
  ...rest,
});

/** A `record_create` whose values the proposal's `prepare` checks and sets. */
const recordCreate = (loaded: LoadedBase): ProposedOperation => ({
  kind: "record_create",
  targetType: "base",
  baseId: loaded.base.id,
  nodeId: loaded.node.id,
  payload: {},
});

type ValueCheck = (tx: Tx, loaded: LoadedBase, index: number) => { values: Record<string, unknown>; errors: FieldError[] };

/**
 * A proposal's `prepare` for record operations: checks each one's values against the base as the
 * write finds it and the proposer sees it (`check`; a link into a base hidden from them is no
 * field of theirs to write, nor named when they send a slug the base lacks), and sets them as its payload. Any error refuses them all; in a bulk
 * request (`bulk` names what it holds) each error names its `index`.
 */
const checkedValues =
  (scope: SpaceScope, baseId: string, ops: ProposedOperation[], check: ValueCheck, bulk?: string) =>
  (tx: Tx): void => {
    const loaded = seenBase(findBase(tx, scope.space.id, baseId), scope.sight);
    const errors: (FieldError & { index: number })[] = [];
    for (let index = 0; index < ops.length; index++) {
      const checked = check(tx, loaded, index);
      for (const error of checked.errors) errors.push({ index, ...error });
      (ops[index] as { payload: Record<string, unknown> }).payload = checked.values;
    }
    if (errors.length === 0) return;
    if (!bulk) throw invalidValues(loaded.fields, errors.map(({ index: _, ...error }) => error), `Invalid field values: ${errors.map((e) => e.message).join(" ")}`);
    throw invalidValues(loaded.fields, errors, `Invalid field values in ${new Set(errors.map((e) => e.index)).size} of ${ops.length} ${bulk}.`, bulk);
  };

/** One change request with one `record_create` per record (1..1000); a bulk request's errors also name the record's `index`. `alsoInWrite` runs in the write that stores it (a form counts its submission there). */
export function proposeRecords(ctx: AppContext, who: Proposer, baseRef: string, records: { fields: Record<string, unknown> }[], review: Review, alsoInWrite?: (tx: Tx) => void): Promise<Proposed> {
  const loaded = findBase(ctx, who.scope.space.id, baseRef);
  const ops = records.map(() => recordCreate(loaded));
  const check: ValueCheck = (tx, current, index) => recordInputErrors(tx, current, records[index].fields, "create");
  const values = checkedValues(who.scope, loaded.base.id, ops, check, records.length > 1 ? "records" : undefined);
  return proposeBaseRecords(ctx, who, loaded, ops, review, (tx) => {
    alsoInWrite?.(tx);
    values(tx);
  });
}

/** Record operations (creates or updates) of one base as one change request, under the base's review policy. */
function proposeBaseRecords(ctx: AppContext, who: Proposer, loaded: LoadedBase, ops: ProposedOperation[], review: Review, prepare: (tx: Tx) => void): Promise<Proposed> {
  return propose(ctx, proposal(who, review, { targetType: "base", baseId: loaded.base.id, nodeId: loaded.node.id, reviewPolicy: loaded.base.reviewPolicy, operations: ops, prepare }));
}

/** The check of record updates: each one's values against its record as the write finds it. */
const updateCheck =
  (spaceId: string, updates: { recordId: string; fields: Record<string, unknown> }[]): ValueCheck =>
  (tx, loaded, index) => {
    const record = findRecord(tx, spaceId, updates[index].recordId);
    return recordInputErrors(tx, loaded, updates[index].fields, "update", { current: () => currentFields(tx, loaded, record) });
  };

/** The most records one bulk update names (the bulk create's bound). */
export const MAX_BULK_UPDATES = 1000;

/**
 * Updates of many records of a base as one change request (an operation each, in order): each
 * record must be an active record of the base and named once; each update is checked as a single
 * one is, and any error (naming its `index`) refuses them all. Merged at once where the level
 * allows, as single updates are.
 */
export function proposeRecordUpdates(ctx: AppContext, who: Proposer, baseRef: string, updates: { recordId: string; fields: Record<string, unknown>; baseCommitId?: string }[], review: Review): Promise<Proposed> {
  const loaded = findBase(ctx, who.scope.space.id, baseRef);
  const seen = new Set<string>();
  const ops: ProposedOperation[] = updates.map((update, index) => {
    if (seen.has(update.recordId)) throw invalid(["updates", index, "recordId"], `updates[${index}] names ${update.recordId} again: one update a record.`);
    seen.add(update.recordId);
    const record = findRecord(ctx, who.scope.space.id, update.recordId);
    if (record.baseId !== loaded.base.id) throw invalid(["updates", index, "recordId"], `updates[${index}]: ${update.recordId} is not a record of the base "${loaded.node.slug}".`);
    const baseCommitId = update.baseCommitId === undefined ? undefined : checkBaseCommit(ctx, record.id, update.baseCommitId);
    return { targetType: "base", baseId: loaded.base.id, nodeId: loaded.node.id, targetRecordId: record.id, kind: "record_update", baseCommitId, payload: {} };
  });
  return proposeBaseRecords(ctx, who, loaded, ops, review, checkedValues(who.scope, loaded.base.id, ops, updateCheck(who.scope.space.id, updates), "updates"));
}

/** A record archived (deleted: Busabase's only delete mode) or brought back. */
const lifecycleOperation = (target: { targetType: "base"; baseId: string; nodeId: string; targetRecordId: string }, operation: "delete" | "restore"): ProposedOperation =>
  operation === "delete" ? { ...target, kind: "record_delete", deleteMode: "archive", payload: { deleteMode: "archive" } } : { ...target, kind: "record_restore", payload: {} };

/** Many records of a base archived (or brought back) in one change request: one operation a record. */
export function proposeRecordLifecycles(ctx: AppContext, who: Proposer, baseRef: string, recordIds: string[], operation: "delete" | "restore", review: Review): Promise<Proposed> {
  const loaded = findBase(ctx, who.scope.space.id, baseRef);
  const seen = new Set<string>();
  const target = { targetType: "base" as const, baseId: loaded.base.id, nodeId: loaded.node.id };
  const ops = recordIds.map((recordId, index): ProposedOperation => {
    if (seen.has(recordId)) throw invalid(["recordIds", index], `recordIds[${index}] names ${recordId} again: once a record.`);
    seen.add(recordId);
    const record = findRecord(ctx, who.scope.space.id, recordId);
    if (record.baseId !== loaded.base.id) throw invalid(["recordIds", index], `recordIds[${index}]: ${recordId} is not a record of the base "${loaded.node.slug}".`);
    return lifecycleOperation({ ...target, targetRecordId: record.id }, operation);
  });
  return propose(ctx, proposal(who, review, { ...target, reviewPolicy: loaded.base.reviewPolicy, operations: ops }));
}

/** A record's change made on another instance and pushed here (docs/remotes.md): a create keeps the record's id. */
export type PushedRecordChange =
  | { kind: "record_create"; recordId: string; fields: Record<string, unknown> }
  | { kind: "record_update"; recordId: string; fields: Record<string, unknown>; baseCommitId: string }
  | { kind: "record_delete" | "record_restore"; recordId: string };

/**
 * Record changes of one base pushed from another instance, as one change request (one operation
 * each, in order), checked as the API's own are: a create's id must be free, an update's and a
 * lifecycle's record a record of the base. Merged at once where the level allows.
 */
function pushedRecordOperations(ctx: AppContext, spaceId: string, loaded: LoadedBase, changes: PushedRecordChange[]): ProposedOperation[] {
  const target = { targetType: "base" as const, baseId: loaded.base.id, nodeId: loaded.node.id };
  return changes.map((change, index): ProposedOperation => {
    if (change.kind === "record_create") return { ...target, kind: "record_create", targetRecordId: change.recordId, payload: {} };
    const record = findRecord(ctx, spaceId, change.recordId);
    if (record.baseId !== loaded.base.id) throw invalid(["operations", index, "recordId"], `operations[${index}]: ${change.recordId} is not a record of the base "${loaded.node.slug}".`);
    if (change.kind === "record_update") return { ...target, kind: "record_update", targetRecordId: record.id, baseCommitId: change.baseCommitId, payload: {} };
    return lifecycleOperation({ ...target, targetRecordId: record.id }, change.kind === "record_delete" ? "delete" : "restore");
  });
}

export function proposePushedRecords(ctx: AppContext, who: Proposer, loaded: LoadedBase, changes: PushedRecordChange[], review: Review, extra: Pick<Proposal, "meta" | "conflict">): Promise<Proposed> {
  const spaceId = who.scope.space.id;
  const target = { targetType: "base" as const, baseId: loaded.base.id, nodeId: loaded.node.id };
  const ops = pushedRecordOperations(ctx, spaceId, loaded, changes);
  const check: ValueCheck = (tx, current, index) => {
    const change = changes[index];
    if (change.kind === "record_create") return recordInputErrors(tx, current, change.fields, "create");
    if (change.kind === "record_update") return updateCheck(spaceId, [change])(tx, current, 0);
    return { values: ops[index].payload as Record<string, unknown>, errors: [] };
  };
  const prepare = checkedValues(who.scope, loaded.base.id, ops, check, "operations");
  return propose(ctx, proposal(who, review, { ...target, reviewPolicy: loaded.base.reviewPolicy, operations: ops, prepare, ...extra }));
}

/**
 * Record changes pushed with the fields they fill (docs/remotes.md): their operations, to follow
 * the fields' own in one proposal. Their values are checked now against the base with those
 * fields, as a proposal's are, and again by the merge against the base as the fields' operations
 * leave it (the proposal's `checkAtMerge`). Any error refuses them all, naming its `index`.
 */
export function pushedRecordsWithFields(ctx: AppContext, spaceId: string, loaded: LoadedBase, added: NewField[], changes: PushedRecordChange[]): ProposedOperation[] {
  const rows: FieldRow[] = [];
  for (const field of added) rows.push(prepareField(loaded.base.id, field, [...loaded.fields, ...rows], loaded.fields.length + rows.length, ""));
  const withFields: LoadedBase = { ...loaded, fields: [...loaded.fields, ...rows] };
  const ops = pushedRecordOperations(ctx, spaceId, loaded, changes);
  const errors: (FieldError & { index: number })[] = [];
  changes.forEach((change, index) => {
    if (change.kind !== "record_create" && change.kind !== "record_update") return;
    const checked =
      change.kind === "record_create"
        ? recordInputErrors(ctx, withFields, change.fields, "create")
        : recordInputErrors(ctx, withFields, change.fields, "update", { current: () => currentFields(ctx, loaded, findRecord(ctx, spaceId, change.recordId)) });
    for (const error of checked.errors) errors.push({ index, ...error });
    (ops[index] as { payload: Record<string, unknown> }).payload = checked.values;
  });
  if (errors.length > 0) throw invalidValues(withFields.fields, errors, `Invalid field values in ${new Set(errors.map((e) => e.index)).size} of ${ops.length} operations.`, "operations");
  return ops;
}

export type RecordChange =
  | { operation: "update"; fields: Record<string, unknown>; baseCommitId?: string }
  | { operation: "delete"; deleteMode?: "archive" }
  | { operation: "restore" };

export function proposeRecordChange(ctx: AppContext, who: Proposer, recordId: string, change: RecordChange, review: Review): Promise<Proposed> {
  const record = findRecord(ctx, who.scope.space.id, recordId);
  const loaded = findBase(ctx, who.scope.space.id, record.baseId);
  const target = { targetType: "base" as const, baseId: loaded.base.id, nodeId: loaded.node.id, targetRecordId: record.id };
  if (change.operation === "update") {
    const op: ProposedOperation = { ...target, kind: "record_update", baseCommitId: change.baseCommitId === undefined ? undefined : checkBaseCommit(ctx, record.id, change.baseCommitId), payload: {} };
    return proposeBaseRecords(ctx, who, loaded, [op], review, checkedValues(who.scope, loaded.base.id, [op], updateCheck(who.scope.space.id, [{ recordId, fields: change.fields }])));
  }
  return propose(ctx, proposal(who, review, { targetType: "base", baseId: loaded.base.id, nodeId: loaded.node.id, reviewPolicy: loaded.base.reviewPolicy, operations: [lifecycleOperation(target, change.operation)] }));
}

export type NodeChange =
  | {
      kind: "create";
      ref?: string;
      parentNodeId?: string;
      parentNodeRef?: string;
      nodeType: NodeType;
      slug: string;
      name: string;
      description?: string;
      metadata?: Record<string, unknown>;
      fields?: NewField[];
      reviewPolicy?: { requiredApprovals?: number };
      /** A document node's first content (a doc's markdown, another's document); none: its empty one. */
      document?: unknown;
      /** A file tree's files, or a file node's one, mounted (`mountable`); none: what its type starts with. */
      files?: MountedFile[];
    }
  | { kind: "rename"; nodeId: string; slug?: string; name?: string; description?: string }
  | { kind: "move"; nodeId: string; parentNodeId?: string; parentNodeRef?: string; position?: number }
  | { kind: "delete"; nodeId: string }
  | { kind: "restore"; nodeId: string };

/** Checks what can be checked before review: shapes, slugs, field definitions, refs and targets. */
function nodeOperation(ctx: AppContext, spaceId: string, change: NodeChange, refs: Set<string>): ProposedOperation {
  const target = { targetType: "node" as const, baseId: null };
  const parentOf = (parent: { parentNodeId?: string; parentNodeRef?: string }) => {
    if (parent.parentNodeRef !== undefined && !refs.has(parent.parentNodeRef)) throw badRequest(`parentNodeRef "${parent.parentNodeRef}" names no earlier create in this change request.`);
    if (parent.parentNodeId !== undefined) findNode(ctx, spaceId, parent.parentNodeId, "active");
  };
  switch (change.kind) {
    case "create": {
      parentOf(change);
      checkSlug(change.slug, "node slug");
      checkName(change.name);
      if (change.nodeType !== "base" && change.fields?.length) throw badRequest("Only a base node has fields.");
      if (change.document !== undefined && !isDocumentType(change.nodeType)) throw badRequest(`A ${change.nodeType} node has no document.`);
      if (change.files !== undefined && !isFileTree(change.nodeType) && change.nodeType !== "file") throw badRequest(`A ${change.nodeType} node has no files.`);
      checkJsonDepth("metadata", change.metadata);
      const checked: FieldRow[] = [];
      const source = { spaceId, baseId: "bse_check", slug: change.slug, name: change.name };
      for (const [index, field] of (change.fields ?? []).entries()) {
        const row = within(["fields", index], () => prepareField(source.baseId, field, checked, checked.length, ""));
        // A relation to another base is checked now; one to the new base itself, and lookups, when the base is made.
        if (isRelation(row) && (row.options.targetBaseId ?? row.options.targetBaseSlug) !== change.slug) resolveLinkedField(ctx, source, row, [], "");
        checked.push(row);
      }
      resolveNewFormulas(ctx, spaceId, checked, checked);
      if (change.ref !== undefined) refs.add(change.ref);
      const { kind: _, reviewPolicy, document, ...create } = change;
      const content = isDocumentType(change.nodeType) && document !== undefined ? { document: checkDocument(change.nodeType, document) } : {};
      return { ...target, nodeId: null, kind: "node_create", payload: { ...create, ...content, ...(reviewPolicy ? { reviewPolicy: checkReviewPolicy(reviewPolicy) } : {}) } };
    }
    case "rename": {
      const node = findNode(ctx, spaceId, change.nodeId, "active");
      if (change.slug !== undefined) checkSlug(change.slug, "node slug");
      if (change.name !== undefined) checkName(change.name);
      const { kind: _, ...rename } = change;
      return { ...target, nodeId: node.id, kind: "node_rename", payload: { ...rename, nodeId: node.id } };
    }
    case "move": {
      parentOf(change);
      const node = findNode(ctx, spaceId, change.nodeId, "active");
      const { kind: _, ...move } = change;
      return { ...target, nodeId: node.id, kind: "node_move", payload: { ...move, nodeId: node.id } };
    }
    case "delete":
      return { ...target, ...nodeTarget(findNode(ctx, spaceId, change.nodeId, "active").id, "node_delete") };
    case "restore":
      return { ...target, ...nodeTarget(findNode(ctx, spaceId, change.nodeId, "archived").id, "node_restore") };
  }
}

const nodeTarget = (nodeId: string, kind: "node_delete" | "node_restore") => ({ nodeId, kind, payload: { nodeId } });

/**
 * A new file tree or file node that names no files starts with its type's: a tree's seed files, a
 * file node's empty file named after it. They are stored as assets before the write.
 */
async function withStartingFiles(ctx: AppContext, who: Proposer, changes: NodeChange[]): Promise<NodeChange[]> {
  const out: NodeChange[] = [];
  for (const change of changes) {
    if (change.kind !== "create" || change.files !== undefined || !(isFileTree(change.nodeType) || change.nodeType === "file")) out.push(change);
    else {
      const seeds = isFileTree(change.nodeType) ? FILE_TREE_KINDS[change.nodeType].seeds({ slug: change.slug, name: change.name, description: change.description ?? "" }) : [{ path: change.slug, content: "" }];
      out.push({ ...change, files: await mountable(ctx, who.scope.space.id, who.actor.user.id, seeds) });
    }
  }
  return out;
}

/** `list`: the body's key of the changes when the body gives them as a list (its refusals name `<list>[i]`); a route that makes one change from its own fields gives none. */
export async function proposeNodeChanges(ctx: AppContext, who: Proposer, given: NodeChange[], review: Review, list?: string): Promise<Proposed> {
  if (given.length === 0) throw invalid(list === undefined ? [] : [list], "A change request needs at least one operation.");
  const refs = new Set<string>();
  const changes = await withStartingFiles(ctx, who, given);
  const ops = changes.map((change, index) => (list === undefined ? nodeOperation(ctx, who.scope.space.id, change, refs) : within([list, index], () => nodeOperation(ctx, who.scope.space.id, change, refs))));
  return propose(ctx, proposal(who, review, { targetType: "node", baseId: null, nodeId: ops[0].nodeId, reviewPolicy: DEFAULT_REVIEW_POLICY, operations: ops }));
}

/**
 * `POST /bases/{id}/lifecycle/change-requests`: archiving or restoring a base is its node's delete
 * or restore. Archiving hides the base's records from every listing, so it always waits for review
 * (Busabase's rule): `autoMerge: true` is refused for it.
 */
const BASE_ARCHIVE_REVIEW = "archiving a Base removes it and every record in it from every listing at once, so it always requires review. Omit the flag.";

export function proposeBaseLifecycle(ctx: AppContext, who: Proposer, baseRef: string, operation: "archive" | "restore", review: Review): Promise<Proposed> {
  const loaded = findBase(ctx, who.scope.space.id, baseRef, { archived: true });
  const op = nodeOperation(ctx, who.scope.space.id, { kind: operation === "archive" ? "delete" : "restore", nodeId: loaded.node.id }, new Set());
  return propose(ctx, proposal(who, review, { targetType: "node", baseId: null, nodeId: op.nodeId, reviewPolicy: DEFAULT_REVIEW_POLICY, operations: [op], reviewAlways: operation === "archive" ? BASE_ARCHIVE_REVIEW : undefined }));
}

export type FieldChange =
  | ({ operation: "create" } & NewField)
  | { operation: "update"; fieldId: string; patch: FieldPatch }
  | { operation: "delete"; fieldId: string }
  | { operation: "reorder"; fieldIds: string[] }
  | ({ operation: "convert" } & FieldConversion)
  | { operation: "restore"; fieldId: string };

/** A field operation, checked against the space's fields as they are now (the merge checks again). */
function fieldOperation(ctx: AppContext, loaded: LoadedBase, change: FieldChange): OperationChange {
  switch (change.operation) {
    case "create": {
      const { operation: _, ...field } = change;
      const row = prepareField(loaded.base.id, field, loaded.fields, loaded.fields.length, "");
      resolveLinkedField(ctx, sourceOf(loaded), row, loaded.fields, "");
      resolveNewFormulas(ctx, loaded.base.spaceId, [row], [...loaded.fields, row]);
      return { kind: "base_add_field", payload: field };
    }
    case "update":
      fieldChanges(ctx, loaded, fieldOf(loaded.fields, change.fieldId), change.patch);
      return { kind: "base_update_field", payload: { fieldId: change.fieldId, patch: change.patch } };
    case "delete":
      fieldsToDelete(ctx, loaded.base.spaceId, fieldOf(loaded.fields, change.fieldId));
      // What the proposer was told, kept for the reviewer: the field by name, and the values it takes.
      return { kind: "base_delete_field", payload: { fieldId: change.fieldId, preview: deletionSummary(ctx, loaded, fieldOf(loaded.fields, change.fieldId)) } };
    case "reorder":
      fieldOrder(loaded.fields, change.fieldIds);
      return { kind: "base_reorder_fields", payload: { fieldIds: change.fieldIds } };
    case "restore":
      return { kind: "base_restore_field", payload: { fieldId: restorableField(ctx, loaded, change.fieldId).id } };
    case "convert": {
      const { operation: _, ...conversion } = change;
      checkConversion(ctx, loaded, conversion);
      return { kind: "base_convert_field", payload: { ...conversion, fieldId: fieldOf(loaded.fields, conversion.fieldId).id, preview: conversionSummary(ctx, loaded, conversion) } };
    }
  }
}

export function proposeFieldChange(ctx: AppContext, who: Proposer, baseRef: string, change: FieldChange, review: Review): Promise<Proposed> {
  // Checked as the proposer sees the base: a link into a base hidden from them, and what reads through it, are no fields of theirs.
  const loaded = seenBase(findBase(ctx, who.scope.space.id, baseRef), who.scope.sight);
  const op: ProposedOperation = { targetType: "base", baseId: loaded.base.id, nodeId: loaded.node.id, ...fieldOperation(ctx, loaded, change) };
  return propose(ctx, proposal(who, review, { targetType: "base", baseId: loaded.base.id, nodeId: loaded.node.id, reviewPolicy: loaded.base.reviewPolicy, operations: [op] }));
}

export type ViewChange =
  | { operation: "create"; baseId: string; name: string; slug?: string; type?: ViewType; description?: string; config?: ViewConfigInput }
  | { operation: "update"; viewId: string; name?: string; type?: ViewType; description?: string; config?: ViewConfigInput }
  | { operation: "delete"; viewId: string }
  | { operation: "restore"; viewId: string };

/**
 * `POST /views/change-requests`: a view change is a change request on the view's base, merged at
 * once with write (Busabase's rule for views) unless `autoMerge` is false. The configuration is
 * checked against the base's fields now, and again when it merges.
 */
export function proposeViewChange(ctx: AppContext, who: Proposer, change: ViewChange, review: Review): Promise<Proposed> {
  const spaceId = who.scope.space.id;
  const view = change.operation === "create" ? null : findView(ctx, spaceId, change.viewId, change.operation === "restore" ? "archived" : "active");
  const loaded = findBase(ctx, spaceId, view?.baseId ?? (change as { baseId: string }).baseId);
  const target = { targetType: "base" as const, baseId: loaded.base.id, nodeId: loaded.node.id, targetViewId: view?.id ?? null };
  let op: ProposedOperation;
  switch (change.operation) {
    case "create": {
      const { operation: _, baseId: __, ...input } = change;
      op = { ...target, kind: "view_create", payload: checkNewView(loaded, input) };
      break;
    }
    case "update": {
      const { operation: _, viewId, name, config, ...rest } = change;
      const patch = { ...rest, ...(name === undefined ? {} : { name: checkName(name) }), ...(config === undefined ? {} : { config: checkViewConfig(loaded, config) }) };
      if (Object.keys(patch).length === 0) throw badRequest("An update names at least one of name, type, description and config.");
      op = { ...target, kind: "view_update", payload: { viewId, ...patch } };
      break;
    }
    case "delete":
      op = { ...target, kind: "view_delete", payload: { viewId: change.viewId } };
      break;
    case "restore":
      op = { ...target, kind: "view_restore", payload: { viewId: change.viewId } };
      break;
  }
  return propose(ctx, proposal(who, review, { targetType: "base", baseId: loaded.base.id, nodeId: loaded.node.id, reviewPolicy: loaded.base.reviewPolicy, operations: [op] }));
}

/** A change of structure as another instance pushes it (docs/remotes.md): its kind, where, and its payload as stored there. */
export interface PushedStructure {
  kind: OperationKind;
  baseId: string | null;
  nodeId: string | null;
  payload: Record<string, unknown>;
}

/**
 * A pushed change of structure checked as the API checks the proposal it came from (its payload
 * read back as that proposal's input), answering the payload to store: a pushed payload is never
 * trusted further than a proposal made here. The files a node mounts must be this space's. A kind
 * not listed here is refused (a file tree's changes are `checkPushedTreeChange`'s, in node-content.ts).
 */
export function checkPushedStructure(ctx: AppContext, spaceId: string, op: PushedStructure, refs: Set<string>): Record<string, unknown> {
  const p = op.payload as Record<string, never>;
  const base = () => findBase(ctx, spaceId, op.baseId ?? "");
  switch (op.kind) {
    case "node_create": {
      // What the API's body schema checks before a proposal made here is read.
      if (!(NODE_TYPES as readonly string[]).includes(String(p.nodeType))) throw badRequest(`nodeType must be one of ${NODE_TYPES.join(", ")}.`);
      for (const file of (Array.isArray(p.files) ? p.files : []) as { assetId?: unknown }[]) findAsset(ctx, spaceId, String(file.assetId));
      return nodeOperation(ctx, spaceId, { ...p, kind: "create" } as NodeChange, refs).payload;
    }
    case "node_rename":
      return nodeOperation(ctx, spaceId, { ...p, kind: "rename" } as NodeChange, refs).payload;
    case "node_move":
      return nodeOperation(ctx, spaceId, { ...p, kind: "move" } as NodeChange, refs).payload;
    case "node_delete":
    case "node_restore":
      return nodeOperation(ctx, spaceId, { kind: op.kind === "node_delete" ? "delete" : "restore", nodeId: p.nodeId }, refs).payload;
    case "base_add_field":
      return fieldOperation(ctx, base(), { ...p, operation: "create" } as FieldChange).payload;
    case "base_update_field":
      return fieldOperation(ctx, base(), { operation: "update", fieldId: p.fieldId, patch: p.patch }).payload;
    case "base_delete_field":
      return fieldOperation(ctx, base(), { operation: "delete", fieldId: p.fieldId }).payload;
    case "base_reorder_fields":
      return fieldOperation(ctx, base(), { operation: "reorder", fieldIds: p.fieldIds }).payload;
    case "base_convert_field": {
      const { preview: _, ...conversion } = p;
      return fieldOperation(ctx, base(), { ...conversion, operation: "convert" } as FieldChange).payload;
    }
    case "base_restore_field":
      return fieldOperation(ctx, base(), { operation: "restore", fieldId: p.fieldId }).payload;
    case "view_create":
      return checkNewView(base(), p as unknown as Parameters<typeof checkNewView>[1]) as unknown as Record<string, unknown>;
    case "view_update": {
      const { viewId, name, config, ...rest } = p as unknown as { viewId: string; name?: string; config?: ViewConfigInput };
      findView(ctx, spaceId, viewId, "active");
      return { viewId, ...rest, ...(name === undefined ? {} : { name: checkName(name) }), ...(config === undefined ? {} : { config: checkViewConfig(base(), config) }) };
    }
    case "view_delete":
    case "view_restore":
      findView(ctx, spaceId, p.viewId, op.kind === "view_delete" ? "active" : "archived");
      return { viewId: p.viewId };
    default: {
      const node = op.nodeId ? findNode(ctx, spaceId, op.nodeId, "active") : null;
      if (node && isDocumentType(node.type) && DOCUMENT_KINDS[node.type].operation === op.kind) {
        const checked = checkDocument(node.type, node.type === "doc" ? p.body : p.document);
        return node.type === "doc" ? { body: checked } : { document: checked };
      }
      throw badRequest(`A pushed ${op.kind} is not taken here: make it on this instance.`);
    }
  }
}
