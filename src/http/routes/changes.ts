import { ActivityPageSchema, activityPage } from "../../changes/activity";
import { actingAs } from "../../auth/actor";
import { Elysia, t } from "elysia";
import { iso } from "../../shared/clock";
import type { AppContext } from "../../context";
import { write } from "../../db/tx";
import { access } from "../access";
import { answers } from "../openapi";
import { badRequest } from "../../shared/errors";
import { limitParam, nestedQuery, oneString, stringList, wholeNumberParam } from "../../shared/query-params";
import { oneOf, queryParameter, WholeNumber } from "../../shared/schemas";
import { BatchResultsSchema, CHANGE_REQUEST_PAGE_REACH, ChangeRequestPageSchema, eachChangeRequest, inboxCounts, InboxCountsSchema, listChangeRequests, NumberedChangeRequestPageSchema, numberedChangeRequests, recordChangeRequests } from "../../changes/inbox";
import { closeChangeRequest, mergeChangeRequest, MergeResultSchema, reviewChangeRequest, reviseOperation } from "../../changes/lifecycle";
import { AGENT_TASK_STATUSES, AgentTaskSchema, agentTasks, contractAgentTask, contractAgentTasks, ContractAgentTaskSchema } from "../../changes/agent-tasks";
import { addComment, ChangeRequestDetailSchema, changeRequestDetail, CommentSchema, listComments, MAX_COMMENT, MAX_LISTED } from "../../changes/comments";
import { CHANGE_STATUSES, type ChangeStatus, COMMENT_SUBJECTS, VERDICTS } from "../../tables/changes";
import { ChangeRequestSchema } from "../../changes/views";

const STATUSES = CHANGE_STATUSES;
const Verdict = oneOf(VERDICTS);
const CommentSubjectType = oneOf(COMMENT_SUBJECTS);
const Reason = t.Optional(t.String({ maxLength: 10_000 }));
const Ids = t.Array(t.String({ minLength: 1 }), { minItems: 1, maxItems: 100 });

function changeRequestQuery(query: Record<string, unknown>) {
  const status = stringList("status", query.status);
  for (const value of status) if (!(STATUSES as readonly string[]).includes(value)) throw badRequest(`status must be among ${STATUSES.join(", ")}.`);
  const mine = oneString("mine", query.mine);
  if (mine !== undefined && mine !== "true" && mine !== "false") throw badRequest("mine must be true or false.");
  return {
    status: status as ChangeStatus[],
    mine: mine === "true",
    baseId: oneString("baseId", query.baseId),
    cursor: oneString("cursor", query.cursor),
    limit: limitParam(oneString("limit", query.limit), 50),
  };
}

const LIST_QUERY = [
  queryParameter("status[i]", `Any of ${STATUSES.join(", ")}; status=x is accepted too.`),
  queryParameter("mine", "true: only the caller's own."),
  queryParameter("baseId", "Only this base's (id or slug)."),
  queryParameter("limit", "1..100, default 50."),
  queryParameter("cursor", "nextCursor of the previous page."),
];

/** Busabase's numbered page: the listing's filters, with `page` and `pageSize` for `limit` and `cursor`. */
const NUMBERED_PAGE_QUERY = [
  ...LIST_QUERY.filter((p) => !["limit", "cursor"].includes(p.name)),
  queryParameter("page", "From 1, default 1."),
  queryParameter("pageSize", `1..100, default 50; page × pageSize reaches at most ${CHANGE_REQUEST_PAGE_REACH.toLocaleString("en")} change requests.`),
];

