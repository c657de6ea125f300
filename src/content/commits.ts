import type { Static } from "@sinclair/typebox";
import { and, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import { t } from "elysia";
import { users } from "../tables/auth";
import type { AppContext, Tx } from "../context";
import { insertRow, preparedFor, qualified } from "../db/client";
import { badRequest } from "../shared/errors";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import { newId } from "../db/ids";
import { commits, OPERATION_KINDS, records, type ReviewPolicy, type SourceAttribution, TARGET_TYPES } from "../tables/content";

/** A commit as read: its payload always present (see `commitColumns`); what a direct create's commit holds for its change request is read by `direct.ts`. */
export type CommitRow = Omit<typeof commits.$inferSelect, "payload" | "sourceAttribution" | "reviewPolicySnapshot"> & { payload: Record<string, unknown> };

const { sourceAttribution: _attribution, reviewPolicySnapshot: _policy, ...commitTableColumns } = getTableColumns(commits);

/**
 * The columns a commit is read with. A direct create stores its values once: its commit's payload
 * stays NULL while the commit is its record's head, and is read from the record's `data` (the same
 * values); moving the head writes it in (`writeRecord`).
 */
export const commitColumns = {
  ...commitTableColumns,
  payload: sql<Record<string, unknown>>`coalesce(${commits.payload}, (SELECT ${qualified(records.data)} FROM ${records} WHERE ${qualified(records.id)} = ${qualified(commits.recordId)}))`.mapWith(commits.payload),
};

export interface UserRef {
  id: string;
  name: string;
  email: string;
}

/** A user as views show one: Basalt keeps no picture, so `image` is null (Busabase's clients read it). */
export const UserRefSchema = t.Object({ id: t.String(), name: t.String(), email: t.String(), image: t.Null() }, { $id: "UserRef" });
export type UserRefView = Static<typeof UserRefSchema>;

export const userRefView = (ref: UserRef | undefined): UserRefView | null => (ref ? { id: ref.id, name: ref.name, email: ref.email, image: null } : null);

export const CommitSchema = t.Object(
  {
    id: t.String(),
    baseId: Nullable(t.String()),
    nodeId: Nullable(t.String()),
    operationId: Nullable(t.String()),
    parentCommitId: Nullable(t.String()),
    message: t.String({ description: "Empty when none was given." }),
    author: t.String({ description: "The author's user id." }),
    targetType: oneOf(TARGET_TYPES),
    operation: oneOf(OPERATION_KINDS),
    payload: t.Record(t.String(), t.Unknown(), { description: "The proposed values (records: field slug to value), or the node or field change." }),
    authorUser: Nullable(UserRefSchema),
    createdAt: Timestamp,
  },
  { $id: "Commit", description: "One immutable version: of a record's values, or of a node or field change." },
);
export type CommitView = Static<typeof CommitSchema>;

/** Names and e-mails of the users a view mentions, fetched in one query. */
export function userRefs(ctx: AppContext, ids: Iterable<string>): Map<string, UserRef> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = ctx.db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(inArray(users.id, unique)).all();
  return new Map(rows.map((row) => [row.id, row]));
}

/** What the API shows of a commit but its payload. */
export type ShownCommit = Pick<CommitRow, "id" | "baseId" | "nodeId" | "operationId" | "parentCommitId" | "message" | "authorId" | "targetType" | "kind" | "createdAt">;

/** A commit as the API shows it; `payload` is given apart when the caller holds it already (a record's head: its field map), so the row is not copied to hold it. */
export const commitView = (row: ShownCommit, people: Map<string, UserRef>, payload: CommitRow["payload"] = (row as CommitRow).payload): CommitView => ({
  id: row.id,
  baseId: row.baseId,
  nodeId: row.nodeId,
  operationId: row.operationId,
  parentCommitId: row.parentCommitId,
  message: row.message ?? "",
  author: row.authorId,
  targetType: row.targetType,
  operation: row.kind,
  payload,
  authorUser: userRefView(people.get(row.authorId)),
  createdAt: row.createdAt,
});

