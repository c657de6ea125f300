import { recordAudit } from "../audit/audit";
import type { Static } from "@sinclair/typebox";
import { and, desc, eq } from "drizzle-orm";
import { t } from "elysia";
import { DAY_MS, iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { newId } from "../db/ids";
import { conflict, notFound } from "../shared/errors";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import { generateKeyValue, keyPrefix } from "./key-format";
import { type ApiKeyRow, apiKeys } from "../tables/auth";
import { atLeast, DEFAULT_EXPIRATION, type Expiration, type Level, LEVELS } from "../shared/levels";
import { sha256 } from "./secrets";

const EXPIRATION_DAYS: Record<Expiration, number | null> = { never: null, "7d": 7, "30d": 30, "90d": 90, "1y": 365 };

export const ApiKeySchema = t.Object(
  {
    id: t.String(),
    name: t.String(),
    prefix: t.String({ description: "The key's first characters, to tell keys apart; the value itself is never shown again." }),
    level: oneOf(LEVELS),
    createdAt: Timestamp,
    expiresAt: Nullable(Timestamp),
    lastUsedAt: Nullable(Timestamp),
    status: oneOf(["active", "expired"]),
  },
  { $id: "ApiKey" },
);
export type ApiKeyView = Static<typeof ApiKeySchema>;

export const NewApiKeySchema = t.Object({ apiKey: t.String({ description: "The key's value, answered this once only." }), key: ApiKeySchema });

export function apiKeyView(row: ApiKeyRow, now: number): ApiKeyView {
  const expired = row.expiresAt !== null && Date.parse(row.expiresAt) <= now;
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    level: row.level,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt,
    status: expired ? "expired" : "active",
  };
}

export interface NewApiKey {
  name: string;
  level: Level;
  expiration?: Expiration;
}

/** The only moment the key's value exists outside the caller's hands: it is returned, never stored. */
export function createApiKey(tx: Tx, userId: string, input: NewApiKey): Static<typeof NewApiKeySchema> {
  const value = generateKeyValue();
  const now = tx.clock.now();
  const days = EXPIRATION_DAYS[input.expiration ?? DEFAULT_EXPIRATION];
  const row: ApiKeyRow = {
    id: newId("key"),
    userId,
    name: input.name,
    prefix: keyPrefix(value),
    hash: sha256(value),
    level: input.level,
    createdAt: iso(now),
    expiresAt: days === null ? null : iso(now + days * DAY_MS),
    lastUsedAt: null,
  };
  tx.db.insert(apiKeys).values(row).run();
  recordAudit(tx, { action: "api_key.created", actor: { userId, keyId: null }, spaceId: null, targetType: "api_key", targetId: row.id, metadata: { name: row.name, level: row.level, prefix: row.prefix, expiresAt: row.expiresAt } });
  return { apiKey: value, key: apiKeyView(row, now) };
}

export function listApiKeys(ctx: AppContext, userId: string): ApiKeyView[] {
  const now = ctx.clock.now();
  return ctx.db.select().from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(desc(apiKeys.id)).all().map((row) => apiKeyView(row, now));
}

function findOwnKey(ctx: AppContext, userId: string, keyId: string): ApiKeyRow {
  const row = ctx.db.select().from(apiKeys).where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId))).get();
  if (!row) throw notFound("No such API key.");
  return row;
}

export function getApiKey(ctx: AppContext, userId: string, keyId: string): ApiKeyView {
  return apiKeyView(findOwnKey(ctx, userId, keyId), ctx.clock.now());
}

export interface ApiKeyPatch {
  name?: string;
  level?: Level;
  confirm?: boolean;
}

/** Every holder of a key gains a raised level at once, so raising it must be confirmed. */
export function updateApiKey(tx: Tx, userId: string, keyId: string, patch: ApiKeyPatch): ApiKeyView {
  const row = findOwnKey(tx, userId, keyId);
  if (patch.level && patch.level !== row.level && atLeast(patch.level, row.level) && patch.confirm !== true) {
    throw conflict(`Raising the key's level from ${row.level} to ${patch.level} needs "confirm": true.`, {
      reason: "CONFIRMATION_REQUIRED",
      from: row.level,
      to: patch.level,
    });
  }
  const updated = { ...row, name: patch.name ?? row.name, level: patch.level ?? row.level };
  tx.db.update(apiKeys).set({ name: updated.name, level: updated.level }).where(eq(apiKeys.id, keyId)).run();
  const raised = updated.level !== row.level && atLeast(updated.level, row.level);
  const metadata = { before: { name: row.name, level: row.level }, after: { name: updated.name, level: updated.level } };
  recordAudit(tx, { action: raised ? "api_key.raised" : "api_key.updated", actor: { userId, keyId: null }, spaceId: null, targetType: "api_key", targetId: keyId, metadata });
  tx.afterCommit(() => tx.keyCache.forgetKey(keyId));
  return apiKeyView(updated, tx.clock.now());
}

export function deleteApiKey(tx: Tx, userId: string, keyId: string): { success: true } {
  const row = findOwnKey(tx, userId, keyId);
  tx.db.delete(apiKeys).where(eq(apiKeys.id, keyId)).run();
  recordAudit(tx, { action: "api_key.deleted", actor: { userId, keyId: null }, spaceId: null, targetType: "api_key", targetId: keyId, metadata: { name: row.name, level: row.level, prefix: row.prefix } });
  tx.afterCommit(() => tx.keyCache.forgetKey(keyId));
  return { success: true };
}
