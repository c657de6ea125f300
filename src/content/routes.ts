import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { oneOf } from "../http/schemas";
import { access } from "../http/access";
import { getNode, listNodes } from "./nodes";

/** Workspace content, in the space of section 2.3 of the contract. */
export function contentRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .get("/nodes", ({ space, query }) => listNodes(ctx, space.space.id, query), {
      level: "read",
      query: t.Object({
        parentId: t.Optional(t.String({ minLength: 1 })),
        depth: t.Optional(t.Integer({ minimum: 1, maximum: 5 })),
        status: t.Optional(oneOf(["active", "archived"])),
      }),
    })
    .get("/nodes/:nodeId", ({ space, params }) => getNode(ctx, space.space.id, params.nodeId), { level: "read" });
}
