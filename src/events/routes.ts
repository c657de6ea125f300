import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { access, grantedSpace } from "../http/access";
import { badRequest } from "../http/errors";
import { answers, mediaAnswer } from "../http/openapi";
import { queryParameter } from "../http/schemas";

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
      ({ space, request }) => {
        const spaceId = space.space.id;
        // Checked again at each heartbeat: a key revoked or a member removed stops reading the space within seconds.
        const stillAllowed = () => {
          try {
            return grantedSpace(ctx, request, "read").space.space.id === spaceId;
          } catch {
            return false;
          }
        };
        const stream = ctx.eventStream.open(spaceId, lastEventIdOf(request), stillAllowed);
        return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" } });
      },
      {
        answers: {
          200: mediaAnswer(
            { "text/event-stream": t.String() },
            "The space's events as they commit: `id` is the outbox sequence, `event` the event type, `data` the webhook body ({ id, type, timestamp, spaceId, baseId, data }); a comment every 8 s; `event: reset` when events a reconnecting client missed are no longer kept.",
          ),
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
