import { randomBytes } from "node:crypto";
import { and, desc, eq } from "drizzle-orm";
import { type Static, t } from "elysia";
import { sha256 } from "../auth/secrets";
import type { AppContext } from "../context";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { iso, MINUTE_MS } from "../shared/clock";
import { badRequest, invalid, notFound } from "../shared/errors";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import { type EmbedLinkRow, embedLinks, type FramePolicy, nodes } from "../tables/content";
import { findNode, type NodeRow } from "./nodes";

/**
 * Embed links (contract §2.12): a short-lived, read-only link to one node, for an iframe or a
 * reader without a key. The token is answered once, at creation; only its hash is kept.
 */

export const EMBED_NODE_TYPES = ["base", "doc", "file", "drive", "skill", "folder", "airapp"] as const;
const MAX_ORIGINS = 20;

export const FramePolicySchema = t.Object({
  mode: oneOf(["anywhere", "top-level-only", "origins"]),
  allowedOrigins: t.Optional(t.Array(t.String({ maxLength: 300 }), { maxItems: MAX_ORIGINS })),
});

export const EmbedLinkSchema = t.Object(
  {
    id: t.String(),
    nodeId: t.String(),
    nodeName: t.String(),
    nodeType: oneOf(EMBED_NODE_TYPES),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    revokedAt: Nullable(Timestamp),
    active: t.Boolean({ description: "Neither expired nor revoked." }),
    framePolicy: t.Object({ mode: oneOf(["anywhere", "top-level-only", "origins"]), allowedOrigins: t.Array(t.String()) }),
  },
  { $id: "EmbedLink" },
);
export const CreatedEmbedLinkSchema = t.Composite([EmbedLinkSchema, t.Object({ url: t.String({ description: "The node's read-only JSON, by the link's token." }), iframeUrl: t.String({ description: "The node's read-only page, for an iframe." }) })]);

/** An origin as a frame may be embedded from: https, or http on this machine; nothing but scheme, host and port. */
function checkedOrigin(given: string): string {
  const url = URL.canParse(given) ? new URL(given) : null;
  const local = url !== null && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  const bare = url !== null && url.username === "" && url.password === "" && (url.pathname === "/" || url.pathname === "") && url.search === "" && url.hash === "" && !given.includes("*");
  if (!url || !bare || !(url.protocol === "https:" || (url.protocol === "http:" && local))) {
    throw badRequest(`"${given}" is not an origin an embed may allow: give https://host[:port] (or http on localhost), without a path, query, credentials or wildcard.`);
  }
  return url.origin;
}

function framePolicyOf(given: { mode: FramePolicy["mode"]; allowedOrigins?: string[] } | undefined): FramePolicy {
  const mode = given?.mode ?? "anywhere";
  const origins = [...new Set((given?.allowedOrigins ?? []).map(checkedOrigin))];
  if (mode === "origins" && origins.length === 0) throw invalid(["framePolicy", "allowedOrigins"], "framePolicy origins needs 1 to 20 allowedOrigins.");
  if (mode !== "origins" && origins.length > 0) throw invalid(["framePolicy", "allowedOrigins"], `framePolicy ${mode} takes no allowedOrigins.`);
  return { mode, allowedOrigins: origins };
}

const viewOf = (ctx: AppContext, row: EmbedLinkRow, node: Pick<NodeRow, "name" | "type">): Static<typeof EmbedLinkSchema> => ({
  id: row.id,
  nodeId: row.nodeId,
  nodeName: node.name,
  nodeType: node.type as (typeof EMBED_NODE_TYPES)[number],
  createdAt: row.createdAt,
  expiresAt: row.expiresAt,
  revokedAt: row.revokedAt,
  active: row.revokedAt === null && Date.parse(row.expiresAt) > ctx.clock.now(),
  framePolicy: row.framePolicy,
});

