import { Elysia, t } from "elysia";
import { ROLES } from "../auth/levels";
import type { AppContext } from "../context";
import { oneOf } from "../http/schemas";
import { access } from "../http/access";
import { addMember, changeMemberRole, createSpace, deleteSpace, listMembers, listSpaces, membershipView, removeMember, updateSpace } from "./spaces";

const Role = oneOf(ROLES);
const Slug = t.String({ minLength: 1, maxLength: 64 });
const Name = t.String({ minLength: 1, maxLength: 200 });

/** Spaces and their members; these routes name their space in the path. */
export function spaceRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .get("/spaces", ({ actor }) => listSpaces(ctx, actor.user.id), { account: "signedIn" })
    .post(
      "/spaces",
      ({ actor, body, set }) => {
        set.status = 201;
        return createSpace(ctx, actor.user.id, body);
      },
      { account: "manage", body: t.Object({ name: Name, slug: t.Optional(Slug) }) },
    )
    .get("/spaces/:spaceId", ({ space }) => membershipView(space), { spaceLevel: "read" })
    .patch("/spaces/:spaceId", ({ space, body }) => updateSpace(ctx, space, body), {
      spaceLevel: "manage",
      body: t.Object({ name: t.Optional(Name), slug: t.Optional(Slug) }),
    })
    .delete(
      "/spaces/:spaceId",
      async ({ space, body }) => {
        await deleteSpace(ctx, space, body.confirm);
        return { success: true };
      },
      { spaceLevel: "manage", body: t.Object({ confirm: t.String() }) },
    )
    .get("/spaces/:spaceId/members", ({ space }) => listMembers(ctx, space.space.id), { spaceLevel: "read" })
    .post(
      "/spaces/:spaceId/members",
      ({ space, body, set }) => {
        set.status = 201;
        return addMember(ctx, space, body);
      },
      { spaceLevel: "manage", body: t.Object({ email: t.String({ minLength: 1, maxLength: 320 }), role: Role }) },
    )
    .patch("/spaces/:spaceId/members/:userId", ({ space, params, body }) => changeMemberRole(ctx, space, params.userId, body.role), {
      spaceLevel: "manage",
      body: t.Object({ role: Role }),
    })
    .delete(
      "/spaces/:spaceId/members/:userId",
      async ({ space, params }) => {
        await removeMember(ctx, space, params.userId);
        return { success: true };
      },
      { spaceLevel: "manage" },
    );
}
