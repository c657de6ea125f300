import { roughSize, withinBudget } from "../../shared/limits";
import { baseRecordCounts } from "../../tables/derived/tables";
import { compiledRows, preparedFor, queryPlan } from "../../db/client";
import { FULL_SHAPE, RecordShape, RecordView, requireShapeFields } from "./view";
import { CREATED_AT_AT, ID_AT, RECORD_COLUMNS, headAuthors, headColumns, recordOfRow } from "./read";
import { ListingShape, RecordFilter, RecordQuery, SortPlan, V, decodeCursor, encodeCursor, fieldNamed, allFilters, filterCondition, groupCondition, requireBounded, sortPlan, indexed, INDEXED_FROM, containsOnValues } from "./query";
import { noteFieldsQueried } from "../indexes";
import { comparisonOf } from "../fields/registry";
import { and, eq, type SQL, sql } from "drizzle-orm";
import { type UserRef } from "../commits";
import type { AppContext } from "../../context";
import { badRequest } from "../../shared/errors";
import type { FilterOperator } from "../../shared/field-types";
import { sharedBaseView, type FieldRow, type LoadedBase } from "../bases";
import { linkedValues } from "../relations/read";
import { commits, records, type RecordStatus } from "../../tables/content";

/** Listing records: which index drives a page, the page's one statement, numbered pages and counts. */

/** The fields an index would serve in a listing: those of its range and equality filters, and its sort's. */
function queriedFields(loaded: LoadedBase, query: RecordQuery, plan: SortPlan | null): FieldRow[] {
  const filtered = query.filters.filter((filter) => RANGE_OPERATORS.has(filter.operator)).map((filter) => fieldNamed(loaded.fields, filter.fieldSlug));
  return plan?.field ? [...filtered, plan.field] : filtered;
}

/** The fields a listing filters by a range or sorts by that are being indexed now (the listing may wait for them). */
export function fieldsBeingIndexed(loaded: LoadedBase, query: RecordQuery): string[] {
  return queriedFields(loaded, query, sortPlan(loaded.fields, query.sort))
    .filter((field) => field.indexState === "building")
    .map((field) => field.id);
}

/** A field whose values `field_values` holds completely (not while it is being filled). */
const isIndexed = (field: FieldRow) => field.indexState === "ready";

/** Operators a field's indexed values answer as a range of them. */
const RANGE_OPERATORS: ReadonlySet<FilterOperator> = new Set(["eq", "in", "gt", "gte", "lt", "lte"]);

/** Up to this many matches, a filter's matches are read through its indexed values and sorted; past it, the sort's order is walked. */
const DENSE_MATCHES = 2000;

/**
 * How a page is read:
 * - `records`: the sort's order on `records` (creation or update time, indexed; an unindexed
 *   field's order is sorted), every filter checked on the record;
 * - `values` of a field: its `field_values` walked in order, either the sort's field (in value
 *   order, its own filters as ranges of the walk) or, in creation order, an `eq` filter's field
 *   (its entries hold the matches newest first, however many);
 * - `matches` of a filter: at most `DENSE_MATCHES` records read through its field's values, then
 *   sorted.
 * Counting up to the bound through the filter's values costs a fraction of a millisecond and makes
 * the page's cost independent of SQLite's statistics, which lag the data.
 */
type Driver = { by: "records" } | { by: "values"; field: FieldRow; filter: RecordFilter | null } | { by: "matches"; field: FieldRow; filter: RecordFilter };

/** Filters a field's indexed values can answer, other than on the sort's own field. */
function indexedFilters(loaded: LoadedBase, query: RecordQuery, plan: SortPlan) {
  return query.filters
    .map((filter) => ({ filter, field: fieldNamed(loaded.fields, filter.fieldSlug) }))
    .filter(({ filter, field }) => RANGE_OPERATORS.has(filter.operator) && isIndexed(field) && field.id !== plan.field?.id);
}

/** The matches of one filter through its field's indexed values, as a FROM and a WHERE. */
function valuesOf(shape: ListingShape, field: FieldRow, status: RecordStatus, filter: RecordFilter | null): SQL[] {
  return [sql`${indexed.fieldId} = ${shape.param(field.id)}`, sql`${indexed.status} = ${shape.param(status)}`, ...(filter ? [filterCondition(shape, field, filter, V.value)] : [])];
}