/** What a direct create's commit holds to stand for its change request (`direct.ts`), and the id that names them all. */
export interface OwnChangeRequest {
  id: string;
  sourceAttribution: SourceAttribution;
  reviewPolicySnapshot: ReviewPolicy;
}

type NewCommit = Omit<CommitRow, "id" | "origin"> & Partial<Pick<CommitRow, "id" | "origin">>;

/** A commit's row: its id is made here, or is the change request's it stands for, or (pulled from a remote) its own. */
export const commitRow = (commit: NewCommit, own?: OwnChangeRequest): CommitRow => ({
  // Built key by key rather than spread: a create makes one, and every copy is the collector's to clear.
  id: commit.id ?? own?.id ?? newId("cmt"),
  spaceId: commit.spaceId,
  baseId: commit.baseId,
  nodeId: commit.nodeId,
  operationId: commit.operationId,
  recordId: commit.recordId,
  parentCommitId: commit.parentCommitId,
  message: commit.message,
  authorId: commit.authorId,
  targetType: commit.targetType,
  kind: commit.kind,
  payload: commit.payload,
  origin: commit.origin ?? null,
  createdAt: commit.createdAt,
});

/**
 * A commit built by the write that proposes it and written later in that write: a record's first
 * commit, merged at once, is written once as the record's (`insertRecord`), with its record and
 * final payload, rather than written and then updated.
 */
export interface UnwrittenCommit {
  row: CommitRow;
  own?: OwnChangeRequest;
}

/**
 * Writes a commit's row, with what it holds of the change request it stands for (`own`); `payload`
 * is what is stored of it (default its own): a NULL payload is read from its record (`commitColumns`).
 */
export function writeCommit(tx: Tx, row: CommitRow, own?: OwnChangeRequest, payload: CommitRow["payload"] | null = row.payload): void {
  insertRow(tx, commits, {
    id: row.id,
    spaceId: row.spaceId,
    baseId: row.baseId,
    nodeId: row.nodeId,
    operationId: row.operationId,
    recordId: row.recordId,
    parentCommitId: row.parentCommitId,
    message: row.message,
    authorId: row.authorId,
    targetType: row.targetType,
    kind: row.kind,
    payload,
    origin: row.origin,
    createdAt: row.createdAt,
    sourceAttribution: own?.sourceAttribution ?? null,
    reviewPolicySnapshot: own?.reviewPolicySnapshot ?? null,
  });
}

/** Inserts a commit (`commitRow`, `writeCommit`). */
export function insertCommit(tx: Tx, commit: NewCommit, own?: OwnChangeRequest): CommitRow {
  const row = commitRow(commit, own);
  writeCommit(tx, row, own);
  return row;
}

export function loadCommits(ctx: AppContext, ids: string[]): Map<string, CommitRow> {
  if (ids.length === 0) return new Map();
  return new Map(ctx.db.select(commitColumns).from(commits).where(inArray(commits.id, [...new Set(ids)])).all().map((row) => [row.id, row]));
}

const commitOfRecord = preparedFor((db) =>
  db.select(commitColumns).from(commits).where(and(eq(commits.id, sql.placeholder("id")), eq(commits.recordId, sql.placeholder("recordId")))).prepare(),
);

/**
 * A commit in the history of one record, or undefined. Three-way merges read their base through
 * this, so a commit of another record (or another space) is never read as a base.
 */
export const findRecordCommit = (ctx: AppContext, recordId: string, commitId: string): CommitRow | undefined => commitOfRecord(ctx).get({ id: commitId, recordId });

/** A client's `baseCommitId` must be a commit of that same record: anything else is a 400. */
export function checkBaseCommit(ctx: AppContext, recordId: string, commitId: string): string {
  if (!findRecordCommit(ctx, recordId, commitId)) throw badRequest(`baseCommitId "${commitId}" is not a commit of record ${recordId}; see GET /records/${recordId}/history.`);
  return commitId;
}
