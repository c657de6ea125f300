import { isRelation } from "./fields/relation";
import { FIELD_KINDS, whyReadAtRead } from "./fields/registry";
import { isLookup } from "./fields/lookup";
import type { RecordSnapshot } from "../events/outbox";
import { noteFieldsQueried } from "./indexes";
import { convertedValue } from "./field-convert";
import type { Static } from "@sinclair/typebox";
import { and, desc, eq, getTableColumns, isNull, type SQL, sql } from "drizzle-orm";
import { t } from "elysia";
import { CommitSchema, commitColumns, type CommitRow, type CommitView, commitView, insertCommit, type UserRef, userRefs } from "./commits";
import { users } from "../tables/auth";
import type { AppContext, Tx } from "../context";
import { compiledRows, decodeRow, insertRow, preparedFor, preparedWrite, queryPlan } from "../db/client";
import { newId } from "../db/ids";
import { badRequest, conflict, notFound } from "../shared/errors";
import { Nullable, oneOf, Timestamp, WholeNumber } from "../shared/schemas";
import { holdsChoices, isBoolean, isNumeric, isComputedAtRead, isTime, isUnsortable, sortableSql, unsetBoundSql, valueSql } from "./field-sql";
import type { FilterOperator } from "../shared/field-types";
import { BaseSchema, type BaseView, baseView, type FieldRow, findBase, type LoadedBase } from "./bases";
import { computeFormulas, hasFormulas, storedFormulas } from "./fields/formula/plan";
import { hasLinkedFields, idsOf, type LinkedValues, linkedValues, type RecordLinkView, recordLinksJson, recordLinkViews, recordNames, writeLinks } from "./links";
import { bases, commits, NODE_STATUSES, records, type RecordStatus } from "../tables/content";

export type RecordRow = typeof records.$inferSelect;

export const RecordSchema = t.Object(
  {
    id: t.String(),
    baseId: t.String(),
    status: oneOf(NODE_STATUSES),
    fields: t.Record(t.String(), t.Unknown(), { description: "Every field of the base by slug; null where unset." }),
    headCommitId: t.String(),
    createdBy: t.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    archivedAt: Nullable(Timestamp),
    headCommit: t.Optional(Nullable(CommitSchema)),
    parentRecordId: t.Null({ description: "Busabase's record shape: Basalt records have no parent record." }),
    parentCommitId: Nullable(t.String({ description: "The head commit's parent." })),
    base: t.Optional(BaseSchema),
  },
  { $id: "Record", description: "A row of a base: its values, its head commit and its base (the lean shape, include= and fields=, leaves out what is not asked for)." },
);
export type RecordView = Static<typeof RecordSchema>;
/** A record in the full shape (the default): with its base and head commit. */
export type FullRecordView = RecordView & Required<Pick<RecordView, "base" | "headCommit">>;

/** With `linkedNames=true`: the records the page's relation values name, by id, each one's primary value (null when it has none). */
const LinkedNames = t.Optional(t.Record(t.String(), Nullable(t.String()), { description: "With linkedNames=true: the records the page's relation values name, by id: each one's primary value (its base's first text field), null when it has none." }));

export const RecordPageSchema = t.Object({ records: t.Array(RecordSchema), nextCursor: Nullable(t.String({ description: "Send as cursor for the next page; null on the last." })), linkedRecords: LinkedNames });

export const NumberedRecordPageSchema = t.Object(
  {
    records: t.Array(RecordSchema),
    total: WholeNumber({ description: "How many records match." }),
    totalPages: WholeNumber(),
    page: WholeNumber({ minimum: 1 }),
    pageSize: WholeNumber({ minimum: 1 }),
    linkedRecords: LinkedNames,
  },
  { description: "Busabase's numbered page: the records of page `page` of `pageSize`, and how many match." },
);

/**
 * Every field of the base, unset ones as null; computed fields from the record's own columns,
 * relations and lookups from `linked` (read from the links, `links.ts`), formulas from the rest
 * (`fields/formula/plan.ts`; those computed when read only given `now`).
 */
export function recordFields(row: RecordRow, fieldRows: FieldRow[], linked?: Record<string, unknown>, now: number | null = null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fieldRows) {
    const { unlinked, column } = FIELD_KINDS[field.type];
    if (unlinked) out[field.slug] = linked?.[field.slug] ?? unlinked(field.options);
    else if (column) out[field.slug] = column.read(row);
    // Until the upkeep has rewritten every record of a field being converted, its stored values are converted as they are read.
    else out[field.slug] = field.convertFrom ? convertedValue(row.data[field.slug] ?? null, field) : (row.data[field.slug] ?? null);
  }
  if (hasFormulas(fieldRows)) computeFormulas(fieldRows, out, now);
  return out;
}

