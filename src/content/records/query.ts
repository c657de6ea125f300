import { alias } from "drizzle-orm/sqlite-core";
import { named } from "../../db/client";
import { foldAccents } from "../../db/functions";
import { fieldValues } from "../../tables/derived/tables";
import { comparisonOf, whyReadAtRead } from "../fields/registry";
import { type SQL, sql } from "drizzle-orm";
import { badRequest, conflict } from "../../shared/errors";
import { holdsChoices, isBoolean, isNumeric, isComputedAtRead, isTime, isUnsortable, sortableSql, unsetBoundSql, valueSql } from "../field-sql";
import { type FilterOperator, VALUELESS_OPERATORS } from "../../shared/field-types";
import { type FieldRow } from "../bases";
import { records, type RecordStatus } from "../../tables/content";

/** A listing's query compiled: filters and a sort checked against the base's fields, as SQL with numbered parameters, and keyset cursors. */

export interface RecordFilter {
  fieldSlug: string;
  operator: FilterOperator;
  value?: string | string[];
}

/**
 * Conditions combined by `match`: `all` (AND) or `any` (OR), each a filter or a group of its own,
 * at most `LISTING_BOUNDS.groupDepth` groups deep. A listing's groups are ANDed with its filters.
 */
export interface FilterGroup {
  match: "all" | "any";
  filters: RecordFilter[];
  groups: FilterGroup[];
}

export interface RecordQuery {
  status: RecordStatus;
  sort?: string;
  filters: RecordFilter[];
  /** Groups of conditions, each ANDed with `filters` (which alone may drive a page through an index). */
  groups?: FilterGroup[];
}

/** A field's value and its sortable form, as read from the record (`field_values` holds the same sortable form). */
function fieldExpression(field: FieldRow): { value: SQL; sortable: SQL } {
  let found = expressions.get(field);
  if (found === undefined) expressions.set(field, (found = { value: sql.raw(valueSql(field)), sortable: sql.raw(sortableSql(field)) }));
  return found;
}

/**
 * Memos of a loaded base's field rows, which never change (a change to a field loads the base
 * again, with new rows): each field's expressions, and each sort's plan, are written once instead
 * of for every page.
 */
const expressions = new WeakMap<FieldRow, { value: SQL; sortable: SQL }>();
const sortPlans = new WeakMap<FieldRow[], Map<string, SortPlan>>();

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

export function fieldNamed(fieldRows: FieldRow[], slug: string): FieldRow {
  const field = fieldRows.find((f) => f.slug === slug);
  if (!field) throw badRequest(`The base has no field "${slug}".`);
  return field;
}

/**
 * A listing's SQL is built from its shape (the base, sort, how the page is driven, each filter's
 * field and operator) with every value as a numbered parameter, so one compiled statement serves
 * every listing of that shape: building and compiling the SQL cost more than running it.
 */
