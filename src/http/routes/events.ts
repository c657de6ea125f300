import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { access, grantedSpace } from "../access";
import { knowsOf } from "../../spaces/sight";
import { seenEvent } from "../../content/records/seen";
import type { LiveEvent } from "../../shared/event-types";
import { ApiError, badRequest } from "../../shared/errors";
import { LIMIT_SETTINGS } from "../../shared/limits";
import { answers, mediaAnswer } from "../openapi";
import { queryParameter } from "../../shared/schemas";

/** The outbox seq a reconnecting client last saw: the `Last-Event-ID` header, or `lastEventId` for clients that cannot set headers. */
function lastEventIdOf(request: Request): number | null {
  const given = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("lastEventId");
  if (given === null || given === "") return null;
  if (!/^\d{1,15}$/.test(given)) throw badRequest("Last-Event-ID must be the id of an event this stream sent.");
  return Number(given);
}

/** Live events of the caller's space, as Server-Sent Events. */
export function eventRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get(
      "/events/stream",
      ({ space, request, actor }) => {
        const spaceId = space.space.id;
        const holder = { credential: actor.credential.type === "api_key" ? actor.credential.key.id : actor.credential.type === "session" ? actor.credential.tokenHash : "operator", user: actor.user.id };
        const refused = ctx.eventStream.refusal(holder);
        if (refused) {
          throw new ApiError(429, "TOO_MANY_REQUESTS", `${LIMIT_SETTINGS[refused.limit].says(refused.max)}; close one first (a browser tab needs one). The operator sets the limit with --${LIMIT_SETTINGS[refused.limit].flag}.`, { reason: "LIMIT_REACHED", limit: refused.limit, max: refused.max }, { "retry-after": "10" });
        }
        // Checked again at each heartbeat, and at once after a commit that takes access away (`EventHub.recheck`), which also renews what the caller sees.
        let sight = space.sight;
        const stillAllowed = () => {
          try {
            const now = grantedSpace(ctx, request, "read").space;
            sight = now.sight;
            return now.space.id === spaceId;
          } catch {
            return false;
          }
        };
        // The sight is never older than the tree it filters against: once the tree or the grants may
        // have changed (a move, a restore, a sync, another process's commit), or an event names a base
        // made since, it is worked out again before the event is sent. The first event always does.
        let sightTree: string | null = null;
        const view = (event: LiveEvent, tree: string) => {
          if (tree !== sightTree) {
            if (!stillAllowed()) return null;
            sightTree = tree;
          }
          return knowsOf(ctx, sight, event) || stillAllowed() ? seenEvent(ctx, sight, event) : null;
        };
        const stream = ctx.eventStream.open(spaceId, lastEventIdOf(request), stillAllowed, holder, view);
        return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" } });
      },
      {
        answers: {
          200: mediaAnswer(
            { "text/event-stream": t.String() },
            "The space's events as they commit: `id` is the outbox sequence, `event` the event type, `data` the webhook body ({ id, type, timestamp, spaceId, baseId, data }); a comment every 8 s; `event: reset` when events a reconnecting client missed are no longer kept. A key or session holds at most 16 open streams, an account 64, the server 2,000 (the operator's --max-streams-per-key, --max-streams-per-user, --max-streams): past them, 429 LIMIT_REACHED.",
          ),
          429: ["LIMIT_REACHED"],
        },
        level: "read",
        detail: {
          parameters: [
            { name: "Last-Event-ID", in: "header", required: false, description: "The last event's id: the stream first sends the space's kept events after it.", schema: { type: "string" } },
            queryParameter("lastEventId", "The same, for clients that cannot set headers (EventSource)."),
          ],
        },
      },
    );
}
