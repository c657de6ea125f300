import { and, eq, or } from "drizzle-orm";
import { instanceId, logMerged } from "../changes/merge-log";
import { REMOTE_CHANNEL } from "../changes/propose";
import { same, threeWay } from "../changes/three-way";
import { DEFAULT_REVIEW_POLICY, findBaseOrNull, type LoadedBase } from "../content/bases";
import { findRecordCommit, insertCommit, loadCommits, type UserRef } from "../content/commits";
import { linkLists, recordInputErrors } from "../content/records/validate";
import { currentFields, type RecordRow } from "../content/records/view";
import { recordIdTaken, recordInSpace } from "../content/records/read";
import { createRecord, type MergeWrite, setRecordArchived, updateRecord } from "../content/records/write";
import type { AppContext, Tx } from "../context";
import { insertRow } from "../db/client";
import { newId } from "../db/ids";
import { recordEvent } from "../events/outbox";
import { isComputed } from "../shared/field-types";
import { users } from "../tables/auth";
import { type ChangeRequestRow, changeRequests, type MergeConflict, type OperationRow, operations, remotePushes } from "../tables/changes";
import { commits, type OperationKind, type TargetType } from "../tables/content";
import { mergeInTransaction } from "../changes/merge";
import { operationsOf } from "../changes/lifecycle";

/** A commit as the remote's `GET /sync/commits` gives it. */
export interface PulledCommit {
  id: string;
  seq: number;
  changeRequestId: string;
  recordId: string | null;
  baseId: string | null;
  nodeId: string | null;
  parentCommitId: string | null;
  targetType: TargetType;
  operation: OperationKind;
  payload: Record<string, unknown>;
  message: string;
  author: string;
  authorUser: { id: string; name: string; email: string } | null;
  origin: string;
  /** The change another instance pushed that this commit merged: this instance's own when `origin` is this one's id. */
  pushed: { origin: string; changeRequestId: string; with?: string[] } | null;
  createdAt: string;
}

/** What a pull did, counted. */
export interface PullTally {
  /** Commits applied as they were (fast forward), or adopted as the record's head. */
  applied: number;
  /** Commits merged with local changes of their record into a local merge commit. */
  merged: number;
  /** Commits that became a local change request in `conflict`. */
  conflicts: number;
  /** Commits already here, or whose values the record already holds. */
  known: number;
  /** Node, field, view and document changes merged here as they merged there. */
  structure: number;
  /** Commits that could not be applied here (their base is not here, or what they change was changed here): each named in `warnings`. */
  notFollowed: number;
  /** Local changes the remote merged, found landed. */
  landed: number;
  /** Values a record could not take here (a field's options differ), named. */
  warnings: string[];
}

export const emptyTally = (): PullTally => ({ applied: 0, merged: 0, conflicts: 0, known: 0, structure: 0, notFollowed: 0, landed: 0, warnings: [] });

const MAX_WARNINGS = 50;
const RECORD_KINDS: ReadonlySet<OperationKind> = new Set(["record_create", "record_update", "record_delete", "record_restore"]);

/** The remote a pull applies for, as the applier needs it. */
export interface PullingFor {
  id: string;
  name: string;
  spaceId: string;
  remoteInstanceId: string;
}

/** An operation of a change request a pull makes: what differs from a pending, position-0 record update is given. */
function operationRow(cr: ChangeRequestRow, at: string, given: Partial<OperationRow> & Pick<OperationRow, "headCommitId">): OperationRow {
  return {
    id: newId("opr"),
    changeRequestId: cr.id,
    baseId: cr.baseId,
    nodeId: null,
    targetType: "base",
    kind: "record_update",
    status: "pending",
    targetRecordId: null,
    targetViewId: null,
    baseCommitId: null,
    deleteMode: null,
    position: 0,
    createdAt: at,
    updatedAt: at,
    ...given,
  };
}

/** One remote change request's commits applied here: the local change request that carries them, made when first needed. */
class Carrier {
  private cr: ChangeRequestRow | null = null;
  readonly written: string[] = [];
  private readonly recordIds = new Set<string>();

  constructor(
    private readonly tx: Tx,
    private readonly remote: PullingFor,
    readonly remoteChangeRequestId: string,
    private readonly at: string,
  ) {}

