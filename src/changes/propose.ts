import { operationsOf } from "./lifecycle";
import { OPERATIONS } from "./operation-kinds";
import { and, eq, sql } from "drizzle-orm";
import type { Actor } from "../auth/actor";
import { atLeast, type Level } from "../shared/levels";
import { findRecord } from "../content/records/read";
import type { ReviewPolicy, SourceAttribution, TargetType } from "../tables/content";
import { iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { write } from "../db/tx";
import { preparedFor } from "../db/client";
import { badRequest, conflict, notInSpace } from "../shared/errors";
import { recordEvent } from "../events/outbox";
import type { SpaceScope } from "../spaces/resolve";
import type { Sight } from "../spaces/sight";
import { commitRow, type UnwrittenCommit, type UserRef, writeCommit } from "../content/commits";
import { proposalStorage } from "./direct";
import { mergeInTransaction, type MergeOutcome } from "./merge";
import { type ChangeRequestRow, changeRequests, type MergeConflict, type OperationRow } from "../tables/changes";
import type { OperationChange } from "./operations";
import { mergedRecordIds } from "./views";

/** Proposing: a change request with one commit per operation, stored, and merged in the same write when it may be. */

export const CHANNELS = ["api", "cli", "sdk", "mcp", "agent"] as const;
/** The channel of what another instance pushed or what a pull brought (docs/remotes.md). */
export const REMOTE_CHANNEL = "remote";

/** Who proposed, as reviewers see it: the key's name (or the user's, for a session) and the channel. */
export function sourceAttribution(actor: Actor, channelHeader: string | undefined): SourceAttribution {
  if (actor.credential.type === "session") return { displayName: actor.user.name, ownerName: actor.user.name, channel: "web_ui" };
  if (actor.credential.type === "operator") return { displayName: actor.user.name, ownerName: actor.user.name, channel: "cli" };
  if (actor.credential.type === "form") return { displayName: "A form's visitor", ownerName: actor.user.name, channel: "form" };
  const channel = channelHeader ?? "api";
  if (!(CHANNELS as readonly string[]).includes(channel)) throw badRequest(`x-basalt-channel must be one of ${CHANNELS.join(", ")}.`);
  return { displayName: actor.credential.key.name, ownerName: actor.user.name, channel };
}

/** One operation of a proposal: what it targets, and its kind with its payload. */
export type ProposedOperation = {
  targetType: TargetType;
  baseId: string | null;
  nodeId: string | null;
  targetRecordId?: string | null;
  targetViewId?: string | null;
  baseCommitId?: string | null;
  deleteMode?: "archive" | null;
  /** A change of structure pushed from another instance keeps its commit's id (and says where it was made), so what its merge makes has the ids it has there (`derivedIds`). */
  commit?: { id: string; origin: string };
} & OperationChange;

export interface Proposal {
  scope: SpaceScope;
  actor: Actor;
  attribution: SourceAttribution;
  targetType: TargetType;
  baseId: string | null;
  nodeId: string | null;
  reviewPolicy: ReviewPolicy;
  operations: ProposedOperation[];
  /**
   * Checks the operations' values in the write that stores them, and sets their payloads: a merge
   * in that write then takes them as they are, so a value is checked once and against the base as
   * the write finds it (a merge later checks them again).
   */
  prepare?: (tx: Tx) => void;
  message?: string;
  idempotencyKey?: string;
  /** Omitted: merge at once with write or more. `false` forces review; `true` without write waits too. */
  autoMerge?: boolean;
  /** Why this proposal always waits for review, besides what its operations' kinds say (its kinds' `review`): archiving a base. */
  reviewAlways?: string;
  /** What reviewers are told besides the message (`sourceMeta`): a pushed change's instance and local id. */
  meta?: Record<string, unknown>;
  /** Stored in `conflict`, never merged on the way in: a pushed change whose record no longer holds what it was made on. */
  conflict?: MergeConflict;
  /** A merge in the proposing write checks the values again, against the base as the earlier operations leave it: records pushed with the fields they fill. */
  checkAtMerge?: boolean;
}

/**
 * Why the proposal always waits for review, whoever asks: the operations that destroy or rewrite
 * values (Busabase's rule, contract §2.5) say so in their kind's `review` (`operation-kinds.ts`);
 * `autoMerge: true` is then refused with a 400 giving the reason, never merged and never quietly
 * sent to review.
 */
function alwaysReviewed(p: Pick<Proposal, "reviewAlways"> & { operations?: Pick<ProposedOperation, "kind">[] }): string | undefined {
  if (p.reviewAlways !== undefined) return p.reviewAlways;
  for (const op of p.operations ?? []) {
    const reason = OPERATIONS[op.kind].review;
    if (reason !== undefined) return reason;
  }
  return undefined;
}

type Target = { nodeId: string | null; baseId: string | null };

/** Whether a proposal or one of its operations targets a node or base hidden from the proposer. */
const isHidden = (target: Target, { hiddenNodes, hiddenBases }: Sight): boolean =>
  (!!target.nodeId && hiddenNodes.has(target.nodeId)) || (!!target.baseId && hiddenBases.has(target.baseId));

/** The proposal itself or the first of its operations that targets what the proposer cannot see, if any. */
function hiddenTarget(p: Proposal): Target | undefined {
  if (isHidden(p, p.scope.sight)) return p;
  for (const op of p.operations) if (isHidden(op, p.scope.sight)) return op;
  return undefined;
}

export interface Proposed {
  changeRequest: ChangeRequestRow;
  outcome: MergeOutcome | null;
}

/** A proposal's earlier answer under its idempotency key: compiled once, since a push of many changes asks it for each (building the select cost more than running it). */
const byIdempotencyKey = preparedFor((db) =>
  db
    .select()
    .from(changeRequests)
    .where(and(eq(changeRequests.baseId, sql.placeholder("baseId")), eq(changeRequests.submittedBy, sql.placeholder("submittedBy")), eq(changeRequests.idempotencyKey, sql.placeholder("key"))))
    .prepare(),
);

const authorOf = ({ user }: Actor): UserRef => ({ id: user.id, name: user.name, email: user.email });

/** Whether a proposal is merged in the write that stores it: asked for (or not refused) at write or more. */
export const mergesAtOnce = (level: Level, review: Pick<Proposal, "autoMerge"> & Partial<Pick<Proposal, "operations" | "reviewAlways">>): boolean =>
  alwaysReviewed(review) === undefined && review.autoMerge !== false && atLeast(level, "write");

/**
 * Creates a change request with one commit per operation; when auto-merge applies it is merged in
 * the same transaction. A repeated idempotency key (per base and user) answers the first result.
 * How its rows are stored is `proposalStorage`'s to say (a direct create's commit stands for them).
 */
export function propose(ctx: AppContext, p: Proposal): Promise<Proposed> {
  // Whatever route or form it came through, nothing is proposed into a node or base hidden from the proposer.
  const hidden = hiddenTarget(p);
  if (hidden) return Promise.reject(hidden.baseId && p.scope.sight.hiddenBases.has(hidden.baseId) ? notInSpace("base", hidden.baseId) : notInSpace("node", hidden.nodeId!));
  const reviewReason = alwaysReviewed(p);
  if (reviewReason && p.autoMerge === true) return Promise.reject(badRequest(`\`autoMerge: true\` is not accepted here: ${reviewReason}`));
  const autoMerge = !p.conflict && mergesAtOnce(p.scope.level, p);
  const storage = proposalStorage(autoMerge, p);
  const at = iso(ctx.clock.now());
  const cr: ChangeRequestRow = {
    id: storage.changeRequestId,
    spaceId: p.scope.space.id,
    baseId: p.baseId,
    nodeId: p.nodeId,
    targetType: p.targetType,
    status: p.conflict ? "conflict" : "in_review",
    submittedBy: p.actor.user.id,
    sourceAttribution: p.attribution,
    sourceMeta: p.message ? { ...p.meta, message: p.message } : { ...p.meta },
    reviewPolicySnapshot: { ...p.reviewPolicy },
    mergeSummary: p.conflict ? { conflict: p.conflict } : {},
    rejectedReason: null,
    idempotencyKey: p.idempotencyKey ?? null,
    reviewedAt: null,
    mergedAt: null,
    createdAt: at,
    updatedAt: at,
  };
  return write(ctx, (tx): Proposed => {
    if (p.idempotencyKey && p.baseId) {
      const earlier = byIdempotencyKey(tx).get({ baseId: p.baseId, submittedBy: p.actor.user.id, key: p.idempotencyKey });
      if (earlier) return { changeRequest: earlier, outcome: earlier.status === "merged" ? { merged: true, recordIds: mergedRecordIds(operationsOf(tx, earlier.id)) } : null };
    }
    p.prepare?.(tx);
    const unwritten: (UnwrittenCommit | undefined)[] = [];
    const rows: OperationRow[] = p.operations.map((op, position) => {
      const id = storage.operationId();
      const own = storage.commitStandsFor(cr);
      const commit = commitRow({
        spaceId: cr.spaceId,
        baseId: op.baseId,
        nodeId: op.nodeId,
        operationId: id,
        recordId: null,
        parentCommitId: null,
        message: p.message ?? null,
        authorId: p.actor.user.id,
        targetType: op.targetType,
        kind: op.kind,
        payload: op.payload,
        createdAt: at,
        id: op.commit?.id,
        origin: op.commit?.origin,
      }, own);
      // A record created by this write's merge: its commit is written once, as the record's first (`insertRecord`).
      if (autoMerge && !p.checkAtMerge && op.kind === "record_create") unwritten.push({ row: commit, own });
      else {
        writeCommit(tx, commit, own);
        unwritten.push(undefined);
      }
      return {
        id,
        changeRequestId: cr.id,
        baseId: op.baseId,
        nodeId: op.nodeId,
        targetType: op.targetType,
        kind: op.kind,
        status: "pending",
        targetRecordId: op.targetRecordId ?? null,
        targetViewId: op.targetViewId ?? null,
        // An update that names no base commit is made on the record's head as this write finds it: a direct write applies to what is there, never to what was there when the request was read.
        baseCommitId: op.baseCommitId ?? (op.kind === "record_update" && op.targetRecordId ? findRecord(tx, cr.spaceId, op.targetRecordId).headCommitId : null),
        headCommitId: commit.id,
        deleteMode: op.deleteMode ?? null,
        position,
        createdAt: at,
        updatedAt: at,
      };
    });
    storage.store(tx, cr, rows);
    recordEvent(tx, "change_request.created", { spaceId: cr.spaceId, baseId: cr.baseId, at }, { changeRequestId: cr.id, operationCount: rows.length, submittedBy: cr.submittedBy });
    if (p.conflict) recordEvent(tx, "change_request.conflict", { spaceId: cr.spaceId, baseId: cr.baseId, at }, { changeRequestId: cr.id, conflict: p.conflict });
    const author = authorOf(p.actor);
    let known: Map<string, { change: ProposedOperation; author: UserRef; unwritten: UnwrittenCommit | undefined }> | undefined;
    if (!p.checkAtMerge) {
      known = new Map();
      for (let i = 0; i < rows.length; i++) known.set(rows[i].id, { change: p.operations[i], author, unwritten: unwritten[i] });
    }
    const outcome = autoMerge ? mergeInTransaction(tx, cr, rows, at, known, storage.asRows) : null;
    // A direct write made on a base commit that is no longer the head, whose fields changed since: refused whole, never stored as a proposal in conflict under a 2xx.
    if (outcome && !outcome.merged) throw conflict("The record changed since the baseCommitId you sent: nothing was written. Read it again and send its headCommitId.", { reason: "MERGE_CONFLICT", conflict: outcome.conflict });
    return { changeRequest: cr, outcome };
  });
}
