import { Elysia, t } from "elysia";
import { MERGE_LOG_PAGE, MergedPageSchema, mergedSince, syncState, SyncStateSchema } from "../../changes/merge-log";
import type { AppContext } from "../../context";
import { acceptFile, acceptPush, acceptPushes, acceptStructure, beginSnapshot, MAX_PUSHED_BATCH, PushBatchSchema, PushedBatchSchema, PushedFileQuery, PushStructureSchema, endSnapshot, PushedSchema, PushSchema, SNAPSHOT_PAGE, snapshotPage, SnapshotPageSchema, SnapshotSchema } from "../../remotes/serve";
import { wholeNumberParam } from "../../shared/query-params";
import { access } from "../access";
import { answers } from "../openapi";
import { proposer } from "./content";
import { AssetSchema } from "../../assets/assets";
import { badRequest } from "../../shared/errors";

/**
 * What another instance reads of a space it follows, and proposes to it (docs/remotes.md): the
 * merge log's head and its commits after a cursor, a clone's snapshot in pages, pushed changes.
 * Every route needs sight of the whole space: a follower copies it whole and pushes to it whole.
 */
export function syncRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/sync/state", ({ space, query }) => syncState(ctx, space.space.id, query.after === undefined ? undefined : wholeNumberParam("after", query.after, 0, 0, Number.MAX_SAFE_INTEGER)), {
      answers: { 200: SyncStateSchema },
      level: { level: "read", wholeSpace: true },
      query: t.Object({ after: t.Optional(t.String({ description: "A follower's cursor: the answer then says how many commits merged after it (`behind`)." })) }),
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
        level: { level: "read", wholeSpace: true },
        query: t.Object({
          after: t.Optional(t.String({ description: "The merge-log seq last applied (the previous page's next); default 0, the start of the log." })),
          limit: t.Optional(t.String({ description: `1..${MERGE_LOG_PAGE.most}, default ${MERGE_LOG_PAGE.default}.` })),
        }),
        detail: { description: "Commits merged in the space after a cursor, in the order they merged, each with its seq and change request; those of a node or base hidden from the caller are left out." },
      },
    )
    .post(
      "/sync/snapshots",
      ({ space, actor, request, set }) => {
        set.status = 201;
        return beginSnapshot(ctx, proposer(space, actor, request));
      },
      {
        answers: { 201: SnapshotSchema, 403: ["SYNC_NEEDS_WHOLE_SPACE"] },
        level: { level: "read", wholeSpace: true },
        noBody: true,
        detail: { description: "Begins a clone's snapshot: every page read through it shows the space as it was now, at the merge-log seq it answers. Needs a key that sees the whole space." },
      },
    )
    .get(
      "/sync/snapshots/:snapshotId",
      ({ space, actor, request, params, query }) => {
        const limit = wholeNumberParam("limit", query.limit, SNAPSHOT_PAGE.default, 1, SNAPSHOT_PAGE.most);
        return snapshotPage(ctx, proposer(space, actor, request), params.snapshotId, query.table, query.cursor, limit);
      },
      {
        answers: { 200: SnapshotPageSchema },
        level: { level: "read", wholeSpace: true },
        query: t.Object({
          table: t.String({ description: "One of the snapshot's tables." }),
          cursor: t.Optional(t.String({ maxLength: 2000, description: "The previous page's nextCursor." })),
          limit: t.Optional(t.String({ description: `1..${SNAPSHOT_PAGE.most}, default ${SNAPSHOT_PAGE.default}.` })),
        }),
        detail: { description: "One page of a table of the snapshot, in key order." },
      },
    )
    .delete("/sync/snapshots/:snapshotId", ({ space, actor, request, params }) => endSnapshot(ctx, proposer(space, actor, request), params.snapshotId), {
      answers: { 200: t.Object({ ok: t.Boolean() }) },
      level: { level: "read", wholeSpace: true },
      detail: { description: "Closes a snapshot (one left idle closes by itself after two minutes)." },
    })
    .put(
      "/sync/assets/:assetId",
      async ({ space, actor, request, params, query }) => {
        if (!request.body) throw badRequest("Send the file as the request's body.");
        return acceptFile(ctx, proposer(space, actor, request), params.assetId, query, request);
      },
      {
        answers: { 200: AssetSchema, 409: ["ASSET_EXISTS"] },
        level: { level: "changeRequest", wholeSpace: true },
        query: PushedFileQuery,
        detail: {
          requestBody: { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } },
          description: "A file pushed from another instance with the records that name it: kept with its id there, its bytes checked against contentHash. Sent again, answers the same asset.",
        },
      },
    )
    .post(
      "/sync/structure",
      async ({ space, actor, request, body, set }) => {
        const pushed = await acceptStructure(ctx, proposer(space, actor, request), body);
        set.status = 201;
        return pushed;
      },
      {
        answers: { 201: PushedSchema, 409: ["COMMIT_EXISTS", "MERGE_CONFLICT"] },
        level: { level: "changeRequest", wholeSpace: true },
        body: PushStructureSchema,
        detail: {
          description:
            "A change of structure (nodes, fields, views, documents) pushed from another instance: one change request here (channel remote), its commits keeping their ids so what it makes has the same ids on both sides; merged at once where the key's level, the base and the kinds allow, else waiting in the Inbox. Sent again, answers the change request it made.",
        },
      },
    )
    .post(
      "/sync/proposals",
      async ({ space, actor, request, body, set }) => {
        const pushed = await acceptPush(ctx, proposer(space, actor, request), body);
        set.status = 201;
        return pushed;
      },
      {
        answers: { 201: PushedSchema, 409: ["RECORD_EXISTS", "MERGE_CONFLICT", "RECORD_ARCHIVED", "NOT_MERGEABLE"] },
        level: { level: "changeRequest", wholeSpace: true },
        body: PushSchema,
        detail: {
          description:
            "A change pushed from another instance: one change request here (channel remote), merged at once where the key's level and the base allow, else waiting in the Inbox, or stored in conflict when a field it changed was changed here since. Its changeRequestId is its idempotency key.",
        },
      },
    )
    .post("/sync/proposals/batch", ({ space, actor, request, body }) => acceptPushes(ctx, proposer(space, actor, request), body.proposals), {
      answers: { 200: PushedBatchSchema },
      level: { level: "changeRequest", wholeSpace: true },
      body: PushBatchSchema,
      detail: {
        description: `Up to ${MAX_PUSHED_BATCH} pushed changes at once, each taken as POST /sync/proposals takes it; the answer says, in order, what each became or why it was refused.`,
      },
    });
}
