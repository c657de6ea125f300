import { and, asc, count, eq, sql } from "drizzle-orm";
import { iso } from "../clock";
import type { AppContext } from "../context";
import { type Role, ROLE_LEVEL, type Level, lowerOf } from "../auth/levels";
import type { UserRow } from "../auth/key-cache";
import { users } from "../auth/schema";
import { nodes } from "../content/schema";
import { preparedFor, writeTransaction } from "../db/client";
import { newId } from "../db/ids";
import { normalizeEmail, SLUG_PATTERN, slugify } from "../formats";
import { badRequest, conflict, forbidden, notFound, onUniqueViolation } from "../http/errors";
import { members, spaces } from "./schema";

export type SpaceRow = typeof spaces.$inferSelect;

export interface SpaceView {
  id: string;
  name: string;
  slug: string;
  role: Role;
  createdAt: string;
}

const spaceView = (space: SpaceRow, role: Role): SpaceView => ({ id: space.id, name: space.name, slug: space.slug, role, createdAt: space.createdAt });

function checkSlug(slug: string): void {
  if (!SLUG_PATTERN.test(slug) || slug.length > 64) throw badRequest(`The slug "${slug}" must match ^[a-z0-9-]+$ (at most 64 characters).`);
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw badRequest("The name must not be empty.");
  return trimmed;
}

/**
 * Every write to spaces or members goes through here: the membership cache is dropped inside the
 * transaction, before any later request can read, and again once it settles.
 */
async function changeMemberships<T>(ctx: AppContext, write: () => T): Promise<T> {
  try {
    return await writeTransaction(ctx.store, () => {
      ctx.memberships.clear();
      return write();
    });
  } finally {
    ctx.memberships.clear();
  }
}

const duplicateSlug = (slug: string) => `A space with the slug "${slug}" already exists.`;

/** A space is born with its owner and its root folder, in one transaction. */
export async function createSpace(ctx: AppContext, ownerId: string, input: { name: string; slug?: string }): Promise<SpaceView> {
  const name = checkName(input.name);
  const slug = input.slug ?? slugify(name, "space");
  checkSlug(slug);
  const now = iso(ctx.clock.now());
  const space: SpaceRow = { id: newId("spc"), name, slug, createdAt: now, updatedAt: now };
  await onUniqueViolation(
    () =>
      changeMemberships(ctx, () => {
        ctx.db.insert(spaces).values(space).run();
        ctx.db.insert(members).values({ spaceId: space.id, userId: ownerId, role: "owner", createdAt: now }).run();
        ctx.db.insert(nodes).values({ id: newId("nod"), spaceId: space.id, parentId: null, type: "folder", slug: "root", name, createdAt: now, updatedAt: now }).run();
      }),
    duplicateSlug(slug),
  );
  return spaceView(space, "owner");
}

export interface Membership {
  space: SpaceRow;
  role: Role;
}

const membershipsOfUser = preparedFor((db) =>
  db
    .select({ space: spaces, role: members.role })
    .from(members)
    .innerJoin(spaces, eq(spaces.id, members.spaceId))
    .where(eq(members.userId, sql.placeholder("userId")))
    .prepare(),
);

/**
 * The caller's spaces, oldest first (ids are time-ordered). Every request in a space needs them, so
 * they are kept in memory: each write to spaces or members here clears the cache before it returns,
 * and entries older than a few seconds are read again, for changes made by another process (the
 * command line can only add spaces and members, never revoke them).
 */
export function listMemberships(ctx: AppContext, userId: string, fresh = false): Membership[] {
  const cached = ctx.memberships.get(userId);
  if (!fresh && cached && performance.now() - cached.readAt < MEMBERSHIP_TTL_MS) return cached.list;
  const list = membershipsOfUser(ctx.db)
    .all({ userId })
    .sort((a, b) => (a.space.id < b.space.id ? -1 : 1));
  if (ctx.memberships.size >= 10_000) ctx.memberships.clear();
  ctx.memberships.set(userId, { list, readAt: performance.now() });
  return list;
}

const MEMBERSHIP_TTL_MS = 5_000;

/** Every space with its owners' e-mails, for the operator's `basalt spaces list`. */
export function listSpacesWithOwners(ctx: AppContext) {
  return ctx.db
    .select({ id: spaces.id, slug: spaces.slug, name: spaces.name, createdAt: spaces.createdAt, owners: sql<string>`group_concat(${users.email}, ', ')` })
    .from(spaces)
    .leftJoin(members, and(eq(members.spaceId, spaces.id), eq(members.role, "owner")))
    .leftJoin(users, eq(users.id, members.userId))
    .groupBy(spaces.id)
    .orderBy(asc(spaces.id))
    .all();
}

export const listSpaces = (ctx: AppContext, userId: string): SpaceView[] => listMemberships(ctx, userId).map((m) => spaceView(m.space, m.role));

/** The caller's membership in the space named by id or slug, or undefined (unknown and foreign alike). */
/** A space not found in the cached list is looked up again before the caller is refused. */
export function findMembership(ctx: AppContext, userId: string, spaceRef: string): Membership | undefined {
  const named = (list: Membership[]) => list.find(({ space }) => space.id === spaceRef || space.slug === spaceRef);
  return named(listMemberships(ctx, userId)) ?? named(listMemberships(ctx, userId, true));
}