function pageDriver(ctx: AppContext, loaded: LoadedBase, query: RecordQuery, plan: SortPlan): Driver {
  const candidates = indexedFilters(loaded, query, plan);
  if (plan.column === "created_at") {
    const inOrder = candidates.find(({ filter }) => filter.operator === "eq");
    if (inOrder) return { by: "values", ...inOrder };
  }
  for (const candidate of candidates) {
    const shape = new ListingShape();
    shape.key.push("probe");
    const where = valuesOf(shape, candidate.field, query.status, candidate.filter);
    const limit = shape.param(DENSE_MATCHES + 1);
    const matches = compiledRows(ctx.store, shape.key.join("|"), () => ctx.db.select({ one: sql`1` }).from(INDEXED_FROM).where(and(...where)).limit(limit))(shape.params);
    if (matches.length <= DENSE_MATCHES) return { by: "matches", ...candidate };
  }
  if (plan.field && isIndexed(plan.field)) return { by: "values", field: plan.field, filter: null };
  return { by: "records" };
}

/**
 * The FROM and WHERE of a listing driven as `driver` says: `field_values` first when it drives
 * (CROSS JOIN keeps SQLite from reordering), every other filter checked on the record.
 */
function source(shape: ListingShape, loaded: LoadedBase, query: RecordQuery, driver: Driver): { from: SQL; where: SQL[] } {
  shape.key.push(loaded.base.id, driver.by, driver.by === "records" ? "" : driver.field.id);
  const where: SQL[] = [];
  let skipped: RecordFilter | null = null;
  if (driver.by === "records") where.push(sql`${records.baseId} = ${shape.param(loaded.base.id)}`, sql`${records.status} = ${shape.param(query.status)}`);
  else {
    where.push(...valuesOf(shape, driver.field, query.status, driver.filter));
    skipped = driver.filter;
  }
  for (const filter of query.filters) {
    if (filter === skipped) continue;
    const field = fieldNamed(loaded.fields, filter.fieldSlug);
    // Walking a field's values, its own filters are ranges of the walk.
    const onWalk = driver.by === "values" && driver.filter === null && field.id === driver.field.id && RANGE_OPERATORS.has(filter.operator) && filter.operator !== "in";
    where.push(filterCondition(shape, field, filter, onWalk ? V.value : undefined));
  }
  for (const group of query.groups ?? []) where.push(groupCondition(shape, loaded.fields, group));
  const from = driver.by === "records" ? sql`${records}` : sql`${INDEXED_FROM} CROSS JOIN ${records} ON ${records.id} = ${indexed.recordId}`;
  return { from, where };
}

/** The record's columns when `records` is named in a FROM written as SQL (drizzle checks that selected tables are in the query, and cannot see into one). */
const RECORD_IN_FROM = Object.fromEntries(RECORD_COLUMNS.map(([key, column]) => [key, sql`${column}`]));

type ListingQuery = RecordQuery & { limit: number; cursor?: string; offset?: number; shape?: RecordShape };

/**
 * A page's statement (shape key, builder, parameters), shared by `listRecords` and `explainListing`.
 * When what drives the page walks it in its order (the records' creation or update index, or a
 * field's values), the statement reads the page's records with their head commits as it walks
 * (`inOrder`: one statement, and nothing sorted). Otherwise (a sort read from the record, or a
 * filter's matches sorted) it reads their rowids, so that only those are sorted, and `pageRows`
 * reads the records after.
 */
function listingStatement(ctx: AppContext, loaded: LoadedBase, query: ListingQuery, recordShape: RecordShape = query.shape ?? FULL_SHAPE) {
  requireBounded(query);
  const plan = sortPlan(loaded.fields, query.sort);
  const driver = pageDriver(ctx, loaded, query, plan);
  const inOrder = driver.by === "values" || (driver.by === "records" && plan.column !== null);
  const shape = new ListingShape();
  shape.key.push("list", plan.key, query.cursor ? "after" : query.offset ? "offset" : "first", inOrder ? (recordShape.headCommit ? "rows" : "lean rows") : "rowids");
  const { from, where } = source(shape, loaded, query, driver);
  // The terms the page is ordered by, read from what drives it: the walked values, or the record.
  const walked = driver.by === "values";
  const terms: SQL[] =
    walked && driver.filter === null
      ? [V.value, V.createdAt, V.recordId]
      : walked
        ? [V.createdAt, V.recordId]
        : [plan.expression, ...(plan.field === null ? [] : [sql`${records.createdAt}`]), sql`${records.id}`];
  if (query.cursor) {
    const after = decodeCursor(query.cursor, plan).map((term) => shape.param(term));
    where.push(sql`(${sql.join(terms, sql`, `)}) ${sql.raw(plan.descending ? "<" : ">")} (${sql.join(after, sql`, `)})`);
  }
  const limit = shape.param(query.limit + 1);
  const offset = query.offset ? shape.param(query.offset) : null;
  const direction = sql.raw(plan.descending ? "DESC" : "ASC");
  const build = () => {
    // The first term is the cursor's sort value (the same value as `plan.expression` on the record).
    const select = !inOrder
      ? ctx.db.select({ rowid: sql<number>`"records"."rowid"` }).from(from)
      : recordShape.headCommit
        ? ctx.db
            .select({ row: RECORD_IN_FROM, sortValue: sql`${terms[0]}`, head: headColumns })
            .from(from)
            .leftJoin(commits, eq(commits.id, records.headCommitId))
        : ctx.db.select({ row: RECORD_IN_FROM, sortValue: sql`${terms[0]}`, parentCommitId: commits.parentCommitId }).from(from).leftJoin(commits, eq(commits.id, records.headCommitId));
    const page = select
      .where(and(...where))
      .orderBy(...terms.map((t) => sql`${t} ${direction}`))
      .limit(limit);
    return offset ? page.offset(offset) : page;
  };
  return { key: shape.key.join("|"), build, params: shape.params, plan, inOrder };
}

