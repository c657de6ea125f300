import type { Static } from "@sinclair/typebox";
import { t } from "elysia";
import type { AppContext } from "../context";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import { forbidden } from "../shared/errors";
import { effectiveLevel, listMemberships } from "./spaces";
import type { Actor } from "../auth/actor";
import { LEVELS, ROLES } from "../shared/levels";

/** Busabase's clients read a space's plan (a hosted offer; none here) and how its nodes are seen (every member sees every node here). */
const SpaceRef = { id: t.String(), name: t.String(), slug: t.String(), plan: t.Null({ description: "Busabase's hosted plan: none on a self-hosted Basalt." }) };
const spaceView = (space: { id: string; name: string; slug: string }) => ({ id: space.id, name: space.name, slug: space.slug, plan: null });

export const CallerSchema = t.Object({
  user: t.Object({ id: t.String(), name: t.String(), email: t.String(), image: t.Null({ description: "Basalt keeps no picture." }) }),
  credential: t.Union([
    t.Object({ type: t.Literal("api_key"), id: t.String(), name: t.String(), prefix: t.String(), level: oneOf(LEVELS), expiresAt: Nullable(Timestamp) }),
    t.Object({ type: t.Literal("session"), csrfToken: t.String({ description: "Send as x-csrf-token with every request that changes state." }) }),
  ]),
  space: Nullable(t.Object({ ...SpaceRef, nodeVisibilityMode: t.Literal("open") }, { description: "The space in effect: the one named by x-basalt-space (or x-busabase-space), or the only one." })),
  member: Nullable(t.Object({ userId: t.String(), spaceId: t.String(), role: oneOf(ROLES) })),
  effectiveLevel: Nullable(oneOf(LEVELS)),
  spaces: t.Array(t.Object({ ...SpaceRef, role: oneOf(ROLES), effectiveLevel: oneOf(LEVELS) })),
});

export type Caller = Static<typeof CallerSchema>;

/**
 * `GET /auth`: who the caller is, the space in effect (the named one, or the only one) and every
 * space with its effective level. Several spaces and no header is not an error here: space is null.
 */
export function describeCaller(ctx: AppContext, actor: Actor, spaceRef: string | undefined): Caller {
  const memberships = listMemberships(ctx, actor.user.id);
  const current = spaceRef
    ? memberships.find(({ space }) => space.id === spaceRef || space.slug === spaceRef)
    : memberships.length === 1
      ? memberships[0]
      : undefined;
  if (spaceRef && !current) throw forbidden("This space does not exist or you are not a member of it.", { reason: "SPACE_NOT_ALLOWED" });
  const { credential, user } = actor;
  if (credential.type === "operator" || credential.type === "form") throw new Error("GET /auth describes callers with a key or a session.");
  return {
    user: { id: user.id, name: user.name, email: user.email, image: null },
    credential:
      credential.type === "api_key"
        ? { type: "api_key", id: credential.key.id, name: credential.key.name, prefix: credential.key.prefix, level: credential.key.level, expiresAt: credential.key.expiresAt }
        : { type: "session", csrfToken: credential.csrfToken },
    space: current ? { ...spaceView(current.space), nodeVisibilityMode: "open" } : null,
    member: current ? { userId: user.id, spaceId: current.space.id, role: current.role } : null,
    effectiveLevel: current ? effectiveLevel(actor.ceiling, current.role) : null,
    spaces: memberships.map(({ space, role }) => ({ ...spaceView(space), role, effectiveLevel: effectiveLevel(actor.ceiling, role) })),
  };
}
