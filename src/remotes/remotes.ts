import { and, asc, count, desc, eq, gt, inArray, isNotNull, max, sql } from "drizzle-orm";
import { type Static, t } from "elysia";
import type { AuditActor } from "../audit/audit";
import { commitColumns, type CommitRow } from "../content/commits";
import { findBaseOrNull, type LoadedBase } from "../content/bases";
import { same } from "../changes/three-way";
import type { AppContext, Tx } from "../context";
import { preparedFor, preparedWrite } from "../db/client";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { iso } from "../shared/clock";
import { ApiError, badRequest, conflict, notFound } from "../shared/errors";
import { isComputed } from "../shared/field-types";
import { Nullable, Timestamp, WholeNumber } from "../shared/schemas";
import { createSpace, removeSpace } from "../spaces/spaces";
import { changeRequests, mergeLog, operations, type PushState, remotePushes, remotes } from "../tables/changes";
import { commits } from "../tables/content";
import { BLOBS, beginDumpImport, commitDumpImport, pruneImportSessions, stageImportRows, stageStoredRows } from "../transfer/dump-api";
import { markClone, removeCutClones } from "./cut-clones";
import { instanceId } from "../changes/merge-log";
import { RemoteClient, remoteFailure, RemoteRefused, RemoteUnreachable, remoteUrl, tooLargeAnswer } from "./client";
import { operationsOf as changeRequestOperations } from "../changes/lifecycle";
import { fetchFiles, filesInPayload, filesInValues, sendFiles } from "./files";
import type { UserRef } from "../content/commits";
import { applyPulled, applyStructure, authorHere, emptyTally, isRecordCommit, type PulledCommit, type PullTally, warn } from "./pull";
import { MAX_PUSHED_BATCH, type PushedBatchSchema, type PushedSchema, type PushSchema, type PushStructureSchema, type SnapshotPageSchema, type SnapshotSchema } from "./serve";

/**
 * The remotes a space follows, and what a person does with them (docs/remotes.md): clone, pull,
 * push and status. Used alike by the commands (`cli/remotes.ts`) and the Remotes screen's routes.
 */

export type RemoteRow = typeof remotes.$inferSelect;

export const RemoteSchema = t.Object(
  {
    id: t.String(),
    name: t.String(),
    url: t.String(),
    remoteSpaceId: t.String(),
    remoteInstanceId: t.String(),
    pulledSeq: WholeNumber({ description: "The remote's merge-log seq applied here." }),
    behind: WholeNumber({ description: "Commits merged on the remote and not pulled, as of the last contact." }),
    ahead: WholeNumber({ description: "Local change requests not pushed yet." }),
    pending: WholeNumber({ description: "Pushed changes waiting in the remote's Inbox (or in conflict there)." }),
    refused: WholeNumber({ description: "Pushed changes the remote refused or rejected: they stay here." }),
    conflicts: WholeNumber({ description: "Changes a pull found in conflict here, waiting for a person's decision in the Inbox (local changes of those records are held until then)." }),
    lastContactAt: Nullable(Timestamp),
    lastError: Nullable(t.String()),
    lastSyncAt: Nullable(Timestamp, { description: "When a push (which pulls first) with it last ended whole: asked, or by serve's follow." }),
    nextSyncAt: Nullable(Timestamp, { description: "When serve's follow tries it next (later while it does not answer); null before any follow ran." }),
    createdAt: Timestamp,
  },
  { $id: "Remote" },
);
export type RemoteView = Static<typeof RemoteSchema>;

export const RemoteNameSchema = t.String({ pattern: "^[a-z0-9][a-z0-9-]{0,39}$", description: "A short name: origin, team, ..." });
const NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;

/** The remote's key, opened. */
/** A client of the remote; `signal` (the caller's request) stops its exchanges when the caller has gone. */
const clientOf = (ctx: AppContext, remote: RemoteRow, signal?: AbortSignal) => new RemoteClient(remote.url, ctx.secretBox.open(remote.sealedKey), remote.remoteSpaceId, signal);

export function findRemote(ctx: AppContext, spaceId: string, ref: string | undefined): RemoteRow {
  const rows = ctx.db.select().from(remotes).where(eq(remotes.spaceId, spaceId)).all();
  if (ref === undefined) {
    if (rows.length === 1) return rows[0];
    throw badRequest(rows.length === 0 ? "This space follows no remote." : `This space follows ${rows.length} remotes: name one (${rows.map((row) => row.name).join(", ")}).`);
  }
  const found = rows.find((row) => row.id === ref || row.name === ref);
  if (!found) throw notFound(`This space follows no remote ${ref}.`);
  return found;
}

/** The local change requests not sent to `remote` yet: merged here after its push cursor, not brought by a pull, not settled there (a change held back lets later ones go first). */
function unpushed(ctx: AppContext, remote: RemoteRow): { changeRequestId: string; seqs: number[]; commitIds: string[] }[] {
  const entries = ctx.db
    .select({ seq: mergeLog.seq, commitId: mergeLog.commitId, changeRequestId: mergeLog.changeRequestId })
    .from(mergeLog)
    .where(and(eq(mergeLog.spaceId, remote.spaceId), gt(mergeLog.seq, remote.pushedSeq)))
    .orderBy(asc(mergeLog.seq))
    .all();
  const groups = new Map<string, { changeRequestId: string; seqs: number[]; commitIds: string[] }>();
  for (const entry of entries) {
    const group = groups.get(entry.changeRequestId) ?? { changeRequestId: entry.changeRequestId, seqs: [], commitIds: [] };
    group.seqs.push(entry.seq);
    group.commitIds.push(entry.commitId);
    groups.set(entry.changeRequestId, group);
  }
  const ids = [...groups.keys()];
  if (ids.length === 0) return [];
  const pulled = ctx.db
    .select({ id: changeRequests.id, meta: changeRequests.sourceMeta })
    .from(changeRequests)
    .where(inArray(changeRequests.id, ids))
    .all()
    .filter((row) => row.meta.pulled === true)
    .map((row) => row.id);
  const settled = ctx.db.select({ id: remotePushes.changeRequestId }).from(remotePushes).where(and(eq(remotePushes.remoteId, remote.id), inArray(remotePushes.changeRequestId, ids))).all().map((row) => row.id);
  const skipped = new Set([...pulled, ...settled]);
  return [...groups.values()].filter((group) => !skipped.has(group.changeRequestId));
}