/**
 * The records of a page with their head commits, by rowid (no second descent through
 * the id index), each with its place in the page: they are put in order in JS, since an ORDER BY
 * here would sort the wide rows again (a page of 50: 186-200 -> 144 us). Matches beyond the page
 * are never read.
 */
const pageRows = (ctx: AppContext, plan: SortPlan) =>
  compiledRows(ctx.store, `page rows|${plan.key}`, () =>
    ctx.db
      .select({ row: records, sortValue: sql`${plan.expression}`, head: headColumns, place: sql<number>`"page"."key"` })
      .from(sql`json_each(${sql.placeholder("rowids")}) AS "page"`)
      .innerJoin(records, sql`"records"."rowid" = "page"."value"`)
      .leftJoin(commits, eq(commits.id, records.headCommitId)),
  );

/** `pageRows` for a shape without head commits: of the head, only its parent (which a record shows). */
const leanPageRows = (ctx: AppContext, plan: SortPlan) =>
  compiledRows(ctx.store, `lean page rows|${plan.key}`, () =>
    ctx.db
      .select({ row: records, sortValue: sql`${plan.expression}`, parentCommitId: commits.parentCommitId, place: sql<number>`"page"."key"` })
      .from(sql`json_each(${sql.placeholder("rowids")}) AS "page"`)
      .innerJoin(records, sql`"records"."rowid" = "page"."value"`)
      .leftJoin(commits, eq(commits.id, records.headCommitId)),
  );

/** The rows of a page, in order, and whether more match past them: read as the page is walked, or by rowid after (`listingStatement`). */
function readPage(ctx: AppContext, statement: ReturnType<typeof listingStatement>, limit: number, shape: RecordShape): { page: unknown[][]; more: boolean } {
  const found = compiledRows(ctx.store, statement.key, statement.build)(statement.params);
  const more = found.length > limit;
  if (statement.inOrder) {
    if (more) found.length = limit;
    return { page: found, more };
  }
  const rowids = found.slice(0, limit).map((values) => values[0]);
  const page: unknown[][] = new Array(rowids.length);
  const rows = shape.headCommit ? pageRows(ctx, statement.plan) : leanPageRows(ctx, statement.plan);
  for (const values of rows({ rowids: JSON.stringify(rowids) })) page[values.at(-1) as number] = values;
  return { page, more };
}

/** SQLite's plan for a listing: which index answers its filters and sort (for tests and operators). */
export function explainListing(ctx: AppContext, loaded: LoadedBase, query: ListingQuery): string[] {
  const { build, params } = listingStatement(ctx, loaded, query);
  return queryPlan(ctx.store, build(), params);
}

/**
 * Keyset pagination: the cursor carries the last row's sort value and id, so a page is a range
 * scan that costs the same at record 1 and at record 1,000,000 (the default sort is indexed). Both
 * statements are compiled once per shape.
 */
export function listRecords(ctx: AppContext, loaded: LoadedBase, query: ListingQuery) {
  if (query.shape) requireShapeFields(loaded, query.shape);
  const shape = query.shape ?? FULL_SHAPE;
  const statement = listingStatement(ctx, loaded, query, shape);
  noteFieldsQueried(ctx, queriedFields(loaded, query, statement.plan));
  const { page, more: beyond } = readPage(ctx, statement, query.limit, shape);
  // Each row holds its sort value after the record's columns, then its head commit's.
  const headAt = RECORD_COLUMNS.length + 1;
  const people = shape.headCommit ? headAuthors(ctx, page, headAt) : new Map<string, UserRef>();
  const base = sharedBaseView(loaded);
  const linked = linkedValues(ctx, loaded, page.map((values) => values[ID_AT] as string), { lookups: true });
  const now = ctx.clock.now();
  const views = page.map((values) => recordOfRow(values, headAt, loaded, people, linked, base, now, shape, !shape.headCommit));
  const kept = query.offset ? views.length : withinBudget(views, (view) => roughSize(view.fields));
  const more = beyond || kept < views.length;
  views.length = page.length = kept;
  const last = page.at(-1);
  if (!more || !last) return { records: views, nextCursor: null };
  const sortValue = last[RECORD_COLUMNS.length];
  const id = last[ID_AT];
  return { records: views, nextCursor: encodeCursor(statement.plan.field === null ? [sortValue, id] : [sortValue, last[CREATED_AT_AT], id]) };
}

