import { and, eq, inArray } from "drizzle-orm";
import { type Static, t } from "elysia";
import type { AppContext } from "../context";
import { isIdOf } from "../db/ids";
import { write } from "../db/tx";
import { iso } from "../shared/clock";
import { ApiError, badRequest, notFound } from "../shared/errors";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import { type NodeShareRow, nodes, nodeShares, SHARE_CAPABILITIES, SHARE_SCOPES } from "../tables/content";
import { findNode, liveShare, type NodeRow } from "./nodes";
import { ancestorsOf } from "./store";

/**
 * Public links (Busabase's node share, contract §2.6): a manager shares a node publicly, with an
 * optional password and expiry; while the share is live, anyone reads the node and everything
 * below it, read-only and without a key (`read-only.ts`), and nothing else of the space.
 */

export const NodeShareSchema = t.Object(
  {
    nodeId: t.String(),
    scope: oneOf(SHARE_SCOPES),
    capability: oneOf(SHARE_CAPABILITIES),
    hasPassword: t.Boolean(),
    expiresAt: Nullable(Timestamp),
    updatedAt: Timestamp,
  },
  { $id: "NodeShare" },
);
type NodeShareView = Static<typeof NodeShareSchema>;

const viewOf = (row: NodeShareRow): NodeShareView => ({ nodeId: row.nodeId, scope: row.scope, capability: row.capability, hasPassword: row.passwordHash !== null, expiresAt: row.expiresAt, updatedAt: row.updatedAt });

const MAX_PASSWORD = 200;

/** `GET /nodes/{id}/share`: the node's share, or null when it was never shared. */
export function getShare(ctx: AppContext, spaceId: string, nodeRef: string): NodeShareView | null {
  const node = findNode(ctx, spaceId, nodeRef, "active");
  const row = ctx.db.select().from(nodeShares).where(eq(nodeShares.nodeId, node.id)).get();
  return row ? viewOf(row) : null;
}

export interface ShareInput {
  scope: NodeShareRow["scope"];
  capability?: NodeShareRow["capability"];
  password?: string | null;
  expiresAt?: string | null;
}

/**
 * `POST /nodes/{id}/share`: sets the share; what is left out keeps what it was (a new share reads,
 * and never expires); `password: null` removes the password, which may be set only while the
 * share is public. The password is kept as a hash and never answered.
 */
export async function setShare(ctx: AppContext, spaceId: string, nodeRef: string, input: ShareInput): Promise<NodeShareView> {
  const node = findNode(ctx, spaceId, nodeRef, "active");
  if (typeof input.password === "string" && (input.password.length === 0 || input.password.length > MAX_PASSWORD)) throw badRequest(`A share password holds 1 to ${MAX_PASSWORD} characters.`);
  if (typeof input.password === "string" && input.scope !== "public") throw badRequest("A share password can only be set while the node is publicly shared.");
  if (input.expiresAt && !(Date.parse(input.expiresAt) > 0)) throw badRequest("expiresAt must be an ISO date-time.");
  const passwordHash = typeof input.password === "string" ? await Bun.password.hash(input.password, { algorithm: "argon2id" }) : undefined;
  return write(ctx, (tx) => {
    const before = tx.db.select().from(nodeShares).where(eq(nodeShares.nodeId, node.id)).get();
    const row: NodeShareRow = {
      nodeId: node.id,
      spaceId,
      scope: input.scope,
      capability: input.capability ?? before?.capability ?? "read",
      passwordHash: input.password === null || input.scope === "none" ? null : (passwordHash ?? before?.passwordHash ?? null),
      expiresAt: input.expiresAt === undefined ? (before?.expiresAt ?? null) : input.expiresAt === null ? null : iso(Date.parse(input.expiresAt)),
      updatedAt: iso(tx.clock.now()),
    };
    tx.db.insert(nodeShares).values(row).onConflictDoUpdate({ target: nodeShares.nodeId, set: row }).run();
    return viewOf(row);
  });
}

/** `DELETE /nodes/{id}/share`: the share stops (scope none), and answers as it is now. */
export const disableShare = (ctx: AppContext, spaceId: string, nodeRef: string) => setShare(ctx, spaceId, nodeRef, { scope: "none" });

/**
 * The node a visitor reads through a public share: active, and shared by its own live share or
 * the nearest of its ancestors'; a share with a password needs it (a wrong one is a 401). A node
 * not shared is the same 404 as one that does not exist. Tries are counted per address (10 a
 * minute) and wrong passwords per share (60 a minute), only once the id has the shape of one.
 */
export async function sharedNode(ctx: AppContext, nodeId: string, password: string | undefined, address: string): Promise<NodeRow> {
  if (!isIdOf("nod", nodeId)) throw notFound(`No shared node ${nodeId}.`);
  // Passwords are guessed here: every try of an address is counted, right or wrong.
  if (password !== undefined) ctx.limits.sharePasswords.take(`address ${address}`);
  const node = ctx.db.select().from(nodes).where(eq(nodes.id, nodeId)).get();
  const chain = node && node.status === "active" ? [node.id, ...ancestorsOf(ctx, node.id)] : [];
  const shares = chain.length === 0 ? [] : ctx.db.select().from(nodeShares).where(and(inArray(nodeShares.nodeId, chain), liveShare(iso(ctx.clock.now())))).all();
  const share = chain.map((id) => shares.find((row) => row.nodeId === id)).find((row) => row !== undefined);
  if (!node || !share) throw notFound(`No shared node ${nodeId}.`);
  if (share.passwordHash === null) return node;
  const required = () => new ApiError(401, "UNAUTHORIZED", "This share has a password: send it in the x-share-password header.", { reason: "SHARE_PASSWORD_REQUIRED" });
  if (password === undefined) throw required();
  // The share's own count holds wrong passwords only, from every address: more than one address may try, so one cannot close it for the others.
  const failures = `share ${share.nodeId}`;
  ctx.limits.shareFailures.take(failures);
  if (!(password.length <= MAX_PASSWORD && (await Bun.password.verify(password, share.passwordHash)))) throw required();
  ctx.limits.shareFailures.release(failures);
  return node;
}