/**
 * What a record answer holds: Busabase's full shape by default; the lean one leaves out the base
 * and head commit every record repeats (`include=`), and may pick field slugs (`fields=`).
 */
export interface RecordShape {
  base: boolean;
  headCommit: boolean;
  fields: readonly string[] | null;
}
export const FULL_SHAPE: RecordShape = { base: true, headCommit: true, fields: null };

function requireShapeFields(loaded: LoadedBase, shape: RecordShape): void {
  for (const slug of shape.fields ?? []) if (!loaded.fields.some((field) => field.slug === slug)) throw badRequest(`fields: the base has no field "${slug}".`);
}

/** A head commit as records show it: its payload is the record's field map, so it is not read. */
export type CommitHead = Omit<CommitRow, "payload">;

/** What a record shows of its head commit: all of it, or (the lean shape) only its parent. */
type HeadOfRecord = CommitHead | { id?: undefined; parentCommitId: string | null };

/** A record as the API shows it; `base` is one view shared by the records of a page. */
export function recordView(
  row: RecordRow,
  loaded: LoadedBase,
  head: HeadOfRecord | undefined,
  people: Map<string, UserRef>,
  base: BaseView,
  linked: Record<string, unknown> | undefined,
  now: number,
  shape: RecordShape = FULL_SHAPE,
): RecordView {
  const all = recordFields(row, loaded.fields, linked, now);
  const fields = shape.fields ? Object.fromEntries(shape.fields.map((slug) => [slug, all[slug] ?? null])) : all;
  return {
    id: row.id,
    baseId: row.baseId,
    status: row.status,
    fields,
    headCommitId: row.headCommitId,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    archivedAt: row.archivedAt,
    ...(shape.headCommit ? { headCommit: head?.id !== undefined ? commitView({ ...head, payload: fields }, people) : null } : {}),
    parentRecordId: null,
    parentCommitId: head?.parentCommitId ?? null,
    ...(shape.base ? { base } : {}),
  };
}

/**
 * A page's answer (`{ records, ... }`, records first) as the JSON text `JSON.stringify` writes for
 * it, with the base the records share written once and copied into each: a base with its fields is
 * most of a full record's bytes (2 of 3 KB for a base of nine fields), and writing it again for
 * every record was most of a page's JSON (docs/performance.md, "Linked data"). Relies on
 * `recordView` putting `base` last.
 */
export function pageJson<A extends { records: RecordView[] }>(answer: A): string {
  const texts = new Map<BaseView, string>();
  const parts = answer.records.map((record) => {
    const base = record.base;
    if (base === undefined) return JSON.stringify(record);
    let text = texts.get(base);
    if (text === undefined) texts.set(base, (text = JSON.stringify(base)));
    // A property set to undefined is left out, and the object keeps its shape (a delete would not).
    record.base = undefined;
    const own = JSON.stringify(record);
    record.base = base;
    return `${own.slice(0, -1)},"base":${text}}`;
  });
  const rest = JSON.stringify({ ...answer, records: undefined });
  return `{"records":[${parts.join(",")}]${rest === "{}" ? "" : `,${rest.slice(1, -1)}`}}`;
}

const headColumns = {
  id: commits.id,
  spaceId: commits.spaceId,
  baseId: commits.baseId,
  nodeId: commits.nodeId,
  operationId: commits.operationId,
  recordId: commits.recordId,
  parentCommitId: commits.parentCommitId,
  message: commits.message,
  authorId: commits.authorId,
  targetType: commits.targetType,
  kind: commits.kind,
  createdAt: commits.createdAt,
};
const authorColumns = { id: users.id, name: users.name, email: users.email };

const recordById = preparedFor((db) => db.select().from(records).where(and(eq(records.id, sql.placeholder("id")), eq(records.spaceId, sql.placeholder("spaceId")))).prepare());

export function findRecord(ctx: AppContext, spaceId: string, recordId: string): RecordRow {
  const row = recordById(ctx.db).get({ id: recordId, spaceId });
  if (!row) throw notFound("No such record in this space.");
  return row;
}

const RECORD_COLUMNS = Object.entries(getTableColumns(records));
/** Where a row of `recordWithHead` or `pageRows` holds the record's id, base and creation time as stored (milliseconds). */
const ID_AT = RECORD_COLUMNS.findIndex(([key]) => key === "id");
const BASE_ID_AT = RECORD_COLUMNS.findIndex(([key]) => key === "baseId");
const CREATED_AT_AT = RECORD_COLUMNS.findIndex(([key]) => key === "createdAt");
const HEAD_COLUMNS = Object.entries(headColumns);
const AUTHOR_COLUMNS = Object.entries(authorColumns);