/**
 * How far a numbered page may reach: skipping records costs a step each, so past this a client
 * walks the cursor listing, whose pages cost the same anywhere.
 */
export const NUMBERED_PAGE_BOUNDS = { pageSize: 100, reach: 100_000 } as const;

/** `GET /records/page`: page `page` (from 1) of `pageSize` records of the listing, with the count of all that match. */
export function numberedPage(ctx: AppContext, loaded: LoadedBase, query: RecordQuery & { shape?: RecordShape }, page: number, pageSize: number) {
  const offset = (page - 1) * pageSize;
  if (offset + pageSize > NUMBERED_PAGE_BOUNDS.reach) {
    throw badRequest(`A numbered page reaches at most record ${NUMBERED_PAGE_BOUNDS.reach.toLocaleString("en")} (page ${page} of ${pageSize} ends at ${(offset + pageSize).toLocaleString("en")}); walk further with GET /records and its nextCursor.`);
  }
  const { total } = countRecords(ctx, loaded, query);
  const records = offset < total ? listRecords(ctx, loaded, { ...query, cursor: undefined, limit: pageSize, offset }).records : [];
  return { records, total, totalPages: Math.ceil(total / pageSize), page, pageSize };
}

/**
 * `GET /records/search` and `GET /records/get?baseId&fieldSlug&valueText`: active records whose
 * field equals `valueText` (read by the field's type), newest first, through the listing's own path.
 */
export function recordsWithValue(ctx: AppContext, loaded: LoadedBase, fieldSlug: string, valueText: string, limit: number, shape?: RecordShape): RecordView[] {
  return listRecords(ctx, loaded, { status: "active", filters: [{ fieldSlug, operator: "eq", value: valueText }], limit, shape }).records;
}

/**
 * How many records match: through one filter's indexed values when there is one (only those, when
 * it is the only filter), or a lone `contains` through its field's (`containsOnValues`). A count is
 * kept until the database next changes (`ctx.counts`): the grid's numbered pages ask the same count
 * for every page.
 */
export function countRecords(ctx: AppContext, loaded: LoadedBase, query: RecordQuery): { total: number } {
  requireBounded(query);
  // Unfiltered: the number the triggers of migrations/0026 keep, one row whatever the base's size.
  if (allFilters(query).length === 0) return { total: keptCount(ctx, loaded.base.id, query.status) };
  const contained = containsOnValues(loaded.fields, query);
  const [indexed] = indexedFilters(loaded, query, sortPlan(loaded.fields));
  noteFieldsQueried(ctx, [...new Set([...queriedFields(loaded, query, null), ...containedFields(loaded, query)])]);
  const shape = new ListingShape();
  shape.key.push("count");
  const through = indexed ?? contained;
  const driver: Driver = through ? { by: "matches", ...through } : { by: "records" };
  const { from, where } = source(shape, loaded, query, driver);
  const alone = through && allFilters(query).length === 1;
  const key = shape.key.join("|") + (alone ? "|alone" : "");
  const kept = ctx.counts.open() ? `${key} ${JSON.stringify(shape.params)}` : null;
  const known = kept === null ? undefined : ctx.counts.get(kept);
  if (known !== undefined) return { total: known };
  const [row] = compiledRows(ctx.store, key, () =>
    alone ? ctx.db.select({ total: sql`count(*)` }).from(INDEXED_FROM).where(and(...where)) : ctx.db.select({ total: sql`count(*)` }).from(from).where(and(...where)),
  )(shape.params);
  const total = row[0] as number;
  if (kept !== null) ctx.counts.set(kept, total);
  return { total };
}

/** Text fields a count's `contains` filters read: counted often, they are indexed like a range's, so their counts read `field_values`. */
const containedFields = (loaded: LoadedBase, query: RecordQuery): FieldRow[] =>
  query.filters.filter((filter) => filter.operator === "contains").map((filter) => fieldNamed(loaded.fields, filter.fieldSlug)).filter((field) => comparisonOf(field) === "text");

const countsOfBase = preparedFor((db) =>
  db.select({ active: baseRecordCounts.active, archived: baseRecordCounts.archived }).from(baseRecordCounts).where(eq(baseRecordCounts.baseId, sql.placeholder("baseId"))).prepare(),
);

/** A base's count of active or archived records, as the triggers of migrations/0026 keep it. */
function keptCount(ctx: AppContext, baseId: string, status: RecordStatus): number {
  const row = countsOfBase(ctx).get({ baseId });
  return row === undefined ? 0 : status === "archived" ? row.archived : row.active;
}
