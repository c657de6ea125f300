import { Elysia, t } from "elysia";
import { createEmbedLink, CreatedEmbedLinkSchema, EmbedLinkSchema, embeddedNode, FramePolicySchema, frameAncestors, listEmbedLinks, revokeEmbedLink } from "../../content/embeds";
import { readOnlyView } from "../../content/read-only";
import { disableShare, getShare, NodeShareSchema, setShare, sharedNode } from "../../content/shares";
import { Nullable, oneOf } from "../../shared/schemas";
import { NODE_VISIBILITIES, PRINCIPAL_TYPES, SHARE_CAPABILITIES, SHARE_SCOPES } from "../../tables/content";
import { grantNode, listPrincipals, NodePrincipalSchema, revokeGrant, setVisibility } from "../../content/node-access";
import { actingAs } from "../../auth/actor";
import { write } from "../../db/tx";
import { LEVELS } from "../../shared/levels";
import { clientAddress, type ServerLike } from "../plumbing";
import type { AppContext } from "../../context";
import { limitParam } from "../../shared/query-params";
import { access } from "../access";
import { answers } from "../openapi";

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const shown = (value: unknown) => (value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value));

/**
 * The read-only page of an embedded node: its name, and its content as text (a doc's markdown, a
 * document's JSON or an html node's source, never rendered), a base's records as a table, a tree's
 * files or a folder's nodes as a list. Every value is escaped; the page runs no script.
 */
function embedPage(view: ReturnType<typeof readOnlyView>): string {
  const node = view.node;
  const parts: string[] = [`<h1>${escape(node.name)}</h1>`];
  if (node.description) parts.push(`<p>${escape(node.description)}</p>`);
  if (view.body !== undefined) parts.push(`<pre>${escape(view.body)}</pre>`);
  if (view.document !== undefined) parts.push(`<pre>${escape(JSON.stringify(view.document, null, 2))}</pre>`);
  if (view.files) parts.push(`<ul>${view.files.map((file) => `<li>${escape(file.path)} (${file.size} bytes)</li>`).join("")}</ul>`);
  if (view.asset) parts.push(`<p>${escape(view.asset.fileName)} (${view.asset.size} bytes)</p>`);
  if ("records" in view) {
    const fields = view.base.fields;
    const head = fields.map((field) => `<th>${escape(field.name)}</th>`).join("");
    const rows = view.records.map((record) => `<tr>${fields.map((field) => `<td>${escape(shown((record as { fields: Record<string, unknown> }).fields[field.slug]))}</td>`).join("")}</tr>`).join("");
    parts.push(`<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`);
  } else if (node.type === "folder") parts.push(`<ul>${view.children.map((child) => `<li>${escape(child.name)} (${child.type})</li>`).join("")}</ul>`);
  const style = "body{font:14px system-ui,sans-serif;margin:16px;color:#222}pre{white-space:pre-wrap}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(node.name)}</title><style>${style}</style></head><body>${parts.join("\n")}</body></html>`;
}

const Principal = {
  principalType: oneOf(PRINCIPAL_TYPES, { description: "user: one member, by user id; space: every member of this space, by its id." }),
  principalId: t.String({ minLength: 1, maxLength: 100 }),
};

const ShareBody = t.Object({
  scope: oneOf(SHARE_SCOPES),
  capability: t.Optional(oneOf(SHARE_CAPABILITIES)),
  password: t.Optional(t.Union([t.String({ maxLength: 200 }), t.Null()], { description: "null removes it; one may be set only while the share is public." })),
  expiresAt: t.Optional(t.Union([t.String({ format: "date-time" }), t.Null()])),
});

/**
 * A node read without a key: by an embed link's token (contract §2.12) or through a public share
 * (§2.6). Both are made, read and ended by a manager; what a visitor reads is `readOnlyView`.
 */
