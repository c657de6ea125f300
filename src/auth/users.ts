import type { Static } from "@sinclair/typebox";
import { and, asc, count, eq } from "drizzle-orm";
import { t } from "elysia";
import { iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { write } from "../db/tx";
import { newId } from "../db/ids";
import { checkName, EMAIL_PATTERN, normalizeEmail } from "../shared/formats";
import { conflict, invalid, notFound, onUniqueViolation, unauthorized } from "../shared/errors";
import { Timestamp } from "../shared/schemas";
import { sessions, type UserRow, users } from "../tables/auth";

export const MIN_PASSWORD_LENGTH = 8;

export const UserSchema = t.Object(
  {
    id: t.String(),
    email: t.String(),
    name: t.String(),
    emailVerified: t.Boolean({ description: "Busabase's: an account made here by an admin or the first setup is trusted with its address." }),
    image: t.Null({ description: "Basalt keeps no picture." }),
    admin: t.Boolean({ description: "An instance admin: manages users." }),
    banned: t.Boolean(),
    createdAt: Timestamp,
  },
  { $id: "User" },
);
export type UserView = Static<typeof UserSchema>;

export const userView = (row: UserRow): UserView => ({
  id: row.id,
  email: row.email,
  name: row.name,
  emailVerified: true,
  image: null,
  admin: row.admin,
  banned: row.banned,
  createdAt: row.createdAt,
});

export interface NewUser {
  email: string;
  name: string;
  password: string;
  admin?: boolean;
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw invalid(["password"], `The password must have at least ${MIN_PASSWORD_LENGTH} characters.`);
}

const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: "argon2id" });

/** Checks a new user and hashes the password (slow, so outside any transaction); answers the row to insert. */
export async function prepareUser(ctx: AppContext, input: NewUser): Promise<UserRow> {
  const row = checkedUser(ctx, input);
  return { ...row, passwordHash: await hashPassword(input.password) };
}

/** A new user's row, checked, whose password `passwordHash` already holds (test fixtures hash a password once for all their users). */
export function userRowWithHash(ctx: AppContext, input: NewUser, passwordHash: string): UserRow {
  return { ...checkedUser(ctx, input), passwordHash };
}

function checkedUser(ctx: AppContext, input: NewUser): Omit<UserRow, "passwordHash"> {
  const email = normalizeEmail(input.email);
  if (!EMAIL_PATTERN.test(email)) throw invalid(["email"], `"${input.email}" is not an e-mail address.`);
  const name = checkName(input.name);
  checkPassword(input.password);
  const now = iso(ctx.clock.now());
  return { id: newId("usr"), email, name, admin: input.admin ?? false, banned: false, createdAt: now, updatedAt: now };
}

export function insertUser(tx: Tx, row: UserRow): UserView {
  onUniqueViolation(() => tx.db.insert(users).values(row).run(), `A user with the e-mail ${row.email} already exists.`);
  return userView(row);
}

export async function createUser(ctx: AppContext, input: NewUser): Promise<UserView> {
  const row = await prepareUser(ctx, input);
  return write(ctx, (tx) => insertUser(tx, row));
}

export function countUsers(ctx: AppContext): number {
  return ctx.db.select({ n: count() }).from(users).get()!.n;
}

export function listUsers(ctx: AppContext): UserView[] {
  return ctx.db.select().from(users).orderBy(asc(users.id)).all().map(userView);
}

export function findUserById(ctx: AppContext, id: string): UserRow | undefined {
  return ctx.db.select().from(users).where(eq(users.id, id)).get();
}

export function findUserByEmail(ctx: AppContext, email: string): UserRow | undefined {
  return ctx.db.select().from(users).where(eq(users.email, normalizeEmail(email))).get();
}

export interface UserPatch {
  name?: string;
  password?: string;
  admin?: boolean;
  banned?: boolean;
}

const activeAdmins = (ctx: AppContext): string[] =>
  ctx.db.select({ id: users.id }).from(users).where(and(eq(users.admin, true), eq(users.banned, false))).all().map((row) => row.id);

