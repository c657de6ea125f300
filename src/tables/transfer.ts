import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { bases } from "./content";
import { spaces } from "./spaces";

export const IMPORT_STATUSES = ["running", "done", "failed"] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

/**
 * An import of a file into a base, as a job a client can read (`GET /imports/{id}`): what it has
 * merged so far, in parts, and how it ended. Its parts are proposed with idempotency keys made from
 * its own (`<key>#<part>`), so the same file sent again with the same key merges only the parts
 * not merged before. A job still `running` when `serve` starts was cut short by a stop: it is
 * marked `failed`, with the rows it had merged.
 */
export const imports = sqliteTable(
  "imports",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
    baseId: text("base_id").notNull().references(() => bases.id, { onDelete: "cascade" }),
    createdBy: text("created_by").notNull(),
    idempotencyKey: text("idempotency_key").notNull(),
    status: text("status").$type<ImportStatus>().notNull(),
    rowCount: integer("row_count").notNull(),
    rowsMerged: integer("rows_merged").notNull(),
    changeRequests: text("change_requests", { mode: "json" }).$type<{ id: string; status: string; operationCount: number }[]>().notNull(),
    reason: text("reason"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    uniqueIndex("imports_key_idx").on(table.baseId, table.createdBy, table.idempotencyKey),
    index("imports_base_idx").on(table.baseId, table.id),
    index("imports_running_idx").on(table.id).where(sql`${table.status} = 'running'`),
  ],
);