  /** A write of `commit` under this change request, as its author. */
  write(commit: PulledCommit, author: UserRef, kind: OperationKind, pulled: boolean): MergeWrite {
    const cr = this.open(author);
    if (commit.recordId) this.recordIds.add(commit.recordId);
    const archives = kind === "record_delete";
    const op = operationRow(cr, this.at, {
      baseId: commit.baseId,
      kind,
      status: archives ? "archived" : "merged",
      targetRecordId: commit.recordId,
      baseCommitId: commit.parentCommitId,
      headCommitId: commit.id,
      deleteMode: archives ? "archive" : null,
      position: this.written.length,
    });
    insertRow(this.tx, operations, op);
    return {
      by: { actorId: author.id, operationId: op.id, message: commit.message || null, at: this.at, ...(pulled ? { pulled: { commitId: commit.id, origin: commit.origin } } : {}) },
      changeRequestId: cr.id,
      people: new Map([[author.id, author]]),
    };
  }

  /** Logs what was written and says the change request merged, as any merge does. */
  close(): void {
    if (!this.cr) return;
    logMerged(this.tx, this.remote.spaceId, this.cr.id, this.written);
    recordEvent(this.tx, "change_request.merged", { spaceId: this.remote.spaceId, baseId: this.cr.baseId, at: this.at }, { changeRequestId: this.cr.id, recordIds: [...this.recordIds] });
  }

  private open(author: UserRef): ChangeRequestRow {
    if (this.cr) return this.cr;
    this.cr = pulledChangeRequest(this.remote, author, "merged", { pulled: true, origin: this.remote.remoteInstanceId, remoteChangeRequestId: this.remoteChangeRequestId }, this.at);
    insertRow(this.tx, changeRequests, this.cr);
    return this.cr;
  }
}

function pulledChangeRequest(remote: PullingFor, author: UserRef, status: "merged" | "conflict" | "in_review", meta: Record<string, unknown>, at: string): ChangeRequestRow {
  return {
    id: newId("crq"),
    spaceId: remote.spaceId,
    baseId: null,
    nodeId: null,
    targetType: "base",
    status,
    submittedBy: author.id,
    sourceAttribution: { displayName: `remote ${remote.name}`, ownerName: author.name, channel: REMOTE_CHANNEL },
    sourceMeta: meta,
    reviewPolicySnapshot: DEFAULT_REVIEW_POLICY,
    mergeSummary: {},
    rejectedReason: null,
    idempotencyKey: null,
    reviewedAt: null,
    mergedAt: status === "merged" ? at : null,
    createdAt: at,
    updatedAt: at,
  };
}

/** Whether a commit changes a record (applied by `applyPulled`), rather than a node, a field, a view or a document (`applyStructure`). */
export const isRecordCommit = (commit: PulledCommit): boolean => commit.recordId !== null && RECORD_KINDS.has(commit.operation);

/**
 * A remote change request's changes of nodes, fields, views or documents, merged here as they
 * merged there, together (a node made by one may be the parent of the next, by its `ref`): their
 * commits are kept with their ids, so the ids their merge makes are the remote's (`derivedIds`),
 * and what later commits name is here. They are checked again as any merge is; what cannot merge
 * here (a slug taken by a change made here) throws, and the caller notes it as not followed.
 */
export function applyStructure(tx: Tx, remote: PullingFor, group: PulledCommit[], at: string, tally: PullTally): void {
  const fresh = group.filter((commit) => !commitHere(tx, commit.id));
  tally.known += group.length - fresh.length;
  if (fresh.length === 0) return;
  const first = fresh[0];
  const authors = new Map<string, UserRef>();
  const author = authorHere(tx, remote, first, authors);
  const cr: ChangeRequestRow = {
    ...pulledChangeRequest(remote, author, "in_review", { pulled: true, origin: remote.remoteInstanceId, remoteChangeRequestId: first.changeRequestId }, at),
    targetType: first.targetType,
    baseId: first.baseId,
    nodeId: first.nodeId,
  };
  insertRow(tx, changeRequests, cr);
  const ops = fresh.map((commit, position) => structureOperation(tx, remote, cr, commit, authorHere(tx, remote, commit, authors), position, at));
  mergeInTransaction(tx, cr, ops, at);
  tally.structure += ops.length;
}