/**
 * A record read as an array (its columns, then its head commit's from `headAt`, then the author's;
 * `lean`: then only the head's parent), as the API shows it: decoded column by column, which costs
 * less than drizzle's mapping of joined rows.
 */
function recordOfRow(values: unknown[], headAt: number, loaded: LoadedBase, people: Map<string, UserRef>, linked: LinkedValues, base: BaseView, now: number, shape: RecordShape, lean = false): RecordView {
  const row = decodeRow<RecordRow>(values, 0, RECORD_COLUMNS);
  if (lean) return recordView(row, loaded, { parentCommitId: values[headAt] as string | null }, people, base, linked.get(row.id), now, shape);
  const head = values[headAt] === null ? undefined : decodeRow<CommitHead>(values, headAt, HEAD_COLUMNS);
  const authorAt = headAt + HEAD_COLUMNS.length;
  if (values[authorAt] !== null) people.set(values[authorAt] as string, decodeRow<UserRef>(values, authorAt, AUTHOR_COLUMNS));
  return recordView(row, loaded, head, people, base, linked.get(row.id), now, shape);
}

const recordWithHead = (ctx: AppContext) =>
  compiledRows(ctx.store, "record with head", () =>
    ctx.db
      .select({ record: records, head: headColumns, author: authorColumns })
      .from(records)
      .leftJoin(commits, eq(commits.id, records.headCommitId))
      .leftJoin(users, eq(users.id, commits.authorId))
      .where(and(eq(records.id, sql.placeholder("id")), eq(records.spaceId, sql.placeholder("spaceId")))),
  );

/** One record with its head commit and author, in one query; the fields come from the base cache. */
export function getRecord(ctx: AppContext, spaceId: string, recordId: string, shape: RecordShape = FULL_SHAPE): RecordView {
  const [values] = recordWithHead(ctx)({ id: recordId, spaceId });
  if (!values) throw notFound("No such record in this space.");
  const loaded = findBase(ctx, spaceId, values[BASE_ID_AT] as string, { archived: true });
  requireShapeFields(loaded, shape);
  return recordOfRow(values, RECORD_COLUMNS.length, loaded, new Map(), linkedValues(ctx, loaded, [values[ID_AT] as string], { lookups: true }), baseView(loaded), ctx.clock.now(), shape);
}

/** A record's links either way (`GET /records/{id}/links`). */
export function linksOfRecord(ctx: AppContext, spaceId: string, recordId: string): RecordLinkView[] {
  const row = findRecord(ctx, spaceId, recordId);
  return recordLinkViews(ctx, findBase(ctx, spaceId, row.baseId, { archived: true }), row.id);
}

/** `linksOfRecord` as JSON text, for `GET /records/{id}/links` (see `recordLinksJson`). */
export function linksOfRecordJson(ctx: AppContext, spaceId: string, recordId: string): string {
  const row = findRecord(ctx, spaceId, recordId);
  return recordLinksJson(ctx, findBase(ctx, spaceId, row.baseId, { archived: true }), row.id);
}

/**
 * A record just written, as the API shows it: its links and lookups read in the same write. A new
 * record's links are the ids it was given (`given`, checked in this write), so without lookups to
 * read there is nothing to read.
 */
export function writtenView(ctx: AppContext, loaded: LoadedBase, row: RecordRow, head: CommitHead, people: Map<string, UserRef>, given?: Record<string, unknown>): RecordView {
  const linked = given && !loaded.fields.some(isLookup) ? given : linkedValues(ctx, loaded, [row.id], { lookups: true }).get(row.id);
  return recordView(row, loaded, head, people, baseView(loaded), linked, ctx.clock.now());
}

/** A record's values as stored and linked (not looked up): what a merge compares and a commit keeps. */
export function currentFields(ctx: AppContext, loaded: LoadedBase, row: RecordRow): Record<string, unknown> {
  return recordFields(row, loaded.fields, linkedValues(ctx, loaded, [row.id], { lookups: false }).get(row.id));
}

export function recordHistory(ctx: AppContext, spaceId: string, recordId: string): CommitView[] {
  findRecord(ctx, spaceId, recordId);
  const rows = ctx.db.select(commitColumns).from(commits).where(eq(commits.recordId, recordId)).orderBy(desc(commits.id)).all();
  const people = userRefs(ctx, rows.map((row) => row.authorId));
  return rows.map((row) => commitView(row, people));
}

// ---- listing: filters, sort and keyset cursors ----


export interface RecordFilter {
  fieldSlug: string;
  operator: FilterOperator;
  value?: string | string[];
}

export interface RecordQuery {
  status: RecordStatus;
  sort?: string;
  filters: RecordFilter[];
}

