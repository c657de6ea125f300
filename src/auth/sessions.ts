import { eq, sql } from "drizzle-orm";
import { preparedFor } from "../db/client";
import { writeInBackground } from "../db/tx";
import { DAY_MS, iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { sessions, type UserRow, users } from "../tables/auth";
import { randomString, sha256 } from "./secrets";

export const SESSION_COOKIE = "basalt_session";
export const SESSION_IDLE_MS = 7 * DAY_MS;
export const SESSION_COOKIE_DAYS = 30;
/** `last_seen_at` moves at most once a minute: no write per request. */
const TOUCH_INTERVAL_MS = 60_000;

export interface SessionGrant {
  token: string;
  csrfToken: string;
}

export function createSession(tx: Tx, userId: string): SessionGrant {
  const token = randomString(43);
  const csrfToken = randomString(32);
  const now = iso(tx.clock.now());
  tx.db.insert(sessions).values({ tokenHash: sha256(token), userId, csrfToken, createdAt: now, lastSeenAt: now }).run();
  return { token, csrfToken };
}

export interface ActiveSession {
  tokenHash: string;
  csrfToken: string;
  user: UserRow;
}

const sessionByHash = preparedFor((db) =>
  db.select({ session: sessions, user: users }).from(sessions).innerJoin(users, eq(users.id, sessions.userId)).where(eq(sessions.tokenHash, sql.placeholder("tokenHash"))).prepare(),
);

/** The session behind a cookie token, or null when it is unknown, idle too long or its user banned. */
export function findSession(ctx: AppContext, token: string): ActiveSession | null {
  const tokenHash = sha256(token);
  const row = sessionByHash(ctx).get({ tokenHash });
  if (!row || row.user.banned) return null;
  const now = ctx.clock.now();
  const lastSeen = Date.parse(row.session.lastSeenAt);
  if (now - lastSeen > SESSION_IDLE_MS) {
    writeInBackground(ctx, "ending an idle session", (tx) => void deleteSession(tx, tokenHash));
    return null;
  }
  if (now - lastSeen >= TOUCH_INTERVAL_MS) {
    writeInBackground(ctx, "recording a session's use", (tx) => {
      tx.db.update(sessions).set({ lastSeenAt: iso(now) }).where(eq(sessions.tokenHash, tokenHash)).run();
    });
  }
  return { tokenHash, csrfToken: row.session.csrfToken, user: row.user };
}

export function deleteSession(tx: Tx, tokenHash: string): { success: true } {
  tx.db.delete(sessions).where(eq(sessions.tokenHash, tokenHash)).run();
  tx.afterCommit(() => tx.eventStream.recheck());
  return { success: true };
}