/** `POST /embed-links`: a link to an active node of an embeddable type, for 1 to 1440 minutes (15 by default). */
export function createEmbedLink(ctx: AppContext, spaceId: string, userId: string, input: { nodeId: string; expiresInMinutes?: number; framePolicy?: { mode: FramePolicy["mode"]; allowedOrigins?: string[] } }) {
  const node = findNode(ctx, spaceId, input.nodeId, "active");
  if (!(EMBED_NODE_TYPES as readonly string[]).includes(node.type)) throw badRequest(`A ${node.type} cannot be embedded; embed a ${EMBED_NODE_TYPES.join(", ")}.`);
  const framePolicy = framePolicyOf(input.framePolicy);
  const token = randomBytes(32).toString("base64url");
  return write(ctx, (tx) => {
    const now = tx.clock.now();
    const row: EmbedLinkRow = {
      id: newId("emb", now),
      spaceId,
      nodeId: node.id,
      createdBy: userId,
      tokenHash: sha256(token),
      framePolicy,
      createdAt: iso(now),
      expiresAt: iso(now + (input.expiresInMinutes ?? 15) * MINUTE_MS),
      revokedAt: null,
    };
    tx.db.insert(embedLinks).values(row).run();
    return { ...viewOf(tx, row, node), url: `${tx.config.publicUrl}/api/v1/embed/${token}`, iframeUrl: `${tx.config.publicUrl}/embed/${token}` };
  });
}

/** `GET /embed-links`: the caller's links in the space (of one node when asked), newest first. */
export function listEmbedLinks(ctx: AppContext, spaceId: string, userId: string, nodeRef?: string) {
  const nodeId = nodeRef === undefined ? undefined : findNode(ctx, spaceId, nodeRef).id;
  return ctx.db
    .select({ link: embedLinks, name: nodes.name, type: nodes.type })
    .from(embedLinks)
    .innerJoin(nodes, eq(nodes.id, embedLinks.nodeId))
    .where(and(eq(embedLinks.spaceId, spaceId), eq(embedLinks.createdBy, userId), nodeId ? eq(embedLinks.nodeId, nodeId) : undefined))
    .orderBy(desc(embedLinks.id))
    .all()
    .map(({ link, name, type }) => viewOf(ctx, link, { name, type }));
}

/** `DELETE /embed-links/{id}`: the caller's link stops working at once. */
export function revokeEmbedLink(ctx: AppContext, spaceId: string, userId: string, id: string): Promise<{ revoked: true }> {
  return write(ctx, (tx) => {
    const row = tx.db.select().from(embedLinks).where(and(eq(embedLinks.id, id), eq(embedLinks.spaceId, spaceId), eq(embedLinks.createdBy, userId))).get();
    if (!row) throw notFound(`Embed link not found: ${id}`);
    if (row.revokedAt === null) tx.db.update(embedLinks).set({ revokedAt: iso(tx.clock.now()) }).where(eq(embedLinks.id, id)).run();
    return { revoked: true as const };
  });
}

/** The live link a token names, with its node; an unknown, expired or revoked token, or an archived node, is one 404. */
export function embeddedNode(ctx: AppContext, token: string): { link: EmbedLinkRow; node: NodeRow } {
  const link = token.length > 200 ? undefined : ctx.db.select().from(embedLinks).where(eq(embedLinks.tokenHash, sha256(token))).get();
  const node = link && link.revokedAt === null && Date.parse(link.expiresAt) > ctx.clock.now() ? ctx.db.select().from(nodes).where(eq(nodes.id, link.nodeId)).get() : undefined;
  if (!link || !node || node.status !== "active") throw notFound("This embed link is unknown, expired or revoked.");
  return { link, node };
}

/** The `frame-ancestors` a link's page allows. */
export function frameAncestors(policy: FramePolicy): string {
  if (policy.mode === "top-level-only") return "'none'";
  if (policy.mode === "origins") return policy.allowedOrigins.join(" ");
  return "*";
}
