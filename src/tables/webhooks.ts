import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { bases } from "./content";
import { spaces } from "./spaces";

export const DELIVERY_STATUSES = ["success", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const DELIVERY_TRIGGERS = ["event", "test", "redeliver"] as const;
export type DeliveryTrigger = (typeof DELIVERY_TRIGGERS)[number];

/** The action kinds a rule may have: both are delivered as a signed POST (Busabase's `notify_agent` is a webhook an agent listens to). */
export const DELIVERED_KINDS = ["webhook", "notify_agent"] as const;
export type DeliveredKind = (typeof DELIVERED_KINDS)[number];

/** A space's webhook rules. The secret is stored encrypted (see `secrets.ts`), never in clear. */
export const webhookRules = sqliteTable(
  "webhook_rules",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
    baseId: text("base_id").references(() => bases.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    eventType: text("event_type").notNull(),
    actionKind: text("action_kind").$type<DeliveredKind>().notNull(),
    targetUrl: text("target_url").notNull(),
    secretSealed: text("secret_sealed"),
    headers: text("headers", { mode: "json" }).$type<Record<string, string>>().notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    disabledReason: text("disabled_reason"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    lastTriggeredAt: text("last_triggered_at"),
    lastStatus: text("last_status").$type<DeliveryStatus>(),
    /** Failed attempts in a row, and when the first of them was: 20 over more than 24 h disable the rule. */
    failuresInRow: integer("failures_in_row").notNull().default(0),
    failingSince: text("failing_since"),
  },
  // The delivery loop's fan-out: the enabled rules of an event's space.
  (table) => [index("webhook_rules_space_idx").on(table.spaceId, table.enabled)],
);

/**
 * Pending attempts: one row per (event, rule) until it succeeds or runs out of retries. They live
 * in the database, so a crash at any moment loses none.
 */
export const webhookJobs = sqliteTable(
  "webhook_jobs",
  {
    id: text("id").primaryKey(),
    ruleId: text("rule_id").notNull().references(() => webhookRules.id, { onDelete: "cascade" }),
    /** The rule's space: the loop shares its slots between spaces. */
    spaceId: text("space_id").notNull(),
    eventSeq: integer("event_seq").notNull(),
    /** The attempt this job makes next (1..retries + 1). */
    attempt: integer("attempt").notNull(),
    /** Unix milliseconds. */
    dueAt: integer("due_at").notNull(),
  },
  // What the loop asks for: a rule's due jobs, soonest first; and when the next job falls due.
  (table) => [index("webhook_jobs_rule_due_idx").on(table.ruleId, table.dueAt), index("webhook_jobs_due_idx").on(table.dueAt)],
);

/** The delivery log: one row per attempt. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    ruleId: text("rule_id").notNull().references(() => webhookRules.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    /** The outbox row delivered (null for a test event, which lives nowhere else). */
    eventSeq: integer("event_seq"),
    eventType: text("event_type").notNull(),
    attempt: integer("attempt").notNull(),
    trigger: text("trigger").$type<DeliveryTrigger>().notNull(),
    status: text("status").$type<DeliveryStatus>().notNull(),
    httpStatus: integer("http_status"),
    detail: text("detail").notNull(),
    durationMs: integer("duration_ms").notNull(),
    requestUrl: text("request_url").notNull(),
    nextAttemptAt: text("next_attempt_at"),
    createdAt: text("created_at").notNull(),
  },
  // A rule's log, newest first.
  (table) => [index("webhook_deliveries_rule_idx").on(table.ruleId, table.id)],
);

/** How far the delivery loop has read the outbox (one row). */
export const outboxCursor = sqliteTable("outbox_cursor", {
  name: text("name").primaryKey(),
  seq: integer("seq").notNull().default(sql`0`),
});
