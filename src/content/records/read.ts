import { SEES_ALL, type Sight } from "../../spaces/sight";
import { seenCommits } from "./seen";
import { seenBase } from "./seen-base";
import { CommitHead, FULL_SHAPE, RecordRow, RecordShape, RecordView, recordView, requireShapeFields } from "./view";
import { and, desc, eq, getTableColumns, sql } from "drizzle-orm";
import { commitColumns, type CommitView, commitView, type UserRef, userRefs } from "../commits";
import { users } from "../../tables/auth";
import type { AppContext } from "../../context";
import { compiledRows, decodeRow, preparedFor, qualified } from "../../db/client";
import { notInSpace } from "../../shared/errors";
import { type BaseView, sharedBaseView, findBase, type LoadedBase } from "../bases";
import { type RecordLinkView, recordLinksJson, recordLinkViews } from "../relations/view";
import { type LinkedValues, linkedValues } from "../relations/read";
import { commits, records } from "../../tables/content";

/** Reading one record: by id with its head commit and author, its links, and its history. */

/** What a record shows of its head commit (`CommitHead`). */
export const headColumns = {
  id: commits.id,
  baseId: commits.baseId,
  nodeId: commits.nodeId,
  operationId: commits.operationId,
  parentCommitId: commits.parentCommitId,
  message: commits.message,
  authorId: commits.authorId,
  targetType: commits.targetType,
  kind: commits.kind,
  createdAt: commits.createdAt,
};
export const authorColumns = { id: users.id, name: users.name, email: users.email };

const recordById = preparedFor((db) => db.select().from(records).where(and(eq(records.id, sql.placeholder("id")), eq(records.spaceId, sql.placeholder("spaceId")))).prepare());

/** The space's record of that id, if it has one. */
export const recordInSpace = (ctx: AppContext, spaceId: string, recordId: string): RecordRow | undefined => recordById(ctx).get({ id: recordId, spaceId });

export function findRecord(ctx: AppContext, spaceId: string, recordId: string): RecordRow {
  const row = recordInSpace(ctx, spaceId, recordId);
  if (!row) throw notInSpace("record", recordId);
  return row;
}

const anyRecordById = preparedFor((db) => db.select({ id: records.id }).from(records).where(eq(records.id, sql.placeholder("id"))).prepare());

/** Whether any record, of any space, has the id: one made elsewhere keeps its id only where it is free. */
export const recordIdTaken = (ctx: AppContext, recordId: string): boolean => anyRecordById(ctx).get({ id: recordId }) !== undefined;

export const RECORD_COLUMNS = Object.entries(getTableColumns(records));
/** Where a row of `recordWithHead` or `pageRows` holds the record's id, base and creation time as stored (milliseconds). */
export const ID_AT = RECORD_COLUMNS.findIndex(([key]) => key === "id");
const BASE_ID_AT = RECORD_COLUMNS.findIndex(([key]) => key === "baseId");
export const CREATED_AT_AT = RECORD_COLUMNS.findIndex(([key]) => key === "createdAt");
const HEAD_COLUMNS = Object.entries(headColumns);
const AUTHOR_COLUMNS = Object.entries(authorColumns);

/**
 * A record read as an array (its columns, then its head commit's from `headAt`; `lean`: then only
 * the head's parent), as the API shows it, the head's author taken from `people`: decoded column by
 * column, which costs less than drizzle's mapping of joined rows.
 */
export function recordOfRow(values: unknown[], headAt: number, loaded: LoadedBase, people: Map<string, UserRef>, linked: LinkedValues, base: BaseView, now: number, shape: RecordShape, lean = false): RecordView {
  const row = decodeRow<RecordRow>(values, 0, RECORD_COLUMNS);
  if (lean) return recordView(row, loaded, { parentCommitId: values[headAt] as string | null }, people, base, linked.get(row.id), now, shape);
  const head = values[headAt] === null ? undefined : decodeRow<CommitHead>(values, headAt, HEAD_COLUMNS);
  return recordView(row, loaded, head, people, base, linked.get(row.id), now, shape);
}

const AUTHOR_ID_IN_HEAD = HEAD_COLUMNS.findIndex(([key]) => key === "authorId");

