import { Elysia } from "elysia";
import { timingSafeEqual } from "node:crypto";
import { type Actor, authenticate, presentedKey } from "../auth/actor";
import { atLeast, type Level } from "../shared/levels";
import { SESSION_COOKIE, SESSION_COOKIE_DAYS } from "../auth/sessions";
import type { AppContext } from "../context";
import { UploadBody } from "../shared/body-budget";
import { requireLevel, resolveNamedSpace, resolveSpace, type SpaceScope } from "../spaces/resolve";
import { forbidden } from "../shared/errors";
import { namedTargets, requireSeenTargets, SEES_ALL, type Sight, seenSlugs } from "../spaces/sight";

/**
 * Who may call a route outside any space: any credential, a session or `manage` key, a session
 * only, or an instance admin (with a session or `manage` key when the request changes state).
 */
export type AccountAccess = "signedIn" | "manage" | "session" | "admin";

/**
 * What a route in a space requires: a level; optionally a higher one when the body carries a given
 * key (`PATCH /bases/{id}` needs manage to change `reviewPolicy`); optionally the owner role;
 * optionally sight of the whole space (what another instance reads and pushes: `/sync/*`).
 */
export type SpaceAccess = Level | { level: Level; raisedBy?: Partial<Record<string, Level>>; role?: "owner"; wholeSpace?: true };

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

const SPACE_HEADERS = ["x-basalt-space", "x-busabase-space"] as const;

/** The header a request names its space with, and what it says; undefined when none does. */
export function spaceHeader(request: Request): { header: string; ref: string } | undefined {
  for (const header of SPACE_HEADERS) {
    const ref = request.headers.get(header);
    if (ref) return { header, ref };
  }
  return undefined;
}

/** The errors an access check can answer beyond 401, by status, with their `reason` values. */
export type Refusals = { 400?: string[]; 403: string[] };

/**
 * One place records what each route requires, for the OpenAPI document: `x-basalt-access` (shown
 * as is), the refusals it can answer, and whether the route acts in the space of section 2.3,
 * named by the `x-basalt-space` header.
 */
const accessDetail = (access: string, needs: string, refusals?: Refusals, spaceByHeader = false): Record<string, unknown> & { security?: Record<string, string[]>[] } =>
  access === "public"
    ? { "x-basalt-access": access, "x-basalt-needs": needs }
    : { "x-basalt-access": access, "x-basalt-needs": needs, security: [{ bearerAuth: [] }, { sessionCookie: [] }], "x-basalt-refusals": refusals, "x-basalt-space-header": spaceByHeader };

const ACCOUNT_NEEDS: Record<AccountAccess, string> = {
  signedIn: "Any valid API key or session.",
  manage: "A session, or an API key with the manage level.",
  session: "A signed-in session (the admin page); API keys are refused.",
  admin: "An instance admin: any of their credentials to read, a session or a manage key to change.",
};

const ACCOUNT_REFUSALS: Record<AccountAccess, string[]> = { signedIn: [], manage: [], session: ["SESSION_REQUIRED"], admin: ["ADMIN_REQUIRED"] };

const spaceRefusals = (access: SpaceAccess, byHeader: boolean): Refusals => ({
  ...(byHeader ? { 400: ["SPACE_SELECTION_REQUIRED"] } : {}),
  403: [
    "SPACE_NOT_ALLOWED",
    ...(typeof access !== "string" && access.role ? ["OWNER_REQUIRED"] : []),
    "NODE_ACCESS_REQUIRED",
    ...(typeof access !== "string" && access.wholeSpace ? ["SYNC_NEEDS_WHOLE_SPACE"] : []),
  ],
});

const describeSpaceAccess = (access: SpaceAccess): string => {
  if (typeof access === "string") return access;
  const raised = Object.entries(access.raisedBy ?? {}).map(([key, level]) => `, ${level} to change ${key}`);
  return `${access.level}${access.role ? `, ${access.role} role` : ""}${access.wholeSpace ? ", the whole space" : ""}${raised.join("")}`;
};

function spaceNeeds(access: SpaceAccess, where: string): string {
  const { level, role, raisedBy, wholeSpace } = typeof access === "string" ? { level: access, role: undefined, raisedBy: {}, wholeSpace: undefined } : access;
  const raised = Object.entries(raisedBy ?? {}).map(([key, needed]) => ` (${needed} to change ${key})`);
  const whole = wholeSpace ? ", and sight of the whole space (no node private to the caller)" : "";
  return `Needs the ${level} level${raised.join("")}${role ? ` and the ${role} role` : ""}${whole} in ${where}; the level in effect is the lower of the credential's level and the caller's role there.`;
}

