import { Elysia, t } from "elysia";
import { actingAs } from "../../auth/actor";
import type { AppContext } from "../../context";
import { addRemote, cloneSpace, listRemotes, pull, PullResultSchema, push, PushResultSchema, RemoteNameSchema, RemoteSchema, remoteStatus, removeRemote } from "../../remotes/remotes";
import { SLUG_PATTERN } from "../../shared/formats";
import { forbidden } from "../../shared/errors";
import { access } from "../access";
import { answers } from "../openapi";

const Url = t.String({ minLength: 1, maxLength: 2000, description: "The remote instance's address: http(s)://host:port." });
const Key = t.String({ minLength: 1, maxLength: 200, description: "An API key of the remote (read or more; changeRequest or more to push). Stored sealed." });
const RemoteSpace = t.String({ minLength: 1, maxLength: 200, description: "The remote space's id or slug." });
const REMOTE_FAILURES = { 502: ["REMOTE_REFUSED"], 503: ["REMOTE_UNREACHABLE"] } as const;

/** A clone, pull or push talks to another instance for as long as its data takes (a clone of 100,000 records, about 10 s): its connection is not closed as idle meanwhile. */
const patient = (server: { timeout(request: Request, seconds: number): void } | null, request: Request) => server?.timeout(request, 0);

/** The remotes a space follows, for the Remotes screen (docs/remotes.md); `basalt clone|remote|pull|push|status` do the same. */
export function remotesRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/remotes", ({ space }) => listRemotes(ctx, space.space.id), {
      answers: { 200: t.Array(RemoteSchema) },
      level: "read",
      detail: { description: "The remotes the space follows, with the counts as of the last contact." },
    })
    .post("/remotes/status", ({ space }) => remoteStatus(ctx, space.space.id), {
      answers: { 200: t.Array(RemoteSchema) },
      level: "read",
      noBody: true,
      detail: { description: "Asks each remote where it stands (behind, and its pushed changes); one that does not answer keeps its last counts and says why." },
    })
    .post(
      "/remotes",
      async ({ space, actor, body, set }) => {
        if (!actor.user.admin) throw forbidden("Only an instance admin may name a remote: the server reaches the address given.", { reason: "ADMIN_REQUIRED" });
        const added = await addRemote(ctx, space.space.id, { name: body.name, url: body.url, key: body.key, remoteSpace: body.remoteSpace, fromSeq: body.fromSeq });
        set.status = 201;
        return added;
      },
      {
        answers: { 201: RemoteSchema, 403: ["ADMIN_REQUIRED"], 409: [], ...REMOTE_FAILURES },
        level: "manage",
        body: t.Object({ name: RemoteNameSchema, url: Url, key: Key, remoteSpace: RemoteSpace, fromSeq: t.Optional(t.Integer({ minimum: 0, description: "Follow from this seq of the remote's merge log; by default its head now." })) }),
        detail: { description: "Follows a remote space this space already holds the data of (loaded from its dump, or cloned before). A space's manager who is an instance admin: the server reaches the address given." },
      },
    )
    .delete("/remotes/:remoteId", ({ space, params }) => removeRemote(ctx, space.space.id, params.remoteId), {
      answers: { 200: t.Object({ ok: t.Literal(true) }) },
      level: "manage",
      detail: { description: "Stops following a remote (its data stays)." },
    })
    .post("/remotes/:remoteId/pull", ({ space, params, server, request }) => (patient(server, request), pull(ctx, space.space.id, params.remoteId, request.signal)), {
      answers: { 200: PullResultSchema, ...REMOTE_FAILURES },
      level: "write",
      noBody: true,
      detail: { description: "What the remote merged since the last pull, merged here: a true conflict becomes a change request in conflict." },
    })
    .post("/remotes/:remoteId/push", ({ space, params, server, request }) => (patient(server, request), push(ctx, space.space.id, params.remoteId, request.signal)), {
      answers: { 200: PushResultSchema, ...REMOTE_FAILURES },
      level: "write",
      noBody: true,
      detail: { description: "Pulls, then sends each local change not sent yet as a change request on the remote (idempotent)." },
    })
    .post(
      "/remotes/clone",
      async ({ actor, body, set, server, request }) => {
        patient(server, request);
        const cloned = await cloneSpace(ctx, { url: body.url, key: body.key, remoteSpace: body.remoteSpace, owner: actor.user, actor: actingAs(actor), slug: body.slug, signal: request.signal });
        set.status = 201;
        return cloned;
      },
      {
        answers: { 201: t.Object({ spaceId: t.String(), slug: t.String(), remote: RemoteSchema, warnings: t.Array(t.String()) }), 409: [], ...REMOTE_FAILURES },
        account: "admin",
        body: t.Object({ url: Url, key: Key, remoteSpace: RemoteSpace, slug: t.Optional(t.String({ pattern: SLUG_PATTERN.source })) }),
        detail: { description: "A new space here, owned by the caller, cloned from a remote's space; it follows that remote as origin. An instance admin's: the server reaches the address given." },
      },
    );
}
