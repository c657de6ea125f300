import { userRefs } from "../content/commits";
import { seenWhere } from "../spaces/sight";
import type { Static } from "@sinclair/typebox";
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { t } from "elysia";
import type { Actor } from "../auth/actor";
import type { AppContext } from "../context";
import { notFound } from "../shared/errors";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import type { SpaceScope } from "../spaces/resolve";
import { CommentSchema, type CommentView, commentView } from "./comments";
import { changeRequests, comments, reviews } from "../tables/changes";
import { ChangeRequestSchema, changeRequestViews } from "./views";

export const AgentTaskSchema = t.Object(
  {
    changeRequest: ChangeRequestSchema,
    trigger: t.Literal("changes_requested", { description: "Why it waits on its author: a reviewer asked for changes." }),
    reviewReason: Nullable(t.String({ description: "What the latest review that asked for changes said." })),
    aiComments: t.Array(CommentSchema, { description: "The comments on it or its operations that ask an agent to act (mentionsAi), oldest first." }),
  },
  { $id: "AgentTask", description: "A change request of the caller that a reviewer sent back, with the reason: what an agent polls to know what to fix." },
);
export type AgentTask = Static<typeof AgentTaskSchema>;

/** How many tasks one answer holds, newest first. */
export const AGENT_TASK_LIMIT = 100;

/** `GET /agent/tasks`: the caller's change requests of the space whose reviewers asked for changes, newest first. */
export function agentTasks(ctx: AppContext, scope: SpaceScope, actor: Actor): AgentTask[] {
  const sentBack = ctx.db
    .select()
    .from(changeRequests)
    .where(and(eq(changeRequests.spaceId, scope.space.id), eq(changeRequests.submittedBy, actor.user.id), eq(changeRequests.status, "changes_requested"), ...seenWhere(changeRequests, scope.sight)))
    .orderBy(desc(changeRequests.id))
    .limit(AGENT_TASK_LIMIT)
    .all();
  if (sentBack.length === 0) return [];
  const reasons = new Map<string, string | null>();
  const rejections = ctx.db
    .select({ changeRequestId: reviews.changeRequestId, reason: reviews.reason })
    .from(reviews)
    .where(and(inArray(reviews.changeRequestId, sentBack.map((row) => row.id)), eq(reviews.verdict, "rejected")))
    .orderBy(desc(reviews.createdAt), desc(reviews.id))
    .all();
  for (const rejection of rejections) if (!reasons.has(rejection.changeRequestId)) reasons.set(rejection.changeRequestId, rejection.reason);
  const asked = new Map<string, CommentView[]>();
  const mentions = ctx.db
    .select()
    .from(comments)
    .where(and(eq(comments.spaceId, scope.space.id), inArray(comments.changeRequestId, sentBack.map((row) => row.id)), eq(comments.mentionsAi, true)))
    .orderBy(asc(comments.id))
    .all();
  const people = userRefs(ctx, mentions.map((mention) => mention.authorId));
  for (const mention of mentions) asked.set(mention.changeRequestId!, [...(asked.get(mention.changeRequestId!) ?? []), commentView(mention, people)]);
  return changeRequestViews(ctx, scope.sight, sentBack).map((changeRequest) => ({
    changeRequest,
    trigger: "changes_requested" as const,
    reviewReason: reasons.get(changeRequest.id) ?? null,
    aiComments: asked.get(changeRequest.id) ?? [],
  }));
}

/** The states of Busabase's agent tasks; a change request sent back is `pending` until revised. */
export const AGENT_TASK_STATUSES = ["pending", "in_progress", "completed", "failed", "cancelled"] as const;

export const ContractAgentTaskSchema = t.Object(
  {
    id: t.String({ description: "The change request sent back." }),
    title: t.String({ description: "Its message, or what it changes." }),
    description: Nullable(t.String({ description: "What the reviewer asked for." })),
    status: oneOf(AGENT_TASK_STATUSES),
    priority: t.Literal("normal"),
    createdAt: Timestamp,
    completedAt: t.Null(),
    result: t.Null(),
  },
  { $id: "ContractAgentTask", description: "Busabase's agent task: here, a change request of the caller a reviewer sent back (what GET /agent/tasks answers in Basalt's own shape)." },
);
type ContractAgentTask = Static<typeof ContractAgentTaskSchema>;

const contractTask = (task: AgentTask): ContractAgentTask => {
  const { changeRequest } = task;
  const message = typeof changeRequest.sourceMeta.message === "string" ? changeRequest.sourceMeta.message : "";
  return {
    id: changeRequest.id,
    title: message || `${changeRequest.operations.length === 1 ? "1 operation" : `${changeRequest.operations.length} operations`} sent back for changes`,
    description: task.reviewReason,
    status: "pending",
    priority: "normal",
    createdAt: changeRequest.updatedAt,
    completedAt: null,
    result: null,
  };
};

/** `GET /agent-tasks` (Busabase's): the caller's tasks, a page of them after `offset`; only pending ones exist here. */
export function contractAgentTasks(ctx: AppContext, scope: SpaceScope, actor: Actor, query: { limit: number; offset: number; status?: (typeof AGENT_TASK_STATUSES)[number] }) {
  const tasks = query.status === undefined || query.status === "pending" ? agentTasks(ctx, scope, actor).map(contractTask) : [];
  return { tasks: tasks.slice(query.offset, query.offset + query.limit), total: tasks.length };
}

/** `GET /agent-tasks/{id}`: one of them, or 404. */
export function contractAgentTask(ctx: AppContext, scope: SpaceScope, actor: Actor, id: string): ContractAgentTask {
  const task = agentTasks(ctx, scope, actor).find((candidate) => candidate.changeRequest.id === id);
  if (!task) throw notFound(`No agent task ${id}: none of your change requests waits for changes under that id.`);
  return contractTask(task);
}