/** The level a request needs: the declared one, raised by any declared key its body carries. */
function requiredLevel(access: SpaceAccess, body: unknown): Level {
  if (typeof access === "string") return access;
  let level = access.level;
  const given = body !== null && typeof body === "object" ? body : {};
  for (const [key, raised] of Object.entries(access.raisedBy ?? {})) if (raised && Object.hasOwn(given, key) && !atLeast(level, raised)) level = raised;
  return level;
}

function requireSpaceAccess(space: SpaceScope, access: SpaceAccess, body: unknown): void {
  requireLevel(space.level, requiredLevel(access, body));
  if (typeof access !== "string" && access.role && space.role !== access.role) {
    throw forbidden(`Only an ${access.role} of the space may do this.`, { reason: "OWNER_REQUIRED" });
  }
}

const cookiesOf = (request: Request) => {
  const header = request.headers.get("cookie");
  return header ? new Bun.CookieMap(header) : null;
};

/** The caller of a request. Reads `request.headers`, always present, rather than the parsed `headers` Elysia may skip. */
function actorOf(ctx: AppContext, request: Request, cookies = cookiesOf(request)): Actor {
  const { headers } = request;
  const token = cookies?.get(SESSION_COOKIE) ?? null;
  // x-api-key counts only without an Authorization header (`presentedKey`): not read when one came.
  const authorization = headers.get("authorization") ?? undefined;
  const apiKey = presentedKey(authorization, authorization === undefined ? (headers.get("x-api-key") ?? undefined) : undefined);
  const actor = authenticate(ctx, { apiKey, sessionToken: token });
  const { credential } = actor;
  if (credential.type === "session" && !SAFE_METHODS.has(request.method) && !sameText(headers.get("x-csrf-token") ?? "", credential.csrfToken)) {
    throw forbidden("A signed-in request that changes state needs the x-csrf-token header: the csrfToken answered by POST /api/v1/auth/login (or GET /api/v1/auth).", { reason: "CSRF_TOKEN_INVALID" });
  }
  return actor;
}

/**
 * The space a signed-in browser chose, for what it loads without headers (an attachment's image,
 * a download): the admin page keeps it in this cookie beside the session. Never read for a key.
 */
export const SPACE_COOKIE = "basalt_space";

/** The caller and the space of section 2.3 a request acts in, or the 401/403 of one that may not. */
export function grantedSpace(ctx: AppContext, request: Request, required: SpaceAccess, body?: unknown): { actor: Actor; space: SpaceScope } {
  const cookies = cookiesOf(request);
  const actor = actorOf(ctx, request, cookies);
  const chosen = actor.credential.type === "session" ? (cookies?.get(SPACE_COOKIE) ?? undefined) : undefined;
  const named = spaceHeader(request);
  const space = resolveSpace(ctx, actor, named?.ref ?? chosen, named?.header);
  requireSpaceAccess(space, required, body);
  return { actor, space };
}

/**
 * Every route declares exactly one of these macros: `public`, `account` (outside spaces), `level`
 * (in the space of section 2.3) or `spaceLevel` (in the space named by `:spaceId`). Building the
 * app fails for any route that declares none (`requireDeclaredAccess`).
 */