function viewOf(ctx: AppContext, remote: RemoteRow): RemoteView {
  const states = ctx.db.select({ state: remotePushes.state, n: count() }).from(remotePushes).where(eq(remotePushes.remoteId, remote.id)).groupBy(remotePushes.state).all();
  const stateCount = (state: PushState) => states.find((row) => row.state === state)?.n ?? 0;
  return {
    id: remote.id,
    name: remote.name,
    url: remote.url,
    remoteSpaceId: remote.remoteSpaceId,
    remoteInstanceId: remote.remoteInstanceId,
    pulledSeq: remote.pulledSeq,
    behind: remote.behind,
    ahead: unpushed(ctx, remote).length,
    pending: stateCount("pending"),
    refused: stateCount("refused"),
    conflicts: undecided(ctx, remote.spaceId).size,
    lastContactAt: remote.lastContactAt,
    lastError: remote.lastError,
    lastSyncAt: remote.lastSyncAt,
    nextSyncAt: remote.nextSyncAt,
    createdAt: remote.createdAt,
  };
}

export const listRemotes = (ctx: AppContext, spaceId: string): RemoteView[] =>
  ctx.db.select().from(remotes).where(eq(remotes.spaceId, spaceId)).orderBy(asc(remotes.name)).all().map((remote) => viewOf(ctx, remote));

export function removeRemote(ctx: AppContext, spaceId: string, ref: string): Promise<{ ok: true }> {
  const remote = findRemote(ctx, spaceId, ref);
  return write(ctx, (tx) => {
    tx.db.delete(remotes).where(eq(remotes.id, remote.id)).run();
    return { ok: true as const };
  });
}

type SyncState = { instanceId: string; spaceId: string; head: number; behind?: number };

/** Where the remote stands: its instance (which must be the one followed) and how many commits it merged after `after`. */
async function stateOf(client: RemoteClient, after: number, expected?: string): Promise<SyncState> {
  const state = await client.call<SyncState>("GET", `/sync/state?after=${after}`);
  if (expected && state.instanceId !== expected) throw new RemoteRefused(409, "NOT_THE_REMOTE", `${client.url} is now the instance ${state.instanceId}, not ${expected} that this space follows: remove the remote and clone again.`);
  return state;
}

/** Remembers a remote for a space that holds its data already (loaded from its dump, or cloned before): followed from `fromSeq`, by default its head now. */
export async function addRemote(ctx: AppContext, spaceId: string, input: { name: string; url: string; key: string; remoteSpace: string; fromSeq?: number }): Promise<RemoteView> {
  if (!NAME.test(input.name)) throw badRequest("A remote's name is 1 to 40 lowercase letters, digits and dashes.");
  const url = remoteUrl(input.url);
  const client = new RemoteClient(url, input.key, input.remoteSpace);
  const state = await stateOf(client, 0).catch((error) => Promise.reject(remoteFailure(error, input.name)));
  const row = await write(ctx, (tx) => insertRemote(tx, spaceId, { name: input.name, url, key: input.key, remoteSpaceId: state.spaceId, remoteInstanceId: state.instanceId, pulledSeq: input.fromSeq ?? state.head, head: state.head }));
  return viewOf(ctx, row);
}

function insertRemote(tx: Tx, spaceId: string, input: { name: string; url: string; key: string; remoteSpaceId: string; remoteInstanceId: string; pulledSeq: number; head: number }): RemoteRow {
  if (input.remoteInstanceId === instanceId(tx)) throw badRequest("That is this instance: a space follows another instance's space.");
  if (tx.db.select({ id: remotes.id }).from(remotes).where(and(eq(remotes.spaceId, spaceId), eq(remotes.name, input.name))).get()) throw conflict(`This space follows a remote named ${input.name} already.`);
  const at = iso(tx.clock.now());
  const pushedSeq = tx.db.select({ seq: max(mergeLog.seq) }).from(mergeLog).get()?.seq ?? 0;
  const row: RemoteRow = {
    id: newId("rmt"),
    spaceId,
    name: input.name,
    url: input.url,
    remoteSpaceId: input.remoteSpaceId,
    remoteInstanceId: input.remoteInstanceId,
    sealedKey: tx.secretBox.seal(input.key),
    pulledSeq: input.pulledSeq,
    pushedSeq,
    behind: 0,
    lastContactAt: at,
    lastError: null,
    lastSyncAt: null,
    nextSyncAt: null,
    createdAt: at,
  };
  tx.db.insert(remotes).values(row).run();
  return row;
}

export interface CloneInput {
  url: string;
  key: string;
  /** The remote space's id or slug. */
  remoteSpace: string;
  /** Who owns the local space. */
  owner: { id: string; email: string };
  actor: AuditActor;
  slug?: string;
  name?: string;
  /** The caller's request: the clone stops when it has gone. */
  signal?: AbortSignal;
}

/** The most one clone holds while it copies: the operator chose the remote, so `--max-import` (a bound on strangers' uploads) does not apply. */
const CLONE_BOUND = Number.MAX_SAFE_INTEGER;
const SNAPSHOT_LIMIT = 5000;
const FILE_PART = 768 * 1024;

/**
 * A local space made from a remote's (docs/remotes.md, "Clone"): a snapshot read page by page into
 * an import session (nothing visible until it loads, in one write), the files its assets name, and
 * the remote remembered with its cursor at the snapshot's seq. A clone that fails leaves nothing; one
 * killed midway leaves what the next clone, or the next `serve`, removes (`cut-clones.ts`).
 */