export const effectiveLevel = (ceiling: Level, role: Role): Level => lowerOf(ceiling, ROLE_LEVEL[role]);

export const membershipView = (membership: Membership): SpaceView => spaceView(membership.space, membership.role);

export async function updateSpace(ctx: AppContext, membership: Membership, patch: { name?: string; slug?: string }): Promise<SpaceView> {
  const changes: Partial<SpaceRow> = { updatedAt: iso(ctx.clock.now()) };
  if (patch.name !== undefined) changes.name = checkName(patch.name);
  if (patch.slug !== undefined) {
    checkSlug(patch.slug);
    changes.slug = patch.slug;
  }
  await onUniqueViolation(() => changeMemberships(ctx, () => ctx.db.update(spaces).set(changes).where(eq(spaces.id, membership.space.id)).run()), duplicateSlug(patch.slug ?? ""));
  return spaceView({ ...membership.space, ...changes }, membership.role);
}

const ownerRequired = (action: string) => forbidden(`Only an owner of the space may ${action}.`, { reason: "OWNER_REQUIRED" });

/**
 * Owners are made, changed and removed only by owners: an admin manages every other role, so no
 * admin can promote themselves, demote an owner or take the space away.
 */
function guardOwnerRole(caller: Membership, ...roles: Role[]): void {
  if (caller.role !== "owner" && roles.includes("owner")) throw ownerRequired("grant, change or remove the owner role");
}

/** Deleting a space takes all its content with it (foreign keys cascade). */
export async function deleteSpace(ctx: AppContext, membership: Membership, confirm: string): Promise<void> {
  if (membership.role !== "owner") throw ownerRequired("delete it");
  if (confirm !== membership.space.slug) throw badRequest(`To delete the space, send "confirm": "${membership.space.slug}".`);
  await changeMemberships(ctx, () => ctx.db.delete(spaces).where(eq(spaces.id, membership.space.id)).run());
}

export interface MemberView {
  userId: string;
  name: string;
  email: string;
  role: Role;
  createdAt: string;
}

const memberColumns = { userId: members.userId, name: users.name, email: users.email, role: members.role, createdAt: members.createdAt };

export function listMembers(ctx: AppContext, spaceId: string): MemberView[] {
  return ctx.db.select(memberColumns).from(members).innerJoin(users, eq(users.id, members.userId)).where(eq(members.spaceId, spaceId)).orderBy(asc(members.createdAt)).all();
}

function getMember(ctx: AppContext, spaceId: string, userId: string): MemberView {
  const member = ctx.db
    .select(memberColumns)
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.spaceId, spaceId), eq(members.userId, userId)))
    .get();
  if (!member) throw notFound("No such member in this space.");
  return member;
}

export async function addMember(ctx: AppContext, caller: Membership, input: { email: string; role: Role }): Promise<MemberView> {
  guardOwnerRole(caller, input.role);
  const spaceId = caller.space.id;
  const user: UserRow | undefined = ctx.db.select().from(users).where(eq(users.email, normalizeEmail(input.email))).get();
  if (!user) throw notFound(`No user has the e-mail ${input.email}.`);
  await onUniqueViolation(
    () => changeMemberships(ctx, () => ctx.db.insert(members).values({ spaceId, userId: user.id, role: input.role, createdAt: iso(ctx.clock.now()) }).run()),
    `${user.email} is already a member of this space.`,
  );
  return getMember(ctx, spaceId, user.id);
}

/** A space always keeps an owner: the last one can be neither demoted nor removed. */
function guardLastOwner(ctx: AppContext, spaceId: string, member: MemberView): void {
  if (member.role !== "owner") return;
  const owners = ctx.db.select({ n: count() }).from(members).where(and(eq(members.spaceId, spaceId), eq(members.role, "owner"))).get()!.n;
  if (owners <= 1) throw conflict("The last owner of a space cannot be removed or demoted.", { reason: "LAST_OWNER" });
}

export function changeMemberRole(ctx: AppContext, caller: Membership, userId: string, role: Role): Promise<MemberView> {
  const spaceId = caller.space.id;
  return changeMemberships(ctx, () => {
    const member = getMember(ctx, spaceId, userId);
    guardOwnerRole(caller, member.role, role);
    if (role !== "owner") guardLastOwner(ctx, spaceId, member);
    ctx.db.update(members).set({ role }).where(and(eq(members.spaceId, spaceId), eq(members.userId, userId))).run();
    return { ...member, role };
  });
}

export async function removeMember(ctx: AppContext, caller: Membership, userId: string): Promise<void> {
  const spaceId = caller.space.id;
  await changeMemberships(ctx, () => {
    const member = getMember(ctx, spaceId, userId);
    guardOwnerRole(caller, member.role);
    guardLastOwner(ctx, spaceId, member);
    ctx.db.delete(members).where(and(eq(members.spaceId, spaceId), eq(members.userId, userId))).run();
  });
}
