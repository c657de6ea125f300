import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { EventType } from "../shared/event-types";

/**
 * The outbox: one row per event, written in the same transaction as the change that caused it.
 * `seq` is the order a reader walks in: assigned by SQLite, increasing and never reused
 * (AUTOINCREMENT), whatever the wall clock does. `space_id` has no foreign key on purpose: an
 * event outlives the deletion of its space until the delivery loop is done with it.
 */
export const events = sqliteTable("events", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  id: text("id").notNull(),
  spaceId: text("space_id").notNull(),
  baseId: text("base_id"),
  type: text("type").$type<EventType>().notNull(),
  /** Typed where it is written (`recordEvent`, by `EventPayloads`); the table knows only that it is an object, so the store imports no domain's views. */
  data: text("data", { mode: "json" }).$type<object>().notNull(),
  createdAt: text("created_at").notNull(),
});
