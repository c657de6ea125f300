/** Every event type of the contract (section 8.1); `EventPayloads` (outbox.ts) says what each carries. */
export const EVENT_TYPES = [
  "record.created",
  "record.updated",
  "record.deleted",
  "record.restored",
  "records.recomputed",
  "change_request.created",
  "change_request.approved",
  "change_request.changes_requested",
  "change_request.rejected",
  "change_request.merged",
  "change_request.conflict",
  "base.created",
  "comment.created",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What a rule may subscribe to: every event type, `*`, and Busabase's short name for one of them. */
export const RULE_EVENT_TYPES = [...EVENT_TYPES, "*", "changes_requested"] as const;

/** An event as it leaves Basalt, by webhook or on the live stream (section 8.2): its outbox `seq` (null for a test-fire's event, which is not in the outbox) and its body's fields. */
export interface OutgoingEvent {
  seq: number | null;
  id: string;
  type: string;
  timestamp: string;
  spaceId: string;
  baseId: string | null;
  data: object;
}

/** The body a webhook posts and the live stream sends as `data` (`event` repeats `type`, as Busabase's receivers read it). */
export const eventBody = (event: OutgoingEvent): string =>
  JSON.stringify({ id: event.id, type: event.type, event: event.type, timestamp: event.timestamp, spaceId: event.spaceId, baseId: event.baseId, data: event.data });

/** A committed event: one of the outbox, so it has its `seq`. */
export type LiveEvent = OutgoingEvent & { seq: number };
