/** Every event type of the contract (section 8.1); `EventPayloads` (outbox.ts) says what each carries. */
export const EVENT_TYPES = [
  "record.created",
  "record.updated",
  "record.deleted",
  "record.restored",
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