/** The users of a JSON list of ids, the list driving (as `id IN (SELECT … json_each)` the statement built a Bloom filter of the list and scanned `users`: 5.2 against 1.7 µs for one author, least of 30 rounds). */
const authorsById = (ctx: AppContext) =>
  compiledRows(ctx.store, "authors by id", () =>
    ctx.db
      // The columns as SQL: drizzle checks that selected tables are in the query, and cannot see into a FROM written as SQL.
      .select(Object.fromEntries(AUTHOR_COLUMNS.map(([key, column]) => [key, qualified(column)])))
      .from(sql`json_each(${sql.placeholder("ids")}) AS "wanted" CROSS JOIN ${users} ON ${users.id} = "wanted"."value"`),
  );

/**
 * The authors of the head commits of rows read as `recordOfRow` reads them, by id: one statement
 * for a page, whose records share few authors (joined to each row, each author was read, scanned
 * for and decoded once a record).
 */
export function headAuthors(ctx: AppContext, rows: unknown[][], headAt: number): Map<string, UserRef> {
  const ids = new Set<string>();
  for (const values of rows) {
    const id = values[headAt + AUTHOR_ID_IN_HEAD];
    if (typeof id === "string") ids.add(id);
  }
  if (ids.size === 0) return new Map();
  return new Map(authorsById(ctx)({ ids: JSON.stringify([...ids]) }).map((values) => [values[0] as string, decodeRow<UserRef>(values, 0, AUTHOR_COLUMNS)]));
}

const recordWithHead = (ctx: AppContext) =>
  compiledRows(ctx.store, "record with head", () =>
    ctx.db
      .select({ record: records, head: headColumns, author: authorColumns })
      .from(records)
      .leftJoin(commits, eq(commits.id, records.headCommitId))
      .leftJoin(users, eq(users.id, commits.authorId))
      .where(and(eq(records.id, sql.placeholder("id")), eq(records.spaceId, sql.placeholder("spaceId")))),
  );

/** One record with its head commit and author, in one query; the fields come from the base cache. */
export function getRecord(ctx: AppContext, spaceId: string, recordId: string, shape: RecordShape = FULL_SHAPE, sight: Sight = SEES_ALL): RecordView {
  const [values] = recordWithHead(ctx)({ id: recordId, spaceId });
  if (!values) throw notInSpace("record", recordId);
  const loaded = seenBase(findBase(ctx, spaceId, values[BASE_ID_AT] as string, { archived: true }), sight);
  requireShapeFields(loaded, shape);
  const authorAt = RECORD_COLUMNS.length + HEAD_COLUMNS.length;
  const people = new Map<string, UserRef>();
  if (values[authorAt] !== null) people.set(values[authorAt] as string, decodeRow<UserRef>(values, authorAt, AUTHOR_COLUMNS));
  return recordOfRow(values, RECORD_COLUMNS.length, loaded, people, linkedValues(ctx, loaded, [values[ID_AT] as string], { lookups: true }), sharedBaseView(loaded), ctx.clock.now(), shape);
}

/** A record's links either way (`GET /records/{id}/links`). */
export function linksOfRecord(ctx: AppContext, spaceId: string, recordId: string, sight: Sight): RecordLinkView[] {
  const row = findRecord(ctx, spaceId, recordId);
  return recordLinkViews(ctx, seenBase(findBase(ctx, spaceId, row.baseId, { archived: true }), sight), row.id);
}

/** `linksOfRecord` as JSON text, for `GET /records/{id}/links` (see `recordLinksJson`). */
export function linksOfRecordJson(ctx: AppContext, spaceId: string, recordId: string, sight: Sight): string {
  const row = findRecord(ctx, spaceId, recordId);
  return recordLinksJson(ctx, seenBase(findBase(ctx, spaceId, row.baseId, { archived: true }), sight), row.id);
}

/** A record's commits, newest first, as the caller sees them (`seenCommits`). */
export function recordHistory(ctx: AppContext, spaceId: string, recordId: string, sight: Sight): CommitView[] {
  findRecord(ctx, spaceId, recordId);
  const rows = seenCommits(ctx, spaceId, sight, ctx.db.select(commitColumns).from(commits).where(eq(commits.recordId, recordId)).orderBy(desc(commits.id)).all());
  const people = userRefs(ctx, rows.map((row) => row.authorId));
  return rows.map((row) => commitView(row, people));
}