export async function cloneSpace(ctx: AppContext, input: CloneInput): Promise<{ spaceId: string; slug: string; remote: RemoteView; warnings: string[] }> {
  const url = remoteUrl(input.url);
  const client = new RemoteClient(url, input.key, input.remoteSpace, input.signal);
  await removeCutClones(ctx);
  const snapshot = await client.call<Static<typeof SnapshotSchema>>("POST", "/sync/snapshots").catch((error) => Promise.reject(remoteFailure(error, url)));
  let spaceId: string | null = null;
  const mark = markClone(ctx);
  try {
    if (snapshot.instanceId === instanceId(ctx)) throw badRequest("That is this instance: clone another instance's space.");
    const space = await write(ctx, (tx) => createSpace(tx, input.owner.id, { id: mark.spaceId, name: snapshot.space.name, slug: input.slug ?? snapshot.space.slug }));
    spaceId = space.id;
    const { sessionId } = beginDumpImport(ctx, space.id, input.owner.id);
    const here = instanceId(ctx);
    const files = new Set<string>();
    for (const table of snapshot.tables) {
      let cursor: string | null = null;
      do {
        const query = `table=${table}&limit=${SNAPSHOT_LIMIT}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page: Static<typeof SnapshotPageSchema> = await client.call("GET", `/sync/snapshots/${snapshot.snapshotId}?${query}`);
        // A commit made here and pushed there is this instance's own again.
        const rows = table === "commits" ? page.rows.map((row) => (row.origin === here ? { ...row, origin: null } : row)) : page.rows;
        stageStoredRows(ctx, space.id, sessionId, table, rows, CLONE_BOUND);
        if (table === "assets") for (const row of rows) if (typeof row.content_hash === "string" && row.status === "ready" && !files.has(row.content_hash)) {
          files.add(row.content_hash);
          await stageFile(ctx, client, space.id, sessionId, row.id as string, row.content_hash);
        }
        cursor = page.nextCursor;
      } while (cursor);
    }
    const { warnings } = await commitDumpImport(ctx, space.id, sessionId, input.actor, { ...input.owner, admin: true });
    const state = await stateOf(client, snapshot.seq, snapshot.instanceId);
    const remote = await write(ctx, (tx) => insertRemote(tx, space.id, { name: "origin", url, key: input.key, remoteSpaceId: snapshot.space.id, remoteInstanceId: snapshot.instanceId, pulledSeq: snapshot.seq, head: state.head }));
    await recordContact(ctx, remote.id, { behind: state.behind ?? 0, synced: true });
    return { spaceId: space.id, slug: space.slug, remote: viewOf(ctx, findRemote(ctx, space.id, remote.id)), warnings };
  } catch (error) {
    if (spaceId !== null) {
      const made = spaceId;
      await write(ctx, (tx) => removeSpace(tx, made));
    }
    pruneImportSessions(ctx, mark.spaceId);
    throw remoteFailure(error, url);
  } finally {
    mark.done();
    await client.call("DELETE", `/sync/snapshots/${snapshot.snapshotId}`).catch(() => undefined);
  }
}

/** A file an asset of the snapshot names, staged in parts (`attachmentBlobs`); checked against its hash when the import loads. */
async function stageFile(ctx: AppContext, client: RemoteClient, spaceId: string, sessionId: string, assetId: string, hash: string): Promise<void> {
  const bytes = await client.bytes(`/assets/${assetId}/content`, ctx.config.maxFileBytes);
  for (let at = 0; at < bytes.byteLength || at === 0; at += FILE_PART) {
    stageImportRows(ctx, spaceId, { sessionId, table: BLOBS, rows: [{ storageKey: hash, base64: Buffer.from(bytes.subarray(at, at + FILE_PART)).toString("base64") }] }, CLONE_BOUND);
    if (bytes.byteLength === 0) break;
  }
}

/** Notes that the remote answered (or why it did not), and where it stands. */
function recordContact(ctx: AppContext, remoteId: string, outcome: { behind?: number; error?: string; synced?: true }): Promise<void> {
  const at = iso(ctx.clock.now());
  return write(ctx, (tx) => {
    tx.db
      .update(remotes)
      .set(outcome.error !== undefined ? { lastError: outcome.error } : { lastContactAt: at, lastError: null, ...(outcome.behind !== undefined ? { behind: outcome.behind } : {}), ...(outcome.synced ? { lastSyncAt: at } : {}) })
      .where(eq(remotes.id, remoteId))
      .run();
  });
}

/** Runs `work` against the remote, noting the contact or the error (an unreachable remote is a 503 that changes nothing else). */
async function contacting<T>(ctx: AppContext, remote: RemoteRow, work: (client: RemoteClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await work(clientOf(ctx, remote, signal));
  } catch (error) {
    if (error instanceof RemoteUnreachable || error instanceof RemoteRefused) await recordContact(ctx, remote.id, { error: error.message });
    throw remoteFailure(error, remote.name);
  }
}

export const PullResultSchema = t.Object({
  pulledSeq: WholeNumber(),
  applied: WholeNumber(),
  merged: WholeNumber(),
  conflicts: WholeNumber({ description: "Remote commits that became local change requests in conflict: resolve them in the Inbox." }),
  known: WholeNumber(),
  structure: WholeNumber({ description: "Changes of nodes, fields, views and documents merged here as they merged there." }),
  notFollowed: WholeNumber({ description: "Commits that could not be applied here, each named in warnings." }),
  landed: WholeNumber({ description: "Pushed changes found merged on the remote." }),
  refused: WholeNumber({ description: "Pushed changes found rejected on the remote." }),
  warnings: t.Array(t.String()),
});
export type PullResult = Static<typeof PullResultSchema>;

const COMMITS_PAGE = 1000;

type MergedPage = { commits: PulledCommit[]; head: number; next: number | null };

/** The remote's next page of merged commits: a page past the bytes a client reads at once (`MOST_PAGE_BYTES`) is asked again ten times shorter, down to one commit. */
async function commitsAfter(client: RemoteClient, after: number): Promise<MergedPage> {
  for (let limit = COMMITS_PAGE; ; limit = Math.ceil(limit / 10)) {
    try {
      return await client.call<MergedPage>("GET", `/sync/commits?after=${after}&limit=${limit}`);
    } catch (error) {
      if (!tooLargeAnswer(error) || limit === 1) throw error;
    }
  }
}

/**
 * `basalt pull`: the remote's commits merged after the cursor, a page at a time, each page applied
 * with the cursor moved in one write, so a pull cut anywhere resumes after the last whole page.
 * Then the pushed changes still waiting there are asked after.
 */
export async function pull(ctx: AppContext, spaceId: string, ref?: string, signal?: AbortSignal): Promise<PullResult> {
  const remote = findRemote(ctx, spaceId, ref);
  return contacting(ctx, remote, async (client) => {
    const state = await stateOf(client, remote.pulledSeq, remote.remoteInstanceId);
    // A log behind the cursor was put back from an older copy: its next seqs would be ones this space has passed, and be missed.
    if (state.head < remote.pulledSeq) throw new RemoteRefused(409, "REMOTE_WENT_BACK", `${remote.url}'s merge log ends at ${state.head}, before ${remote.pulledSeq} that this space pulled: it was restored from an older copy. Clone it again.`);
    const tally: PullTally = emptyTally();
    let after = remote.pulledSeq;
    /** Applies what `work` applies of the commits not applied yet, and moves the cursor to `upTo`, in one write. */
    const applying = (upTo: number, work: (tx: Tx, after: number, at: string) => void) =>
      write(ctx, (tx) => {
        const current = tx.db.select({ seq: remotes.pulledSeq }).from(remotes).where(eq(remotes.id, remote.id)).get();
        if (!current) throw notFound(`The remote ${remote.name} was removed meanwhile.`);
        work(tx, current.seq, iso(tx.clock.now()));
        const moved = Math.max(current.seq, upTo);
        tx.db.update(remotes).set({ pulledSeq: moved }).where(eq(remotes.id, remote.id)).run();
        return moved;
      });
    const authors = new Map<string, UserRef>();
    /** The files the commits name that are not here, fetched before they apply (those the remote no longer gives are named). */
    const fetchNamed = async (commits: PulledCommit[], named: (commit: PulledCommit) => string[]) => {
      for (const commit of commits) {
        const ids = named(commit);
        if (ids.length === 0) continue;
        const missed = await fetchFiles(ctx, client, remote.spaceId, ids, authorHere(ctx, remote, commit, authors).id);
        for (const id of missed) warn(tally, `The file ${id} that the remote's ${commit.operation} names is not given by the remote: its value is not taken.`);
      }
    };
    for (;;) {
      const page = await commitsAfter(client, after);
      const reached = page.next ?? page.head;
      if (reached <= after && page.commits.length === 0) break;
      // Record commits a run at a time; each change of structure in a write of its own, so one that cannot merge here is noted and passed.
      let run: PulledCommit[] = [];
      const applyRun = async (upTo: number) => {
        const commits = run;
        run = [];
        await fetchNamed(commits, (commit) => filesInValues(ctx, remote.spaceId, commit.baseId, commit.payload));
        after = await applying(upTo, (tx, applied, at) => applyPulled(tx, remote, commits.filter((commit) => commit.seq > applied), at, tally));
      };
      for (let i = 0; i < page.commits.length; ) {
        if (isRecordCommit(page.commits[i])) {
          run.push(page.commits[i++]);
          continue;
        }
        if (run.length > 0) await applyRun(run.at(-1)!.seq);
        const group = [page.commits[i++]];
        while (i < page.commits.length && !isRecordCommit(page.commits[i]) && page.commits[i].changeRequestId === group[0].changeRequestId) group.push(page.commits[i++]);
        const upTo = group.at(-1)!.seq;
        await fetchNamed(group, (commit) => filesInPayload(commit.payload));
        try {
          after = await applying(upTo, (tx, applied, at) => applyStructure(tx, remote, group.filter((commit) => commit.seq > applied), at, tally));
        } catch (error) {
          // Refused by the merge's checks, or by a row here that already has an id it makes.
          if (!(error instanceof ApiError) && !String((error as { code?: unknown }).code ?? "").startsWith("SQLITE_CONSTRAINT")) throw error;
          tally.notFollowed += group.length;
          const why = error instanceof ApiError ? error.message : "an id it makes is taken here.";
          warn(tally, `The remote's ${group.map((commit) => commit.operation).join(", ")} (its change request ${group[0].changeRequestId}) cannot merge here: ${why}`);
          after = await applying(upTo, () => undefined);
        }
      }
      await applyRun(reached);
      if (page.next === null) break;
    }
    const refused = await askAfterPending(ctx, client, remote, tally);
    await recordContact(ctx, remote.id, { behind: 0 });
    const { warnings, ...counts } = tally;
    return { pulledSeq: after, ...counts, refused, warnings };
  }, signal);
}

/** The pushed changes still pending: merged there (landed), rejected (refused, with the reason), or still waiting. Answers how many were refused. */
async function askAfterPending(ctx: AppContext, client: RemoteClient, remote: RemoteRow, tally: PullTally): Promise<number> {
  const pending = ctx.db.select().from(remotePushes).where(and(eq(remotePushes.remoteId, remote.id), eq(remotePushes.state, "pending"), isNotNull(remotePushes.remoteChangeRequestId))).all();
  let refused = 0;
  for (const push of pending) {
    const there = await client.call<{ status: string; rejectedReason?: string | null }>("GET", `/change-requests/${push.remoteChangeRequestId}`);
    const state: PushState | null = there.status === "merged" ? "landed" : there.status === "rejected" ? "refused" : null;
    if (!state) continue;
    if (state === "landed") tally.landed++;
    else refused++;
    await settlePush(ctx, remote.id, push.changeRequestId, push.remoteChangeRequestId, state, state === "refused" ? `Rejected on the remote${there.rejectedReason ? `: ${there.rejectedReason}` : "."}` : null);
  }
  return refused;
}

interface Settlement {
  changeRequestId: string;
  remoteChangeRequestId: string | null;
  state: PushState;
  reason: string | null;
  /** The push cursor moves to it (when every change before it is settled too). */
  pushedSeq?: number;
}

const settlePush = (ctx: AppContext, remoteId: string, changeRequestId: string, remoteChangeRequestId: string | null, state: PushState, reason: string | null): Promise<void> =>
  settlePushes(ctx, remoteId, [{ changeRequestId, remoteChangeRequestId, state, reason }]);

// Written once a pushed change: compiled once (building it for each of a batch's 100 changes was a quarter of a push's time).
const notePush = preparedWrite((db) =>
  db
    .insert(remotePushes)
    .values({ remoteId: sql.placeholder("remoteId"), changeRequestId: sql.placeholder("changeRequestId"), remoteChangeRequestId: sql.placeholder("remoteChangeRequestId"), state: sql.placeholder("state"), reason: sql.placeholder("reason"), updatedAt: sql.placeholder("at") } as never)
    .onConflictDoUpdate({ target: [remotePushes.remoteId, remotePushes.changeRequestId], set: { remoteChangeRequestId: sql`excluded.remote_change_request_id`, state: sql`excluded.state`, reason: sql`excluded.reason`, updatedAt: sql`excluded.updated_at` } })
    .prepare(),
);

/** Notes how each pushed change stands there, and moves the push cursor, in one write. */
function settlePushes(ctx: AppContext, remoteId: string, settled: Settlement[]): Promise<void> {
  if (settled.length === 0) return Promise.resolve();
  const at = iso(ctx.clock.now());
  const cursors = settled.flatMap(({ pushedSeq }) => (pushedSeq === undefined ? [] : [pushedSeq]));
  return write(ctx, (tx) => {
    for (const { changeRequestId, remoteChangeRequestId, state, reason } of settled) notePush(tx).run({ remoteId, changeRequestId, remoteChangeRequestId, state, reason, at });
    if (cursors.length > 0) tx.db.update(remotes).set({ pushedSeq: sql`max(${remotes.pushedSeq}, ${Math.max(...cursors)})` }).where(eq(remotes.id, remoteId)).run();
  });
}

export const PushResultSchema = t.Object({
  pull: PullResultSchema,
  landed: WholeNumber({ description: "Local changes the remote merged at once." }),
  pending: WholeNumber({ description: "Local changes waiting in the remote's Inbox, or in conflict there." }),
  waiting: WholeNumber({ description: "Local changes held here: of a record in a conflict a pull found, until it is decided in the Inbox; of a record whose earlier change waits in the remote's Inbox, until that one lands. The others go." }),
  refused: t.Array(t.Object({ changeRequestId: t.String(), reason: t.String() })),
});
export type PushResult = Static<typeof PushResultSchema>;

type PushOperation = Static<typeof PushSchema>["operations"][number];
type Values = Record<string, unknown>;

const RECORD_KINDS = new Set(["record_create", "record_update", "record_delete", "record_restore"]);

// A push reads these once or more a change it sends: compiled once (building and preparing each query was most of a push's own time).
const upstreamCommit = preparedFor((db) =>
  db.select({ payload: commits.payload }).from(commits).where(and(eq(commits.recordId, sql.placeholder("recordId")), isNotNull(commits.origin))).orderBy(desc(commits.id)).limit(1).prepare(),
);
const commitById = preparedFor((db) => db.select(commitColumns).from(commits).where(eq(commits.id, sql.placeholder("id"))).prepare());
const operationHead = preparedFor((db) => db.select({ head: operations.headCommitId }).from(operations).where(eq(operations.id, sql.placeholder("id"))).prepare());
const changeRequestMeta = preparedFor((db) => db.select({ meta: changeRequests.sourceMeta }).from(changeRequests).where(eq(changeRequests.id, sql.placeholder("id"))).prepare());

/** What the remote holds of a record as last known here: its latest commit made elsewhere (pulled or cloned). */
function upstreamValues(ctx: AppContext, recordId: string): Values | undefined {
  return upstreamCommit(ctx).get({ recordId })?.payload as Values | undefined;
}

const writable = (loaded: LoadedBase, values: Values): Values =>
  Object.fromEntries(loaded.fields.filter((field) => !isComputed(field.type) && Object.hasOwn(values, field.slug)).map((field) => [field.slug, values[field.slug]]));

/** What each of the commits' operations asked to set (its proposal's payload), by commit id: a change pushes what it decided, even where that equals what the record held. */
function askedOf(ctx: AppContext, rows: CommitRow[]): Map<string, Values> {
  const asked = new Map<string, Values>();
  for (const row of rows) {
    const head = row.operationId ? operationHead(ctx).get({ id: row.operationId })?.head : undefined;
    if (head) asked.set(row.id, (commitById(ctx).get({ id: head }) as CommitRow | undefined)?.payload ?? {});
  }
  return asked;
}

/**
 * The records a pull found in conflict that no one here has decided yet: the decision is this
 * side's, so a local change of one waits for it (merging the conflict's change request, or closing
 * it to keep this side's values) rather than making the same conflict on the remote.
 */
function undecided(ctx: AppContext, spaceId: string): Set<string> {
  const open = ctx.db.select({ meta: changeRequests.sourceMeta, summary: changeRequests.mergeSummary }).from(changeRequests).where(and(eq(changeRequests.spaceId, spaceId), eq(changeRequests.status, "conflict"))).all();
  return new Set(open.flatMap(({ meta, summary }) => (typeof meta.remoteCommitId === "string" && typeof (summary.conflict as { recordId?: unknown } | undefined)?.recordId === "string" ? [(summary.conflict as { recordId: string }).recordId] : [])));
}

/** What waits in the remote's Inbox: the records of changes pending there, and the bases and nodes of changes of structure pending there. */
type WaitingThere = { records: Set<string>; bases: Set<string>; nodes: Set<string> };

/**
 * What the local changes waiting in the remote's Inbox (pushed, pending) change: their records, and
 * the bases and nodes their changes of structure touch. A later local change of one waits here until that
 * one lands there, so an edit never reaches the remote before the create it edits, a record never
 * names a field the remote does not hold yet, a doc or a tree is not changed there before it is made
 * or in another order than here, and nothing is made there on a value it lacks.
 */
function waitingThere(ctx: AppContext, remote: RemoteRow): WaitingThere {
  const pending = ctx.db.select({ id: remotePushes.changeRequestId }).from(remotePushes).where(and(eq(remotePushes.remoteId, remote.id), eq(remotePushes.state, "pending"))).all();
  const records = new Set<string>();
  const bases = new Set<string>();
  const nodes = new Set<string>();
  for (const { id } of pending)
    for (const op of changeRequestOperations(ctx, id)) {
      if (RECORD_KINDS.has(op.kind)) {
        if (op.targetRecordId) records.add(op.targetRecordId);
        continue;
      }
      if (op.baseId) bases.add(op.baseId);
      if (op.nodeId) nodes.add(op.nodeId);
    }
  return { records, bases, nodes };
}

/** The bases and nodes that the changes of structure merged as `commitIds` touch (those they made included). */
function structureTargets(ctx: AppContext, commitIds: string[]): { bases: string[]; nodes: string[] } {
  if (commitIds.length === 0) return { bases: [], nodes: [] };
  const rows = ctx.db.select({ baseId: operations.baseId, nodeId: operations.nodeId }).from(commits).innerJoin(operations, eq(operations.id, commits.operationId)).where(inArray(commits.id, commitIds)).all();
  return { bases: rows.flatMap((row) => (row.baseId ? [row.baseId] : [])), nodes: rows.flatMap((row) => (row.nodeId ? [row.nodeId] : [])) };
}

type StructureOperation = Static<typeof PushStructureSchema>["operations"][number];

/**
 * A local change request's commits as pushed operations: its record commits by base, its changes
 * of structure as they are (each its commit), and what they touch (records, bases). `known` holds
 * what the remote has of records this push sent.
 */
function operationsOf(ctx: AppContext, spaceId: string, commitIds: string[], known: Map<string, Values>): { byBase: Map<string, PushOperation[]>; structure: StructureOperation[]; records: Set<string>; bases: Set<string>; nodes: Set<string> } {
  const rows = commitIds.flatMap((id) => (commitById(ctx).get({ id }) as CommitRow | undefined) ?? []);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const asked = askedOf(ctx, rows.filter((row) => row.kind === "record_update"));
  const byBase = new Map<string, PushOperation[]>();
  const structure: StructureOperation[] = [];
  const records = new Set(rows.flatMap((row) => (row.recordId ? [row.recordId] : [])));
  const bases = new Set(rows.flatMap((row) => (row.recordId && row.baseId ? [row.baseId] : [])));
  for (const id of commitIds) {
    const commit = byId.get(id);
    if (!commit) continue;
    if (!RECORD_KINDS.has(commit.kind)) {
      structure.push({ commitId: commit.id, kind: commit.kind as StructureOperation["kind"], targetType: commit.targetType, baseId: commit.baseId, nodeId: commit.nodeId, payload: commit.payload });
      continue;
    }
    const loaded = commit.baseId ? findBaseOrNull(ctx, spaceId, commit.baseId) : null;
    if (!commit.recordId || !loaded) continue;
    const list = byBase.get(loaded.base.id) ?? [];
    const recordId = commit.recordId;
    const values = writable(loaded, commit.payload);
    const prior = list.findIndex((op) => op.recordId === recordId);
    let op: PushOperation | null;
    if (commit.kind === "record_create") op = { kind: "record_create", recordId, fields: values };
    else if (commit.kind === "record_update") {
      const upstream = known.get(recordId) ?? upstreamValues(ctx, recordId) ?? {};
      const decided = Object.keys(asked.get(commit.id) ?? values).filter((slug) => Object.hasOwn(values, slug) && !same(upstream[slug], values[slug]));
      op = decided.length === 0 ? null : { kind: "record_update", recordId, fields: Object.fromEntries(decided.map((slug) => [slug, values[slug]])), base: Object.fromEntries(decided.map((slug) => [slug, upstream[slug] ?? null])) };
    } else op = { kind: commit.kind as "record_delete" | "record_restore", recordId };
    if (!op) continue;
    byBase.set(loaded.base.id, list);
    // One operation a record: a later change of the same record in the change request is folded into the earlier.
    if (prior >= 0 && list[prior].kind === "record_create" && op.kind === "record_update") list[prior] = { kind: "record_create", recordId, fields: { ...(list[prior] as { fields: Values }).fields, ...op.fields } };
    else if (prior >= 0) list[prior] = op;
    else list.push(op);
  }
  const targets = structureTargets(ctx, structure.map((op) => op.commitId));
  for (const baseId of targets.bases) bases.add(baseId);
  return { byBase, structure, records, bases, nodes: new Set(targets.nodes) };
}

/**
 * `basalt push`: pulls first (so what the remote holds is known), then sends each local change not
 * sent yet, oldest first, one proposal a base, its id the idempotency key, up to 100 proposals a
 * request (a change of structure alone, before its records): a push cut anywhere and sent again
 * creates nothing twice. The push cursor and each change's state are
 * written after the remote answers; what the remote refuses stays here, listed with its reason.
 */
export async function push(ctx: AppContext, spaceId: string, ref?: string, signal?: AbortSignal): Promise<PushResult> {
  const pulled = await pull(ctx, spaceId, ref, signal);
  const remote = findRemote(ctx, spaceId, ref);
  const here = instanceId(ctx);
  const result: PushResult = { pull: pulled, landed: 0, pending: 0, waiting: 0, refused: [] };
  const known = new Map<string, Values>();
  const undecidedHere = undecided(ctx, spaceId);
  const waiting = waitingThere(ctx, remote);
  const filesThere = new Set<string>();
  return contacting(ctx, remote, async (client) => {
    // The push cursor moves past a change once it and every change before it are settled there.
    let held = false;
    let batch: Planned[] = [];
    const progress: PushProgress = { result, known, waiting, filesThere };
    const send = async () => {
      const planned = batch;
      batch = [];
      await sendBatch(ctx, client, spaceId, remote.id, planned, progress);
    };
    const changes = unpushed(ctx, remote);
    const heldHere = (recordId: string) => undecidedHere.has(recordId) || waiting.records.has(recordId);
    for (let index = 0; index < changes.length; index++) {
      const change = changes[index];
      let planned = planChange(ctx, spaceId, change, known, here);
      // A change of a record the batch changes waits for the batch's answer (merged there, or pending), as it would one at a time.
      if (batch.some((earlier) => [...planned.records].some((recordId) => earlier.records.has(recordId)))) {
        await send();
        planned = planChange(ctx, spaceId, change, known, here);
      }
      if ([...planned.records].some(heldHere) || [...planned.bases].some((baseId) => waiting.bases.has(baseId)) || [...planned.nodes].some((nodeId) => waiting.nodes.has(nodeId))) {
        result.waiting++;
        held = true;
        continue;
      }
      planned.cursor = held ? undefined : change.seqs.at(-1);
      if (planned.structure) {
        // A change of structure goes alone, or with the records that fill the fields it adds: the batch before it first.
        await send();
        const fills = fillsOf(ctx, spaceId, planned, changes.slice(index + 1), known, here, heldHere);
        index += await sendWithStructure(ctx, client, spaceId, remote.id, planned, fills, progress);
        continue;
      }
      batch.push(planned);
      if (batch.reduce((sum, each) => sum + each.bodies.length, 0) >= MAX_PUSHED_BATCH || batch.reduce((sum, each) => sum + each.bytes, 0) >= BATCH_BYTES) await send();
    }
    await send();
    await recordContact(ctx, remote.id, { synced: true });
    return result;
  }, signal);
}

/** A batch's bodies stay well under the remote's `--max-body` (1 MB by default). */
const BATCH_BYTES = 512 * 1024;

type PushBody = Static<typeof PushSchema>;

/** A local change as it is sent: its change of structure, if any, then one body a base whose records it changes. */
interface Planned {
  changeRequestId: string;
  records: Set<string>;
  bases: Set<string>;
  /** The nodes its change of structure touches (those it makes included). */
  nodes: Set<string>;
  structure: Static<typeof PushStructureSchema> | null;
  bodies: PushBody[];
  bytes: number;
  cursor?: number;
}

/** What a push carries from one change to the next: its counts, what the remote holds of the records it sent, what waits there, the files it has. */
interface PushProgress {
  result: PushResult;
  known: Map<string, Values>;
  waiting: WaitingThere;
  filesThere: Set<string>;
}

function planChange(ctx: AppContext, spaceId: string, change: { changeRequestId: string; commitIds: string[] }, known: Map<string, Values>, here: string): Planned {
  const cr = changeRequestMeta(ctx).get({ id: change.changeRequestId });
  const message = typeof cr?.meta.message === "string" ? cr.meta.message : undefined;
  const { byBase, structure, records, bases, nodes } = operationsOf(ctx, spaceId, change.commitIds, known);
  const bodies = [...byBase].map(([baseId, operations]): PushBody => ({ changeRequestId: change.changeRequestId, origin: here, baseId, operations, ...(message ? { message } : {}) }));
  return {
    changeRequestId: change.changeRequestId,
    records,
    bases,
    nodes,
    structure: structure.length > 0 ? { changeRequestId: change.changeRequestId, origin: here, operations: structure, ...(message ? { message } : {}) } : null,
    bodies,
    bytes: bodies.reduce((sum, body) => sum + JSON.stringify(body).length, 0),
  };
}

const recordFiles = (ctx: AppContext, spaceId: string, bodies: PushBody[]) => bodies.flatMap((body) => body.operations.flatMap((op) => ("fields" in op ? filesInValues(ctx, spaceId, body.baseId, op.fields) : [])));

/** Notes what the remote holds now of the records a merged body sent. */
function noteMerged(ctx: AppContext, push: PushProgress, body: PushBody): void {
  for (const op of body.operations) if (op.kind === "record_create" || op.kind === "record_update") push.known.set(op.recordId, { ...(push.known.get(op.recordId) ?? upstreamValues(ctx, op.recordId) ?? {}), ...op.fields });
}

/** Counts a settled change and notes what now waits there. */
function countSettled(push: PushProgress, planned: Planned, state: PushState, reason: string | null): void {
  if (state === "landed") push.result.landed++;
  else if (state === "pending") {
    push.result.pending++;
    for (const recordId of planned.records) push.waiting.records.add(recordId);
    if (planned.structure) for (const baseId of planned.bases) push.waiting.bases.add(baseId);
    for (const nodeId of planned.nodes) push.waiting.nodes.add(nodeId);
  } else push.result.refused.push({ changeRequestId: planned.changeRequestId, reason: reason ?? "Refused." });
}

/**
 * The local changes right after a change that adds fields to one base that go in its proposal
 * (docs/remotes.md): consecutive changes that only create or edit records of that base, none held,
 * no record twice, within one request's bounds. The team's reviewer sees the fields with the values
 * they are for, and the records do not wait here for the fields to land there.
 */
function fillsOf(ctx: AppContext, spaceId: string, planned: Planned, next: { changeRequestId: string; commitIds: string[] }[], known: Map<string, Values>, here: string, held: (recordId: string) => boolean): Planned[] {
  const operations = planned.structure?.operations ?? [];
  const baseId = operations[0]?.baseId;
  if (!baseId || planned.bodies.length > 0 || operations.some((op) => op.kind !== "base_add_field" || op.baseId !== baseId)) return [];
  const fills: Planned[] = [];
  const records = new Set<string>();
  let bytes = planned.bytes;
  for (const change of next) {
    const fill = planChange(ctx, spaceId, change, known, here);
    const [body, ...others] = fill.bodies;
    if (fill.structure || !body || others.length > 0 || body.baseId !== baseId || body.operations.some((op) => op.kind !== "record_create" && op.kind !== "record_update")) break;
    if ([...fill.records].some((recordId) => records.has(recordId) || held(recordId)) || fills.length >= MAX_PUSHED_BATCH || bytes + fill.bytes > BATCH_BYTES) break;
    for (const recordId of fill.records) records.add(recordId);
    bytes += fill.bytes;
    fills.push(fill);
  }
  return fills;
}

/**
 * Notes how a change with structure and the fills its remote change request holds stand there (one
 * state for all); answers how many fills it holds. Sent again after a cut, it holds those it held
 * the first time, the first of `fills` (changes made since come after them): the others go as any change.
 */
async function settleTogether(ctx: AppContext, remoteId: string, planned: Planned, given: Planned[], answer: Static<typeof PushedSchema>, push: PushProgress): Promise<number> {
  const taken = new Set(answer.with ?? []);
  const held = given.findIndex((fill) => !taken.has(fill.changeRequestId));
  const fills = held < 0 ? given : given.slice(0, held);
  const state: PushState = answer.status === "merged" ? "landed" : answer.status === "rejected" ? "refused" : "pending";
  const reason = state === "refused" ? "Rejected on the remote." : null;
  if (state === "landed") for (const fill of fills) noteMerged(ctx, push, fill.bodies[0]);
  for (const each of [planned, ...fills]) countSettled(push, each, state, reason);
  // The fills are settled by their rows: the push cursor moves past them with the next change settled after them.
  await settlePushes(ctx, remoteId, [planned, ...fills].map((each, i) => ({ changeRequestId: each.changeRequestId, remoteChangeRequestId: answer.changeRequestId, state, reason, pushedSeq: i === 0 ? planned.cursor : undefined })));
  return fills.length;
}

/**
 * A change with structure: with `fills`, its structure and those records in one request (refused
 * so, it is sent again alone and the fills follow as any change); else its structure (with the
 * files it mounts), then its records a base (with theirs), one request each; refused once, the rest
 * is not sent. Answers how many of the fills went with it.
 */
async function sendWithStructure(ctx: AppContext, client: RemoteClient, spaceId: string, remoteId: string, planned: Planned, fills: Planned[], push: PushProgress): Promise<number> {
  const files = planned.structure!.operations.flatMap((op) => filesInPayload(op.payload));
  if (fills.length > 0) {
    const records = fills.map((fill) => fill.bodies[0]);
    try {
      await sendFiles(ctx, client, [...files, ...recordFiles(ctx, spaceId, records)], push.filesThere);
      return await settleTogether(ctx, remoteId, planned, fills, await client.call<Static<typeof PushedSchema>>("POST", "/sync/structure", { ...planned.structure, records }), push);
    } catch (error) {
      if (!(error instanceof RemoteRefused) || ![400, 404, 409].includes(error.status) || error.data?.reason === "MERGE_CONFLICT") throw error;
    }
  }
  const sends: { path: string; body: unknown; files: string[]; records?: PushBody }[] = [
    { path: "/sync/structure", body: planned.structure, files },
    ...planned.bodies.map((body) => ({ path: "/sync/proposals", body, files: recordFiles(ctx, spaceId, [body]), records: body })),
  ];
  let state: PushState = "landed";
  let remoteChangeRequestId: string | null = null;
  let reason: string | null = null;
  for (const send of sends) {
    if (state === "refused") break;
    try {
      await sendFiles(ctx, client, send.files, push.filesThere);
      const answer = await client.call<Static<typeof PushedSchema>>("POST", send.path, send.body);
      remoteChangeRequestId = answer.changeRequestId;
      if (answer.status === "rejected") (state = "refused"), (reason = "Rejected on the remote.");
      else if (answer.status !== "merged") state = "pending";
      else if (send.records) noteMerged(ctx, push, send.records);
    } catch (error) {
      // A refusal of the change itself stays here with its reason; a conflict met while merging (the record moved as it was sent) is tried again next time.
      if (!(error instanceof RemoteRefused) || ![400, 404, 409].includes(error.status) || error.data?.reason === "MERGE_CONFLICT") throw error;
      state = "refused";
      reason = error.message;
    }
  }
  countSettled(push, planned, state, reason);
  await settlePushes(ctx, remoteId, [{ changeRequestId: planned.changeRequestId, remoteChangeRequestId, state, reason, pushedSeq: planned.cursor }]);
  return 0;
}

/**
 * Sends a batch of planned changes in one request (`POST /sync/proposals/batch`, their files first)
 * and settles each in one write, in order, as one at a time would: merged there is landed, waiting
 * there pending, refused stays here with the remote's words. A failure that is not a refusal of the
 * change (a conflict met while merging, the remote gone) settles what came before it and stops the
 * push, to resume from that change.
 */
async function sendBatch(
  ctx: AppContext,
  client: RemoteClient,
  spaceId: string,
  remoteId: string,
  batch: Planned[],
  push: PushProgress,
): Promise<void> {
  if (batch.length === 0) return;
  const bodies = batch.flatMap((planned) => planned.bodies);
  let answers: Static<typeof PushedBatchSchema>["results"] = [];
  if (bodies.length > 0) {
    await sendFiles(ctx, client, recordFiles(ctx, spaceId, bodies), push.filesThere);
    answers = (await client.call<Static<typeof PushedBatchSchema>>("POST", "/sync/proposals/batch", { proposals: bodies })).results;
  }
  const settled: Settlement[] = [];
  let stop: Error | null = null;
  let next = 0;
  for (const planned of batch) {
    let state: PushState = "landed";
    let remoteChangeRequestId: string | null = null;
    let reason: string | null = null;
    for (const body of planned.bodies) {
      const answer = answers[next++];
      if (!answer) {
        stop = new RemoteRefused(502, "BATCH_CUT", `${client.url} answered ${answers.length} of ${bodies.length} pushed changes.`);
        break;
      }
      if ("error" in answer) {
        const refusal = new RemoteRefused(answer.error.status, answer.error.code, answer.error.error, answer.error.data);
        // A refusal of the change itself stays here with its reason; a conflict met while merging (the record moved as it was sent) is tried again next time.
        if (![400, 404, 409].includes(refusal.status) || refusal.data?.reason === "MERGE_CONFLICT") {
          stop = refusal;
          break;
        }
        state = "refused";
        reason = refusal.message;
        continue;
      }
      remoteChangeRequestId = answer.changeRequestId;
      if (answer.status === "rejected") (state = "refused"), (reason = "Rejected on the remote.");
      else if (answer.status !== "merged") state = state === "refused" ? state : "pending";
      else noteMerged(ctx, push, body);
    }
    if (stop) break;
    countSettled(push, planned, state, reason);
    settled.push({ changeRequestId: planned.changeRequestId, remoteChangeRequestId, state, reason, pushedSeq: planned.cursor });
  }
  await settlePushes(ctx, remoteId, settled);
  if (stop) throw stop;
}

/** `basalt status`: each remote with its counts, asking the remote where it stands when it answers (offline, the last known counts). */
export async function remoteStatus(ctx: AppContext, spaceId: string): Promise<RemoteView[]> {
  for (const remote of ctx.db.select().from(remotes).where(eq(remotes.spaceId, spaceId)).all()) {
    try {
      const state = await stateOf(clientOf(ctx, remote), remote.pulledSeq, remote.remoteInstanceId);
      await recordContact(ctx, remote.id, { behind: state.behind ?? 0 });
    } catch (error) {
      if (!(error instanceof RemoteUnreachable || error instanceof RemoteRefused)) throw error;
      await recordContact(ctx, remote.id, { error: error.message });
    }
  }
  return listRemotes(ctx, spaceId);
}

