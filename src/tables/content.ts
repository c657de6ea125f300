import { sql } from "drizzle-orm";
import { type AnySQLiteColumn, customType, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { assets } from "./assets";
import { users } from "./auth";
import { instant } from "./columns";
import { spaces } from "./spaces";
import type { FieldType } from "../shared/field-types";
import type { Level } from "../shared/levels";

/** Every node type of Busabase's contract; what each holds is its kind's to say (`content/node-kinds.ts`). */
export const NODE_TYPES = ["folder", "base", "skill", "drive", "airapp", "file", "doc", "form", "whiteboard", "workflow", "html"] as const;
export type NodeType = (typeof NODE_TYPES)[number];
/** The node types that are file trees: files mounted at paths. */
export const FILE_TREE_TYPES = ["skill", "drive", "airapp"] as const;
export type FileTreeType = (typeof FILE_TREE_TYPES)[number];
export const isFileTree = (type: string): type is FileTreeType => (FILE_TREE_TYPES as readonly string[]).includes(type);
/** The node types whose content is one document: a doc's markdown, or a whiteboard's, workflow's or html page's JSON. */
export const DOCUMENT_TYPES = ["doc", "whiteboard", "workflow", "html"] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];
export const isDocumentType = (type: string): type is DocumentType => (DOCUMENT_TYPES as readonly string[]).includes(type);
export const NODE_STATUSES = ["active", "archived"] as const;
/** Who in a space sees a node (with what is below it): `private` hides it from members without a grant; null inherits. */
export const NODE_VISIBILITIES = ["private", "workspace", "public"] as const;
export type NodeVisibility = (typeof NODE_VISIBILITIES)[number];
export type NodeStatus = (typeof NODE_STATUSES)[number];

/** A space's tree. The root folder has no parent; slugs are unique among active siblings. */
export const nodes = sqliteTable(
  "nodes",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
    parentId: text("parent_id").references((): AnySQLiteColumn => nodes.id, { onDelete: "cascade" }),
    type: text("type").$type<NodeType>().notNull(),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    position: integer("position").notNull().default(0),
    status: text("status").$type<NodeStatus>().notNull().default("active"),
    explicitVisibility: text("explicit_visibility").$type<NodeVisibility>(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    index("nodes_parent_idx").on(table.spaceId, table.parentId, table.position),
    index("nodes_private_idx").on(table.spaceId).where(sql`${table.explicitVisibility} = 'private'`),
    uniqueIndex("nodes_root_idx").on(table.spaceId).where(sql`${table.parentId} IS NULL`),
    uniqueIndex("nodes_sibling_slug_idx").on(table.parentId, table.slug).where(sql`${table.status} = 'active'`),
  ],
);

/**
 * The content of a document node: a doc's markdown, or the JSON of a whiteboard's, workflow's or
 * html node's document. A node without a row reads as its type's default document.
 */