/** A field's value and its sortable form, as read from the record (`field_values` holds the same sortable form). */
const fieldExpression = (field: FieldRow) => ({ value: sql.raw(valueSql(field)), sortable: sql.raw(sortableSql(field)) });

function typedValue(field: FieldRow, text: string): string | number {
  if (isBoolean(field)) {
    if (text !== "true" && text !== "false") throw badRequest(`Filter values for ${field.slug} are true or false.`);
    return text === "true" ? 1 : 0;
  }
  if (isNumeric(field)) {
    const number = Number(text);
    if (text.trim() === "" || !Number.isFinite(number)) throw badRequest(`Filter values for ${field.slug} must be numbers.`);
    return number;
  }
  if (isTime(field)) {
    const moment = Date.parse(text);
    if (!Number.isFinite(moment)) throw badRequest(`Filter values for ${field.slug} must be dates or times (ISO 8601, e.g. 2026-01-31T12:00:00Z).`);
    return moment;
  }
  return text;
}

function fieldNamed(fieldRows: FieldRow[], slug: string): FieldRow {
  const field = fieldRows.find((f) => f.slug === slug);
  if (!field) throw badRequest(`The base has no field "${slug}".`);
  return field;
}

/**
 * A listing's SQL is built from its shape (the base, sort, how the page is driven, each filter's
 * field and operator) with every value as a numbered parameter, so one compiled statement serves
 * every listing of that shape: building and compiling the SQL cost more than running it.
 */
class ListingShape {
  readonly key: string[] = [];
  readonly params: Record<string, string | number> = {};
  private count = 0;

  param(value: string | number) {
    const name = `p${this.count++}`;
    this.params[name] = value;
    return sql.placeholder(name);
  }
}

/** What one listing may ask (REST and MCP alike): its work grows with these, so they are bounded. */
export const LISTING_BOUNDS = { filters: 50, inValues: 1000 } as const;

/** The values a filter compares with: `in` takes a list or a comma-separated text. */
const filterValues = (filter: RecordFilter): string[] =>
  filter.value === undefined ? [] : Array.isArray(filter.value) ? filter.value : filter.operator === "in" ? filter.value.split(",") : [filter.value];

function requireBounded(query: RecordQuery): void {
  if (query.filters.length > LISTING_BOUNDS.filters) throw badRequest(`A listing takes at most ${LISTING_BOUNDS.filters} filters; this one has ${query.filters.length}.`);
  for (const filter of query.filters) {
    const count = filterValues(filter).length;
    if (count > LISTING_BOUNDS.inValues) throw badRequest(`An in filter takes at most ${LISTING_BOUNDS.inValues} values; the one on ${filter.fieldSlug} has ${count}.`);
  }
}

/** Checks a query's filters and sort against the base's fields without running it (a view's, when it is saved). */
export function checkRecordQuery(fieldRows: FieldRow[], query: RecordQuery): void {
  requireBounded(query);
  sortPlan(fieldRows, query.sort);
  const shape = new ListingShape();
  for (const filter of query.filters) filterCondition(shape, fieldNamed(fieldRows, filter.fieldSlug), filter);
}

/** The indexed values of the field that drives a page: `field_values` as "v". */
const V = { value: sql.raw(`"v"."value"`), createdAt: sql.raw(`"v"."created_at"`), recordId: sql.raw(`"v"."record_id"`) };

/**
 * One filter as SQL, comparing `sortable`: the record's own sortable form (checked row by row), or
 * `"v"."value"` when the page is driven through the field's indexed values. Unset values (the
 * sentinel) never match `eq`, `gt`, `gte`, `in`, `lt` or `lte`, and always match `neq`. `contains`
 * and the emptiness tests read the record's value.
 */
function filterCondition(shape: ListingShape, field: FieldRow, filter: RecordFilter, sortable: SQL = fieldExpression(field).sortable): SQL {
  requireNotConverting(field);
  if (isComputedAtRead(field)) throw badRequest(`Records cannot be filtered by the ${field.type} field "${field.slug}": ${whyReadOnly(field)}`);
  const { value } = fieldExpression(field);
  const values = filterValues(filter);
  const needsValue = filter.operator !== "isEmpty" && filter.operator !== "isNotEmpty";
  if (needsValue && values.length === 0) throw badRequest(`The filter on ${field.slug} (${filter.operator}) needs a value.`);
  shape.key.push(`${field.id}:${filter.operator}`);
  const one = () => shape.param(typedValue(field, values[0]));
  const unset = unsetBoundSql(field);
  const set = unset === null ? sql`` : sql` AND ${sortable} > ${sql.raw(unset)}`;
  const empty = sql`(${value} IS NULL OR ${value} = '' OR ${value} = '[]')`;
  switch (filter.operator) {
    case "eq":
      return sql`(${sortable} = ${one()}${set})`;
    case "neq":
      return sql`${sortable} != ${one()}`;
    case "gt":
      return sql`${sortable} > ${one()}`;
    case "gte":
      return sql`(${sortable} >= ${one()}${set})`;
    case "lt":
      return sql`(${sortable} < ${one()}${set})`;
    case "lte":
      return sql`(${sortable} <= ${one()}${set})`;
    case "in":
      // One parameter, a JSON list: the statement is the same for any number of values.
      return sql`(${sortable} IN (SELECT "value" FROM json_each(${shape.param(JSON.stringify(values.map((v) => typedValue(field, v))))}))${set})`;
    case "contains":
      if (holdsChoices(field)) return sql`EXISTS (SELECT 1 FROM json_each(${records.data}, ${sql.raw(`'$."${field.slug}"'`)}) WHERE value = ${shape.param(values[0])})`;
      return sql`instr(lower(${value}), lower(${shape.param(values[0])})) > 0`;
    case "isEmpty":
      return empty;
    case "isNotEmpty":
      return sql`NOT ${empty}`;
  }
}

