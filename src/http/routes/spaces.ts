import { actingAs } from "../../auth/actor";
import { Elysia, t } from "elysia";
import { ROLES } from "../../shared/levels";
import type { AppContext } from "../../context";
import { write } from "../../db/tx";
import { Email, Name, oneOf, Password, Slug, Success } from "../../shared/schemas";
import { answers } from "../openapi";
import { access } from "../access";
import { acceptInvitation, createInvitation, INVITABLE_ROLES, INVITATION_DAYS, InvitationPreviewSchema, InvitationSchema, listInvitations, previewInvitation, revokeInvitation } from "../../spaces/invitations";
import { clientAddress, type ServerLike } from "../plumbing";
import { SESSION_COOKIE } from "../../auth/sessions";
import { sessionCookieOptions } from "../access";
import { UserSchema } from "../../auth/users";
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
    .get("/spaces/:spaceId/invitations", ({ space }) => listInvitations(ctx, space.space.id), { answers: { 200: t.Array(InvitationSchema) }, spaceLevel: "manage" })
    .post(
      "/spaces/:spaceId/invitations",
      ({ space, actor, body, set }) => {
        set.status = 201;
        return write(ctx, (tx) => createInvitation(tx, space, body, actingAs(actor)));
      },
      {
        answers: { 201: t.Composite([InvitationSchema, t.Object({ token: t.String({ description: "Answered this once; only its hash is kept." }), path: t.String({ description: "Where the page accepts it: /admin/invite?token=…" }) })]) },
        spaceLevel: "manage",
        body: t.Object({ role: oneOf(INVITABLE_ROLES), expiresInDays: t.Optional(t.Integer({ minimum: 1, maximum: INVITATION_DAYS.most, description: `Default ${INVITATION_DAYS.default}.` })) }),
      },
    )
    .delete("/spaces/:spaceId/invitations/:invitationId", ({ space, params }) => write(ctx, (tx) => revokeInvitation(tx, space.space.id, params.invitationId)), {
      answers: { 200: t.Object({ revoked: t.Literal(true) }) },
      spaceLevel: "manage",
    })
    .get(
      "/invitations/:token",
      ({ params, request, server }) => {
        ctx.limits.invitationTokens.take(`address ${clientAddress(server as ServerLike, request)}`);
        return previewInvitation(ctx, params.token);
      },
      { answers: { 200: InvitationPreviewSchema, 429: [] }, public: true },
    )
    .post(
      "/invitations/:token/accept",
      async ({ params, body, request, server, cookie, set }) => {
        ctx.limits.invitationTokens.take(`address ${clientAddress(server as ServerLike, request)}`);
        const accepted = await acceptInvitation(ctx, params.token, body);
        cookie[SESSION_COOKIE].set(sessionCookieOptions(accepted.session!.token, ctx.config.publicUrl.startsWith("https:")));
        set.status = 201;
        return { user: accepted.user!, csrfToken: accepted.session!.csrfToken, spaceId: accepted.spaceId };
      },
      {
        answers: { 201: t.Object({ user: UserSchema, csrfToken: t.String(), spaceId: t.String() }), 409: [], 429: [] },
        public: true,
        body: t.Object({ email: Email, name: Name, password: Password }),
      },
    )
    .post(
      "/invitations/:token/join",
      async ({ params, actor, request, server }) => {
        ctx.limits.invitationTokens.take(`address ${clientAddress(server as ServerLike, request)}`);
        return { spaceId: (await acceptInvitation(ctx, params.token, { userId: actor.user.id, email: actor.user.email })).spaceId };
      },
      { answers: { 200: t.Object({ spaceId: t.String() }), 409: [], 429: [] }, account: "session", noBody: true },
    )
    .delete("/spaces/:spaceId/members/:userId", ({ space, actor, params }) => write(ctx, (tx) => removeMember(tx, space, params.userId, actingAs(actor))), {
      answers: { 200: Success, 403: ["OWNER_REQUIRED"], 409: ["LAST_OWNER"] },
      spaceLevel: "manage",
    });
}
