import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Tables that SQL migrations make and triggers keep, declared here so that queries take their
 * names from a declaration. drizzle-kit does not manage them (this folder is outside
 * `drizzle.config.ts`'s glob): their shapes are the migrations' (`WITHOUT ROWID`, FTS5).
 */

/** Each indexed field's sortable value of each record (migrations/0010, kept by the triggers on `records`). */
export const fieldValues = sqliteTable("field_values", {
  fieldId: text("field_id").notNull(),
  status: text("status").notNull(),
  value: text("value"),
  createdAt: text("created_at").notNull(),
  recordId: text("record_id").notNull(),
});

/** Each base's count of active and archived records (migrations/0026, kept by the triggers on `records`). */
export const baseRecordCounts = sqliteTable("base_record_counts", {
  baseId: text("base_id").primaryKey(),
  active: integer("active").notNull(),
  archived: integer("archived").notNull(),
});

/** The full-text index of records' searched values (FTS5, migrations/0017 and 0022; `db/search-index.ts` writes it). */
export const recordSearch = sqliteTable("record_search", {
  rowid: integer("rowid").notNull(),
  text: text("text"),
});

/** The people each space's rows name as actors (authors, reviewers, creators): migrations/0043, kept by a trigger on each such column. */
export const spacePeople = sqliteTable("space_people", {
  spaceId: text("space_id").notNull(),
  userId: text("user_id").notNull(),
});
