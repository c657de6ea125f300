import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./auth";
import type { Role } from "../shared/levels";

export const spaces = sqliteTable("spaces", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  slug: text("slug").notNull().unique(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const members = sqliteTable(
  "members",
  {
    spaceId: text("space_id").notNull().references(() => spaces.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    role: text("role").$type<Role>().notNull(),
    createdAt: text("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.spaceId, table.userId] }), index("members_user_idx").on(table.userId)],
);

export type SpaceRow = typeof spaces.$inferSelect;

/** A user's place in a space: what the membership cache (`listMemberships`) holds. */
export interface Membership {
  space: SpaceRow;
  role: Role;
}

/**
 * A link that lets someone join a space with a role: its token is answered once and kept only as
 * its SHA-256; it works once, until it expires or a manager revokes it.
 */
export const invitations = sqliteTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    role: text("role").$type<Role>().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    acceptedBy: text("accepted_by"),
    acceptedAt: text("accepted_at"),
  },
  (table) => [index("invitations_space_idx").on(table.spaceId)],
);
export type InvitationRow = typeof invitations.$inferSelect;
