import type { Sight } from "../../spaces/sight";
import { seenBase } from "./seen-base";
import type { AppContext } from "../../context";
import { badRequest } from "../../shared/errors";
import { FILTER_OPERATORS } from "../../shared/field-types";
import { limitParam, oneString } from "../../shared/query-params";
import { findBase } from "../bases";
import { throughView } from "../views";
import { fieldsBeingIndexed } from "./list";
import { type FilterGroup, LISTING_BOUNDS, type RecordFilter, type RecordQuery } from "./query";
import { FULL_SHAPE, type RecordShape } from "./view";

/**
 * The grammar of a record listing's query, as a client writes it (the query string of
 * `GET /records`, the CLI's flags): parsed into the base, the query and the record shape asked for.
 */

const INCLUDABLE = ["base", "headCommit"] as const;

/** `include=` and `fields=`: the record shape asked for (its field slugs are checked where the base is known). */
export function recordShape(raw: Record<string, unknown>): RecordShape {
  const include = oneString("include", raw.include);
  const picked = oneString("fields", raw.fields);
  const parts = (text: string) => text.split(",").map((part) => part.trim()).filter(Boolean);
  let shape = FULL_SHAPE;
  if (include !== undefined) {
    const named = parts(include).filter((part) => part !== "none");
    for (const part of named) if (!(INCLUDABLE as readonly string[]).includes(part)) throw badRequest(`include takes ${INCLUDABLE.join(", ")} or none; "${part}" is not one.`);
    shape = { ...shape, base: named.includes("base"), headCommit: named.includes("headCommit") };
  }
  if (picked !== undefined) {
    shape = { ...shape, fields: parts(picked) };
  }
  return shape;
}

/** The record listing's query: `baseId`, `limit`, `cursor`, `status`, `sort` and bracketed `filters`. */
function recordQuery(query: Record<string, unknown>): RecordQuery & { baseId?: string; limit: number; cursor?: string } {
  const baseId = oneString("baseId", query.baseId);
  const status = oneString("status", query.status) ?? "active";
  if (status !== "active" && status !== "archived") throw badRequest("status must be active or archived.");
  const filters = filtersOf(query.filters, "filters");
  const groups = query.groups === undefined ? undefined : listOf(query.groups).map((group, i) => groupOf(group, `groups[${i}]`, 1));
  return { baseId, status, filters, groups, sort: sortParam(query.sort), cursor: oneString("cursor", query.cursor), limit: limitParam(oneString("limit", query.limit), 50) };
}

const listOf = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** `filters[i][fieldSlug|operator|value]` (under `at`), each checked as the listing reads it. */
function filtersOf(value: unknown, at: string): RecordFilter[] {
  return listOf(value).map((raw, i): RecordFilter => {
    const filter = raw as Record<string, unknown>;
    if (typeof filter !== "object" || typeof filter.fieldSlug !== "string") throw badRequest(`${at}[${i}][fieldSlug] is required.`);
    if (!(FILTER_OPERATORS as readonly string[]).includes(filter.operator as string)) throw badRequest(`${at}[${i}][operator] must be one of ${FILTER_OPERATORS.join(", ")}.`);
    const given = filter.value;
    if (given !== undefined && typeof given !== "string" && !(Array.isArray(given) && given.every((v) => typeof v === "string"))) throw badRequest(`${at}[${i}][value] is not valid.`);
    return { fieldSlug: filter.fieldSlug, operator: filter.operator as RecordFilter["operator"], value: given as string | string[] | undefined };
  });
}

/** `groups[i][match]=all|any` with its `filters` and inner `groups`, at most `LISTING_BOUNDS.groupDepth` deep. */
function groupOf(raw: unknown, at: string, depth: number): FilterGroup {
  const group = raw as Record<string, unknown>;
  if (typeof group !== "object" || group === null || Array.isArray(group)) throw badRequest(`${at} is a group: ${at}[match]=all|any with ${at}[filters][…] and ${at}[groups][…].`);
  const match = oneString(`${at}[match]`, group.match) ?? "all";
  if (match !== "all" && match !== "any") throw badRequest(`${at}[match] must be all or any.`);
  if (depth > LISTING_BOUNDS.groupDepth && group.groups !== undefined) throw badRequest(`Filter groups nest at most ${LISTING_BOUNDS.groupDepth} deep.`);
  return { match, filters: filtersOf(group.filters, `${at}[filters]`), groups: listOf(group.groups).map((inner, i) => groupOf(inner, `${at}[groups][${i}]`, depth + 1)) };
}

/** A listing's base and query (with the record shape asked for): through the view when `viewId` is given, else of `baseId`. */
export function recordListing(ctx: AppContext, spaceId: string, sight: Sight, raw: Record<string, unknown>) {
  const query = recordQuery(raw);
  const viewId = oneString("viewId", raw.viewId);
  if (!viewId && !query.baseId) throw badRequest("The query parameter baseId (or viewId) is required.");
  const listing = viewId ? throughView(ctx, spaceId, viewId, query.baseId, query) : { loaded: findBase(ctx, spaceId, query.baseId!), query };
  return { loaded: seenBase(listing.loaded, sight), query: { ...listing.query, shape: recordShape(raw) } };
}

/**
 * How long a listing waits for an index being filled for its filter or sort: meanwhile it takes no
 * turn of the server's thread, so the fill (which has the writer to itself between listings) ends
 * sooner, and the listing then seeks instead of sorting the base. Past it, it reads without.
 */
export const INDEX_WAIT_MS = 5000;

/** `recordListing`, after waiting (at most `INDEX_WAIT_MS`) for the indexes its filter or sort will use that are being filled. */
export async function readyListing(ctx: AppContext, spaceId: string, sight: Sight, raw: Record<string, unknown>) {
  const listing = recordListing(ctx, spaceId, sight, raw);
  const building = fieldsBeingIndexed(listing.loaded, listing.query);
  if (building.length === 0) return listing;
  await ctx.fieldUpkeep.whenIndexed(building, INDEX_WAIT_MS);
  return recordListing(ctx, spaceId, sight, raw);
}

/** `sort=<slug>` / `sort=-<slug>`, or Busabase's object form `sort[fieldSlug]=<slug>&sort[direction]=asc|desc`. */
function sortParam(value: unknown): string | undefined {
  if (value === undefined || typeof value === "string") return value;
  const { fieldSlug, direction } = value as Record<string, unknown>;
  if (typeof value !== "object" || Array.isArray(value) || typeof fieldSlug !== "string") throw badRequest("sort is <slug>, -<slug>, or sort[fieldSlug]=<slug>&sort[direction]=asc|desc.");
  if (direction !== undefined && direction !== "asc" && direction !== "desc") throw badRequest("sort[direction] must be asc or desc.");
  return direction === "desc" ? `-${fieldSlug}` : fieldSlug;
}

