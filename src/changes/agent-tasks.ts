import type { Static } from "@sinclair/typebox";
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { t } from "elysia";
import type { Actor } from "../auth/actor";
import type { AppContext } from "../context";
import { Nullable } from "../shared/schemas";
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
    .where(and(eq(changeRequests.spaceId, scope.space.id), eq(changeRequests.submittedBy, actor.user.id), eq(changeRequests.status, "changes_requested")))
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
  for (const mention of mentions) asked.set(mention.changeRequestId!, [...(asked.get(mention.changeRequestId!) ?? []), commentView(mention)]);
  return changeRequestViews(ctx, sentBack).map((changeRequest) => ({
    changeRequest,
    trigger: "changes_requested" as const,
    reviewReason: reasons.get(changeRequest.id) ?? null,
    aiComments: asked.get(changeRequest.id) ?? [],
  }));
}
