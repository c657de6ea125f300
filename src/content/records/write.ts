import { RecordRow, recordFields, type RecordView, snapshot, writtenView } from "./view";
import { recordEvent } from "../../events/outbox";
import { conflict } from "../../shared/errors";
import { isRelation } from "../fields/relation";
import { and, eq, isNull, sql } from "drizzle-orm";
import { type CommitRow, insertCommit, type UnwrittenCommit, type UserRef, writeCommit } from "../commits";
import type { Tx } from "../../context";
import { compiledRows, insertRow, preparedWrite } from "../../db/client";
import { newId } from "../../db/ids";
import { type FieldRow, type LoadedBase } from "../bases";
import { storedFormulas } from "../fields/formula/plan";
import { hasLinkedFields, linkedValues } from "../relations/read";
import { writeLinks } from "../relations/write";
import { bases, commits, records } from "../../tables/content";

/** Writing records, inside a merge's transaction: the row, its commit, its links, and the event that says so. */

/** Who a merge writes a record as, for which operation, and when. */
export interface Authored {
  actorId: string;
  operationId: string;
  message: string | null;
  at: string;
  /** A commit made on another instance and pulled (docs/remotes.md): the record's new commit keeps its id and says where it came from. */
  pulled?: { commitId: string; origin: string };
}

/** A record's write in a merge: its author, the change request it lands (its event names it), and the people the answer names. */
export interface MergeWrite {
  by: Authored;
  changeRequestId: string;
  people: Map<string, UserRef>;
}

const originOf = (loaded: LoadedBase, w: MergeWrite) => ({ spaceId: loaded.base.spaceId, baseId: loaded.base.id, at: w.by.at });

function recordCommit(tx: Tx, row: RecordRow, fieldRows: FieldRow[], parentCommitId: string | null, by: Authored, kind: CommitRow["kind"], linked?: Record<string, unknown>): CommitRow {
  return insertCommit(tx, {
    spaceId: row.spaceId,
    baseId: row.baseId,
    nodeId: null,
    operationId: by.operationId,
    recordId: row.id,
    parentCommitId,
    message: by.message,
    authorId: by.actorId,
    targetType: "base",
    kind,
    payload: recordFields(row, fieldRows, linked),
    origin: by.pulled?.origin ?? null,
    createdAt: by.at,
    ...(by.pulled ? { id: by.pulled.commitId } : {}),
  });
}

/** Takes the base's next auto number: compiled once and run as an array (drizzle's placeholder filling and row mapping cost more than the update). */
const nextAutoNumber = (tx: Tx, baseId: string): number =>
  compiledRows(tx.store, "records.nextAutoNumber", () =>
    tx.db
      .update(bases)
      .set({ lastAutoNumber: sql`${bases.lastAutoNumber} + 1` })
      .where(eq(bases.id, sql.placeholder("baseId")))
      .returning({ lastAutoNumber: bases.lastAutoNumber }),
  )({ baseId })[0][0] as number;

/** The values of a direct create's commit, written in when it stops being its record's head. */
const keepPayload = preparedWrite((db) =>
  db
    .update(commits)
    .set({ payload: sql.placeholder("payload") } as never)
    .where(and(eq(commits.id, sql.placeholder("id")), isNull(commits.payload)))
    .prepare(),
);

/**
 * Splits values to write into those the record stores and its relation values (written as links).
 * `linked` is every relation value after the write, `before` the record's until then.
 */
function splitLinked(loaded: LoadedBase, values: Record<string, unknown>, before: Record<string, unknown> = {}) {
  if (!hasLinkedFields(loaded)) return { data: values, links: null, linked: undefined };
  const data = { ...values };
  const links: Record<string, unknown> = {};
  for (const field of loaded.fields) {
    if (!isRelation(field) || !Object.hasOwn(values, field.slug)) continue;
    links[field.slug] = values[field.slug];
    delete data[field.slug];
  }
  return { data, links, linked: { ...before, ...links } };
}

/** The values of the base's stored formulas for a record about to be written (computed from its row); null when it has none. */
function storedFormulaValues(row: RecordRow, fieldRows: FieldRow[]): Record<string, unknown> | null {
  const stored = storedFormulas(fieldRows);
  if (stored.length === 0) return null;
  const values = recordFields(row, fieldRows);
  return Object.fromEntries(stored.map((field) => [field.slug, values[field.slug]]));
}

/**
 * A new record; its first commit is written, or `adopted` (the proposal's own, holding the same
 * values, built by the proposal and not written yet) is written as it, once, with the record's id.
 * A commit's payload is read from the record's data while it is the head, unless the record has
 * links, which its data does not hold (docs/performance.md: written once, not written then updated).
 */
