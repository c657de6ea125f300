import { Elysia } from "elysia";
import { timingSafeEqual } from "node:crypto";
import { type Actor, authenticate, presentedKey } from "../auth/actor";
import type { Level } from "../auth/levels";
import { SESSION_COOKIE, SESSION_IDLE_MS } from "../auth/sessions";
import type { AppContext } from "../context";
import { requireLevel, resolveNamedSpace, resolveSpace } from "../spaces/resolve";
import { forbidden } from "./errors";

/** Who may call a route outside any space: any credential, a session or `manage` key, or a session only. */
export type AccountAccess = "signedIn" | "manage" | "session";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The headers a request may name its space with. */
export const spaceHeader = (headers: Record<string, string | undefined>): string | undefined =>
  headers["x-basalt-space"] ?? headers["x-busabase-space"];

/** One place records what each route requires; the OpenAPI document shows it as `x-basalt-access`. */
const accessDetail = (access: string): { "x-basalt-access": string; security?: Record<string, string[]>[] } =>
  access === "public" ? { "x-basalt-access": access } : { "x-basalt-access": access, security: [{ bearerAuth: [] }, { sessionCookie: [] }] };

interface RequestParts {
  headers: Record<string, string | undefined>;
  request: Request;
  cookie: Record<string, { value?: unknown; set(options: Record<string, unknown>): unknown }>;
}

/**
 * Every route declares exactly one of these macros: `public`, `account` (outside spaces), `level`
 * (in the space of section 2.3) or `spaceLevel` (in the space named by `:spaceId`). A test fails
 * for any route that declares none.
 */
export function access(ctx: AppContext) {
  const secureCookie = ctx.config.publicUrl.startsWith("https:");

  function actorOf({ headers, request, cookie }: RequestParts): Actor {
    const sessionCookie = cookie[SESSION_COOKIE];
    const token = typeof sessionCookie?.value === "string" ? sessionCookie.value : null;
    const actor = authenticate(ctx, { apiKey: presentedKey(headers.authorization, headers["x-api-key"]), sessionToken: token });
    if (actor.credential.type === "session") {
      if (!SAFE_METHODS.has(request.method) && !sameText(headers["x-csrf-token"] ?? "", actor.credential.csrfToken)) {
        throw forbidden("A signed-in request that changes state needs the x-csrf-token header.", { reason: "CSRF_TOKEN_INVALID" });
      }
      if (actor.credential.renewed) sessionCookie.set(sessionCookieOptions(token!, secureCookie));
    }
    return actor;
  }

  return new Elysia({ name: "basalt.access", seed: ctx.instanceId })
    .macro("public", { detail: accessDetail("public") })
    .macro("account", (required: AccountAccess) => ({
      detail: accessDetail(required),
      resolve(context) {
        const actor = actorOf(context as unknown as RequestParts);
        if (required === "session" && actor.credential.type !== "session") {
          throw forbidden("This needs a signed-in session (the admin page), not an API key.", { reason: "SESSION_REQUIRED" });
        }
        if (required === "manage") requireLevel(actor.ceiling, "manage");
        return { actor };
      },
    }))
    .macro("level", (required: Level) => ({
      detail: accessDetail(required),
      resolve(context) {
        const actor = actorOf(context as unknown as RequestParts);
        const space = resolveSpace(ctx, actor, spaceHeader(context.headers));
        requireLevel(space.level, required);
        return { actor, space };
      },
    }))
    .macro("spaceLevel", (required: Level) => ({
      detail: accessDetail(required),
      resolve(context) {
        const actor = actorOf(context as unknown as RequestParts);
        const space = resolveNamedSpace(ctx, actor, (context.params as Record<string, string>).spaceId);
        requireLevel(space.level, required);
        return { actor, space };
      },
    }));
}

export function sessionCookieOptions(token: string, secure: boolean) {
  return { value: token, httpOnly: true, sameSite: "lax" as const, path: "/", secure, maxAge: SESSION_IDLE_MS / 1000 };
}
