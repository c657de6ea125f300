import { seenWhere, type Sight } from "../spaces/sight";
import { ViewSchema, type ViewView } from "../content/views";
import type { Static } from "@sinclair/typebox";
import { and, count, desc, eq, inArray, lt, type SQL } from "drizzle-orm";
import { t } from "elysia";
import type { Actor } from "../auth/actor";
import { findBase } from "../content/bases";
import { findRecord } from "../content/records/read";
import { RecordSchema, type RecordView } from "../content/records/view";
import type { AppContext } from "../context";
import { ApiError, badRequest } from "../shared/errors";
import { withinBudget } from "../shared/limits";
import { JsonObject, Nullable, WholeNumber } from "../shared/schemas";
import type { SpaceScope } from "../spaces/resolve";
import { directCount, directCounts, directOfRecord, directPage, newestFirst } from "./direct";
import { type ChangeRequestRow, changeRequests, type ChangeStatus, operations } from "../tables/changes";
import { ChangeRequestSchema, type ChangeRequestView, changeRequestViews } from "./views";

/** Change requests as lists: the Inbox and its counts, a record's proposals, and many acted on at once. */

export interface ChangeRequestQuery {
  status?: ChangeStatus[];
  mine?: boolean;
  baseId?: string;
  limit: number;
  cursor?: string;
}

export const ChangeRequestPageSchema = t.Object({ changeRequests: t.Array(ChangeRequestSchema), nextCursor: Nullable(t.String()) });

/** A listing's filters resolved in the space: its base by id, `mine` as the caller. */
export interface ChangeRequestFilter {
  spaceId: string;
  status: ChangeStatus[];
  submittedBy?: string;
  baseId?: string;
  sight: Sight;
}

function filterOf(ctx: AppContext, scope: SpaceScope, actor: Actor, query: Omit<ChangeRequestQuery, "limit" | "cursor">): ChangeRequestFilter {
  return {
    spaceId: scope.space.id,
    status: query.status ?? [],
    submittedBy: query.mine ? actor.user.id : undefined,
    baseId: query.baseId ? findBase(ctx, scope.space.id, query.baseId, { archived: true }).base.id : undefined,
    sight: scope.sight,
  };
}

function storedWhere(filter: ChangeRequestFilter): SQL[] {
  const where: SQL[] = [eq(changeRequests.spaceId, filter.spaceId)];
  if (filter.status.length > 0) where.push(inArray(changeRequests.status, filter.status));
  if (filter.submittedBy) where.push(eq(changeRequests.submittedBy, filter.submittedBy));
  if (filter.baseId) where.push(eq(changeRequests.baseId, filter.baseId));
  return [...where, ...seenWhere(changeRequests, filter.sight)];
}

/** Direct creates are merged change requests: a status filter without `merged` leaves them out. */
const includesDirect = (filter: ChangeRequestFilter) => filter.status.length === 0 || filter.status.includes("merged");

/** The first `limit` change requests after `before`, newest first, stored ones and direct creates interleaved. */
export function newestChangeRequests(ctx: AppContext, filter: ChangeRequestFilter, limit: number, before?: string): ChangeRequestRow[] {
  const where = storedWhere(filter);
  if (before) where.push(lt(changeRequests.id, before));
  const stored = ctx.db.select().from(changeRequests).where(and(...where)).orderBy(desc(changeRequests.id)).limit(limit).all();
  const direct = includesDirect(filter) ? directPage(ctx, { ...filter, before, limit }) : [];
  return [...stored, ...direct].sort(newestFirst).slice(0, limit);
}

/** Newest first, stored change requests and direct creates interleaved; the cursor is the last id of the previous page. */
export function listChangeRequests(ctx: AppContext, scope: SpaceScope, actor: Actor, query: ChangeRequestQuery): Static<typeof ChangeRequestPageSchema> {
  const rows = newestChangeRequests(ctx, filterOf(ctx, scope, actor, query), query.limit + 1, query.cursor ? decodeIdCursor(query.cursor) : undefined);
  const views = changeRequestViews(ctx, scope.sight, rows.slice(0, query.limit));
  // A page past the answer's budget ends early; its cursor goes on from there.
  const kept = withinBudget(views);
  const more = rows.length > query.limit || kept < views.length;
  views.length = kept;
  return { changeRequests: views, nextCursor: more ? Buffer.from(views.at(-1)!.id).toString("base64url") : null };
}

export const NumberedChangeRequestPageSchema = t.Object(
  { changeRequests: t.Array(ChangeRequestSchema), total: WholeNumber(), totalPages: WholeNumber(), page: WholeNumber({ minimum: 1 }), pageSize: WholeNumber({ minimum: 1 }) },
  { description: "Busabase's numbered page of change requests, newest first, and how many match." },
);

/** How far a numbered page of change requests may reach: it reads every one before it. */
export const CHANGE_REQUEST_PAGE_REACH = 10_000;

