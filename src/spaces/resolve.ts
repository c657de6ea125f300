import type { Actor } from "../auth/actor";
import { atLeast, type Level } from "../shared/levels";
import type { AppContext } from "../context";
import { badRequest, forbidden } from "../shared/errors";
import { type Sight, sightOf } from "./sight";
import { effectiveLevel, findMembership, listMemberships, type Membership } from "./spaces";

/** The space a request acts in, the caller's role there, min(credential level, role level), and what of its tree the caller sees. */
export interface SpaceScope extends Membership {
  level: Level;
  sight: Sight;
}

/** A space named (by `header`, when a request's header named it) that the caller may not use. */
const spaceNotAllowed = (header?: string) =>
  forbidden(`${header ? `The space your ${header} header names` : "This space"} does not exist or you are not a member of it.`, { reason: "SPACE_NOT_ALLOWED" });

/** Too low a level is a 403 that says what was needed and what the caller has. */
export function requireLevel(effective: Level, required: Level): void {
  if (!atLeast(effective, required)) {
    throw forbidden(`This needs the ${required} level; yours here is ${effective}.`, { required, effective });
  }
}

export function scopeOf(ctx: AppContext, actor: Actor, membership: Membership): SpaceScope {
  return { ...membership, level: effectiveLevel(actor.ceiling, membership.role), sight: sightOf(ctx, actor.user.id, membership) };
}

/**
 * Section 2.3: the named space (id or slug), else the caller's only space; never a guess. `header`
 * is the header that named it, so an error names what the client sent (Busabase's clients send
 * x-busabase-space, Basalt's x-basalt-space).
 */
export function resolveSpace(ctx: AppContext, actor: Actor, spaceRef: string | undefined, header?: string): SpaceScope {
  if (spaceRef) {
    const membership = findMembership(ctx, actor.user.id, spaceRef);
    if (!membership) throw spaceNotAllowed(header);
    return scopeOf(ctx, actor, membership);
  }
  const memberships = listMemberships(ctx, actor.user.id);
  if (memberships.length === 1) return scopeOf(ctx, actor, memberships[0]);
  if (memberships.length === 0) throw forbidden("You are not a member of any space: create one with POST /api/v1/spaces (a session or a manage key), or ask a space's owner or admin to add you.", { reason: "SPACE_NOT_ALLOWED" });
  throw badRequest("You belong to several spaces: name one with the x-basalt-space header (Busabase's clients: x-busabase-space).", {
    reason: "SPACE_SELECTION_REQUIRED",
    spaces: memberships.map(({ space }) => ({ id: space.id, name: space.name, slug: space.slug })),
  });
}

/** A space named in the path (`/spaces/{spaceId}`), by id or slug. */
export function resolveNamedSpace(ctx: AppContext, actor: Actor, spaceRef: string): SpaceScope {
  const membership = findMembership(ctx, actor.user.id, spaceRef);
  if (!membership) throw spaceNotAllowed();
  return scopeOf(ctx, actor, membership);
}
