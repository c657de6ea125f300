import { Elysia, t } from "elysia";
import { MERGE_LOG_PAGE, MergedPageSchema, mergedSince, syncState, SyncStateSchema } from "../../changes/merge-log";
import type { AppContext } from "../../context";
import { wholeNumberParam } from "../../shared/query-params";
import { access } from "../access";
import { answers } from "../openapi";

/** What a remote reads of a space it follows (docs/remotes.md): the merge log's head, and the commits merged after a cursor. */
export function syncRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/sync/state", ({ space }) => syncState(ctx, space.space.id), {
      answers: { 200: SyncStateSchema },
      level: "read",
      detail: { description: "This instance's id and the space's merge-log head: where a follower stands against it." },
    })
    .get(
      "/sync/commits",
      ({ space, query }) => {
        const after = wholeNumberParam("after", query.after, 0, 0, Number.MAX_SAFE_INTEGER);
        const limit = wholeNumberParam("limit", query.limit, MERGE_LOG_PAGE.default, 1, MERGE_LOG_PAGE.most);
        return mergedSince(ctx, space.space.id, space.sight, after, limit);
      },
      {
        answers: { 200: MergedPageSchema },
        level: "read",
        query: t.Object({
          after: t.Optional(t.String({ description: "The merge-log seq last applied (the previous page's next); default 0, the start of the log." })),
          limit: t.Optional(t.String({ description: `1..${MERGE_LOG_PAGE.most}, default ${MERGE_LOG_PAGE.default}.` })),
        }),
        detail: { description: "Commits merged in the space after a cursor, in the order they merged, each with its seq and change request; those of a node or base hidden from the caller are left out." },
      },
    );
}
