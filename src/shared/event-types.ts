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
  "change_request.ai_mention",
  "comment.created",
  "asset.uploaded",
  "space.restored",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Busabase's names (contract §2.8) of the events Basalt names otherwise. */
const BUSABASE_NAMES = { changes_requested: "change_request.changes_requested", ai_mention: "change_request.ai_mention" } as const satisfies Record<string, EventType>;

/** What a rule may subscribe to: every event type, `*`, and Busabase's names. A rule keeps the name it was given. */
export const RULE_EVENT_TYPES = [...EVENT_TYPES, "*", ...(Object.keys(BUSABASE_NAMES) as (keyof typeof BUSABASE_NAMES)[])] as const;
export type RuleEventType = (typeof RULE_EVENT_TYPES)[number];

/** The event a rule's type names: Busabase's name read as Basalt's event, `*` as every event. */
export const eventOfRule = (ruleType: string): string => BUSABASE_NAMES[ruleType as keyof typeof BUSABASE_NAMES] ?? ruleType;

/** Whether a rule subscribed to `ruleType` wants an event of `eventType`. */
export const ruleWants = (ruleType: string, eventType: string): boolean => ruleType === "*" || eventOfRule(ruleType) === eventType;

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

/**
 * Busabase's flat fields for the events its receivers read (contract §2.8): a created record's
 * `recordId`, `changeRequestId` and `fields`; a change request sent back as Busabase's agent task
 * (`event: "agent.task"`, `trigger`); `_test` on a test-fire's synthetic event.
 */
function busabaseFields(type: string, data: Record<string, unknown>): Record<string, unknown> {
  const test = data.test === true ? { _test: true } : {};
  const changeRequestId = (data.changeRequestId as string | undefined) ?? "crq_test";
  switch (type) {
    case "record.created": {
      const record = data.record as { id: string; fields: Record<string, unknown> } | undefined;
      return { recordId: record?.id ?? "rec_test", changeRequestId, fields: record?.fields ?? {}, ...test };
    }
    case "change_request.changes_requested":
      return { event: "agent.task", trigger: "changes_requested", changeRequestId, ...test };
    case "change_request.ai_mention":
      return { event: "agent.task", trigger: "ai_mention", changeRequestId, ...test };
    case "asset.uploaded": {
      const asset = data.asset as { id: string; fileName: string; mimeType: string } | undefined;
      return { assetId: asset?.id ?? "ast_test", fileName: asset?.fileName ?? "test.txt", mimeType: asset?.mimeType ?? "text/plain", textStatus: data.textStatus ?? "missing", ...test };
    }
    default:
      return test;
  }
}

/**
 * The body a webhook posts and the live stream sends as `data`: Basalt's envelope (`type`,
 * `data`), with Busabase's flat fields beside it (`event` repeats `type` unless Busabase names the
 * event otherwise), so a receiver written for either reads the same body.
 */
export const eventBody = (event: OutgoingEvent): string =>
  JSON.stringify({
    id: event.id,
    type: event.type,
    event: event.type,
    timestamp: event.timestamp,
    spaceId: event.spaceId,
    baseId: event.baseId,
    data: event.data,
    ...busabaseFields(event.type, event.data as Record<string, unknown>),
  });

/** A committed event: one of the outbox, so it has its `seq`. */
export type LiveEvent = OutgoingEvent & { seq: number };
