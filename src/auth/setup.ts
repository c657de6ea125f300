import type { AppContext } from "../context";
import { conflict, forbidden } from "../http/errors";
import { createSpace } from "../spaces/spaces";
import { randomString, sha256 } from "./secrets";
import { countUsers, createUser, type NewUser, type UserView } from "./users";

/** While no user exists, `serve` prints a link with this token; it dies with the first user. */
export function issueSetupToken(ctx: AppContext): string | null {
  if (countUsers(ctx) > 0) return null;
  const token = randomString(32);
  ctx.setupTokenHash = sha256(token);
  return token;
}

export const setupNeeded = (ctx: AppContext): boolean => countUsers(ctx) === 0;

export const DEFAULT_SPACE_NAME = "My workspace";

/** The first user (an instance admin) and the first space, which they own, so a fresh install can hold data at once. */
export async function completeSetup(ctx: AppContext, token: string, input: Omit<NewUser, "admin"> & { spaceName?: string }): Promise<UserView> {
  if (!setupNeeded(ctx)) throw conflict("Setup is already done: a user exists.");
  const expected = ctx.setupTokenHash;
  if (!expected || sha256(token) !== expected) throw forbidden("The setup token is not valid.");
  ctx.setupTokenHash = null;
  const { spaceName, ...account } = input;
  let user: UserView;
  try {
    user = await createUser(ctx, { ...account, admin: true });
  } catch (error) {
    ctx.setupTokenHash = expected;
    throw error;
  }
  await createSpace(ctx, user.id, { name: spaceName?.trim() || DEFAULT_SPACE_NAME });
  return user;
}
