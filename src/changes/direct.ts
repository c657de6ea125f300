import { seenWhere, type Sight } from "../spaces/sight";
import { and, count, desc, eq, inArray, isNotNull, lt, sql, type SQL } from "drizzle-orm";
import type { AppContext, Tx } from "../context";
import { insertRow, preparedFor } from "../db/client";
import { newId } from "../db/ids";
import type { OwnChangeRequest } from "../content/commits";
import { type ChangeRequestRow, changeRequests, type OperationRow, operations } from "../tables/changes";
import { commits, type OperationKind } from "../tables/content";

/**
 * A direct create (one record, merged in the write that proposed it, no idempotency key) writes no
 * change request or operation row: its commit stands for both, and they are read from it here. The
 * three share the part of their ids after the prefix (`crq_X`, `opr_X`, `cmt_X`), and the commit
 * holds what only a change request holds (attribution, review policy). They read exactly as the
 * rows would: a merged change request with one merged `record_create` operation whose head is that
 * commit. It saves 565 bytes per record (docs/performance.md).
 */

const suffixOf = (id: string) => id.slice(id.indexOf("_") + 1);

/** The ids a direct create's commit gives its change request and operation. */
const directIds = (commitId: string) => ({ changeRequestId: `crq_${suffixOf(commitId)}`, operationId: `opr_${suffixOf(commitId)}` });

/** The change request and operation a commit stands for (a direct create's: it holds their attribution), or undefined. */
export const idsStoodFor = (commit: { id: string; sourceAttribution: unknown }) =>
  commit.sourceAttribution === null || commit.sourceAttribution === undefined ? undefined : directIds(commit.id);

/** How a proposal's change request and operations are stored: as rows, or (a direct create) in its one commit. */
export interface ProposalStorage {
  changeRequestId: string;
  /** The next operation's id. */
  operationId(): string;
  /** What an operation's commit holds of the change request when it stands for it (`insertCommit`'s `own`). */
  commitStandsFor(cr: ChangeRequestRow): OwnChangeRequest | undefined;
  /** Writes the rows that are stored as rows. */
  store(tx: Tx, cr: ChangeRequestRow, ops: OperationRow[]): void;
  /** Whether the change request and operations are rows (a merge then marks them merged), not read from the commit. */
  asRows: boolean;
}

/** A change request and its operations stored as rows. */
class StoredAsRows implements ProposalStorage {
  readonly changeRequestId = newId("crq");
  readonly asRows = true;
  operationId(): string {
    return newId("opr");
  }
  commitStandsFor(): undefined {
    return undefined;
  }
  store(tx: Tx, cr: ChangeRequestRow, ops: OperationRow[]): void {
    insertRow(tx, changeRequests, cr);
    for (const op of ops) insertRow(tx, operations, op);
  }
}

/** A direct create's: its one commit stands for its change request and operation. A class, not closures: every create makes one. */
class StoodForByCommit implements ProposalStorage {
  readonly changeRequestId: string;
  readonly asRows = false;
  private readonly commitId = newId("cmt");
  private readonly operation: string;
  constructor() {
    const suffix = suffixOf(this.commitId);
    this.changeRequestId = `crq_${suffix}`;
    this.operation = `opr_${suffix}`;
  }
  operationId(): string {
    return this.operation;
  }
  commitStandsFor(cr: ChangeRequestRow): OwnChangeRequest {
    return { id: this.commitId, sourceAttribution: cr.sourceAttribution, reviewPolicySnapshot: cr.reviewPolicySnapshot };
  }
  store(): void {}
}

/** A proposal is a direct create when it is one record, merged at once, without an idempotency key (which needs a row to be found by). */
export function proposalStorage(mergesAtOnce: boolean, proposal: { idempotencyKey?: string; operations: { kind: OperationKind }[] }): ProposalStorage {
  const direct = mergesAtOnce && !proposal.idempotencyKey && proposal.operations.length === 1 && proposal.operations[0].kind === "record_create";
  return direct ? new StoodForByCommit() : new StoredAsRows();
}

/** The commit that would stand for a change request (`crq_`) or operation (`opr_`) id. */
const commitIdOf = (id: string) => `cmt_${suffixOf(id)}`;

/** Change request ids in list order (newest first): by what follows the prefix, since direct and stored ones interleave. */
export const newestFirst = (a: { id: string }, b: { id: string }) => (suffixOf(a.id) < suffixOf(b.id) ? 1 : suffixOf(a.id) > suffixOf(b.id) ? -1 : 0);

const standsForItself = isNotNull(commits.sourceAttribution);

const directColumns = {
  id: commits.id,
  spaceId: commits.spaceId,
  baseId: commits.baseId,
  nodeId: commits.nodeId,
  recordId: commits.recordId,
  message: commits.message,
  authorId: commits.authorId,
  sourceAttribution: commits.sourceAttribution,
  reviewPolicySnapshot: commits.reviewPolicySnapshot,
  createdAt: commits.createdAt,
};
type DirectCommit = Pick<typeof commits.$inferSelect, keyof typeof directColumns>;

