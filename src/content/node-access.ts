import { and, asc, eq } from "drizzle-orm";
import { type Static, t } from "elysia";
import { type AuditActor, recordAudit } from "../audit/audit";
import type { AppContext, Tx } from "../context";
import { newId } from "../db/ids";
import { iso } from "../shared/clock";
import { badRequest, notFound } from "../shared/errors";
import { LEVELS, type Level } from "../shared/levels";
import { oneOf, Timestamp } from "../shared/schemas";
import { type NodePrincipalRow, nodePrincipals, nodes, type NodeVisibility, PRINCIPAL_TYPES, type PrincipalType } from "../tables/content";
import { members } from "../tables/spaces";
import { findNode } from "./nodes";

/**
 * Who sees a node (Busabase's node visibility and principals, contract §2.6): a manager makes a
 * node private, and grants members (or the whole space) access to it again, at a level that
 * bounds theirs there. What each member then sees is `spaces/sight.ts`'s to say.
 */

export const NodePrincipalSchema = t.Object(
  {
    id: t.String(),
    nodeId: t.String(),
    principalType: oneOf([...PRINCIPAL_TYPES, "team"]),
    principalId: t.String(),
    role: oneOf(LEVELS),
    grantedBy: t.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "NodePrincipal", description: "A grant made on this node; the nodes below it inherit it." },
);
type NodePrincipalView = Static<typeof NodePrincipalSchema>;

const principalView = ({ spaceId: _, ...row }: NodePrincipalRow): NodePrincipalView => row;

/** `POST /nodes/{id}/visibility`: sets the node's own visibility; null lets it inherit. The root cannot be private. */
export function setVisibility(tx: Tx, spaceId: string, nodeRef: string, visibility: NodeVisibility | null, actor: AuditActor): { updated: true } {
  const node = findNode(tx, spaceId, nodeRef, "active");
  if (node.parentId === null && visibility === "private") throw badRequest("The workspace root cannot be made private.");
  tx.db.update(nodes).set({ explicitVisibility: visibility }).where(eq(nodes.id, node.id)).run();
  tx.afterCommit(() => tx.eventStream.recheck());
  recordAudit(tx, { action: "node.visibility_changed", actor, spaceId, targetType: "node", targetId: node.id, metadata: { before: node.explicitVisibility, after: visibility } });
  return { updated: true };
}

/** `GET /nodes/{id}/principals`: the grants made on the node itself, oldest first. */
export function listPrincipals(ctx: AppContext, spaceId: string, nodeRef: string): NodePrincipalView[] {
  const node = findNode(ctx, spaceId, nodeRef, "active");
  return ctx.db.select().from(nodePrincipals).where(eq(nodePrincipals.nodeId, node.id)).orderBy(asc(nodePrincipals.createdAt), asc(nodePrincipals.id)).all().map(principalView);
}

export interface Grant {
  principalType: PrincipalType;
  principalId: string;
  role: Level;
}

/** A grant names a member of the space (by user id) or the space itself (by id or slug); answers the id stored. */
function principalOf(tx: Tx, spaceId: string, spaceSlug: string, grant: Pick<Grant, "principalType" | "principalId">): string {
  if (grant.principalType === "space") {
    if (grant.principalId !== spaceId && grant.principalId !== spaceSlug) throw badRequest(`A space grant names this space (${spaceId}); "${grant.principalId}" is not it.`);
    return spaceId;
  }
  const member = tx.db.select({ userId: members.userId }).from(members).where(and(eq(members.spaceId, spaceId), eq(members.userId, grant.principalId))).get();
  if (!member) throw badRequest(`No member "${grant.principalId}" in this space: a user grant names a member by user id.`);
  return member.userId;
}

/** `POST /nodes/{id}/principals`: grants, or changes the level of an existing grant. */
export function grantNode(tx: Tx, space: { id: string; slug: string }, nodeRef: string, grant: Grant, actor: AuditActor): { granted: true } {
  const node = findNode(tx, space.id, nodeRef, "active");
  const principalId = principalOf(tx, space.id, space.slug, grant);
  const at = iso(tx.clock.now());
  tx.db
    .insert(nodePrincipals)
    .values({ id: newId("nap"), spaceId: space.id, nodeId: node.id, principalType: grant.principalType, principalId, role: grant.role, grantedBy: actor.userId, createdAt: at, updatedAt: at })
    .onConflictDoUpdate({ target: [nodePrincipals.nodeId, nodePrincipals.principalType, nodePrincipals.principalId], set: { role: grant.role, grantedBy: actor.userId, updatedAt: at } })
    .run();
  tx.afterCommit(() => tx.eventStream.recheck());
  recordAudit(tx, { action: "node.principal_granted", actor, spaceId: space.id, targetType: "node", targetId: node.id, metadata: { principalType: grant.principalType, principalId, role: grant.role } });
  return { granted: true };
}

/** `DELETE /nodes/{id}/principals`: revokes the grant made on the node to that principal. */
export function revokeGrant(tx: Tx, space: { id: string; slug: string }, nodeRef: string, grant: Pick<Grant, "principalType" | "principalId">, actor: AuditActor): { removed: true } {
  const node = findNode(tx, space.id, nodeRef, "active");
  const principalId = grant.principalType === "space" && grant.principalId === space.slug ? space.id : grant.principalId;
  const removed = tx.db
    .delete(nodePrincipals)
    .where(and(eq(nodePrincipals.nodeId, node.id), eq(nodePrincipals.principalType, grant.principalType), eq(nodePrincipals.principalId, principalId)))
    .returning({ id: nodePrincipals.id })
    .all();
  if (removed.length === 0) throw notFound(`No ${grant.principalType} grant for "${grant.principalId}" on this node.`);
  tx.afterCommit(() => tx.eventStream.recheck());
  recordAudit(tx, { action: "node.principal_revoked", actor, spaceId: space.id, targetType: "node", targetId: node.id, metadata: { principalType: grant.principalType, principalId } });
  return { removed: true };
}
