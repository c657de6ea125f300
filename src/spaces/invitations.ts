import { and, asc, eq, gt, isNull } from "drizzle-orm";
import { type Static, t } from "elysia";
import type { AuditActor } from "../audit/audit";
import { randomString, sha256 } from "../auth/secrets";
import { createSession, type SessionGrant } from "../auth/sessions";
import { insertUser, type NewUser, prepareUser, type UserView } from "../auth/users";
import type { AppContext, Tx } from "../context";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { iso } from "../shared/clock";
import { badRequest, conflict, notFound } from "../shared/errors";
import { type Role, ROLES } from "../shared/levels";
import { oneOf, Timestamp } from "../shared/schemas";
import { type InvitationRow, invitations, spaces } from "../tables/spaces";
import { admitMember, type Membership } from "./spaces";

/**
 * Invitation links (issue 38, item 7): a manager makes a link that lets one person join the space
 * with a role, setting their own password, instead of an admin making their account. The token is
 * answered once and kept as its SHA-256; a link works once, until it expires or is revoked.
 */

/** The roles a link may give: every role but owner (an owner is made by an owner, by hand). */
export const INVITABLE_ROLES = ROLES.filter((role) => role !== "owner");
export const INVITATION_DAYS = { default: 7, most: 30 } as const;

export const InvitationSchema = t.Object(
  { id: t.String(), role: oneOf(ROLES), createdBy: t.String(), createdAt: Timestamp, expiresAt: Timestamp },
  { $id: "Invitation", description: "A link waiting to be used; its token is never answered again." },
);
type InvitationView = Static<typeof InvitationSchema>;
const invitationView = (row: InvitationRow): InvitationView => ({ id: row.id, role: row.role, createdBy: row.createdBy, createdAt: row.createdAt, expiresAt: row.expiresAt });

/** `POST /spaces/{id}/invitations`: a new link; its path (`/admin/invite?token=…`) is answered this once. */
export function createInvitation(tx: Tx, caller: Membership, input: { role: Role; expiresInDays?: number }, actor: AuditActor): InvitationView & { token: string; path: string } {
  if (!(INVITABLE_ROLES as readonly string[]).includes(input.role)) throw badRequest(`An invitation gives one of ${INVITABLE_ROLES.join(", ")}; an owner is made by an owner from the members list.`);
  const days = input.expiresInDays ?? INVITATION_DAYS.default;
  const token = randomString(43);
  const now = tx.clock.now();
  const row: InvitationRow = {
    id: newId("inv"),
    spaceId: caller.space.id,
    tokenHash: sha256(token),
    role: input.role,
    createdBy: actor.userId,
    createdAt: iso(now),
    expiresAt: iso(now + days * 86_400_000),
    acceptedBy: null,
    acceptedAt: null,
  };
  tx.db.insert(invitations).values(row).run();
  return { ...invitationView(row), token, path: `/admin/invite?token=${token}` };
}

/** `GET /spaces/{id}/invitations`: the links still waiting (not used, not expired), oldest first. */
export const listInvitations = (ctx: AppContext, spaceId: string): InvitationView[] =>
  ctx.db
    .select()
    .from(invitations)
    .where(and(eq(invitations.spaceId, spaceId), isNull(invitations.acceptedAt), gt(invitations.expiresAt, iso(ctx.clock.now()))))
    .orderBy(asc(invitations.createdAt), asc(invitations.id))
    .all()
    .map(invitationView);

/** `DELETE /spaces/{id}/invitations/{invitationId}`: the link stops working at once. */
export function revokeInvitation(tx: Tx, spaceId: string, invitationId: string): { revoked: true } {
  const removed = tx.db.delete(invitations).where(and(eq(invitations.id, invitationId), eq(invitations.spaceId, spaceId), isNull(invitations.acceptedAt))).returning({ id: invitations.id }).all();
  if (removed.length === 0) throw notFound("No such invitation waiting in this space.");
  return { revoked: true };
}

/** A link that works: known, unused, unexpired; anything else is the same 404. */
function usableInvitation(ctx: AppContext, token: string): InvitationRow & { spaceName: string } {
  const found = token.length > 100 ? undefined : ctx.db.select({ invitation: invitations, spaceName: spaces.name }).from(invitations).innerJoin(spaces, eq(spaces.id, invitations.spaceId)).where(eq(invitations.tokenHash, sha256(token))).get();
  if (!found || found.invitation.acceptedAt !== null || found.invitation.expiresAt <= iso(ctx.clock.now())) throw notFound("This invitation link is not valid: it was used, it expired, or it was revoked. Ask for a new one.");
  return { ...found.invitation, spaceName: found.spaceName };
}

export const InvitationPreviewSchema = t.Object({ spaceName: t.String(), role: oneOf(ROLES), expiresAt: Timestamp });

/** `GET /invitations/{token}`: what the link offers, for the page that accepts it. */
export function previewInvitation(ctx: AppContext, token: string): Static<typeof InvitationPreviewSchema> {
  const invitation = usableInvitation(ctx, token);
  return { spaceName: invitation.spaceName, role: invitation.role, expiresAt: invitation.expiresAt };
}

/** Marks the link used, in the write that admits its person (a second acceptance racing it finds it used). */
function useInvitation(tx: Tx, invitation: InvitationRow, userId: string): void {
  const used = tx.db
    .update(invitations)
    .set({ acceptedBy: userId, acceptedAt: iso(tx.clock.now()) })
    .where(and(eq(invitations.id, invitation.id), isNull(invitations.acceptedAt)))
    .returning({ id: invitations.id })
    .all();
  if (used.length === 0) throw conflict("This invitation was used a moment ago.");
}

/**
 * `POST /invitations/{token}/accept`: a signed-in person joins as themselves; anyone else makes
 * their account (name, e-mail, password) and is signed in. Either way the link is used up.
 */
export async function acceptInvitation(ctx: AppContext, token: string, as: { userId: string; email: string } | NewUser): Promise<{ user: UserView | null; session: SessionGrant | null; spaceId: string }> {
  const invitation = usableInvitation(ctx, token);
  if ("userId" in as) {
    await write(ctx, (tx) => {
      useInvitation(tx, invitation, as.userId);
      admitMember(tx, invitation.spaceId, { id: as.userId, email: as.email }, invitation.role, { userId: as.userId, keyId: null }, invitation.id);
    });
    return { user: null, session: null, spaceId: invitation.spaceId };
  }
  const row = await prepareUser(ctx, { ...as, admin: false });
  return write(ctx, (tx) => {
    const user = insertUser(tx, row);
    useInvitation(tx, invitation, user.id);
    admitMember(tx, invitation.spaceId, user, invitation.role, { userId: user.id, keyId: null }, invitation.id);
    return { user, session: createSession(tx, user.id), spaceId: invitation.spaceId };
  });
}
