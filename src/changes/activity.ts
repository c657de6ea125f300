import { seenWhere, type Sight } from "../spaces/sight";
import type { Static } from "@sinclair/typebox";
import { and, desc, eq, isNotNull, lt } from "drizzle-orm";
import { t } from "elysia";
import { AuditEventSchema, type AuditEventView, listAuditEvents } from "../audit/audit";
import { type UserRef, UserRefSchema, userRefs, userRefView } from "../content/commits";
import { getRecord } from "../content/records/read";
import { RecordSchema } from "../content/records/view";
import { findChangeRequest, findOperation } from "./lifecycle";
import { ChangeRequestSchema, changeRequestViews } from "./views";
import { atLeast } from "../shared/levels";
import { commits } from "../tables/content";
import type { AppContext } from "../context";
import { ApiError, badRequest } from "../shared/errors";
import { withinBudget } from "../shared/limits";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import type { SpaceScope } from "../spaces/resolve";
import { newestChangeRequests } from "./inbox";

export const ACTIVITY_KINDS = ["change_request", "operation", "record", "audit"] as const;

export const ActivityItemSchema = t.Object(
  {
    kind: oneOf(ACTIVITY_KINDS),
    id: t.String({ description: "The change request, commit or audit event." }),
    timestamp: Timestamp,
    actorId: t.String(),
    actorUser: t.Optional(Nullable(UserRefSchema)),
    action: t.String({ description: "A change request's status; record_update, record_delete or record_restore; revised; or the audit action." }),
    summary: t.String({ description: "The message given with it, if any." }),
    baseId: Nullable(t.String()),
    changeRequestId: Nullable(t.String({ description: "The change request, or the one a record change or revision was part of." })),
    operationId: Nullable(t.String()),
    recordId: Nullable(t.String()),
    changeRequest: t.Optional(ChangeRequestSchema),
    record: t.Optional(Nullable(RecordSchema)),
    auditEvent: t.Optional(AuditEventSchema),
  },
  { $id: "ActivityItem", description: "Busabase's item, which embeds what it is about: a change request's or a revision's `changeRequest`, a record change's `record`, an audit event's `auditEvent` (and its record, if it is about one)." },
);
type ActivityItem = Static<typeof ActivityItemSchema>;

export const ActivityPageSchema = t.Object({ items: t.Array(ActivityItemSchema), nextCursor: Nullable(t.String()) });

/** Every id is a prefix and a time-ordered suffix: the suffix orders items of all kinds together. */
const suffixOf = (id: string) => id.slice(id.indexOf("_") + 1);

function decodeCursor(cursor: string): string {
  const suffix = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^[0-9A-Za-z]{1,64}$/.test(suffix)) throw badRequest("The cursor is not valid; pass back a nextCursor from a previous page.");
  return suffix;
}

/** Revisions of proposals and changes of records after their creation: the commits that have a parent. */
function laterCommits(ctx: AppContext, spaceId: string, sight: Sight, limit: number, before: string | undefined): ActivityItem[] {
  const where = [eq(commits.spaceId, spaceId), isNotNull(commits.parentCommitId), ...seenWhere(commits, sight), ...(before ? [lt(commits.id, `cmt_${before}`)] : [])];
  const rows = ctx.db
    .select({ id: commits.id, kind: commits.kind, recordId: commits.recordId, operationId: commits.operationId, baseId: commits.baseId, authorId: commits.authorId, message: commits.message, createdAt: commits.createdAt })
    .from(commits)
    .where(and(...where))
    .orderBy(desc(commits.id))
    .limit(limit)
    .all();
  return rows.map((row) => ({
    kind: row.recordId ? "record" : "operation",
    id: row.id,
    timestamp: row.createdAt,
    actorId: row.authorId,
    action: row.recordId ? row.kind : "revised",
    summary: row.message ?? "",
    baseId: row.baseId,
    changeRequestId: null,
    operationId: row.operationId,
    recordId: row.recordId,
  }));
}

/**
 * `GET /activity/paged`: the space's change requests, revisions, record changes and (for a manage
 * caller, who may read the audit trail) audit events, newest first. Each source is read newest
 * first from its own index, at most a page of each, and the page is the newest of them together.
 */
