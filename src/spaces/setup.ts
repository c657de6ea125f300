import type { AppContext } from "../context";
import { conflict, forbidden } from "../shared/errors";
import { createSpace } from "./spaces";
import { randomString, sha256 } from "../auth/secrets";
import { write } from "../db/tx";
import { createSession, type SessionGrant } from "../auth/sessions";
import { countUsers, insertUser, type NewUser, prepareUser, type UserView } from "../auth/users";

/** While no user exists, `serve` prints a link with this token; it dies with the first user. */
export function issueSetupToken(ctx: AppContext): string | null {
  if (countUsers(ctx) > 0) return null;
  const token = randomString(32);
  ctx.setupTokenHash = sha256(token);
  return token;
}

export const setupNeeded = (ctx: AppContext): boolean => countUsers(ctx) === 0;

export const DEFAULT_SPACE_NAME = "My workspace";

/**
 * The first user (an instance admin), the first space, which they own, and their session, in one
 * transaction: a fresh install can hold data at once.
 */
export async function completeSetup(ctx: AppContext, token: string, input: Omit<NewUser, "admin"> & { spaceName?: string }): Promise<{ user: UserView; session: SessionGrant }> {
  if (!setupNeeded(ctx)) throw conflict("Setup is already done: a user exists.");
  const expected = ctx.setupTokenHash;
  if (!expected || sha256(token) !== expected) throw forbidden("The setup token is not valid.");
  const { spaceName, ...account } = input;
  const row = await prepareUser(ctx, { ...account, admin: true });
  return write(ctx, (tx) => {
    if (!setupNeeded(tx)) throw conflict("Setup is already done: a user exists.");
    const user = insertUser(tx, row);
    createSpace(tx, user.id, { name: spaceName?.trim() || DEFAULT_SPACE_NAME });
    tx.afterCommit(() => {
      ctx.setupTokenHash = null;
    });
    return { user, session: createSession(tx, user.id) };
  });
}