function structureOperation(tx: Tx, remote: PullingFor, cr: ChangeRequestRow, commit: PulledCommit, author: UserRef, position: number, at: string): OperationRow {
  const op = operationRow(cr, at, {
    baseId: commit.baseId,
    nodeId: commit.nodeId,
    targetType: commit.targetType,
    kind: commit.operation,
    targetViewId: typeof commit.payload.viewId === "string" ? commit.payload.viewId : null,
    headCommitId: commit.id,
    position,
  });
  insertCommit(tx, {
    id: commit.id,
    origin: commit.origin,
    spaceId: remote.spaceId,
    baseId: commit.baseId,
    nodeId: commit.nodeId,
    operationId: op.id,
    recordId: null,
    parentCommitId: null,
    message: commit.message || null,
    authorId: author.id,
    targetType: commit.targetType,
    kind: commit.operation,
    payload: commit.payload,
    createdAt: commit.createdAt,
  });
  insertRow(tx, operations, op);
  return op;
}

/**
 * Applies a page of the remote's merged commits here, in one transaction with the cursor the
 * caller writes (docs/remotes.md, "Pull"). A record commit whose parent is the record's head is
 * applied as it is, its id kept; else the review loop's three-way merge decides: what only one side
 * changed is merged, and a field both sides changed differently makes the commit a local change
 * request in `conflict`, never a silent overwrite. A commit already here is skipped.
 */
export function applyPulled(tx: Tx, remote: PullingFor, page: PulledCommit[], at: string, tally: PullTally): void {
  const bases = new Map<string, LoadedBase | null>();
  const baseOf = (baseId: string) => {
    if (!bases.has(baseId)) bases.set(baseId, findBaseOrNull(tx, remote.spaceId, baseId));
    return bases.get(baseId)!;
  };
  const authors = new Map<string, UserRef>();
  const here = instanceId(tx);
  let carrier: Carrier | null = null;
  for (const commit of page) {
    if (carrier && carrier.remoteChangeRequestId !== commit.changeRequestId) {
      carrier.close();
      carrier = null;
    }
    const own = commit.pushed?.origin === here ? commit.pushed.changeRequestId : null;
    if (!carrier) {
      carrier = new Carrier(tx, remote, commit.changeRequestId, at);
      tally.landed += markLanded(tx, remote.id, commit.changeRequestId, own, at);
    }
    const loaded = commit.baseId ? baseOf(commit.baseId) : null;
    if (!isRecordCommit(commit) || !loaded) {
      tally.notFollowed++;
      warn(tally, `The remote's ${commit.operation} of record ${commit.recordId} is not followed: its base is not here.`);
      continue;
    }
    applyRecordCommit(tx, remote, carrier, loaded, commit as PulledCommit & { recordId: string }, authorHere(tx, remote, commit, authors), own ? [own, ...(commit.pushed?.with ?? [])] : [], at, tally);
  }
  carrier?.close();
}

/** Names what a pull could not do, up to `MAX_WARNINGS` (the count says how many in all). */
export function warn(tally: PullTally, message: string): void {
  if (tally.warnings.length < MAX_WARNINGS) tally.warnings.push(message);
}

/** Marks the local change pushed as the remote change request `remoteChangeRequestId` (this instance's `own` change there) landed upstream; answers how many. */
function markLanded(tx: Tx, remoteId: string, remoteChangeRequestId: string, own: string | null, at: string): number {
  const pushedAs = own ? or(eq(remotePushes.remoteChangeRequestId, remoteChangeRequestId), eq(remotePushes.changeRequestId, own)) : eq(remotePushes.remoteChangeRequestId, remoteChangeRequestId);
  return tx.db
    .update(remotePushes)
    .set({ state: "landed", reason: null, remoteChangeRequestId, updatedAt: at })
    .where(and(eq(remotePushes.remoteId, remoteId), pushedAs, eq(remotePushes.state, "pending")))
    .returning({ id: remotePushes.changeRequestId })
    .all().length;
}

/**
 * The person a pulled commit names, as this instance knows them: the account of the same e-mail,
 * as a load matches people. Without that, the remote's id, which names no account here; an id
 * that does name one (the remote's ids are its own to choose) becomes an id derived from the
 * remote and its id, so no pulled commit is written as a local person who did not write it.
 */