/** A field being converted holds values of two types for a while: it is not filtered or sorted by until they are one. */
function requireNotConverting(field: FieldRow): void {
  if (field.convertFrom) throw conflict(`"${field.slug}" is being converted to ${field.type}; filter or sort by it again in a few seconds.`, { reason: "FIELD_CONVERTING" });
}

const whyReadOnly = (field: FieldRow) => whyReadAtRead(field) ?? "";

interface SortPlan {
  /** The sort's value as read from the record. */
  expression: SQL;
  descending: boolean;
  /** What the compiled statement depends on: the column, or the field (its id, so a re-created field never meets an old statement). */
  key: string;
  /** The column sorted by, when the sort is by creation or update time rather than a field. */
  column: "created_at" | "updated_at" | null;
  field: FieldRow | null;
  /** The sort's values are moments (milliseconds in SQL; a cursor of an earlier version holds them as ISO text). */
  time: boolean;
}

function sortPlan(fieldRows: FieldRow[], sort = "-createdAt"): SortPlan {
  const descending = sort.startsWith("-");
  const key = descending ? sort.slice(1) : sort;
  if (key === "createdAt") return { expression: sql`${records.createdAt}`, descending, key: sort, column: "created_at", field: null, time: true };
  if (key === "updatedAt") return { expression: sql`${records.updatedAt}`, descending, key: sort, column: "updated_at", field: null, time: true };
  const field = fieldNamed(fieldRows, key);
  requireNotConverting(field);
  if (isUnsortable(field)) throw badRequest(`Records cannot be sorted by the ${field.type} field "${key}"${isComputedAtRead(field) ? `: ${whyReadOnly(field)}` : "."}`);
  return { expression: fieldExpression(field).sortable, descending, key: `${descending ? "-" : ""}${field.id}`, column: null, field, time: isTime(field) };
}

/** A cursor holds the last row's sort terms: `[value, id]` for a column sort, `[value, createdAt, id]` for a field's (moments as milliseconds). */
const encodeCursor = (terms: unknown[]) => Buffer.from(JSON.stringify(terms)).toString("base64url");

/** A moment of a cursor: milliseconds, or the ISO text a cursor of an earlier version holds; NaN when neither. */
const momentOf = (term: unknown) => (typeof term === "number" ? term : typeof term === "string" ? Date.parse(term) : Number.NaN);

function decodeCursor(cursor: string, plan: SortPlan): (string | number)[] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(parsed) && parsed.length === (plan.field === null ? 2 : 3) && typeof parsed.at(-1) === "string") {
      const [value, ...rest] = parsed as unknown[];
      const terms = [plan.time ? momentOf(value) : value, ...(plan.field === null ? [] : [momentOf(rest[0])]), rest.at(-1)];
      if (terms.every((term) => typeof term === "string" || (typeof term === "number" && Number.isFinite(term)))) return terms as (string | number)[];
    }
  } catch {}
  throw badRequest("The cursor is not valid; pass back a nextCursor from a previous page.");
}

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
  return [sql`"v"."field_id" = ${shape.param(field.id)}`, sql`"v"."status" = ${shape.param(status)}`, ...(filter ? [filterCondition(shape, field, filter, V.value)] : [])];
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
    const matches = compiledRows(ctx.store, shape.key.join("|"), () => ctx.db.select({ one: sql`1` }).from(sql`"field_values" AS "v"`).where(and(...where)).limit(limit))(shape.params);
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
  const from = driver.by === "records" ? sql`${records}` : sql`"field_values" AS "v" CROSS JOIN ${records} ON ${records.id} = "v"."record_id"`;
  return { from, where };
}

type ListingQuery = RecordQuery & { limit: number; cursor?: string; offset?: number; shape?: RecordShape };