/** The review loop: listing, the Inbox counts, reviews, merges, closing and revisions. */
export function changeRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/change-requests", ({ space, actor, request }) => listChangeRequests(ctx, space, actor, changeRequestQuery(nestedQuery(request.url))), {
      answers: { 200: ChangeRequestPageSchema },
      level: "read",
      detail: { parameters: LIST_QUERY },
    })
    .get(
      "/change-requests/page",
      ({ space, actor, request }) => {
        const raw = nestedQuery(request.url);
        const page = wholeNumberParam("page", oneString("page", raw.page), 1, 1, CHANGE_REQUEST_PAGE_REACH);
        const pageSize = wholeNumberParam("pageSize", oneString("pageSize", raw.pageSize), 50, 1, 100);
        return numberedChangeRequests(ctx, space, actor, changeRequestQuery(raw), page, pageSize);
      },
      { answers: { 200: NumberedChangeRequestPageSchema }, level: "read", detail: { parameters: NUMBERED_PAGE_QUERY } },
    )
    .get("/activity/paged", ({ space, query }) => activityPage(ctx, space, { limit: limitParam(query.limit, 50), cursor: query.cursor }), {
      answers: { 200: ActivityPageSchema },
      level: "read",
      query: t.Object({ limit: t.Optional(t.String({ description: "1..100, default 50." })), cursor: t.Optional(t.String({ description: "nextCursor of the previous page." })) }),
    })
    .get("/agent/tasks", ({ space, actor }) => agentTasks(ctx, space, actor), { answers: { 200: t.Array(AgentTaskSchema) }, level: "read" })
    .get(
      "/agent-tasks",
      ({ space, actor, query }) =>
        contractAgentTasks(ctx, space, actor, { limit: limitParam(query.limit, 50), offset: wholeNumberParam("offset", query.offset, 0, 0, 1_000_000), status: query.status }),
      {
        answers: { 200: t.Object({ tasks: t.Array(ContractAgentTaskSchema), total: WholeNumber() }) },
        level: "read",
        query: t.Object({ limit: t.Optional(t.String()), offset: t.Optional(t.String()), status: t.Optional(oneOf(AGENT_TASK_STATUSES)) }),
      },
    )
    .get("/agent-tasks/:id", ({ space, actor, params }) => contractAgentTask(ctx, space, actor, params.id), { answers: { 200: ContractAgentTaskSchema }, level: "read" })
    .get("/change-requests/counts", ({ space, actor }) => inboxCounts(ctx, space, actor), { answers: { 200: InboxCountsSchema }, level: "read" })
    .get("/change-requests/:changeRequestId", ({ space, params }) => changeRequestDetail(ctx, space.space.id, space.sight, params.changeRequestId), { answers: { 200: ChangeRequestDetailSchema }, level: "read" })
    .get("/comments", ({ space, query }) => listComments(ctx, space.space.id, { ...query, limit: limitParam(query.limit, 50, MAX_LISTED) }), {
      answers: { 200: t.Array(CommentSchema) },
      level: "read",
      query: t.Object({
        subjectType: CommentSubjectType,
        subjectId: t.String({ minLength: 1 }),
        limit: t.Optional(t.String({ description: `1..${MAX_LISTED}, default 50.` })),
        after: t.Optional(t.String({ description: "The id of the last comment of the previous answer." })),
      }),
    })
    .post(
      "/comments",
      ({ space, actor, body, set }) => {
        set.status = 201;
        return write(ctx, (tx) => addComment(tx, space.space.id, actor, body, iso(ctx.clock.now())));
      },
      {
        answers: { 201: CommentSchema },
        level: "changeRequest",
        body: t.Object({
          subjectType: CommentSubjectType,
          subjectId: t.String({ minLength: 1 }),
          body: t.String({ minLength: 1, maxLength: MAX_COMMENT, description: "Trimmed; not empty." }),
          mentionsAi: t.Optional(t.Boolean({ description: "The comment asks an agent to act." })),
        }),
      },
    )
    .get("/records/:recordId/change-requests", ({ space, params }) => recordChangeRequests(ctx, space, params.recordId), { answers: { 200: t.Array(ChangeRequestSchema) }, level: "read" })
    .post("/change-requests/:changeRequestId/reviews", ({ space, actor, params, body }) => reviewChangeRequest(ctx, space, actor, params.changeRequestId, body), {
      answers: { 200: ChangeRequestSchema, 409: ["INVALID_STATUS"] },
      level: "write",
      body: t.Object({ verdict: Verdict, reason: Reason }),
    })
    .post(
      "/change-requests/reviews",
      ({ space, actor, body }) => eachChangeRequest(body.changeRequestIds, async (id) => ({ changeRequest: await reviewChangeRequest(ctx, space, actor, id, body) })),
      { answers: { 200: BatchResultsSchema }, level: "write", body: t.Object({ changeRequestIds: Ids, verdict: Verdict, reason: Reason }) },
    )
    .post("/change-requests/:changeRequestId/merge", ({ space, actor, params }) => mergeChangeRequest(ctx, space, params.changeRequestId, actingAs(actor)), {
      answers: { 200: MergeResultSchema, 409: ["INVALID_STATUS", "MERGE_CONFLICT", "NOT_MERGEABLE", "RECORD_STATE", "RECORD_ARCHIVED", "PARENT_ARCHIVED", "SLUG_BEING_FREED", "SLUG_TAKEN", "LIMIT_REACHED", "TARGET_BASE_ARCHIVED"] },
      level: "write",
      noBody: true,
    })
    .post(
      "/change-requests/merge",
      ({ space, actor, body }) => eachChangeRequest(body.changeRequestIds, (id) => mergeChangeRequest(ctx, space, id, actingAs(actor))),
      { answers: { 200: BatchResultsSchema }, level: "write", body: t.Object({ changeRequestIds: Ids }) },
    )
    .post("/change-requests/:changeRequestId/close", ({ space, actor, params, body }) => closeChangeRequest(ctx, space, params.changeRequestId, body?.reason, actingAs(actor)), {
      answers: { 200: ChangeRequestSchema, 409: ["INVALID_STATUS"] },
      level: "write",
      body: t.Optional(t.Object({ reason: Reason })),
    })
    .post("/operations/:operationId/revisions", ({ space, actor, params, body }) => reviseOperation(ctx, space, actor, params.operationId, body), {
      answers: { 200: ChangeRequestSchema, 409: ["INVALID_STATUS", "TARGET_BASE_ARCHIVED"] },
      level: "changeRequest",
      body: t.Object({ fields: t.Record(t.String(), t.Unknown()), message: t.Optional(t.String({ maxLength: 10_000 })), baseCommitId: t.Optional(t.String()) }),
    });
}
