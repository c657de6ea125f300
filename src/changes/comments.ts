import type { Sight } from "../spaces/sight";
import type { Static } from "@sinclair/typebox";
import { and, asc, eq, gt } from "drizzle-orm";
import { t } from "elysia";
import type { Actor } from "../auth/actor";
import { findChangeRequest, findOperation, getChangeRequest } from "./lifecycle";
import { loadCommits, type UserRef, userRefs, UserRefSchema, userRefView } from "../content/commits";
import { findRecord } from "../content/records/read";
import type { AppContext, Tx } from "../context";
import { insertRow } from "../db/client";
import { newId } from "../db/ids";
import { recordEvent } from "../events/outbox";
import { badRequest, notInSpace } from "../shared/errors";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import { COMMENT_SUBJECTS, type CommentSubject, comments } from "../tables/changes";
import { ChangeRequestSchema } from "./views";

export const CommentSchema = t.Object(
  {
    id: t.String(),
    subjectType: oneOf(COMMENT_SUBJECTS),
    subjectId: t.String(),
    recordId: Nullable(t.String()),
    changeRequestId: Nullable(t.String()),
    operationId: Nullable(t.String()),
    commitId: Nullable(t.String()),
    authorId: t.String(),
    authorUser: Nullable(UserRefSchema, { description: "Its author, to show by name." }),
    body: t.String(),
    mentionsAi: t.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "Comment", description: "A comment on a record, change request, operation or commit, with the ids of what its subject belongs to." },
);
export type CommentView = Static<typeof CommentSchema>;
type CommentRow = typeof comments.$inferSelect;

/** The longest comment, in characters. */
export const MAX_COMMENT = 10_000;

/** What a subject belongs to: its record, change request, operation and commit, and the base its events name. */
interface SubjectTies {
  recordId: string | null;
  changeRequestId: string | null;
  operationId: string | null;
  commitId: string | null;
  baseId: string | null;
}

/** The subject, found in the space (404 otherwise: another space's ids are not found), and what it belongs to. */
function subjectTies(ctx: AppContext, spaceId: string, type: CommentSubject, id: string): SubjectTies {
  switch (type) {
    case "record": {
      const record = findRecord(ctx, spaceId, id);
      return { recordId: record.id, changeRequestId: null, operationId: null, commitId: null, baseId: record.baseId };
    }
    case "change_request": {
      const cr = findChangeRequest(ctx, spaceId, id);
      return { recordId: null, changeRequestId: cr.id, operationId: null, commitId: null, baseId: cr.baseId };
    }
    case "operation": {
      const op = findOperation(ctx, spaceId, id);
      return { recordId: op.targetRecordId, changeRequestId: op.changeRequestId, operationId: op.id, commitId: null, baseId: op.baseId };
    }
    case "commit": {
      const commit = loadCommits(ctx, [id]).get(id);
      if (!commit || commit.spaceId !== spaceId) throw notInSpace("commit", id);
      return { recordId: commit.recordId, changeRequestId: null, operationId: commit.operationId, commitId: commit.id, baseId: commit.baseId };
    }
  }
}

/** A comment as answered, its author named from `people` (`userRefs`). */
export const commentView = ({ spaceId: _, ...row }: CommentRow, people: Map<string, UserRef>): CommentView => ({ ...row, authorUser: userRefView(people.get(row.authorId)) });

/**
 * `POST /comments`: a comment by the caller on a subject of the space, with its `comment.created`
 * event in the same write; one that asks the agent (`mentionsAi`) about a change request is also
 * its `change_request.ai_mention` (Busabase's `ai_mention`, an agent's task).
 */
export function addComment(tx: Tx, spaceId: string, actor: Actor, input: { subjectType: CommentSubject; subjectId: string; body: string; mentionsAi?: boolean }, at: string): CommentView {
  const body = input.body.trim();
  if (body.length === 0) throw badRequest("A comment's body is empty.");
  const { baseId, ...ties } = subjectTies(tx, spaceId, input.subjectType, input.subjectId);
  const row: CommentRow = { id: newId("com"), spaceId, subjectType: input.subjectType, subjectId: input.subjectId, ...ties, authorId: actor.user.id, body, mentionsAi: input.mentionsAi ?? false, createdAt: at, updatedAt: at };
  insertRow(tx, comments, row);
  const comment = commentView(row, new Map([[actor.user.id, actor.user]]));
  recordEvent(tx, "comment.created", { spaceId, baseId, at }, { comment });
  if (row.mentionsAi && row.changeRequestId) recordEvent(tx, "change_request.ai_mention", { spaceId, baseId, at }, { changeRequestId: row.changeRequestId, commentId: row.id });
  return comment;
}

/**
 * `GET /comments`: a subject's comments, oldest first, `limit` at a time after the comment `after`
 * (Busabase answers a plain list; the last id of one answer asks for the next). A change request's
 * include those on its operations.
 */
export function listComments(ctx: AppContext, spaceId: string, query: { subjectType: CommentSubject; subjectId: string; limit: number; after?: string }): CommentView[] {
  subjectTies(ctx, spaceId, query.subjectType, query.subjectId);
  const subject =
    query.subjectType === "change_request"
      ? eq(comments.changeRequestId, query.subjectId)
      : and(eq(comments.subjectType, query.subjectType), eq(comments.subjectId, query.subjectId));
  const rows = ctx.db
    .select()
    .from(comments)
    .where(and(eq(comments.spaceId, spaceId), subject, query.after ? gt(comments.id, query.after) : undefined))
    .orderBy(asc(comments.id))
    .limit(query.limit)
    .all();
  const people = userRefs(ctx, rows.map((row) => row.authorId));
  return rows.map((row) => commentView(row, people));
}

/** How many comments one answer may hold. */
export const MAX_LISTED = 100;

export const ChangeRequestDetailSchema = t.Composite([ChangeRequestSchema, t.Object({ comments: t.Array(CommentSchema, { description: `Its comments and its operations', oldest first (the first ${MAX_LISTED}; GET /comments pages the rest).` }) })], {
  description: "A change request with its comments.",
});

/** `GET /change-requests/{id}`: the change request with its comments and its operations', oldest first. */
export function changeRequestDetail(ctx: AppContext, spaceId: string, sight: Sight, id: string): Static<typeof ChangeRequestDetailSchema> {
  const changeRequest = getChangeRequest(ctx, spaceId, sight, id);
  if ((changeRequest.baseId && sight.hiddenBases.has(changeRequest.baseId)) || (changeRequest.nodeId && sight.hiddenNodes.has(changeRequest.nodeId))) throw notInSpace("change request", id);
  return { ...changeRequest, comments: listComments(ctx, spaceId, { subjectType: "change_request", subjectId: changeRequest.id, limit: MAX_LISTED }) };
}