export const nodeDocuments = sqliteTable("node_documents", {
  nodeId: text("node_id")
    .primaryKey()
    .references(() => nodes.id, { onDelete: "cascade" }),
  body: text("body").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/**
 * The files of a file tree (skill, drive, airapp) by path, and a file node's one file (path ""):
 * each an asset mounted there. An asset mounted anywhere is in use: it is neither deleted nor
 * collected.
 */
export const nodeFiles = sqliteTable(
  "node_files",
  {
    nodeId: text("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    path: text("path").notNull(),
    assetId: text("asset_id")
      .notNull()
      .references(() => assets.id),
    displayName: text("display_name"),
    mimeType: text("mime_type"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.nodeId, table.path] }), index("node_files_asset_idx").on(table.assetId)],
);
export type NodeFileRow = typeof nodeFiles.$inferSelect;

export type FormBinding = { inputName: string; fieldSlug: string; required?: boolean; label?: string; help?: string };
export type FormPage = { code?: string; theme?: { logoUrl?: string; coverUrl?: string; brandColor?: string; hideBranding?: boolean } };
export type FormShare = { isPublic: boolean; anonymousSubmit: boolean; submitLimit?: number; requireCaptcha?: boolean };

/**
 * A form: a `form` node bound to a base, whose submissions become record proposals (Busabase's
 * forms, contract §2.7). `submissionCount` is reserved before a submission is proposed, so a
 * `submitLimit` holds under concurrent submissions.
 */
export const forms = sqliteTable(
  "forms",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    nodeId: text("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    targetBaseId: text("target_base_id")
      .notNull()
      .references(() => bases.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    bindings: text("bindings", { mode: "json" }).$type<FormBinding[]>().notNull(),
    page: text("page", { mode: "json" }).$type<FormPage>().notNull(),
    share: text("share", { mode: "json" }).$type<FormShare>().notNull(),
    /** Whether a submission merges at once (the form's creator must be able to write), rather than wait for review. */
    mergeSubmissions: integer("merge_submissions", { mode: "boolean" }).notNull().default(false),
    submissionCount: integer("submission_count").notNull().default(0),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [uniqueIndex("forms_node_idx").on(table.nodeId), index("forms_space_idx").on(table.spaceId, table.id)],
);
export type FormRow = typeof forms.$inferSelect;

/** What a node grant names: one member (`user`, by user id) or every member of the space (`space`, by space id). */
export const PRINCIPAL_TYPES = ["user", "space"] as const;
export type PrincipalType = (typeof PRINCIPAL_TYPES)[number];

/**
 * A grant on a node: it opens a private node, and what is below it, to its principal, at most at
 * its level. Only grants made on the node itself are stored; those below inherit them when read.
 */
export const nodePrincipals = sqliteTable(
  "node_principals",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    nodeId: text("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    principalType: text("principal_type").$type<PrincipalType>().notNull(),
    principalId: text("principal_id").notNull(),
    role: text("role").$type<Level>().notNull(),
    grantedBy: text("granted_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [uniqueIndex("node_principals_grant_idx").on(table.nodeId, table.principalType, table.principalId), index("node_principals_space_idx").on(table.spaceId)],
);
export type NodePrincipalRow = typeof nodePrincipals.$inferSelect;

export const SHARE_SCOPES = ["none", "public"] as const;
export const SHARE_CAPABILITIES = ["read", "submit"] as const;

/**
 * A node's public link (Busabase's share): while `scope` is public and it has not expired, anyone
 * reads the node and what is below it, without a key, after giving its password when it has one
 * (kept as an scrypt hash, `salt:hex`).
 */
export const nodeShares = sqliteTable(
  "node_shares",
  {
    nodeId: text("node_id")
      .primaryKey()
      .references(() => nodes.id, { onDelete: "cascade" }),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    scope: text("scope").$type<(typeof SHARE_SCOPES)[number]>().notNull(),
    capability: text("capability").$type<(typeof SHARE_CAPABILITIES)[number]>().notNull(),
    passwordHash: text("password_hash"),
    expiresAt: text("expires_at"),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [index("node_shares_space_idx").on(table.spaceId)],
);
export type NodeShareRow = typeof nodeShares.$inferSelect;

export type FramePolicy = { mode: "anywhere" | "top-level-only" | "origins"; allowedOrigins: string[] };

/**
 * Short-lived read-only links to one node (Busabase's embed links): whoever holds the token reads
 * the node, and nothing else, until it expires or is revoked. Only the token's SHA-256 is kept.
 */
export const embedLinks = sqliteTable(
  "embed_links",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    nodeId: text("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    createdBy: text("created_by").notNull(),
    tokenHash: text("token_hash").notNull(),
    framePolicy: text("frame_policy", { mode: "json" }).$type<FramePolicy>().notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
  },
  (table) => [uniqueIndex("embed_links_token_idx").on(table.tokenHash), index("embed_links_space_idx").on(table.spaceId, table.nodeId)],
);
export type EmbedLinkRow = typeof embedLinks.$inferSelect;

/** The nodes a user marked as favorites, per space (`POST /nodes/{id}/favorite` toggles one). */
export const nodeFavorites = sqliteTable(
  "node_favorites",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    nodeId: text("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.userId, table.nodeId] }),
    index("node_favorites_user_idx").on(table.userId, table.spaceId, table.createdAt),
    // A node purged (or a space deleted) finds its favorites by these.
    index("node_favorites_node_idx").on(table.nodeId),
    index("node_favorites_space_idx").on(table.spaceId),
  ],
);

export interface ReviewPolicy {
  kind: "single";
  requiredApprovals: number;
}

export const bases = sqliteTable("bases", {
  id: text("id").primaryKey(),
  spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
  nodeId: text("node_id").notNull().unique().references(() => nodes.id, { onDelete: "cascade" }),
  reviewPolicy: text("review_policy", { mode: "json" }).$type<ReviewPolicy>().notNull(),
  /** The last `auto_number` handed out in this base. */
  lastAutoNumber: integer("last_auto_number").notNull().default(0),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const fields = sqliteTable(
  "fields",
  {
    id: text("id").primaryKey(),
    baseId: text("base_id").notNull().references(() => bases.id, { onDelete: "cascade" }),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    type: text("type").$type<FieldType>().notNull(),
    required: integer("required", { mode: "boolean" }).notNull().default(false),
    position: integer("position").notNull(),
    options: text("options", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    createdAt: text("created_at").notNull(),
    /** Whether `field_values` holds this field's values: being filled in the background, or complete (see `field-upkeep.ts`). */
    indexState: text("index_state").$type<FieldIndexState>().notNull().default("none"),
    /** When a listing or view last needed its index (`indexes.ts`): one unused for long is dropped. */
    indexUsedAt: text("index_used_at"),
    /** While its records' values are being converted to its type in the background (`field-convert.ts`): what it was. */
    convertFrom: text("convert_from", { mode: "json" }).$type<ConversionState>(),
  },
  (table) => [
    uniqueIndex("fields_slug_idx").on(table.baseId, table.slug),
    index("fields_building_idx").on(table.id).where(sql`${table.indexState} = 'building'`),
    index("fields_converting_idx").on(table.id).where(sql`${table.convertFrom} IS NOT NULL`),
  ],
);

/**
 * What the database's triggers need of each field type, written from the field kinds
 * (`content/fields/registry.ts`) by the migration that made it and again when the server starts:
 * the record's own column that holds its value, whether its unset values sort below every number,
 * and whether search reads it. The triggers join it, so they never name a type.
 */
export const fieldKinds = sqliteTable("field_kinds", {
  type: text("type").$type<FieldType>().primaryKey(),
  recordColumn: text("record_column"),
  numeric: integer("numeric", { mode: "boolean" }).notNull().default(false),
  searched: integer("searched", { mode: "boolean" }).notNull().default(false),
});

/** Fields deleted from a base, as they were when deleted (`GET /bases/{id}/fields/deleted`); their values are cleared by the upkeep. */
export const deletedFields = sqliteTable(
  "deleted_fields",
  {
    id: text("id").primaryKey(),
    baseId: text("base_id")
      .notNull()
      .references(() => bases.id, { onDelete: "cascade" }),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    type: text("type").$type<FieldType>().notNull(),
    required: integer("required", { mode: "boolean" }).notNull(),
    position: integer("position").notNull(),
    options: text("options", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: text("created_at").notNull(),
    deletedAt: text("deleted_at").notNull(),
  },
  (table) => [index("deleted_fields_base_idx").on(table.baseId, table.deletedAt)],
);

/** A conversion under way: the field's type and options before it, how values a select lacks are treated, and whether it was indexed. */
export interface ConversionState {
  type: FieldType;
  options: Record<string, unknown>;
  mode: "null_on_missing" | "auto_create";
  indexed: boolean;
  /** Text split on its commas into several values (a multiple select), as the person asked. */
  split?: boolean;
}

/** `dropping`: its indexed values are being removed by the upkeep (kept exact by the triggers until they are gone). */
export const FIELD_INDEX_STATES = ["none", "building", "ready", "dropping"] as const;
export type FieldIndexState = (typeof FIELD_INDEX_STATES)[number];

/**
 * Fields deleted (directly, or with their base or space) whose leftovers are removed in the
 * background, a batch at a time: their entries in `field_values`, and their values under the slug
 * in the base's records. Written by a trigger on `fields` (migrations/0010), so every way a field
 * goes is caught. No foreign keys: the base may be gone too.
 */
export const droppedFields = sqliteTable("dropped_fields", {
  fieldId: text("field_id").primaryKey(),
  baseId: text("base_id").notNull(),
  slug: text("slug").notNull(),
});

/**
 * A deleted field's values, moved out of its records as the upkeep clears them (`dropped_fields`),
 * so that restoring the field brings them back.
 */
export const deletedFieldValues = sqliteTable(
  "deleted_field_values",
  {
    fieldId: text("field_id")
      .notNull()
      .references(() => deletedFields.id, { onDelete: "cascade" }),
    recordId: text("record_id")
      .notNull()
      .references(() => records.id, { onDelete: "cascade" }),
    /** The value as JSON text. */
    value: text("value").notNull(),
  },
  (table) => [primaryKey({ columns: [table.fieldId, table.recordId] })],
);

export type RecordStatus = NodeStatus;

/** The current state of each record; its history is the chain of commits ending at `head_commit_id`. */
export const records = sqliteTable(
  "records",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
    baseId: text("base_id").notNull().references(() => bases.id, { onDelete: "cascade" }),
    status: text("status").$type<RecordStatus>().notNull(),
    /** Stored values by field slug; computed fields are derived from the columns below. */
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    autoNumber: integer("auto_number").notNull(),
    headCommitId: text("head_commit_id").notNull(),
    createdBy: text("created_by").notNull(),
    updatedBy: text("updated_by").notNull(),
    createdAt: instant("created_at").notNull(),
    updatedAt: instant("updated_at").notNull(),
    archivedAt: instant("archived_at"),
  },
  (table) => [
    index("records_created_idx").on(table.baseId, table.status, table.createdAt, table.id),
    index("records_updated_idx").on(table.baseId, table.status, table.updatedAt, table.id),
  ],
);

/** The index of links by their target (a query that must walk it names it). */
export const RECORD_LINKS_TARGET_INDEX = "record_links_target_idx";

/**
 * The links of relation fields, each stored once, under the field that owns the pair (`content/relations/`):
 * its source record holds it in that field, its target record in the inverse field. Keyed by field
 * and source, and indexed by field and target, so the links of a record either way are an index
 * seek, and so are a field's links when it is deleted. A WITHOUT ROWID table (migrations/0012): the key is the row. No foreign keys, as for
 * `field_values`: a dropped field's links are removed by the upkeep, a batch at a time.
 */
export const recordLinks = sqliteTable(
  "record_links",
  {
    fieldId: text("field_id").notNull(),
    sourceRecordId: text("source_record_id").notNull(),
    targetRecordId: text("target_record_id").notNull(),
    id: text("id").notNull(),
    spaceId: text("space_id").notNull(),
    baseId: text("base_id").notNull(),
    targetBaseId: text("target_base_id").notNull(),
    /** The commit that made the link (or last moved it in a list). */
    commitId: text("commit_id").notNull(),
    /** Its place in the source record's list, and in the target record's. */
    position: integer("position").notNull(),
    targetPosition: integer("target_position").notNull(),
    createdAt: instant("created_at").notNull(),
    updatedAt: instant("updated_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.fieldId, table.sourceRecordId, table.targetRecordId] }), index(RECORD_LINKS_TARGET_INDEX).on(table.fieldId, table.targetRecordId, table.targetPosition)],
);

export const VIEW_TYPES = ["table", "gallery", "kanban", "calendar", "gantt"] as const;
export type ViewType = (typeof VIEW_TYPES)[number];

/** One filter of a view or listing: the listing's own object form (`views.ts` reads Busabase's operator names too). */
export interface ViewFilter {
  fieldSlug: string;
  /** The field's id when the view was saved: a field re-made under the same slug is another field. */
  fieldId?: string;
  operator: string;
  value?: string | string[];
}

export interface ViewSort {
  fieldSlug: string;
  fieldId?: string;
  direction: "asc" | "desc";
}

/** Filters combined by `match`, with groups of their own (a view's are at most two deep). */
export interface ViewFilterGroup {
  match: "all" | "any";
  filters: ViewFilter[];
  groups?: ViewFilterGroup[];
}

/** A view's configuration: its filters (and groups of them) and sort, and how the page draws it (the other keys). */
export type ViewConfig = { filters: ViewFilter[]; sorts: ViewSort[]; groups?: ViewFilterGroup[] } & Record<string, unknown>;

/** Saved views of a base: a name, a type and a configuration; changed only through change requests. */
export const views = sqliteTable(
  "views",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    baseId: text("base_id")
      .notNull()
      .references(() => bases.id, { onDelete: "cascade" }),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    type: text("type").$type<ViewType>().notNull(),
    config: text("config", { mode: "json" }).$type<ViewConfig>().notNull(),
    status: text("status").$type<NodeStatus>().notNull().default("active"),
    createdBy: text("created_by").notNull(),
    archivedAt: text("archived_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  // Slugs are unique among a base's active views, so an archived view's slug can be reused.
  (table) => [index("views_base_idx").on(table.baseId, table.status, table.id), uniqueIndex("views_slug_idx").on(table.baseId, table.slug).where(sql`${table.status} = 'active'`)],
);

// ---- commits: every state of a node, base or record, and every proposal of one ----

export const OPERATION_KINDS = [
  "node_create",
  "node_rename",
  "node_move",
  "node_delete",
  "node_restore",
  "base_add_field",
  "base_update_field",
  "base_delete_field",
  "base_reorder_fields",
  "base_convert_field",
  "base_restore_field",
  "record_create",
  "record_update",
  "record_delete",
  "record_restore",
  "view_create",
  "view_update",
  "view_delete",
  "view_restore",
  "doc_update",
  "whiteboard_document_update",
  "workflow_document_update",
  "html_document_update",
  "skill_file_create",
  "skill_file_update",
  "skill_file_delete",
  "skill_metadata_update",
  "drive_file_create",
  "drive_file_update",
  "drive_file_delete",
  "drive_metadata_update",
  "airapp_file_create",
  "airapp_file_update",
  "airapp_file_delete",
  "airapp_metadata_update",
] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];
export const TARGET_TYPES = ["node", "base"] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

export interface SourceAttribution {
  displayName: string;
  ownerName: string;
  channel: string;
}

/** Stored as `[displayName, ownerName, channel]`, without the keys' names in every row. */
export const attribution = customType<{ data: SourceAttribution; driverData: string }>({
  dataType: () => "text",
  toDriver: ({ displayName, ownerName, channel }) => JSON.stringify([displayName, ownerName, channel]),
  fromDriver: (stored) => {
    const [displayName, ownerName, channel] = JSON.parse(stored) as string[];
    return { displayName, ownerName, channel };
  },
});

/** A review policy has one kind, so its snapshot is stored as the number of approvals it requires. */
export const reviewPolicySnapshot = customType<{ data: ReviewPolicy; driverData: number }>({
  dataType: () => "integer",
  toDriver: (policy) => policy.requiredApprovals,
  fromDriver: (requiredApprovals) => ({ kind: "single", requiredApprovals }),
});

/**
 * Append-only: proposals and their revisions (by operation), and every state a record has had. A
 * direct create's commit also stands for its change request and operation (`src/changes/direct.ts`):
 * it holds their attribution and review policy, and no change request or operation row is written.
 */
export const commits = sqliteTable(
  "commits",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
    baseId: text("base_id").references(() => bases.id, { onDelete: "cascade" }),
    nodeId: text("node_id"),
    operationId: text("operation_id"),
    recordId: text("record_id"),
    parentCommitId: text("parent_commit_id"),
    message: text("message"),
    authorId: text("author_id").notNull(),
    targetType: text("target_type").$type<TargetType>().notNull(),
    kind: text("kind").$type<OperationKind>().notNull(),
    /** NULL on a direct create's commit while it is its record's head: the record's `data` holds the same values (see `commitColumns`). */
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>(),
    /** Set only on a direct create's commit, which stands for its change request (and marks it as one). */
    sourceAttribution: attribution("source_attribution"),
    reviewPolicySnapshot: reviewPolicySnapshot("review_policy_snapshot"),
    /** The instance where the commit was made, when not this one: a remote's commit, pulled (docs/remotes.md). */
    origin: text("origin"),
    createdAt: instant("created_at").notNull(),
  },
  (table) => [
    // A record's history (`GET /records/{id}/history`); commits are otherwise read by id.
    index("commits_record_idx").on(table.recordId, table.id),
    // Direct creates among the change requests: the space's list, newest first, and the caller's own (`mine`, the `created` count).
    index("commits_direct_idx").on(table.spaceId, table.id).where(sql`${table.sourceAttribution} IS NOT NULL`),
    index("commits_direct_author_idx").on(table.spaceId, table.authorId, table.id).where(sql`${table.sourceAttribution} IS NOT NULL`),
    // The space's activity (`src/changes/activity.ts`): revisions of proposals and changes of records, newest first.
    index("commits_activity_idx").on(table.spaceId, table.id).where(sql`${table.parentCommitId} IS NOT NULL`),
  ],
);

export type BaseRow = typeof bases.$inferSelect;
export type FieldRow = typeof fields.$inferSelect;
export type NodeRow = typeof nodes.$inferSelect;

/**
 * A space's tree as one sight sees it, by its nodes' parents: what the tree cache (`ctx.trees`)
 * holds. `shares`, once read, are the nodes shared publicly, good until the first of those shares
 * expires (`until`, in ms); any change to the database empties the cache, shares included.
 */
export interface SpaceTree {
  byParent: ReadonlyMap<string | null, readonly (NodeRow & { baseId: string | null })[]>;
  shares?: { ids: ReadonlySet<string>; until: number };
}

/** A base with its node and its fields in order: what the base cache (`findBase`) holds. */
export interface LoadedBase {
  base: BaseRow;
  node: NodeRow;
  fields: FieldRow[];
}