export function activityPage(ctx: AppContext, scope: SpaceScope, query: { limit: number; cursor?: string }): Static<typeof ActivityPageSchema> {
  const before = query.cursor ? decodeCursor(query.cursor) : undefined;
  const spaceId = scope.space.id;
  const wanted = query.limit + 1;
  const changeRequests: ActivityItem[] = newestChangeRequests(ctx, { spaceId, status: [], sight: scope.sight }, wanted, before ? `crq_${before}` : undefined).map((row) => ({
    kind: "change_request",
    id: row.id,
    timestamp: row.createdAt,
    actorId: row.submittedBy,
    action: row.status,
    summary: typeof row.sourceMeta.message === "string" ? row.sourceMeta.message : "",
    baseId: row.baseId,
    changeRequestId: row.id,
    operationId: null,
    recordId: null,
  }));
  const auditRows = atLeast(scope.level, "manage") ? listAuditEvents(ctx, spaceId, { limit: wanted, before: before ? `aud_${before}` : undefined }) : [];
  const audited = new Map(auditRows.map((row) => [row.id, row]));
  const audits: ActivityItem[] = auditRows.map((row) => ({
    kind: "audit",
    id: row.id,
    timestamp: row.createdAt,
    actorId: row.actorId,
    action: row.action,
    summary: "",
    baseId: row.baseId,
    changeRequestId: row.targetType === "change_request" ? row.targetId : null,
    operationId: null,
    recordId: null,
  }));
  const items = [...changeRequests, ...laterCommits(ctx, spaceId, scope.sight, wanted, before), ...audits].sort((a, b) => (suffixOf(a.id) < suffixOf(b.id) ? 1 : suffixOf(a.id) > suffixOf(b.id) ? -1 : 0));
  const page = withEmbedded(ctx, spaceId, scope.sight, items.slice(0, query.limit), audited);
  // A page past the answer's budget ends early; its cursor goes on from there.
  const kept = withinBudget(page);
  const more = items.length > query.limit || kept < page.length;
  page.length = kept;
  return { items: page, nextCursor: more ? Buffer.from(suffixOf(page.at(-1)!.id)).toString("base64url") : null };
}

const withActor = (item: ActivityItem, people: Map<string, UserRef>): ActivityItem => ({ ...item, actorUser: userRefView(people.get(item.actorId)) });

/** The page's items with what each is about, read once each (a page holds at most 100). */
function withEmbedded(ctx: AppContext, spaceId: string, sight: Sight, page: ActivityItem[], audited: Map<string, AuditEventView>): ActivityItem[] {
  const operationIds = page.filter((item) => (item.kind === "operation" || item.kind === "record") && item.operationId).map((item) => item.operationId!);
  const crOfOperation = new Map(operationIds.map((id) => [id, findOperation(ctx, spaceId, id).changeRequestId]));
  const crIds = [...new Set(page.flatMap((item) => (item.kind === "change_request" && item.changeRequestId ? [item.changeRequestId] : item.kind === "operation" ? [crOfOperation.get(item.operationId!)!] : [])))];
  const views = new Map(changeRequestViews(ctx, sight, crIds.map((id) => findChangeRequest(ctx, spaceId, id))).map((view) => [view.id, view]));
  // A record purged since the item was written is shown as null.
  const recordOf = (id: string | null) => {
    if (!id) return null;
    try {
      return getRecord(ctx, spaceId, id, undefined, sight);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }
  };
  // Who did it, by name: a page of people read at once.
  const people = userRefs(ctx, page.map((item) => item.actorId));
  return page.map((item) => withActor(item, people)).map((item) => {
    switch (item.kind) {
      case "change_request":
        return { ...item, changeRequest: views.get(item.changeRequestId!) };
      case "operation":
        return { ...item, changeRequestId: crOfOperation.get(item.operationId!)!, changeRequest: views.get(crOfOperation.get(item.operationId!)!) };
      case "record":
        return { ...item, changeRequestId: item.operationId ? (crOfOperation.get(item.operationId) ?? null) : null, record: recordOf(item.recordId) };
      case "audit": {
        const auditEvent = audited.get(item.id)!;
        return { ...item, auditEvent, record: auditEvent.targetType === "record" ? recordOf(auditEvent.targetId) : null };
      }
    }
  });
}