/** A page's statement (shape key, builder, parameters), shared by `listRecords` and `explainListing`. */
function listingStatement(ctx: AppContext, loaded: LoadedBase, query: ListingQuery) {
  requireBounded(query);
  const plan = sortPlan(loaded.fields, query.sort);
  const driver = pageDriver(ctx, loaded, query, plan);
  const shape = new ListingShape();
  shape.key.push("list", plan.key, query.cursor ? "after" : query.offset ? "offset" : "first");
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
  // The page's rowids, in order; `pageRows` then reads those records.
  const build = () => {
    const page = ctx.db
      .select({ rowid: sql<number>`"records"."rowid"` })
      .from(from)
      .where(and(...where))
      .orderBy(...terms.map((t) => sql`${t} ${direction}`))
      .limit(limit);
    return offset ? page.offset(offset) : page;
  };
  return { key: shape.key.join("|"), build, params: shape.params, plan };
}

/**
 * The records of a page with their head commits and authors, by rowid (no second descent through
 * the id index), each with its place in the page: they are put in order in JS, since an ORDER BY
 * here would sort the wide rows again (a page of 50: 186-200 -> 144 us). Matches beyond the page
 * are never read.
 */
const pageRows = (ctx: AppContext, plan: SortPlan) =>
  compiledRows(ctx.store, `page rows|${plan.key}`, () =>
    ctx.db
      .select({ row: records, sortValue: sql`${plan.expression}`, head: headColumns, author: authorColumns, place: sql<number>`"page"."key"` })
      .from(sql`json_each(${sql.placeholder("rowids")}) AS "page"`)
      .innerJoin(records, sql`"records"."rowid" = "page"."value"`)
      .leftJoin(commits, eq(commits.id, records.headCommitId))
      .leftJoin(users, eq(users.id, commits.authorId)),
  );

/** `pageRows` for a shape without head commits: of the head, only its parent (which a record shows), and no author. */
const leanPageRows = (ctx: AppContext, plan: SortPlan) =>
  compiledRows(ctx.store, `lean page rows|${plan.key}`, () =>
    ctx.db
      .select({ row: records, sortValue: sql`${plan.expression}`, parentCommitId: commits.parentCommitId, place: sql<number>`"page"."key"` })
      .from(sql`json_each(${sql.placeholder("rowids")}) AS "page"`)
      .innerJoin(records, sql`"records"."rowid" = "page"."value"`)
      .leftJoin(commits, eq(commits.id, records.headCommitId)),
  );

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
  const statement = listingStatement(ctx, loaded, query);
  noteFieldsQueried(ctx, queriedFields(loaded, query, statement.plan));
  const rowids = compiledRows(ctx.store, statement.key, statement.build)(statement.params).map((values) => values[0]);
  const page: unknown[][] = new Array(Math.min(rowids.length, query.limit));
  const shape = query.shape ?? FULL_SHAPE;
  const rows = shape.headCommit ? pageRows(ctx, statement.plan) : leanPageRows(ctx, statement.plan);
  for (const values of rows({ rowids: JSON.stringify(rowids.slice(0, query.limit)) })) page[values.at(-1) as number] = values;
  const people = new Map<string, UserRef>();
  const base = baseView(loaded);
  const linked = linkedValues(ctx, loaded, page.map((values) => values[ID_AT] as string), { lookups: true });
  // Each row holds its sort value after the record's columns.
  const now = ctx.clock.now();
  const views = page.map((values) => recordOfRow(values, RECORD_COLUMNS.length + 1, loaded, people, linked, base, now, shape, !shape.headCommit));
  const kept = query.offset ? views.length : withinPageBudget(views);
  const more = rowids.length > query.limit || kept < views.length;
  views.length = page.length = kept;
  const last = page.at(-1);
  if (!more || !last) return { records: views, nextCursor: null };
  const sortValue = last[RECORD_COLUMNS.length];
  const id = last[ID_AT];
  return { records: views, nextCursor: encodeCursor(statement.plan.field === null ? [sortValue, id] : [sortValue, last[CREATED_AT_AT], id]) };
}

/**
 * The most record values a cursor page answers, in characters of their text: one value is bounded
 * (256 KB, stored or computed), but a page of them times its lookups is not. A page that would pass
 * it ends early (always with one record at least), and its cursor goes on from there.
 */
const PAGE_VALUE_BUDGET = 8 * 1024 * 1024;

/** How many of the page's records fit `PAGE_VALUE_BUDGET`. */
function withinPageBudget(views: { fields: Record<string, unknown> }[]): number {
  let total = 0;
  for (let i = 0; i < views.length; i++) {
    total += roughSize(views[i].fields);
    if (total > PAGE_VALUE_BUDGET && i > 0) return i;
  }
  return views.length;
}

