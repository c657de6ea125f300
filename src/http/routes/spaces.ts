import { actingAs } from "../../auth/actor";
import { Elysia, t } from "elysia";
import { ROLES } from "../../shared/levels";
import type { AppContext } from "../../context";
import { write } from "../../db/tx";
import { Name, oneOf, Slug, Success } from "../../shared/schemas";
import { answers } from "../openapi";
import { access } from "../access";
import { addMember, changeMemberRole, createSpace, deleteSpace, listMembers, listSpaces, MemberSchema, membershipView, removeMember, SpaceSchema, updateSpace } from "../../spaces/spaces";

const Role = oneOf(ROLES);

/** Spaces and their members; these routes name their space in the path. */
export function spaceRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/spaces", ({ actor }) => listSpaces(ctx, actor.user.id), { answers: { 200: t.Array(SpaceSchema) }, account: "signedIn" })
    .post(
      "/spaces",
      ({ actor, body, set }) => {
        set.status = 201;
        return write(ctx, (tx) => createSpace(tx, actor.user.id, body));
      },
      { answers: { 201: SpaceSchema, 409: ["LIMIT_REACHED"] }, account: "manage", body: t.Object({ name: Name, slug: t.Optional(Slug) }) },
    )
    .get("/spaces/:spaceId", ({ space }) => membershipView(space), { answers: { 200: SpaceSchema }, spaceLevel: "read" })
    .patch("/spaces/:spaceId", ({ space, actor, body }) => write(ctx, (tx) => updateSpace(tx, space, body, actingAs(actor))), {
      answers: { 200: SpaceSchema, 409: [] },
      spaceLevel: "manage",
      body: t.Object({ name: t.Optional(Name), slug: t.Optional(Slug) }),
    })
    .delete("/spaces/:spaceId", ({ space, body }) => write(ctx, (tx) => deleteSpace(tx, space, body.confirm)), {
      answers: { 200: Success },
      spaceLevel: { level: "manage", role: "owner" },
      body: t.Object({ confirm: t.String() }),
    })
    .get("/spaces/:spaceId/members", ({ space }) => listMembers(ctx, space.space.id), { answers: { 200: t.Array(MemberSchema) }, spaceLevel: "read" })
    .post(
      "/spaces/:spaceId/members",
      ({ space, actor, body, set }) => {
        set.status = 201;
        return write(ctx, (tx) => addMember(tx, space, body, actingAs(actor)));
      },
      { answers: { 201: MemberSchema, 403: ["OWNER_REQUIRED"], 409: [] }, spaceLevel: "manage", body: t.Object({ email: t.String({ minLength: 1, maxLength: 320 }), role: Role }) },
    )
    .patch("/spaces/:spaceId/members/:userId", ({ space, actor, params, body }) => write(ctx, (tx) => changeMemberRole(tx, space, params.userId, body.role, actingAs(actor))), {
      answers: { 200: MemberSchema, 403: ["OWNER_REQUIRED"], 409: ["LAST_OWNER"] },
      spaceLevel: "manage",
      body: t.Object({ role: Role }),
    })
    .delete("/spaces/:spaceId/members/:userId", ({ space, actor, params }) => write(ctx, (tx) => removeMember(tx, space, params.userId, actingAs(actor))), {
      answers: { 200: Success, 403: ["OWNER_REQUIRED"], 409: ["LAST_OWNER"] },
      spaceLevel: "manage",
    });
}