/** An instance always keeps one admin who can sign in: the last one can be neither demoted nor banned. */
function guardLastAdmin(ctx: AppContext, userId: string): void {
  const admins = activeAdmins(ctx);
  if (admins.length === 1 && admins[0] === userId) {
    throw conflict("The last instance admin cannot lose the admin flag or be banned; make another user an admin first.", { reason: "LAST_ADMIN" });
  }
}

/** A ban cuts every session and cached key of the user before this returns. */
export async function updateUser(ctx: AppContext, userId: string, patch: UserPatch): Promise<UserView> {
  let passwordHash: string | undefined;
  if (patch.password !== undefined) {
    checkPassword(patch.password);
    passwordHash = await hashPassword(patch.password);
  }
  return write(ctx, (tx) => {
    const row = tx.db.select().from(users).where(eq(users.id, userId)).get();
    if (!row) throw notFound("No such user.");
    if (patch.admin === false || patch.banned === true) guardLastAdmin(tx, userId);
    const changes: Partial<UserRow> = { updatedAt: iso(tx.clock.now()) };
    if (patch.name !== undefined) changes.name = checkName(patch.name);
    if (patch.admin !== undefined) changes.admin = patch.admin;
    if (patch.banned !== undefined) changes.banned = patch.banned;
    if (passwordHash !== undefined) changes.passwordHash = passwordHash;
    tx.db.update(users).set(changes).where(eq(users.id, userId)).run();
    if (patch.banned || passwordHash !== undefined) tx.db.delete(sessions).where(eq(sessions.userId, userId)).run();
    tx.afterCommit(() => tx.keyCache.forgetUser(userId));
    return userView({ ...row, ...changes });
  });
}

/** A password hash to verify against when the e-mail is unknown, so both failures cost the same. */
let decoyHash: Promise<string> | undefined;

/** After this many failures on one account in a minute (from any address), its checks are spaced out. */
const FAILURES_BEFORE_SLOWING = 5;
/** The space between two checks of a slowed account's password: at most 60 guesses a minute, from all addresses together. */
export const SLOWED_CHECK_MS = 1000;
/** The most accounts paced at once (the map of their next checks is bounded like every limiter). */
const MAX_PACED = 10_000;
/** Waits for the account's turn while it is slowed: guessing from many addresses is paced, never locked out. */
async function paced(ctx: AppContext, account: string): Promise<void> {
  if (ctx.limits.accountFailures.count(account) < FAILURES_BEFORE_SLOWING) return;
  const nextCheckAt = ctx.limits.nextCheckAt;
  const now = Date.now();
  const at = Math.max(now, nextCheckAt.get(account) ?? 0);
  nextCheckAt.set(account, at + SLOWED_CHECK_MS);
  if (nextCheckAt.size > MAX_PACED) {
    for (const [key, time] of nextCheckAt) if (time < now) nextCheckAt.delete(key);
    // Still full of accounts being paced: the earliest set go (their pacing starts again), so the map stays bounded.
    for (const key of nextCheckAt.keys()) if (nextCheckAt.size > MAX_PACED) nextCheckAt.delete(key);
  }
  if (at > now) await Bun.sleep(at - now);
}

/**
 * Unknown e-mail and wrong password give the same answer after the same work. Failures are
 * limited per address and per account from one address (5 a minute, then 429): every attempt is
 * counted before the password is checked and given back when it succeeds, so no more than 5
 * guesses a minute from one address are ever checked, however many arrive at once. Failures on an
 * account from anywhere never lock it (five bad passwords from elsewhere must not keep its owner
 * out): past 5 a minute, its checks are paced one a second instead.
 */
export async function verifyLogin(ctx: AppContext, email: string, password: string, address: string): Promise<UserRow> {
  const account = `email:${normalizeEmail(email)}`;
  const keys = [`address:${address}`, `${account} address:${address}`];
  ctx.limits.loginFailures.take(...keys);
  await paced(ctx, account);
  const row = findUserByEmail(ctx, email);
  decoyHash ??= hashPassword(crypto.randomUUID());
  const valid = await Bun.password.verify(password, row?.passwordHash ?? (await decoyHash));
  if (!row || !valid || row.banned) {
    ctx.limits.accountFailures.record(account);
    throw unauthorized("The e-mail or password is wrong.");
  }
  ctx.limits.loginFailures.release(...keys);
  return row;
}