export function authorHere(tx: Pick<AppContext, "db">, remote: { remoteInstanceId: string }, commit: PulledCommit, known: Map<string, UserRef>): UserRef {
  const kept = known.get(commit.author);
  if (kept) return kept;
  const given = commit.authorUser ?? { id: commit.author, name: "", email: "" };
  const account = (column: typeof users.id | typeof users.email, value: string) => tx.db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(eq(column, value)).get();
  const byEmail = given.email ? account(users.email, given.email.toLowerCase()) : undefined;
  const here = byEmail ?? (account(users.id, given.id) ? { ...given, id: strangerId(remote, given.id) } : given);
  known.set(commit.author, here);
  return here;
}

/** An id for a remote's person whose id names someone else here: the same each time, naming no account. */
const strangerId = (remote: { remoteInstanceId: string }, id: string): string => `usr_${new Bun.CryptoHasher("sha256").update(`${remote.remoteInstanceId}\n${id}`).digest("hex").slice(0, 24).toUpperCase()}`;

/** The values of a commit's payload this base stores and takes as they are here; what it does not take is named in the tally. */
function writableValues(tx: Tx, loaded: LoadedBase, commit: PulledCommit, tally: PullTally): Record<string, unknown> {
  const given: Record<string, unknown> = {};
  for (const field of loaded.fields) if (!isComputed(field.type) && Object.hasOwn(commit.payload, field.slug)) given[field.slug] = commit.payload[field.slug];
  const { values, errors } = recordInputErrors(tx, loaded, given, "update");
  for (const error of errors) warn(tally, `Record ${commit.recordId}: ${error.message} (the remote's value was not taken).`);
  return values;
}

const commitHere = (tx: Tx, commitId: string): boolean => tx.db.select({ id: commits.id }).from(commits).where(eq(commits.id, commitId)).get() !== undefined;

/** Keeps the remote's commit in the record's history without moving its head: later commits name it as their parent. */
function keepKnown(tx: Tx, remote: PullingFor, commit: PulledCommit & { recordId: string }, author: UserRef, values: Record<string, unknown>): void {
  insertCommit(tx, {
    id: commit.id,
    origin: commit.origin,
    spaceId: remote.spaceId,
    baseId: commit.baseId,
    nodeId: null,
    operationId: null,
    recordId: commit.recordId,
    parentCommitId: commit.parentCommitId,
    message: commit.message || null,
    authorId: author.id,
    targetType: "base",
    kind: commit.operation,
    payload: values,
    createdAt: commit.createdAt,
  });
}

/**
 * What this instance's change `changeRequestId` asked of a record (its operations' proposals, in
 * order): when that change comes back merged, these values are this side's already, so they are
 * not the remote's change against a later local edit.
 */
function sentValues(tx: Tx, changeRequestId: string, recordId: string): Record<string, unknown> {
  const heads = operationsOf(tx, changeRequestId).flatMap((op) => (op.targetRecordId === recordId ? [op.headCommitId] : []));
  const proposals = loadCommits(tx, heads);
  return Object.assign({}, ...heads.map((head) => proposals.get(head)?.payload ?? {}));
}

