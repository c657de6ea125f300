import { sql } from "drizzle-orm";
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { spaces } from "./spaces";
import type { AuditAction, AuditSource } from "../shared/audit-actions";

/**
 * Who did what to a space, a key or a member: written in the transaction of the change it records,
 * never holding a secret. An account's own actions (its keys, its device approvals) have no space;
 * a space's managers see those of its members.
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id").references(() => spaces.id, { onDelete: "cascade" }),
    actorId: text("actor_id").notNull(),
    /** The API key the actor used; null for a session or the command line. */
    actorKeyId: text("actor_key_id"),
    action: text("action").$type<AuditAction>().notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id").notNull(),
    baseId: text("base_id"),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** Who wrote the row: the server, for what it did, or a client through `POST /audit-events`, for what it says it did. */
    source: text("source").$type<AuditSource>().notNull().default("server"),
    createdAt: text("created_at").notNull(),
  },
  (table) => [index("audit_events_space_idx").on(table.spaceId, table.id), index("audit_events_account_idx").on(table.actorId, table.id).where(sql`${table.spaceId} IS NULL`)],
);
