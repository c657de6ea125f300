import { sql } from "drizzle-orm";
import { type AnySQLiteColumn, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { spaces } from "../spaces/schema";

export type NodeType = "folder" | "base";
export type NodeStatus = "active" | "archived";

/** A space's tree. The root folder has no parent; slugs are unique among active siblings. */
export const nodes = sqliteTable(
  "nodes",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
    parentId: text("parent_id").references((): AnySQLiteColumn => nodes.id, { onDelete: "cascade" }),
    type: text("type").$type<NodeType>().notNull(),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    settings: text("settings", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    position: integer("position").notNull().default(0),
    status: text("status").$type<NodeStatus>().notNull().default("active"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [
    index("nodes_parent_idx").on(table.spaceId, table.parentId, table.position),
    uniqueIndex("nodes_root_idx").on(table.spaceId).where(sql`${table.parentId} IS NULL`),
    uniqueIndex("nodes_sibling_slug_idx").on(table.parentId, table.slug).where(sql`${table.status} = 'active'`),
  ],
);