export function access(ctx: AppContext) {
  /**
   * Access is decided in the transform stage, before the body is validated, so a caller without
   * the right gets 401/403 and never a validation answer; `resolve` hands the result to the route.
   */
  const granted = new WeakMap<Request, { actor: Actor; space: SpaceScope }>();
  // An upload is counted for its caller once access is granted, before its route reads a byte of it.
  const grant = (request: Request, body: unknown, actor: Actor, space?: SpaceScope) => {
    if (body instanceof UploadBody) countUpload(ctx, request, actor.user.id, body);
    granted.set(request, { actor, space: space! });
  };
  const actorOnly = ({ request }: { request: Request }) => ({ actor: granted.get(request)!.actor });
  const actorAndSpace = ({ request }: { request: Request }) => granted.get(request)!;

  return new Elysia({ name: "basalt.access", seed: ctx.instanceId })
    .macro("public", { detail: accessDetail("public", "No credential needed.") })
    .macro("account", (required: AccountAccess) => ({
      detail: accessDetail(required, ACCOUNT_NEEDS[required], { 403: ACCOUNT_REFUSALS[required] }),
      transform({ request, body }) {
        const actor = actorOf(ctx, request);
        if (required === "session" && actor.credential.type !== "session") {
          throw forbidden("This needs a signed-in session (the admin page), not an API key.", { reason: "SESSION_REQUIRED" });
        }
        if (required === "admin" && !actor.user.admin) throw forbidden("Only an instance admin may do this.", { reason: "ADMIN_REQUIRED" });
        if (required === "manage" || (required === "admin" && !SAFE_METHODS.has(request.method))) requireLevel(actor.ceiling, "manage");
        grant(request, body, actor);
      },
      resolve: actorOnly,
    }))
    .macro("level", (required: SpaceAccess) => ({
      detail: accessDetail(describeSpaceAccess(required), spaceNeeds(required, "the space named by the x-basalt-space header (id or slug), or the caller's only space"), spaceRefusals(required, true), true),
      transform({ request, body }) {
        const { actor, space } = grantedSpace(ctx, request, required, body);
        if (typeof required !== "string" && required.wholeSpace) requireWholeSpace(space.sight);
        grant(request, body, actor, space);
      },
      // After validation: a request naming a hidden node gets what one naming no node gets, a
      // validation answer included, and then the 404 the route's own lookup would give.
      resolve({ request, params, query, body }) {
        const { actor, space } = granted.get(request)!;
        if (space.sight !== SEES_ALL) {
          seenSlugs(ctx, space.space.id, space.sight, params, query, body);
          requireSeenTargets(ctx, space, namedTargets(params, query, body), requiredLevel(required, body));
        }
        return { actor, space };
      },
    }))
    .macro("spaceLevel", (required: SpaceAccess) => ({
      detail: accessDetail(describeSpaceAccess(required), spaceNeeds(required, "the space named in the path"), spaceRefusals(required, false)),
      transform({ request, params, body }) {
        const actor = actorOf(ctx, request);
        const space = resolveNamedSpace(ctx, actor, (params as Record<string, string>).spaceId);
        requireSpaceAccess(space, required, body);
        grant(request, body, actor, space);
      },
      resolve: actorAndSpace,
    }));
}

/**
 * Another instance copies, follows and pushes to the whole space: a caller to whom some node is
 * private is refused rather than given (or allowed to change) a space with holes.
 */
function requireWholeSpace(sight: Sight): void {
  if (sight.hiddenNodes.size > 0) {
    throw forbidden("Following a space copies and changes the whole of it, and some of its nodes are private to you: ask a manager for a grant, or use a manager's key.", { reason: "SYNC_NEEDS_WHOLE_SPACE" });
  }
}

/**
 * Counts an upload against the process's upload budget and its user's uploads at once (every key
 * and session of a user together), or refuses it (429/503) before a byte of it is read; the
 * answer gives it back (`plumbing`).
 */
export function countUpload(ctx: AppContext, request: Request, userId: string, body: unknown): void {
  if (body instanceof UploadBody) ctx.bodies.uploads.takeFor(request, userId, body.heldBytes);
}

/** The browser keeps the cookie for 30 days; the server ends the session after 7 days idle. */
export function sessionCookieOptions(token: string, secure: boolean) {
  return { value: token, httpOnly: true, sameSite: "lax" as const, path: "/", secure, maxAge: SESSION_COOKIE_DAYS * 86_400 };
}

/**
 * Declares every route of a third-party plugin public (the docs page and `openapi.json`): its
 * routes cannot take this module's macros, and the fail-closed check would refuse them unmarked.
 */
export function declaredPublic<T extends Elysia<any, any, any, any, any, any, any>>(plugin: T): T {
  for (const route of plugin.routes) route.hooks.detail = { ...route.hooks.detail, ...accessDetail("public", "No credential needed.") };
  return plugin;
}

/** Fail-closed: a route that declares no access (hidden ones included) stops the app from being built. */
export function requireDeclaredAccess(routes: { method: string; path: string; hooks: { detail?: unknown } }[]): void {
  const undeclared = routes
    .filter((route) => route.method !== "OPTIONS")
    .filter((route) => !(route.hooks.detail as Record<string, unknown> | undefined)?.["x-basalt-access"])
    .map((route) => `${route.method} ${route.path}`);
  if (undeclared.length > 0) throw new Error(`Routes without an access declaration: ${undeclared.join(", ")}`);
}
