import type { AssetView } from "../assets/assets";
import { iso } from "../shared/clock";
import type { comments, MergeConflict } from "../tables/changes";
import type { NodeStatus } from "../tables/content";
import { insertRow } from "../db/client";
import { newId } from "../db/ids";
import type { Tx } from "../context";
import type { EventType, LiveEvent } from "../shared/event-types";
import { events } from "../tables/events";

/** A record as an event carries it: its values and ids at that moment (not its head commit or base, which the event names). */
export interface RecordSnapshot {
  id: string;
  baseId: string;
  status: NodeStatus;
  fields: Record<string, unknown>;
  headCommitId: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  archivedAt: string | null;
  parentRecordId: null;
  parentCommitId: string | null;
}

interface RecordChange {
  record: RecordSnapshot;
  changeRequestId: string;
}

/** The `data` each event type carries; extending the catalogue's record makes a type without one fail to compile. */
export interface EventPayloads extends Record<EventType, unknown> {
  "record.created": RecordChange;
  "record.updated": RecordChange & { previous: Record<string, unknown>; changedFields: string[] };
  "record.deleted": RecordChange;
  "record.restored": RecordChange;
  /** Records of `baseId` whose derived values (a relation's other side, a lookup, a formula computed when read) a merge in another record changed: at most `RECOMPUTED_IDS` of them named, `count` in all. */
  "records.recomputed": { recordIds: string[]; count: number; truncated: boolean; changeRequestId: string };
  "change_request.created": { changeRequestId: string; operationCount: number; submittedBy: string };
  "change_request.approved": { changeRequestId: string; reviewerId: string };
  "change_request.changes_requested": { changeRequestId: string; reviewerId: string };
  "change_request.rejected": { changeRequestId: string; reason: string | null };
  "change_request.merged": { changeRequestId: string; recordIds: string[] };
  "change_request.conflict": { changeRequestId: string; conflict: MergeConflict };
  "base.created": { base: { id: string; nodeId: string; slug: string; name: string }; changeRequestId: string };
  /** A comment on a change request asked the agent (`mentionsAi`): Busabase's `ai_mention`, an agent's task. */
  "change_request.ai_mention": { changeRequestId: string; commentId: string };
  "comment.created": { comment: Omit<typeof comments.$inferSelect, "spaceId"> };
  /** An upload was confirmed (or made in one request): the asset is ready. */
  "asset.uploaded": { asset: { id: string; fileName: string; mimeType: string; size: number }; textStatus: "present" | "missing" | "none" };
  /** The instance was put back to a backup (`basalt restore`): what a receiver holds of the space after the backup's time may be gone, so it reads the space again. */
  "space.restored": { reason: string; restoredFrom: string; restoredAt: string };
}

/** Where an event happened and when: the change's own space, base and time. */
export interface EventOrigin {
  spaceId: string;
  baseId: string | null;
  at: string;
}

/**
 * Writes one event row inside the change's own transaction, so an event exists exactly when its
 * change does; the database gives it the next `seq`. Its commit wakes the delivery loop and sends
 * it to the live stream's subscribers.
 */
export function recordEvent<K extends EventType>(tx: Tx, type: K, origin: EventOrigin, data: EventPayloads[K]): void {
  const id = newId("evt");
  const seq = insertRow(tx, events, { id, spaceId: origin.spaceId, baseId: origin.baseId, type, data, createdAt: origin.at });
  const event: LiveEvent = { seq, id, type, timestamp: origin.at, spaceId: origin.spaceId, baseId: origin.baseId, data: data as object };
  const recorded = recordedIn.get(tx);
  if (recorded) recorded.push(event);
  else {
    const first = [event];
    recordedIn.set(tx, first);
    tx.afterCommit(() => publishAll(tx, first));
  }
}

/** The events each write has recorded so far: its commit wakes the deliveries once and publishes them in order (one hook a write, not two an event: a create records three). */
const recordedIn = new WeakMap<Tx, LiveEvent[]>();

function publishAll(tx: Tx, recorded: LiveEvent[]): void {
  tx.deliveries.wake();
  for (const event of recorded) tx.eventStream.publish(event);
}

/** What records an upload's `asset.uploaded` in the write that makes the asset ready (`OnUploaded`). */
export const recordUpload =
  (spaceId: string) =>
  (tx: Tx, asset: AssetView): void =>
    recordEvent(tx, "asset.uploaded", { spaceId, baseId: null, at: iso(tx.clock.now()) }, { asset: { id: asset.id, fileName: asset.fileName, mimeType: asset.mimeType, size: asset.size }, textStatus: asset.textStatus });