export interface DirectRows {
  changeRequest: ChangeRequestRow;
  operation: OperationRow;
}

function rowsOf(commit: DirectCommit): DirectRows {
  const { changeRequestId, operationId } = directIds(commit.id);
  const at = commit.createdAt;
  return {
    changeRequest: {
      id: changeRequestId,
      spaceId: commit.spaceId,
      baseId: commit.baseId,
      nodeId: commit.nodeId,
      targetType: "base",
      status: "merged",
      submittedBy: commit.authorId,
      sourceAttribution: commit.sourceAttribution!,
      sourceMeta: commit.message ? { message: commit.message } : {},
      reviewPolicySnapshot: commit.reviewPolicySnapshot!,
      mergeSummary: {},
      rejectedReason: null,
      idempotencyKey: null,
      reviewedAt: null,
      mergedAt: at,
      createdAt: at,
      updatedAt: at,
    },
    operation: {
      id: operationId,
      changeRequestId,
      baseId: commit.baseId,
      nodeId: commit.nodeId,
      targetType: "base",
      kind: "record_create",
      status: "merged",
      targetRecordId: commit.recordId,
      targetViewId: null,
      baseCommitId: null,
      headCommitId: commit.id,
      deleteMode: null,
      position: 0,
      createdAt: at,
      updatedAt: at,
    },
  };
}

const directById = preparedFor((db) =>
  db
    .select(directColumns)
    .from(commits)
    .where(and(eq(commits.id, sql.placeholder("id")), eq(commits.spaceId, sql.placeholder("spaceId")), standsForItself))
    .prepare(),
);

/** The direct create a change request id (`crq_…`) or an operation id (`opr_…`) names in this space; undefined when it names none. */
export function findDirect(ctx: AppContext, spaceId: string, id: string, kind: "changeRequest" | "operation"): DirectRows | undefined {
  if (!id.startsWith(kind === "changeRequest" ? "crq_" : "opr_")) return undefined;
  const commit: DirectCommit | undefined = directById(ctx).get({ id: commitIdOf(id), spaceId });
  return commit && rowsOf(commit);
}

/** The operations of change requests that have no operation rows (direct creates), by change request id. */
export function directOperations(ctx: AppContext, changeRequestIds: string[]): Map<string, OperationRow> {
  if (changeRequestIds.length === 0) return new Map();
  const found: DirectCommit[] = ctx.db.select(directColumns).from(commits).where(and(inArray(commits.id, changeRequestIds.map(commitIdOf)), standsForItself)).all();
  return new Map(found.map((commit) => [directIds(commit.id).changeRequestId, rowsOf(commit).operation]));
}

export interface DirectQuery {
  spaceId: string;
  submittedBy?: string;
  baseId?: string;
  sight: Sight;
  /** The last change request id of the previous page. */
  before?: string;
  limit: number;
}

function directWhere(query: Omit<DirectQuery, "limit">): SQL[] {
  const where: SQL[] = [eq(commits.spaceId, query.spaceId), standsForItself];
  if (query.submittedBy) where.push(eq(commits.authorId, query.submittedBy));
  if (query.baseId) where.push(eq(commits.baseId, query.baseId));
  if (query.before) where.push(lt(commits.id, commitIdOf(query.before)));
  return [...where, ...seenWhere(commits, query.sight)];
}

/** How many direct creates match. */
export const directCount = (ctx: AppContext, query: Omit<DirectQuery, "limit" | "before">): number => ctx.db.select({ n: count() }).from(commits).where(and(...directWhere(query))).get()!.n;

/** A page of the space's direct creates as change requests, newest first (they are all merged). */
export function directPage(ctx: AppContext, query: DirectQuery): ChangeRequestRow[] {
  const where = directWhere(query);
  const found: DirectCommit[] = ctx.db.select(directColumns).from(commits).where(and(...where)).orderBy(desc(commits.id)).limit(query.limit).all();
  return found.map((commit) => rowsOf(commit).changeRequest);
}

/** How many direct creates the space has, and how many of them `userId` made. */
export function directCounts(ctx: AppContext, spaceId: string, sight: Sight, userId: string): { merged: number; mine: number } {
  return { merged: directCount(ctx, { spaceId, sight }), mine: directCount(ctx, { spaceId, sight, submittedBy: userId }) };
}

/** The direct create that made a record, as its change request (none when it was made otherwise). */
export function directOfRecord(ctx: AppContext, recordId: string): ChangeRequestRow[] {
  const found: DirectCommit[] = ctx.db.select(directColumns).from(commits).where(and(eq(commits.recordId, recordId), standsForItself)).all();
  return found.map((commit) => rowsOf(commit).changeRequest);
}
