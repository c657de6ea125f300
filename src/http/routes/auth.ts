import { Elysia, t } from "elysia";
import { clientAddress, type ServerLike } from "../plumbing";
import type { AppContext } from "../../context";
import { write } from "../../db/tx";
import { access, sessionCookieOptions, spaceHeader } from "../access";
import { Email, Name, oneOf, Password, Success, WholeNumber } from "../../shared/schemas";
import { answers } from "../openapi";
import { ApiKeySchema, createApiKey, deleteApiKey, getApiKey, listApiKeys, NewApiKeySchema, updateApiKey } from "../../auth/api-keys";
import { type Actor, presentedKey } from "../../auth/actor";
import {
  approveDeviceRequest,
  DeviceAccessTokenSchema,
  DeviceCredentialSchema,
  DeviceGrantSchema,
  DeviceRequestSchema,
  denyDeviceRequest,
  deviceAccessToken,
  finalizeDeviceCode,
  getDeviceRequest,
  issueDeviceCode,
  type Looker,
} from "../../auth/device";
import { EXPIRATIONS, LEVELS } from "../../shared/levels";
import { createSession, deleteSession, SESSION_COOKIE } from "../../auth/sessions";
import { completeSetup, setupNeeded } from "../../spaces/setup";
import { listMemberships } from "../../spaces/spaces";
import { fillDemo } from "../../transfer/demo";
import { createUser, listUsers, updateUser, UserSchema, userView, verifyLogin } from "../../auth/users";
import { CallerSchema, describeCaller } from "../../spaces/whoami";

const Level = oneOf(LEVELS);
const Expiration = oneOf(EXPIRATIONS);
const UserCode = t.String({ minLength: 1, maxLength: 32 });

const looker = (actor: Actor, server: ServerLike, request: Request): Looker => ({ userId: actor.user.id, address: clientAddress(server, request) });