/** About how many characters a value's JSON holds: its text, plus a little for the rest. */
function roughSize(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (Array.isArray(value)) return value.reduce((size: number, item) => size + roughSize(item), 2);
  if (typeof value !== "object" || value === null) return 8;
  let size = 2;
  for (const key in value) size += key.length + roughSize((value as Record<string, unknown>)[key]);
  return size;
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

/** How many records match: through one filter's indexed values when there is one (only those, when it is the only filter). */
export function countRecords(ctx: AppContext, loaded: LoadedBase, query: RecordQuery): { total: number } {
  requireBounded(query);
  // Unfiltered: the number the triggers of migrations/0026 keep, one row whatever the base's size.
  if (query.filters.length === 0) return { total: keptCount(ctx, loaded.base.id, query.status) };
  noteFieldsQueried(ctx, queriedFields(loaded, query, null));
  const shape = new ListingShape();
  shape.key.push("count");
  const [indexed] = indexedFilters(loaded, query, sortPlan(loaded.fields));
  const driver: Driver = indexed ? { by: "matches", ...indexed } : { by: "records" };
  const { from, where } = source(shape, loaded, query, driver);
  const alone = indexed && query.filters.length === 1;
  const [row] = compiledRows(ctx.store, shape.key.join("|") + (alone ? "|alone" : ""), () =>
    alone ? ctx.db.select({ total: sql`count(*)` }).from(sql`"field_values" AS "v"`).where(and(...where)) : ctx.db.select({ total: sql`count(*)` }).from(from).where(and(...where)),
  )(shape.params);
  return { total: row[0] as number };
}

/** A base's count of active or archived records, as the triggers of migrations/0026 keep it (bun:sqlite keeps the statement compiled). */
function keptCount(ctx: AppContext, baseId: string, status: RecordStatus): number {
  const row = ctx.store.sqlite.query<{ active: number; archived: number }, [string]>(`SELECT "active", "archived" FROM "base_record_counts" WHERE "base_id" = ?1`).get(baseId);
  return row === null ? 0 : status === "archived" ? row.archived : row.active;
}

// ---- changes applied by a merge (inside its transaction) ----

interface Authored {
  actorId: string;
  operationId: string;
  message: string | null;
  at: string;
}

function recordCommit(tx: Tx, row: RecordRow, fieldRows: FieldRow[], parentCommitId: string | null, by: Authored, kind: CommitRow["kind"], linked?: Record<string, unknown>): CommitRow {
  return insertCommit(tx, {
    spaceId: row.spaceId,
    baseId: row.baseId,
    nodeId: null,
    operationId: by.operationId,
    recordId: row.id,
    parentCommitId,
    message: by.message,
    authorId: by.actorId,
    targetType: "base",
    kind,
    payload: recordFields(row, fieldRows, linked),
    createdAt: by.at,
  });
}

const nextAutoNumber = preparedWrite((db) =>
  db
    .update(bases)
    .set({ lastAutoNumber: sql`${bases.lastAutoNumber} + 1` })
    .where(eq(bases.id, sql.placeholder("baseId")))
    .returning({ lastAutoNumber: bases.lastAutoNumber })
    .prepare(),
);

const adoptCommit = preparedWrite((db) =>
  db
    .update(commits)
    // The payload as JSON text or NULL, bound as is: drizzle would encode NULL as the JSON text "null".
    .set({ recordId: sql.placeholder("recordId"), payload: sql`${sql.placeholder("payload")}` } as never)
    .where(eq(commits.id, sql.placeholder("commitId")))
    .prepare(),
);

/** The values of a direct create's commit, written in when it stops being its record's head. */
const keepPayload = preparedWrite((db) =>
  db
    .update(commits)
    .set({ payload: sql.placeholder("payload") } as never)
    .where(and(eq(commits.id, sql.placeholder("id")), isNull(commits.payload)))
    .prepare(),
);

/**
 * Splits values to write into those the record stores and its relation values (written as links).
 * `linked` is every relation value after the write, `before` the record's until then.
 */
function splitLinked(loaded: LoadedBase, values: Record<string, unknown>, before: Record<string, unknown> = {}) {
  if (!hasLinkedFields(loaded)) return { data: values, links: null, linked: undefined };
  const data = { ...values };
  const links: Record<string, unknown> = {};
  for (const field of loaded.fields) {
    if (!isRelation(field) || !Object.hasOwn(values, field.slug)) continue;
    links[field.slug] = values[field.slug];
    delete data[field.slug];
  }
  return { data, links, linked: { ...before, ...links } };
}

/** The values of the base's stored formulas for a record about to be written (computed from its row). */
function storedFormulaValues(row: RecordRow, fieldRows: FieldRow[]): Record<string, unknown> {
  const stored = storedFormulas(fieldRows);
  if (stored.length === 0) return {};
  const values = recordFields(row, fieldRows);
  return Object.fromEntries(stored.map((field) => [field.slug, values[field.slug]]));
}

/**
 * A new record; its first commit is written, or `adopted` (the proposal's own, holding the same
 * values, as the proposal wrote it) becomes it. A commit's payload is read from the record's data
 * while it is the head, unless the record has links, which its data does not hold. The adopted
 * commit is not read back: the proposal's row in hand spared a create ~5 µs (docs/performance.md).
 */
export function insertRecord(tx: Tx, loaded: LoadedBase, values: Record<string, unknown>, by: Authored, adopted: CommitRow | null = null): { row: RecordRow; commit: CommitRow; links: Record<string, unknown> | undefined } {
  const { lastAutoNumber } = nextAutoNumber(tx).get({ baseId: loaded.base.id })!;
  const { data, links, linked } = splitLinked(loaded, values);
  const row: RecordRow = {
    id: newId("rec"),
    spaceId: loaded.base.spaceId,
    baseId: loaded.base.id,
    status: "active",
    data,
    autoNumber: lastAutoNumber,
    headCommitId: "",
    createdBy: by.actorId,
    updatedBy: by.actorId,
    createdAt: by.at,
    updatedAt: by.at,
    archivedAt: null,
  };
  const formulas = storedFormulaValues(row, loaded.fields);
  row.data = { ...data, ...formulas };
  let commit: CommitRow;
  if (adopted) {
    adoptCommit(tx).run({ recordId: row.id, commitId: adopted.id, payload: links ? JSON.stringify({ ...values, ...formulas }) : null });
    commit = { ...adopted, recordId: row.id, payload: { ...values, ...formulas } };
  } else {
    commit = recordCommit(tx, row, loaded.fields, null, by, "record_create", linked);
  }
  row.headCommitId = commit.id;
  insertRow(tx, records, row);
  if (links) writeLinks(tx, loaded, row.id, links, commit.id, by.at, true);
  return { row, commit, links: links ?? undefined };
}

const moveRecordHead = preparedWrite((db) =>
  db
    .update(records)
    .set({
      data: sql.placeholder("data"),
      status: sql.placeholder("status"),
      archivedAt: sql.placeholder("archivedAt"),
      headCommitId: sql.placeholder("headCommitId"),
      updatedBy: sql.placeholder("updatedBy"),
      updatedAt: sql.placeholder("updatedAt"),
    } as never)
    .where(eq(records.id, sql.placeholder("id")))
    .prepare(),
);

/** Writes a new state of a record as a commit on top of its head; relation values in `changes.data` are written as links. */
export function writeRecord(
  tx: Tx,
  current: RecordRow,
  loaded: LoadedBase,
  changes: Pick<RecordRow, "data" | "status" | "archivedAt">,
  by: Authored,
  kind: CommitRow["kind"],
): { row: RecordRow; commit: CommitRow } {
  const before = hasLinkedFields(loaded) ? linkedValues(tx, loaded, [current.id], { lookups: false }).get(current.id) : undefined;
  keepPayload(tx).run({ id: current.headCommitId, payload: { ...current.data, ...before } });
  const { data, links, linked } = splitLinked(loaded, changes.data, before);
  const next: RecordRow = { ...current, ...changes, data, updatedBy: by.actorId, updatedAt: by.at };
  next.data = { ...data, ...storedFormulaValues(next, loaded.fields) };
  const commit = recordCommit(tx, next, loaded.fields, current.headCommitId, by, kind, linked);
  next.headCommitId = commit.id;
  moveRecordHead(tx).run({ id: current.id, data: next.data, status: next.status, archivedAt: next.archivedAt, headCommitId: next.headCommitId, updatedBy: next.updatedBy, updatedAt: next.updatedAt });
  if (links) writeLinks(tx, loaded, current.id, links, commit.id, by.at);
  return { row: next, commit };
}

/** The names of the records a page's relation values name (`linkedNames=true`): one statement for the page. */
export function linkedNamesOf(ctx: AppContext, loaded: LoadedBase, records: RecordView[]): Record<string, string | null> {
  const relations = loaded.fields.filter(isRelation).map((field) => field.slug);
  if (relations.length === 0) return {};
  return recordNames(ctx, loaded.base.spaceId, records.flatMap((record) => relations.flatMap((slug) => idsOf(record.fields[slug]))));
}

/** The record part of an event: its view but the head commit (it repeats the values) and the base (named by `baseId`). */
export function snapshot({ headCommit: _, base: __, ...record }: RecordView): RecordSnapshot {
  return record;
}
