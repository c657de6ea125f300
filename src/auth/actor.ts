import { eq, sql } from "drizzle-orm";
import { preparedFor } from "../db/client";
import { writeInBackground } from "../db/tx";
import { iso } from "../shared/clock";
import type { AppContext } from "../context";
import { unauthorized } from "../shared/errors";
import { isWellFormedKey } from "./key-format";
import { type ApiKeyRow, apiKeys, type UserRow, users } from "../tables/auth";
import type { Level } from "../shared/levels";
import { sha256 } from "./secrets";
import { findSession } from "./sessions";

export type Credential =
  | { type: "api_key"; key: ApiKeyRow }
  | { type: "session"; tokenHash: string; csrfToken: string }
  /** The operator at the data directory (`basalt import`), acting as a user of their choosing. */
  | { type: "operator" }
  /** A submission without a key through a public form: it proposes as the form's creator, no higher than its level allows. */
  | { type: "form"; formId: string };

/** Who is calling, and the highest level their credential allows anywhere. */
export interface Actor {
  user: UserRow;
  credential: Credential;
  ceiling: Level;
}

export interface PresentedCredentials {
  apiKey: string | null;
  sessionToken: string | null;
}

/** Reads `Authorization: Bearer <key>` or `x-api-key`; a key wins over a session cookie. */
export function presentedKey(authorization: string | undefined, xApiKey: string | undefined): string | null {
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match ? match[1] : "";
  }
  return xApiKey ?? null;
}

const LAST_USED_INTERVAL_MS = 60_000;

const keyByHash = preparedFor((db) =>
  db.select({ key: apiKeys, user: users }).from(apiKeys).innerJoin(users, eq(users.id, apiKeys.userId)).where(eq(apiKeys.hash, sql.placeholder("hash"))).prepare(),
);

/**
 * The caller of a key. A key in the cache was well formed when it was put there (the cache is
 * keyed by the key's digest), so its format and checksum are checked only before a lookup.
 */
export function authenticateKey(ctx: AppContext, value: string): Actor {
  const hash = sha256(value);
  let entry = ctx.keyCache.get(hash);
  if (!entry) {
    if (!isWellFormedKey(value)) throw unauthorized("The API key is malformed.");
    const row = keyByHash(ctx).get({ hash });
    if (!row) throw unauthorized("The API key is not valid.");
    entry = { ...row, lastUsedWrittenAt: row.key.lastUsedAt ? Date.parse(row.key.lastUsedAt) : 0, expiresAtMs: row.key.expiresAt ? Date.parse(row.key.expiresAt) : Number.POSITIVE_INFINITY };
    ctx.keyCache.set(hash, entry);
  }
  if (entry.user.banned) throw unauthorized("The API key is not valid.");
  const now = ctx.clock.now();
  if (entry.expiresAtMs <= now) throw unauthorized("The API key has expired.");
  if (now - entry.lastUsedWrittenAt >= LAST_USED_INTERVAL_MS) {
    const lastUsedAt = iso(now);
    const keyId = entry.key.id;
    entry.key = { ...entry.key, lastUsedAt };
    entry.lastUsedWrittenAt = now;
    writeInBackground(ctx, `recording the use of key ${keyId}`, (tx) => {
      tx.db.update(apiKeys).set({ lastUsedAt }).where(eq(apiKeys.id, keyId)).run();
    });
  }
  return { user: entry.user, credential: { type: "api_key", key: entry.key }, ceiling: entry.key.level };
}

export function authenticate(ctx: AppContext, presented: PresentedCredentials): Actor {
  if (presented.apiKey !== null) return authenticateKey(ctx, presented.apiKey);
  if (presented.sessionToken) {
    const session = findSession(ctx, presented.sessionToken);
    if (!session) throw unauthorized("The session has expired; sign in again.");
    const { user, ...credential } = session;
    return { user, credential: { type: "session", ...credential }, ceiling: "manage" };
  }
  throw unauthorized();
}

/** Who acted, as the audit trail records it: the user and the API key they used, if any. */
export const actingAs = (actor: Actor) => ({ userId: actor.user.id, keyId: actor.credential.type === "api_key" ? actor.credential.key.id : null });
