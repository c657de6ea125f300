import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { attribution, bases, nodes, type OperationKind, reviewPolicySnapshot, type TargetType } from "./content";
import { instant } from "./columns";
import { spaces } from "./spaces";

/** Why a merge did not land: the fields of a record that changed on both sides since the proposal was made. */
export interface MergeConflict {
  recordId: string;
  fields: string[];
}

export const CHANGE_STATUSES = ["in_review", "changes_requested", "approved", "rejected", "merged", "conflict"] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];
export const OPERATION_STATUSES = ["pending", "merged", "archived"] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export const changeRequests = sqliteTable(
  "change_requests",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
    baseId: text("base_id").references(() => bases.id, { onDelete: "cascade" }),
    nodeId: text("node_id").references(() => nodes.id, { onDelete: "set null" }),
    targetType: text("target_type").$type<TargetType>().notNull(),
    status: text("status").$type<ChangeStatus>().notNull(),
    submittedBy: text("submitted_by").notNull(),
    sourceAttribution: attribution("source_attribution").notNull(),
    sourceMeta: text("source_meta", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    reviewPolicySnapshot: reviewPolicySnapshot("review_policy_snapshot").notNull(),
    mergeSummary: text("merge_summary", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    rejectedReason: text("rejected_reason"),
    idempotencyKey: text("idempotency_key"),
    reviewedAt: instant("reviewed_at"),
    mergedAt: instant("merged_at"),
    createdAt: instant("created_at").notNull(),
    updatedAt: instant("updated_at").notNull(),
  },
  (table) => [
    // The Inbox tabs (by status, newest first) and the list of all statuses (newest first): without
    // the second, that list sorted every change request of the space on each page.
    index("change_requests_space_idx").on(table.spaceId, table.status, table.id),
    index("change_requests_newest_idx").on(table.spaceId, table.id),
    index("change_requests_submitter_idx").on(table.spaceId, table.submittedBy, table.id),
    uniqueIndex("change_requests_idempotency_idx").on(table.baseId, table.submittedBy, table.idempotencyKey).where(sql`${table.idempotencyKey} IS NOT NULL`),
  ],
);

export const operations = sqliteTable(
  "operations",
  {
    id: text("id").primaryKey(),
    changeRequestId: text("change_request_id").notNull().references(() => changeRequests.id, { onDelete: "cascade" }),
    baseId: text("base_id").references(() => bases.id, { onDelete: "cascade" }),
    nodeId: text("node_id").references(() => nodes.id, { onDelete: "set null" }),
    targetType: text("target_type").$type<TargetType>().notNull(),
    kind: text("kind").$type<OperationKind>().notNull(),
    status: text("status").$type<OperationStatus>().notNull(),
    targetRecordId: text("target_record_id"),
    /** The view a view operation changes (set at merge for a create). */
    targetViewId: text("target_view_id"),
    baseCommitId: text("base_commit_id"),
    headCommitId: text("head_commit_id").notNull(),
    deleteMode: text("delete_mode").$type<"archive">(),
    position: integer("position").notNull(),
    createdAt: instant("created_at").notNull(),
    updatedAt: instant("updated_at").notNull(),
  },
  (table) => [index("operations_change_request_idx").on(table.changeRequestId, table.position), index("operations_record_idx").on(table.targetRecordId)],
);

export const VERDICTS = ["approved", "rejected"] as const;
export type Verdict = (typeof VERDICTS)[number];

export const reviews = sqliteTable(
  "reviews",
  {
    id: text("id").primaryKey(),
    changeRequestId: text("change_request_id").notNull().references(() => changeRequests.id, { onDelete: "cascade" }),
    reviewerId: text("reviewer_id").notNull(),
    verdict: text("verdict").$type<Verdict>().notNull(),
    reason: text("reason"),
    visibleOperationHeads: text("visible_operation_heads", { mode: "json" }).$type<Record<string, string>>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [uniqueIndex("reviews_reviewer_idx").on(table.changeRequestId, table.reviewerId)],
);

/** What a comment may be about (Busabase's subjects). */
export const COMMENT_SUBJECTS = ["record", "change_request", "operation", "commit"] as const;
export type CommentSubject = (typeof COMMENT_SUBJECTS)[number];

/**
 * Comments on a record, change request, operation or commit. Besides its subject, a comment keeps
 * the record, change request, operation and commit its subject belongs to, so a change request's
 * comments include those on its operations.
 */
export const comments = sqliteTable(
  "comments",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    subjectType: text("subject_type").$type<CommentSubject>().notNull(),
    subjectId: text("subject_id").notNull(),
    recordId: text("record_id"),
    changeRequestId: text("change_request_id"),
    operationId: text("operation_id"),
    commitId: text("commit_id"),
    authorId: text("author_id").notNull(),
    body: text("body").notNull(),
    mentionsAi: integer("mentions_ai", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    index("comments_subject_idx").on(table.spaceId, table.subjectType, table.subjectId, table.id),
    index("comments_change_request_idx").on(table.changeRequestId, table.id).where(sql`${table.changeRequestId} IS NOT NULL`),
  ],
);

export type ChangeRequestRow = typeof changeRequests.$inferSelect;
export type OperationRow = typeof operations.$inferSelect;

/**
 * The order commits were merged in: `seq` only grows (the row's key, one past the largest; a
 * number is used again only after the rows above it went with their space), each row written in
 * the transaction that merged its commit. A follower of a space (a remote,
 * docs/remotes.md) replays the space's commits in this order, which is not their ids' (a proposal
 * merged late is seen late). A space's rows are not numbered without gaps: other spaces share it.
 */
export const mergeLog = sqliteTable(
  "merge_log",
  {
    seq: integer("seq").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    commitId: text("commit_id").notNull(),
    changeRequestId: text("change_request_id").notNull(),
  },
  (table) => [index("merge_log_space_idx").on(table.spaceId, table.seq)],
);

/** This instance: its id, made once, names the commits it merged to every instance they travel to. */
export const instance = sqliteTable("instance", {
  id: text("id").primaryKey(),
  createdAt: instant("created_at").notNull(),
});

/**
 * The remotes a space follows (docs/remotes.md): another instance's space, read and proposed to
 * with a key of that instance, sealed at rest as webhook secrets are. `pulledSeq` is the remote's
 * merge-log seq applied here; `pushedSeq` the local merge-log seq whose changes were sent.
 */
export const remotes = sqliteTable(
  "remotes",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    url: text("url").notNull(),
    remoteSpaceId: text("remote_space_id").notNull(),
    remoteInstanceId: text("remote_instance_id").notNull(),
    sealedKey: text("sealed_key").notNull(),
    pulledSeq: integer("pulled_seq").notNull(),
    pushedSeq: integer("pushed_seq").notNull(),
    behind: integer("behind").notNull(),
    lastContactAt: instant("last_contact_at"),
    lastError: text("last_error"),
    /** When a pull and push with it last ended whole (asked, or by `serve`'s follow). */
    lastSyncAt: instant("last_sync_at"),
    /** When `serve`'s follow tries it next (later while it cannot be reached); null when no follow has run. */
    nextSyncAt: instant("next_sync_at"),
    createdAt: instant("created_at").notNull(),
  },
  (table) => [uniqueIndex("remotes_name_idx").on(table.spaceId, table.name)],
);

export const PUSH_STATES = ["pending", "landed", "refused"] as const;
export type PushState = (typeof PUSH_STATES)[number];

/** A local change request sent to a remote: the change request it became there, and how it stands. */
export const remotePushes = sqliteTable(
  "remote_pushes",
  {
    remoteId: text("remote_id")
      .notNull()
      .references(() => remotes.id, { onDelete: "cascade" }),
    changeRequestId: text("change_request_id").notNull(),
    remoteChangeRequestId: text("remote_change_request_id"),
    state: text("state").$type<PushState>().notNull(),
    reason: text("reason"),
    updatedAt: instant("updated_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.remoteId, table.changeRequestId] }), index("remote_pushes_state_idx").on(table.remoteId, table.state)],
);