function insertRecord(tx: Tx, loaded: LoadedBase, values: Record<string, unknown>, by: Authored, adopted: UnwrittenCommit | null, id: string): { row: RecordRow; commit: CommitRow; links: Record<string, unknown> | undefined } {
  const lastAutoNumber = nextAutoNumber(tx, loaded.base.id);
  const { data, links, linked } = splitLinked(loaded, values);
  const row: RecordRow = {
    id,
    spaceId: loaded.base.spaceId,
    baseId: loaded.base.id,
    status: "active",
    data,
    autoNumber: lastAutoNumber,
    headCommitId: "",
    createdBy: by.actorId,
    updatedBy: by.actorId,
    createdAt: by.at,
    updatedAt: by.at,
    archivedAt: null,
  };
  const formulas = storedFormulaValues(row, loaded.fields);
  // Values are copied only to add what formulas store: what a merge hands over is its own, not read again by anyone.
  if (formulas) row.data = { ...data, ...formulas };
  let commit: CommitRow;
  if (adopted) {
    // The proposal built the row for this write only: it becomes the record's first commit as it is.
    commit = adopted.row;
    commit.recordId = row.id;
    commit.payload = formulas ? { ...values, ...formulas } : values;
    writeCommit(tx, commit, adopted.own, links ? commit.payload : null);
  } else {
    commit = recordCommit(tx, row, loaded.fields, null, by, "record_create", linked);
  }
  row.headCommitId = commit.id;
  insertRow(tx, records, row);
  if (links) writeLinks(tx, loaded, row.id, links, commit.id, by.at, true);
  return { row, commit, links: links ?? undefined };
}

const moveRecordHead = preparedWrite((db) =>
  db
    .update(records)
    .set({
      data: sql.placeholder("data"),
      status: sql.placeholder("status"),
      archivedAt: sql.placeholder("archivedAt"),
      headCommitId: sql.placeholder("headCommitId"),
      updatedBy: sql.placeholder("updatedBy"),
      updatedAt: sql.placeholder("updatedAt"),
    } as never)
    .where(eq(records.id, sql.placeholder("id")))
    .prepare(),
);

/** Writes a new state of a record as a commit on top of its head; relation values in `changes.data` are written as links. */
function writeRecord(
  tx: Tx,
  current: RecordRow,
  loaded: LoadedBase,
  changes: Pick<RecordRow, "data" | "status" | "archivedAt">,
  by: Authored,
  kind: CommitRow["kind"],
): { row: RecordRow; commit: CommitRow } {
  const before = hasLinkedFields(loaded) ? linkedValues(tx, loaded, [current.id], { lookups: false }).get(current.id) : undefined;
  keepPayload(tx).run({ id: current.headCommitId, payload: { ...current.data, ...before } });
  const { data, links, linked } = splitLinked(loaded, changes.data, before);
  const next: RecordRow = { ...current, ...changes, data, updatedBy: by.actorId, updatedAt: by.at };
  next.data = { ...data, ...storedFormulaValues(next, loaded.fields) };
  const commit = recordCommit(tx, next, loaded.fields, current.headCommitId, by, kind, linked);
  next.headCommitId = commit.id;
  moveRecordHead(tx).run({ id: current.id, data: next.data, status: next.status, archivedAt: next.archivedAt, headCommitId: next.headCommitId, updatedBy: next.updatedBy, updatedAt: next.updatedAt });
  if (links) writeLinks(tx, loaded, current.id, links, commit.id, by.at);
  return { row: next, commit };
}

/**
 * Creates a record of values already checked, and records `record.created`; `adopted` as for
 * `insertRecord`. `id` is given when the record was made on another instance (pushed or pulled):
 * ids are unique everywhere, so it keeps its own.
 */
export function createRecord(tx: Tx, loaded: LoadedBase, values: Record<string, unknown>, w: MergeWrite, adopted: UnwrittenCommit | null, id = newId("rec")): RecordView {
  const { row, commit, links } = insertRecord(tx, loaded, values, w.by, adopted, id);
  const record = writtenView(tx, loaded, row, commit, w.people, links);
  recordEvent(tx, "record.created", originOf(loaded, w), { record: snapshot(record), changeRequestId: w.changeRequestId });
  return record;
}

/** Sets `values` on a record whose values were `ours`, and records `record.updated` with the fields that changed and what they held. */
export function updateRecord(tx: Tx, loaded: LoadedBase, current: RecordRow, ours: Record<string, unknown>, values: Record<string, unknown>, w: MergeWrite): { record: RecordView; changedFields: string[] } {
  const changedFields = Object.keys(values).filter((slug) => !Bun.deepEquals(values[slug] ?? null, ours[slug] ?? null));
  const { row, commit } = writeRecord(tx, current, loaded, { data: { ...current.data, ...values }, status: current.status, archivedAt: current.archivedAt }, w.by, "record_update");
  const previous = Object.fromEntries(changedFields.map((slug) => [slug, ours[slug]]));
  const record = writtenView(tx, loaded, row, commit, w.people);
  recordEvent(tx, "record.updated", originOf(loaded, w), { record: snapshot(record), changeRequestId: w.changeRequestId, previous, changedFields });
  return { record, changedFields };
}

/** Archives a record or restores it, and records `record.deleted` or `record.restored`; 409 when it already is. */
export function setRecordArchived(tx: Tx, loaded: LoadedBase, current: RecordRow, archive: boolean, w: MergeWrite): RecordView {
  if ((current.status === "archived") === archive) throw conflict(`The record is already ${current.status}.`, { reason: "RECORD_STATE" });
  const { row, commit } = writeRecord(tx, current, loaded, { data: current.data, status: archive ? "archived" : "active", archivedAt: archive ? w.by.at : null }, w.by, archive ? "record_delete" : "record_restore");
  const record = writtenView(tx, loaded, row, commit, w.people);
  recordEvent(tx, archive ? "record.deleted" : "record.restored", originOf(loaded, w), { record: snapshot(record), changeRequestId: w.changeRequestId });
  return record;
}
