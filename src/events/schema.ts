import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { spaces } from "../spaces/schema";

/** The outbox: one row per event, written in the same transaction as the change that caused it. */
export const events = sqliteTable("events", {
  id: text("id").primaryKey(),
  spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
  baseId: text("base_id"),
  type: text("type").notNull(),
  data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  createdAt: text("created_at").notNull(),
});
