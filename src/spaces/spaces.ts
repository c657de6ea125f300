import { type AuditActor, recordAudit } from "../audit/audit";
import type { Static } from "@sinclair/typebox";
import { and, asc, count, eq, sql } from "drizzle-orm";
import { t } from "elysia";
import { iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { type Role, ROLE_LEVEL, ROLES, type Level, lowerOf } from "../shared/levels";
import { type UserRow, users } from "../tables/auth";
import { nodes } from "../tables/content";
import { preparedFor } from "../db/client";
import { newId } from "../db/ids";
import { requireWithin } from "../shared/limits";
import { checkName, checkSlug, normalizeEmail, slugify } from "../shared/formats";
import { badRequest, conflict, forbidden, notFound, onUniqueViolation } from "../shared/errors";
import { oneOf, Timestamp } from "../shared/schemas";
import { members, type Membership, type SpaceRow, spaces } from "../tables/spaces";

export type { Membership, SpaceRow } from "../tables/spaces";

export const SpaceSchema = t.Object(
  { id: t.String(), name: t.String(), slug: t.String(), role: oneOf(ROLES), createdAt: Timestamp },
  { $id: "Space", description: "A space as its member sees it: role is the caller's own." },
);
export type SpaceView = Static<typeof SpaceSchema>;

const spaceView = (space: SpaceRow, role: Role): SpaceView => ({ id: space.id, name: space.name, slug: space.slug, role, createdAt: space.createdAt });

/** Called by every write to spaces or members (see `CommittedCache`); open streams check their access again once it commits. */
const forgetMemberships = (tx: Tx): void => {
  tx.memberships.invalidate(tx);
  tx.afterCommit(() => tx.eventStream.recheck());
};

const duplicateSlug = (slug: string) => `A space with the slug "${slug}" already exists.`;

/**
 * A space is born with its owner and its root folder, in one transaction. `id` is given only by a
 * clone, which names the space before it exists (`remotes/cut-clones.ts`).
 */
export function createSpace(tx: Tx, ownerId: string, input: { name: string; slug?: string; id?: string }): SpaceView {
  const name = checkName(input.name);
  const slug = checkSlug(input.slug ?? slugify(name, "space"));
  const owned = tx.db.select({ n: sql<number>`count(*)` }).from(members).where(and(eq(members.userId, ownerId), eq(members.role, "owner"))).get()!.n;
  requireWithin(tx.config.limits, "spacesPerUser", owned + 1);
  const now = iso(tx.clock.now());
  const space: SpaceRow = { id: input.id ?? newId("spc"), name, slug, createdAt: now, updatedAt: now };
  forgetMemberships(tx);
  onUniqueViolation(() => tx.db.insert(spaces).values(space).run(), duplicateSlug(slug));
  tx.db.insert(members).values({ spaceId: space.id, userId: ownerId, role: "owner", createdAt: now }).run();
  tx.db.insert(nodes).values({ id: newId("nod"), spaceId: space.id, parentId: null, type: "folder", slug: "root", name, createdAt: now, updatedAt: now }).run();
  return spaceView(space, "owner");
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
  const list = membershipsOfUser(ctx)
    .all({ userId })
    .sort((a, b) => (a.space.id < b.space.id ? -1 : 1));
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

export function updateSpace(tx: Tx, membership: Membership, patch: { name?: string; slug?: string }, actor: AuditActor): SpaceView {
  const changes: Partial<SpaceRow> = { updatedAt: iso(tx.clock.now()) };
  if (patch.name !== undefined) changes.name = checkName(patch.name);
  if (patch.slug !== undefined) changes.slug = checkSlug(patch.slug);
  forgetMemberships(tx);
  onUniqueViolation(() => tx.db.update(spaces).set(changes).where(eq(spaces.id, membership.space.id)).run(), duplicateSlug(patch.slug ?? ""));
  const before = { name: membership.space.name, slug: membership.space.slug };
  recordAudit(tx, { action: "space.updated", actor, spaceId: membership.space.id, targetType: "space", targetId: membership.space.id, metadata: { before, after: { ...before, ...patch } } });
  return spaceView({ ...membership.space, ...changes }, membership.role);
}

/**
 * Owners are made, changed and removed only by owners: an admin manages every other role, so no
 * admin can promote themselves, demote an owner or take the space away. (Deleting the space is
 * owner-only too; its route declares that.)
 */
function guardOwnerRole(caller: Membership, ...roles: Role[]): void {
  if (caller.role !== "owner" && roles.includes("owner")) throw forbidden("Only an owner of the space may grant, change or remove the owner role.", { reason: "OWNER_REQUIRED" });
}

/**
 * Deleting a space takes all its content with it (foreign keys cascade); its events stay in the
 * outbox (they have no foreign key) for the delivery loop.
 */
export function deleteSpace(tx: Tx, membership: Membership, confirm: string): { success: true } {
  if (confirm !== membership.space.slug) throw badRequest(`To delete the space, send "confirm": "${membership.space.slug}".`);
  removeSpace(tx, membership.space.id);
  return { success: true };
}

/** Removes a space and all it holds (its rows cascade). */
export function removeSpace(tx: Tx, spaceId: string): void {
  forgetMemberships(tx);
  tx.db.delete(spaces).where(eq(spaces.id, spaceId)).run();
  tx.afterCommit(tx.fieldUpkeep.wake);
}

export const MemberSchema = t.Object({ userId: t.String(), name: t.String(), email: t.String(), role: oneOf(ROLES), createdAt: Timestamp }, { $id: "Member" });
export type MemberView = Static<typeof MemberSchema>;

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

export function addMember(tx: Tx, caller: Membership, input: { email: string; role: Role }, actor: AuditActor): MemberView {
  guardOwnerRole(caller, input.role);
  const spaceId = caller.space.id;
  const user: UserRow | undefined = tx.db.select().from(users).where(eq(users.email, normalizeEmail(input.email))).get();
  if (!user) throw notFound(`No user has the e-mail ${input.email}.`);
  return admitMember(tx, spaceId, user, input.role, actor);
}

/** Makes a user a member of the space with a role (added by a manager, or through an invitation `via`), audited. */
export function admitMember(tx: Tx, spaceId: string, user: { id: string; email: string }, role: Role, actor: AuditActor, via?: string): MemberView {
  forgetMemberships(tx);
  onUniqueViolation(() => tx.db.insert(members).values({ spaceId, userId: user.id, role, createdAt: iso(tx.clock.now()) }).run(), `${user.email} is already a member of this space.`);
  recordAudit(tx, { action: "member.added", actor, spaceId, targetType: "member", targetId: user.id, metadata: { email: user.email, role, ...(via ? { invitation: via } : {}) } });
  return getMember(tx, spaceId, user.id);
}

/** A space always keeps an owner: the last one can be neither demoted nor removed. */
function guardLastOwner(ctx: AppContext, spaceId: string, member: MemberView): void {
  if (member.role !== "owner") return;
  const owners = ctx.db.select({ n: count() }).from(members).where(and(eq(members.spaceId, spaceId), eq(members.role, "owner"))).get()!.n;
  if (owners <= 1) throw conflict("The last owner of a space cannot be removed or demoted.", { reason: "LAST_OWNER" });
}

export function changeMemberRole(tx: Tx, caller: Membership, userId: string, role: Role, actor: AuditActor): MemberView {
  const spaceId = caller.space.id;
  const member = getMember(tx, spaceId, userId);
  guardOwnerRole(caller, member.role, role);
  if (role !== "owner") guardLastOwner(tx, spaceId, member);
  forgetMemberships(tx);
  tx.db.update(members).set({ role }).where(and(eq(members.spaceId, spaceId), eq(members.userId, userId))).run();
  recordAudit(tx, { action: "member.changed", actor, spaceId, targetType: "member", targetId: userId, metadata: { email: member.email, before: { role: member.role }, after: { role } } });
  return { ...member, role };
}

export function removeMember(tx: Tx, caller: Membership, userId: string, actor: AuditActor): { success: true } {
  const spaceId = caller.space.id;
  const member = getMember(tx, spaceId, userId);
  guardOwnerRole(caller, member.role);
  guardLastOwner(tx, spaceId, member);
  forgetMemberships(tx);
  tx.db.delete(members).where(and(eq(members.spaceId, spaceId), eq(members.userId, userId))).run();
  recordAudit(tx, { action: "member.removed", actor, spaceId, targetType: "member", targetId: userId, metadata: { email: member.email, role: member.role } });
  return { success: true };
}