export class ListingShape {
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
export const LISTING_BOUNDS = { filters: 50, inValues: 1000, groupDepth: 3 } as const;

/** The values a filter compares with: `in` takes a list or a comma-separated text. */
const filterValues = (filter: RecordFilter): string[] =>
  filter.value === undefined ? [] : Array.isArray(filter.value) ? filter.value : filter.operator === "in" ? filter.value.split(",") : [filter.value];

/** Every filter of a query, its groups' included. */
export const allFilters = (query: Pick<RecordQuery, "filters" | "groups">): RecordFilter[] => [...query.filters, ...(query.groups ?? []).flatMap((group) => allFilters(group))];

export function requireBounded(query: RecordQuery): void {
  const filters = allFilters(query);
  if (filters.length > LISTING_BOUNDS.filters) throw badRequest(`A listing takes at most ${LISTING_BOUNDS.filters} filters; this one has ${filters.length}.`);
  const deepest = (groups: FilterGroup[] = []): number => Math.max(0, ...groups.map((group) => 1 + deepest(group.groups)));
  if (deepest(query.groups) > LISTING_BOUNDS.groupDepth) throw badRequest(`Filter groups nest at most ${LISTING_BOUNDS.groupDepth} deep.`);
  for (const filter of filters) {
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
  for (const group of query.groups ?? []) groupCondition(shape, fieldRows, group);
}

/** A group of conditions as SQL: its filters and groups joined by AND (`all`) or OR (`any`); an empty group holds for every record. */
export function groupCondition(shape: ListingShape, fieldRows: FieldRow[], group: FilterGroup): SQL {
  shape.key.push(`${group.match}(`);
  const parts = [...group.filters.map((filter) => filterCondition(shape, fieldNamed(fieldRows, filter.fieldSlug), filter)), ...group.groups.map((inner) => groupCondition(shape, fieldRows, inner))];
  shape.key.push(")");
  return parts.length === 0 ? sql`1` : sql`(${sql.join(parts, sql.raw(group.match === "all" ? " AND " : " OR "))})`;
}

const INDEXED_AS = "v";
/** The indexed values of the field that drives a page: `field_values` as "v". */
export const indexed = alias(fieldValues, INDEXED_AS);
/** `indexed` in a FROM (a template writes an alias by its name alone). */
export const INDEXED_FROM = sql.raw(`${named(fieldValues)} AS "${INDEXED_AS}"`);
export const V = { value: sql`${indexed.value}`, createdAt: sql`${indexed.createdAt}`, recordId: sql`${indexed.recordId}` };

/**
 * A query whose only condition is a `contains` of a non-empty text on a text field whose values are
 * indexed: its matches are found among the field's entries in `field_values` (one contiguous range
 * of short rows) rather than in every record's document. An unset value is `''` there, which
 * contains no non-empty text, as NULL contains none in the record.
 */
export function containsOnValues(fieldRows: FieldRow[], query: RecordQuery): { field: FieldRow; filter: RecordFilter } | null {
  const [filter] = query.filters;
  if (allFilters(query).length !== 1 || query.filters.length !== 1 || filter.operator !== "contains") return null;
  if (typeof filter.value !== "string" || filter.value === "") return null;
  const field = fieldNamed(fieldRows, filter.fieldSlug);
  return field.indexState === "ready" && !field.convertFrom && comparisonOf(field) === "text" ? { field, filter } : null;
}

/**
 * One filter as SQL, comparing `sortable`: the record's own sortable form (checked row by row), or
 * `"v"."value"` when the page is driven through the field's indexed values. Unset values (the
 * sentinel) never match `eq`, `gt`, `gte`, `in`, `lt` or `lte`, and always match `neq`. `contains`
 * and the emptiness tests read the record's value.
 */
export function filterCondition(shape: ListingShape, field: FieldRow, filter: RecordFilter, sortable: SQL = fieldExpression(field).sortable): SQL {
  requireNotConverting(field);
  if (isComputedAtRead(field)) throw badRequest(`Records cannot be filtered by the ${field.type} field "${field.slug}": ${whyReadOnly(field)}`);
  const { value } = fieldExpression(field);
  const values = filterValues(filter);
  const needsValue = !VALUELESS_OPERATORS.has(filter.operator);
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
    case "contains": {
      if (holdsChoices(field)) return sql`EXISTS (SELECT 1 FROM json_each(${records.data}, ${sql.raw(`'$."${field.slug}"'`)}) WHERE value = ${shape.param(values[0])})`;
      // Read from the indexed values, a text's sortable form is the text itself (`containsOnValues`).
      return sql`instr(${folded(sortable === V.value ? V.value : value)}, ${shape.param(foldAccents(values[0]))}) > 0`;
    }
    case "isEmpty":
      return empty;
    case "isNotEmpty":
      return sql`NOT ${empty}`;
    case "equals":
      // Busabase's: the value as text, whole, in any case (a number or flag as the typed `eq`).
      if (isNumeric(field)) return sql`(${sortable} = ${one()}${set})`;
      return sql`${folded(value)} = ${shape.param(foldAccents(values[0]))}`;
    case "is_empty":
      return sql`(${empty} OR ${value} = '-')`;
    case "not_empty":
      return sql`NOT (${empty} OR ${value} = '-')`;
    case "is_true":
      return sql`(${value} = 1 OR ${value} = 'true')`;
    case "is_false":
      // An unset value is false: an unset checkbox is an unticked one.
      return isBoolean(field) ? sql`(${value} IS NULL OR ${value} = 0)` : sql`(${value} IS NULL OR ${value} = 'false')`;
  }
}

/**
 * A value as `contains` and `equals` compare it, in any case and without accents ("zoe" finds "Zoë",
 * "CAFÉ" finds "cafe"; the condition's own text is folded by `foldAccents` once): SQLite's `lower()`
 * for a value of ASCII only (as many characters as bytes), as fast as before; `fold()`
 * (`db/functions.ts`) for any other.
 */
const folded = (value: SQL): SQL => sql`(CASE WHEN length(${value}) = octet_length(${value}) THEN lower(${value}) ELSE fold(${value}) END)`;

/** A field being converted holds values of two types for a while: it is not filtered or sorted by until they are one. */
function requireNotConverting(field: FieldRow): void {
  if (field.convertFrom) throw conflict(`"${field.slug}" is being converted to ${field.type}; filter or sort by it again in a few seconds.`, { reason: "FIELD_CONVERTING" });
}

const whyReadOnly = (field: FieldRow) => whyReadAtRead(field) ?? "";

export interface SortPlan {
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

export function sortPlan(fieldRows: FieldRow[], sort = "-createdAt"): SortPlan {
  let plans = sortPlans.get(fieldRows);
  if (plans === undefined) sortPlans.set(fieldRows, (plans = new Map()));
  let plan = plans.get(sort);
  if (plan === undefined) plans.set(sort, (plan = sortPlanOf(fieldRows, sort)));
  return plan;
}

function sortPlanOf(fieldRows: FieldRow[], sort: string): SortPlan {
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
export const encodeCursor = (terms: unknown[]) => Buffer.from(JSON.stringify(terms)).toString("base64url");

/** A moment of a cursor: milliseconds, or the ISO text a cursor of an earlier version holds; NaN when neither. */
const momentOf = (term: unknown) => (typeof term === "number" ? term : typeof term === "string" ? Date.parse(term) : Number.NaN);

export function decodeCursor(cursor: string, plan: SortPlan): (string | number)[] {
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