function applyRecordCommit(tx: Tx, remote: PullingFor, carrier: Carrier, loaded: LoadedBase, commit: PulledCommit & { recordId: string }, author: UserRef, own: string[], at: string, tally: PullTally): void {
  if (commitHere(tx, commit.id)) return void tally.known++;
  const theirs = writableValues(tx, loaded, commit, tally);
  const local = recordInSpace(tx, remote.spaceId, commit.recordId);
  if (!local) {
    if (commit.operation !== "record_create") {
      warn(tally, `Record ${commit.recordId} is not here: its ${commit.operation} is not followed.`);
      return void tally.notFollowed++;
    }
    if (recordIdTaken(tx, commit.recordId)) {
      warn(tally, `Record ${commit.recordId} is another space's here: its creation is not followed.`);
      return void tally.notFollowed++;
    }
    createRecord(tx, loaded, theirs, carrier.write(commit, author, "record_create", true), null, commit.recordId);
    carrier.written.push(commit.id);
    return void tally.applied++;
  }
  const archive = commit.operation === "record_delete" ? true : commit.operation === "record_restore" ? false : null;
  if (archive !== null) {
    if ((local.status === "archived") === archive) {
      keepKnown(tx, remote, commit, author, theirs);
      return void tally.known++;
    }
    setRecordArchived(tx, loaded, local, archive, carrier.write(commit, author, commit.operation, true));
    carrier.written.push(commit.id);
    return void tally.applied++;
  }
  const ours = currentFields(tx, loaded, local);
  if (local.headCommitId === commit.parentCommitId) {
    updateRecord(tx, loaded, local, ours, theirs, carrier.write(commit, author, "record_update", true));
    carrier.written.push(commit.id);
    return void tally.applied++;
  }
  // The record moved here too: its base is the commit's parent, which came here before it; for this instance's own change coming back, with what that change set (it is this side's, never the remote's against a later edit here).
  const parent = commit.parentCommitId ? (findRecordCommit(tx, local.id, commit.parentCommitId)?.payload ?? {}) : {};
  const base = own.length > 0 ? Object.assign({ ...parent }, ...own.map((id) => sentValues(tx, id, local.id))) : parent;
  const { values, conflicts } = threeWay(base, ours, theirs, linkLists(loaded));
  if (conflicts.length > 0) {
    keepKnown(tx, remote, commit, author, theirs);
    conflictHere(tx, remote, commit, author, local, base, theirs, { recordId: local.id, fields: conflicts }, at);
    return void tally.conflicts++;
  }
  const after = { ...ours, ...values };
  if (Object.keys(theirs).every((slug) => same(after[slug], theirs[slug]))) {
    // Nothing here that the remote lacks: its commit becomes the head, so the next one applies as it is.
    updateRecord(tx, loaded, local, ours, theirs, carrier.write(commit, author, "record_update", true));
    carrier.written.push(commit.id);
    return void tally.applied++;
  }
  keepKnown(tx, remote, commit, author, theirs);
  if (Object.entries(values).every(([slug, value]) => same(ours[slug], value))) return void tally.known++;
  const { record } = updateRecord(tx, loaded, local, ours, values, carrier.write(commit, author, "record_update", false));
  carrier.written.push(record.headCommitId);
  tally.merged++;
}

/**
 * A remote commit that changed fields this instance changed differently: a local change request in
 * `conflict` proposing the remote's values (what it changed against its parent), for a person to
 * resolve in the Inbox. Its base is the commit's parent, so resolving it shows both sides.
 */
function conflictHere(tx: Tx, remote: PullingFor, commit: PulledCommit, author: UserRef, local: RecordRow, base: Record<string, unknown>, theirs: Record<string, unknown>, found: MergeConflict, at: string): void {
  const cr = { ...pulledChangeRequest(remote, author, "conflict", { origin: remote.remoteInstanceId, remoteChangeRequestId: commit.changeRequestId, remoteCommitId: commit.id }, at), baseId: commit.baseId, mergeSummary: { conflict: found } };
  insertRow(tx, changeRequests, cr);
  const op = operationRow(cr, at, {
    targetRecordId: local.id,
    // Its base is the commit's parent where that came here (the three-way merge read it), else the record's head.
    baseCommitId: commit.parentCommitId && findRecordCommit(tx, local.id, commit.parentCommitId) ? commit.parentCommitId : local.headCommitId,
    headCommitId: newId("cmt"),
  });
  insertCommit(tx, {
    id: op.headCommitId,
    spaceId: remote.spaceId,
    baseId: commit.baseId,
    nodeId: null,
    operationId: op.id,
    recordId: null,
    parentCommitId: null,
    message: commit.message || null,
    authorId: author.id,
    targetType: "base",
    kind: "record_update",
    payload: Object.fromEntries(Object.entries(theirs).filter(([slug, value]) => !same(base[slug], value))),
    createdAt: at,
  });
  insertRow(tx, operations, op);
  recordEvent(tx, "change_request.created", { spaceId: remote.spaceId, baseId: commit.baseId, at }, { changeRequestId: cr.id, operationCount: 1, submittedBy: author.id });
  recordEvent(tx, "change_request.conflict", { spaceId: remote.spaceId, baseId: commit.baseId, at }, { changeRequestId: cr.id, conflict: found });
}
