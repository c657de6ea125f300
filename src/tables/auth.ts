import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { Level } from "../shared/levels";

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  name: text("name").notNull(),
  passwordHash: text("password_hash").notNull(),
  admin: integer("admin", { mode: "boolean" }).notNull().default(false),
  banned: integer("banned", { mode: "boolean" }).notNull().default(false),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** The cookie carries a random token; only its SHA-256 is kept. */
export const sessions = sqliteTable(
  "sessions",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    createdAt: text("created_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
  },
  (table) => [index("sessions_user_idx").on(table.userId)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    hash: text("hash").notNull().unique(),
    level: text("level").$type<Level>().notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at"),
    lastUsedAt: text("last_used_at"),
  },
  (table) => [index("api_keys_user_idx").on(table.userId, table.id)],
);

export type DeviceStatus = "pending" | "approved" | "denied" | "exchanged";

export const deviceRequests = sqliteTable(
  "device_requests",
  {
    id: text("id").primaryKey(),
    deviceCodeHash: text("device_code_hash").notNull().unique(),
    userCode: text("user_code").notNull().unique(),
    clientName: text("client_name"),
    status: text("status").$type<DeviceStatus>().notNull(),
    intervalSeconds: integer("interval_seconds").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    lastPolledAt: text("last_polled_at"),
    approvedBy: text("approved_by").references(() => users.id, { onDelete: "cascade" }),
    keyName: text("key_name"),
    keyLevel: text("key_level").$type<Level>(),
    keyExpiration: text("key_expiration"),
    /** SHA-256 of the access token Busabase's CLI gets from `/api/auth/device/token`, good only for finalize. */
    accessTokenHash: text("access_token_hash"),
  },
  (table) => [index("device_requests_expires_idx").on(table.expiresAt)],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type UserRow = typeof users.$inferSelect;

/** A key checked lately, with its owner (`auth/key-cache.ts`). */
export interface CachedKey {
  key: ApiKeyRow;
  user: UserRow;
  /** When `last_used_at` was last written, so it is written at most once a minute. */
  lastUsedWrittenAt: number;
  /** `expires_at` in milliseconds (read once, not on every request); infinite for a key that never expires. */
  expiresAtMs: number;
}