/** `GET /change-requests/page`: page `page` (from 1) of `pageSize`, newest first, with the count of all that match. */
export function numberedChangeRequests(ctx: AppContext, scope: SpaceScope, actor: Actor, query: Omit<ChangeRequestQuery, "limit" | "cursor">, page: number, pageSize: number): Static<typeof NumberedChangeRequestPageSchema> {
  const offset = (page - 1) * pageSize;
  if (offset + pageSize > CHANGE_REQUEST_PAGE_REACH) {
    throw badRequest(`A numbered page of change requests reaches at most the ${CHANGE_REQUEST_PAGE_REACH.toLocaleString("en")}th; walk further with GET /change-requests and its nextCursor.`);
  }
  const filter = filterOf(ctx, scope, actor, query);
  const stored = ctx.db.select({ n: count() }).from(changeRequests).where(and(...storedWhere(filter))).get()!.n;
  const total = stored + (includesDirect(filter) ? directCount(ctx, filter) : 0);
  const rows = offset < total ? newestChangeRequests(ctx, filter, offset + pageSize).slice(offset) : [];
  return { changeRequests: changeRequestViews(ctx, scope.sight, rows), total, totalPages: Math.ceil(total / pageSize), page, pageSize };
}

function decodeIdCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^crq_[0-9A-Z]{18}(?:[0-9A-Z]{8})?$/.test(id)) throw badRequest("The cursor is not valid; pass back a nextCursor from a previous page.");
  return id;
}

export const InboxCountsSchema = t.Object({
  review: WholeNumber({ description: "in_review" }),
  changes: WholeNumber({ description: "changes_requested" }),
  created: WholeNumber({ description: "The caller's own, in any status." }),
  approved: WholeNumber(),
  merged: WholeNumber(),
  rejected: WholeNumber(),
  conflict: WholeNumber({ description: "In conflict with what was merged since (Basalt's own)." }),
});

/** The Inbox tabs: the space's change requests by status, and the caller's own in any status. */
export function inboxCounts(ctx: AppContext, scope: SpaceScope, actor: Actor): Static<typeof InboxCountsSchema> {
  const byStatus = new Map(
    ctx.db
      .select({ status: changeRequests.status, n: count() })
      .from(changeRequests)
      .where(and(eq(changeRequests.spaceId, scope.space.id), ...seenWhere(changeRequests, scope.sight)))
      .groupBy(changeRequests.status)
      .all()
      .map((row) => [row.status, row.n]),
  );
  const created = ctx.db.select({ n: count() }).from(changeRequests).where(and(eq(changeRequests.spaceId, scope.space.id), eq(changeRequests.submittedBy, actor.user.id), ...seenWhere(changeRequests, scope.sight))).get()!.n;
  const direct = directCounts(ctx, scope.space.id, scope.sight, actor.user.id);
  return {
    review: byStatus.get("in_review") ?? 0,
    changes: byStatus.get("changes_requested") ?? 0,
    created: created + direct.mine,
    approved: byStatus.get("approved") ?? 0,
    merged: (byStatus.get("merged") ?? 0) + direct.merged,
    rejected: byStatus.get("rejected") ?? 0,
    conflict: byStatus.get("conflict") ?? 0,
  };
}

export function recordChangeRequests(ctx: AppContext, scope: SpaceScope, recordId: string): ChangeRequestView[] {
  findRecord(ctx, scope.space.id, recordId);
  const ids = ctx.db.selectDistinct({ id: operations.changeRequestId }).from(operations).where(eq(operations.targetRecordId, recordId)).all().map((row) => row.id);
  const stored = ids.length === 0 ? [] : ctx.db.select().from(changeRequests).where(inArray(changeRequests.id, ids)).all();
  return changeRequestViews(ctx, scope.sight, [...stored, ...directOfRecord(ctx, recordId)].sort(newestFirst));
}

export const BatchResultsSchema = t.Object({
  results: t.Array(
    t.Union([
      t.Object({ changeRequestId: t.String(), ok: t.Literal(true), status: t.String(), changeRequest: ChangeRequestSchema, record: t.Optional(Nullable(RecordSchema)), view: t.Optional(Nullable(ViewSchema)) }),
      t.Object({ changeRequestId: t.String(), ok: t.Literal(false), error: t.String(), code: t.String(), data: t.Optional(JsonObject) }),
    ]),
    { description: "One per id, in order: one failing does not stop the others." },
  ),
});
export type BatchResult = Static<typeof BatchResultsSchema>["results"][number];

/** What one item of a batch answers: the change request, and for a merge the record it produced. */
type BatchOutcome = { changeRequest: ChangeRequestView; record?: RecordView | null; view?: ViewView | null };

/** Runs one action per id, each on its own and in order: one failing does not stop the others. */
export async function eachChangeRequest(ids: string[], action: (id: string) => Promise<BatchOutcome>): Promise<{ results: BatchResult[] }> {
  const results: BatchResult[] = [];
  for (const changeRequestId of ids) {
    try {
      const outcome = await action(changeRequestId);
      results.push({ changeRequestId, ok: true, status: outcome.changeRequest.status, ...outcome });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      results.push({ changeRequestId, ok: false, error: error.message, code: error.code, ...(error.data ? { data: error.data } : {}) });
    }
  }
  return { results };
}
