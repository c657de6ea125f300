import type { AppContext } from "../context";
import { forbidden } from "../http/errors";
import { effectiveLevel, listMemberships } from "../spaces/spaces";
import type { Actor } from "./actor";

/**
 * `GET /auth`: who the caller is, the space in effect (the named one, or the only one) and every
 * space with its effective level. Several spaces and no header is not an error here: space is null.
 */
export function describeCaller(ctx: AppContext, actor: Actor, spaceRef: string | undefined) {
  const memberships = listMemberships(ctx, actor.user.id);
  const current = spaceRef
    ? memberships.find(({ space }) => space.id === spaceRef || space.slug === spaceRef)
    : memberships.length === 1
      ? memberships[0]
      : undefined;
  if (spaceRef && !current) throw forbidden("This space does not exist or you are not a member of it.", { reason: "SPACE_NOT_ALLOWED" });
  const { credential, user } = actor;
  return {
    user: { id: user.id, name: user.name, email: user.email },
    credential:
      credential.type === "api_key"
        ? { type: "api_key", id: credential.key.id, name: credential.key.name, prefix: credential.key.prefix, level: credential.key.level, expiresAt: credential.key.expiresAt }
        : { type: "session", csrfToken: credential.csrfToken },
    space: current ? { id: current.space.id, name: current.space.name, slug: current.space.slug } : null,
    member: current ? { userId: user.id, spaceId: current.space.id, role: current.role } : null,
    effectiveLevel: current ? effectiveLevel(actor.ceiling, current.role) : null,
    spaces: memberships.map(({ space, role }) => ({ id: space.id, name: space.name, slug: space.slug, role, effectiveLevel: effectiveLevel(actor.ceiling, role) })),
  };
}
