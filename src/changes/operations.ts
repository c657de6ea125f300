import type { UnwrittenCommit, UserRef } from "../content/commits";
import type { ConversionSummary, FieldConversion } from "../content/field-convert";
import type { DeletionSummary } from "../content/field-changes";
import type { FieldPatch, NewField } from "../content/bases";
import type { NodeRename } from "../content/nodes";
import type { MountedFile, TreeMetadata } from "../content/file-trees";
import type { NewView, ViewPatch } from "../content/views";
import type { NodeType, OperationKind, ReviewPolicy } from "../tables/content";

/** A record's values by field slug, as proposed or stored. */
export type FieldValues = Record<string, unknown>;

export type NodeCreate = {
  ref?: string;
  parentNodeId?: string;
  parentNodeRef?: string;
  nodeType: NodeType;
  slug: string;
  name: string;
  description?: string;
  metadata?: Record<string, unknown>;
  fields?: NewField[];
  reviewPolicy?: ReviewPolicy;
  /** A document node's first content, checked (`checkDocument`); none: its type's empty document. */
  document?: unknown;
  /** A file tree's files, or a file node's one (path ""), each an asset of the space. */
  files?: MountedFile[];
};

type TreeFileWrite = MountedFile & { baseContentHash?: string };
type TreeFileDelete = { path: string; baseContentHash?: string };

export type NodeMove = { nodeId: string; parentNodeId?: string; parentNodeRef?: string; position?: number };

/** What each kind of operation proposes: the payload of its commits. */
export type OperationPayloads = {
  node_create: NodeCreate;
  node_rename: NodeRename;
  node_move: NodeMove;
  node_delete: { nodeId: string };
  node_restore: { nodeId: string };
  base_add_field: NewField;
  base_update_field: { fieldId: string; patch: FieldPatch };
  base_delete_field: { fieldId: string; preview?: DeletionSummary };
  base_reorder_fields: { fieldIds: string[] };
  base_convert_field: FieldConversion & { preview?: ConversionSummary };
  base_restore_field: { fieldId: string };
  record_create: FieldValues;
  record_update: FieldValues;
  record_delete: { deleteMode: "archive" };
  record_restore: Record<string, never>;
  view_create: NewView;
  view_update: { viewId: string } & ViewPatch;
  view_delete: { viewId: string };
  view_restore: { viewId: string };
  doc_update: { body: string };
  whiteboard_document_update: { document: unknown };
  workflow_document_update: { document: unknown };
  html_document_update: { document: unknown };
  skill_file_create: TreeFileWrite;
  skill_file_update: TreeFileWrite;
  skill_file_delete: TreeFileDelete;
  skill_metadata_update: { metadata: TreeMetadata };
  drive_file_create: TreeFileWrite;
  drive_file_update: TreeFileWrite;
  drive_file_delete: TreeFileDelete;
  drive_metadata_update: { metadata: TreeMetadata };
  airapp_file_create: TreeFileWrite;
  airapp_file_update: TreeFileWrite;
  airapp_file_delete: TreeFileDelete;
  airapp_metadata_update: { metadata: TreeMetadata };
};

/** An operation's kind with its payload: a switch over `kind` narrows `payload`. */
export type OperationChange = { [K in OperationKind]: { kind: K; payload: OperationPayloads[K] } }[OperationKind];

/**
 * A stored payload read back with its kind: the one place the database's JSON is trusted to be
 * what `propose` checked and wrote for that kind.
 */
export const storedChange = (kind: OperationKind, payload: Record<string, unknown>): OperationChange => ({ kind, payload }) as OperationChange;

/** What an operation proposes now: its head commit's change, who wrote that commit, and (a record create merged in the write that proposes it) the commit, not written yet. */
export interface Proposed {
  change: OperationChange;
  author: UserRef;
  unwritten?: UnwrittenCommit;
}
