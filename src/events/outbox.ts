import type { MergeConflict } from "../changes/operations";
import type { comments } from "../changes/schema";
import type { RecordView } from "../content/records";
import { insertRow } from "../db/client";
import { newId } from "../db/ids";
import type { Tx } from "../context";
import type { EventType } from "./catalogue";
import { events } from "./schema";

/** A record as an event carries it: its values and ids at that moment (not its head commit or base, which the event names). */
export type RecordSnapshot = Omit<RecordView, "headCommit" | "base">;

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
  "comment.created": { comment: Omit<typeof comments.$inferSelect, "spaceId"> };
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
  tx.afterCommit(tx.deliveries.wake);
  tx.afterCommit(() => tx.eventStream.publish({ seq, id, type, timestamp: origin.at, spaceId: origin.spaceId, baseId: origin.baseId, data: data as object }));
}

/** The record part of an event: its view but the head commit (it repeats the values) and the base (named by `baseId`). */
export function snapshot({ headCommit: _, base: __, ...record }: RecordView): RecordSnapshot {
  return record;
}