export function sharingRoutes(ctx: AppContext) {
  const page = (query: { cursor?: string; limit?: string }) => ({ cursor: query.cursor, limit: limitParam(query.limit, 100, 100) });
  return new Elysia()
    .use(access(ctx))
    .use(answers)
    .post(
      "/api/v1/embed-links",
      ({ space, actor, body, set }) => {
        set.status = 201;
        return createEmbedLink(ctx, space.space.id, actor.user.id, body);
      },
      {
        answers: { 201: CreatedEmbedLinkSchema },
        level: "manage",
        body: t.Object({ nodeId: t.String({ minLength: 1 }), expiresInMinutes: t.Optional(t.Integer({ minimum: 1, maximum: 1440, description: "Default 15." })), framePolicy: t.Optional(FramePolicySchema) }),
      },
    )
    .get("/api/v1/embed-links", ({ space, actor, query }) => listEmbedLinks(ctx, space.space.id, actor.user.id, query.nodeId), {
      answers: { 200: t.Array(EmbedLinkSchema) },
      level: "manage",
      query: t.Object({ nodeId: t.Optional(t.String({ minLength: 1 })) }),
    })
    .delete("/api/v1/embed-links/:id", ({ space, actor, params }) => revokeEmbedLink(ctx, space.space.id, actor.user.id, params.id), { answers: { 200: t.Object({ revoked: t.Literal(true) }) }, level: "manage" })
    // null (never shared) is JSON too: Elysia would send an empty body for it.
    .get("/api/v1/nodes/:nodeId/share", ({ space, params }) => Response.json(getShare(ctx, space.space.id, params.nodeId)), { answers: { 200: Nullable(NodeShareSchema) }, level: "manage" })
    .post("/api/v1/nodes/:nodeId/share", ({ space, params, body }) => setShare(ctx, space.space.id, params.nodeId, body), { answers: { 200: NodeShareSchema }, level: "manage", body: ShareBody })
    .delete("/api/v1/nodes/:nodeId/share", ({ space, params }) => disableShare(ctx, space.space.id, params.nodeId), { answers: { 200: NodeShareSchema }, level: "manage" })
    .post("/api/v1/nodes/:nodeId/visibility", ({ space, actor, params, body }) => write(ctx, (tx) => setVisibility(tx, space.space.id, params.nodeId, body.visibility, actingAs(actor))), {
      answers: { 200: t.Object({ updated: t.Literal(true) }) },
      level: "manage",
      body: t.Object({ visibility: Nullable(oneOf(NODE_VISIBILITIES), { description: "private hides the node, and what is below it, from members without a grant; null inherits." }) }),
    })
    .get("/api/v1/nodes/:nodeId/principals", ({ space, params }) => listPrincipals(ctx, space.space.id, params.nodeId), { answers: { 200: t.Array(NodePrincipalSchema) }, level: "manage" })
    .post("/api/v1/nodes/:nodeId/principals", ({ space, actor, params, body }) => write(ctx, (tx) => grantNode(tx, space.space, params.nodeId, body, actingAs(actor))), {
      answers: { 200: t.Object({ granted: t.Literal(true) }) },
      level: "manage",
      body: t.Object({ ...Principal, role: oneOf(LEVELS, { description: "The most the grant allows on the node and below it; never more than the member's role in the space." }) }),
    })
    .delete("/api/v1/nodes/:nodeId/principals", ({ space, actor, params, body }) => write(ctx, (tx) => revokeGrant(tx, space.space, params.nodeId, body, actingAs(actor))), {
      answers: { 200: t.Object({ removed: t.Literal(true) }) },
      level: "manage",
      body: t.Object(Principal),
    })
    .get(
      "/api/v1/shared/:nodeId",
      async ({ params, query, request, server, set }) => {
        const node = await sharedNode(ctx, params.nodeId, request.headers.get("x-share-password") ?? undefined, clientAddress(server as ServerLike, request));
        set.headers["cache-control"] = "no-store";
        return readOnlyView(ctx, node, page(query));
      },
      {
        answers: { 200: t.Record(t.String(), t.Unknown(), { description: "As an embed link reads it: the node's typed detail; a base's also its fields, a page of its records and nextCursor." }), 401: ["SHARE_PASSWORD_REQUIRED"], 429: [] },
        public: true,
        query: t.Object({ cursor: t.Optional(t.String()), limit: t.Optional(t.String({ description: "A base's records a page, 1..100, default 100." })) }),
        detail: { description: "A node shared publicly (by its own share or an ancestor's), read-only, without a key; a share with a password takes it in the x-share-password header (10 tries a minute per address; 60 wrong passwords a minute per share)." },
      },
    )
    .get(
      "/api/v1/embed/:token",
      ({ params, query, set }) => {
        const { node } = embeddedNode(ctx, params.token);
        set.headers["cache-control"] = "no-store";
        return readOnlyView(ctx, node, page(query));
      },
      {
        answers: { 200: t.Record(t.String(), t.Unknown(), { description: "The node's typed detail (as GET /nodes/{id} answers it); a base's also its fields (base), a page of its records and nextCursor." }) },
        public: true,
        query: t.Object({ cursor: t.Optional(t.String()), limit: t.Optional(t.String({ description: "A base's records a page, 1..100, default 100." })) }),
      },
    )
    .get(
      "/embed/:token",
      ({ params, query }) => {
        const { link, node } = embeddedNode(ctx, params.token);
        return new Response(embedPage(readOnlyView(ctx, node, page(query))), {
          headers: {
            "content-type": "text/html;charset=utf-8",
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
            "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; frame-ancestors ${frameAncestors(link.framePolicy)}`,
          },
        });
      },
      // A page, not API: outside the document, as the admin page is.
      { public: true, detail: { hide: true }, query: t.Object({ cursor: t.Optional(t.String()), limit: t.Optional(t.String()) }) },
    );
}