/** Users, sessions, setup, API keys, device authorization and `GET /auth`. */
export function authRoutes(ctx: AppContext) {
  const secure = ctx.config.publicUrl.startsWith("https:");
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/setup", () => ({ needed: setupNeeded(ctx) }), { answers: { 200: t.Object({ needed: t.Boolean() }) }, public: true })
    .post(
      "/setup",
      async ({ body, cookie, set }) => {
        const { token, ...input } = body;
        const { user, session } = await completeSetup(ctx, token, input);
        // The account stands whatever becomes of the demo: a demo that cannot be made is only logged.
        if (ctx.config.demo) await fillDemo(ctx, listMemberships(ctx, user.id, true)[0].space.id, user.id).catch((error) => ctx.log.error(`the demo workspace was not made: ${(error as Error).message}`));
        cookie[SESSION_COOKIE].set(sessionCookieOptions(session.token, secure));
        set.status = 201;
        return user;
      },
      { answers: { 201: UserSchema, 403: [], 409: [] }, public: true, body: t.Object({ token: t.String(), email: Email, name: Name, password: Password, spaceName: t.Optional(t.String({ maxLength: 200 })) }) },
    )
    .post(
      "/auth/login",
      async ({ body, cookie, server, request }) => {
        const user = await verifyLogin(ctx, body.email, body.password, clientAddress(server, request));
        const session = await write(ctx, (tx) => createSession(tx, user.id));
        cookie[SESSION_COOKIE].set(sessionCookieOptions(session.token, secure));
        return { user: userView(user), csrfToken: session.csrfToken };
      },
      {
        answers: { 200: t.Object({ user: UserSchema, csrfToken: t.String({ description: "Send as x-csrf-token with every request that changes state." }) }), 401: [], 429: [] },
        public: true,
        body: t.Object({ email: Email, password: Password }),
      },
    )
    .post(
      "/auth/logout",
      async ({ actor, cookie }) => {
        const { tokenHash } = actor.credential as { tokenHash: string };
        await write(ctx, (tx) => deleteSession(tx, tokenHash));
        cookie[SESSION_COOKIE].set({ ...sessionCookieOptions("", secure), maxAge: 0 });
        return { success: true };
      },
      { answers: { 200: Success }, account: "session", noBody: true },
    )
    .get("/auth", ({ actor, request }) => describeCaller(ctx, actor, spaceHeader(request)?.ref), { answers: { 200: CallerSchema, 403: ["SPACE_NOT_ALLOWED"] }, account: "signedIn" })
    .get("/users/me", ({ actor }) => userView(actor.user), { answers: { 200: UserSchema }, account: "signedIn" })
    .get("/users", () => listUsers(ctx), { answers: { 200: t.Array(UserSchema) }, account: "admin" })
    .post(
      "/users",
      async ({ body, set }) => {
        const user = await createUser(ctx, body);
        set.status = 201;
        return user;
      },
      { answers: { 201: UserSchema, 409: [] }, account: "admin", body: t.Object({ email: Email, name: Name, password: Password, admin: t.Optional(t.Boolean()) }) },
    )
    .patch("/users/:userId", ({ params, body }) => updateUser(ctx, params.userId, body), {
      answers: { 200: UserSchema, 409: ["LAST_ADMIN"] },
      account: "admin",
      body: t.Object({ name: t.Optional(Name), password: t.Optional(Password), admin: t.Optional(t.Boolean()), banned: t.Optional(t.Boolean()) }),
    })
    .post(
      "/api-keys",
      ({ actor, body, set }) => {
        set.status = 201;
        return write(ctx, (tx) => createApiKey(tx, actor.user.id, body));
      },
      { answers: { 201: NewApiKeySchema }, account: "session", body: t.Object({ name: Name, level: Level, expiration: t.Optional(Expiration) }) },
    )
    .get("/api-keys", ({ actor }) => listApiKeys(ctx, actor.user.id), { answers: { 200: t.Array(ApiKeySchema) }, account: "session" })
    .get("/api-keys/:keyId", ({ actor, params }) => getApiKey(ctx, actor.user.id, params.keyId), { answers: { 200: ApiKeySchema }, account: "session" })
    .patch("/api-keys/:keyId", ({ actor, params, body }) => write(ctx, (tx) => updateApiKey(tx, actor.user.id, params.keyId, body)), {
      answers: { 200: ApiKeySchema, 409: ["CONFIRMATION_REQUIRED"] },
      account: "session",
      body: t.Object({ name: t.Optional(Name), level: t.Optional(Level), confirm: t.Optional(t.Boolean()) }),
    })
    .delete("/api-keys/:keyId", ({ actor, params }) => write(ctx, (tx) => deleteApiKey(tx, actor.user.id, params.keyId)), { answers: { 200: Success }, account: "session" })
    .post("/device/code", ({ body, server, request }) => write(ctx, (tx) => issueDeviceCode(tx, body?.clientName, clientAddress(server, request))), {
      answers: { 200: DeviceGrantSchema, 429: [] },
      public: true,
      body: t.Optional(t.Object({ clientName: t.Optional(t.String({ maxLength: 200 })) })),
    })
    .get("/device/requests/:userCode", ({ actor, params, server, request }) => getDeviceRequest(ctx, params.userCode, looker(actor, server, request)), {
      answers: { 200: DeviceRequestSchema, 429: [] },
      account: "session",
    })
    .post("/device/approve", ({ actor, body, server, request }) => write(ctx, (tx) => approveDeviceRequest(tx, looker(actor, server, request), body)), {
      answers: { 200: Success, 404: [], 409: ["DEVICE_REQUEST_NOT_PENDING"], 429: [] },
      account: "session",
      body: t.Object({ userCode: UserCode, name: Name, level: Level, expiration: t.Optional(Expiration) }),
    })
    .post("/device/deny", ({ actor, body, server, request }) => write(ctx, (tx) => denyDeviceRequest(tx, looker(actor, server, request), body.userCode)), {
      answers: { 200: Success, 404: [], 409: ["DEVICE_REQUEST_NOT_PENDING"], 429: [] },
      account: "session",
      body: t.Object({ userCode: UserCode }),
    })
    .post("/device/finalize", ({ body, request }) => finalizeDeviceCode(ctx, body.deviceCode, presentedKey(request.headers.get("authorization") ?? undefined, undefined) || null), {
      answers: { 200: DeviceCredentialSchema },
      public: true,
      body: t.Object({ deviceCode: t.String({ minLength: 1, maxLength: 200 }) }),
    });
}

/**
 * The RFC 8628 endpoints Busabase's CLI signs in through (section 12), outside `/api/v1`, in
 * RFC 8628's own names. They share the device requests, approval screen, limits and expiry of
 * section 5; the access token they give is good only for `POST /api/v1/device/finalize`.
 */
export function rfcDeviceRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/auth/device" })
    .use(access(ctx))
    .use(answers)
    .post(
      "/code",
      async ({ body, server, request }) => {
        const grant = await write(ctx, (tx) => issueDeviceCode(tx, body.client_id, clientAddress(server, request)));
        return {
          device_code: grant.deviceCode,
          user_code: grant.userCode,
          verification_uri: grant.verificationUri,
          verification_uri_complete: grant.verificationUriComplete,
          expires_in: grant.expiresIn,
          interval: grant.interval,
        };
      },
      {
        answers: {
          200: t.Object({ device_code: t.String(), user_code: t.String(), verification_uri: t.String(), verification_uri_complete: t.String(), expires_in: WholeNumber(), interval: WholeNumber() }),
          429: [],
        },
        public: true,
        body: t.Object({ client_id: t.String({ minLength: 1, maxLength: 200 }), scope: t.Optional(t.String({ maxLength: 1000 })) }),
      },
    )
    .post("/token", ({ body }) => deviceAccessToken(ctx, body.device_code), {
      answers: { 200: DeviceAccessTokenSchema },
      public: true,
      body: t.Object({ grant_type: t.Literal("urn:ietf:params:oauth:grant-type:device_code"), device_code: t.String({ minLength: 1, maxLength: 200 }), client_id: t.Optional(t.String({ maxLength: 200 })) }),
    });
}
