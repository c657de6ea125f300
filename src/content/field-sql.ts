import { comparisonOf, FIELD_KINDS } from "./fields/registry";
import { named } from "../db/client";
import { type FieldRow, records } from "../tables/content";

/**
 * How listings read a field in SQL, by how its kind compares values (`comparisonOf`). The sortable
 * form is also what `field_values` holds for an indexed field (its triggers, migrations/0029, write
 * the same value), so a filter or sort may be answered from either.
 */

/** The record's own column that holds a system field's value, as SQL names it. */
const columnOf = (field: Pick<FieldRow, "type">) => {
  const column = FIELD_KINDS[field.type].column;
  return column && named(records[column.key]);
};
const DATA = named(records.data);
const RECORDS = `${named(records)}.`;

type FieldShape = Pick<FieldRow, "type" | "options">;

/** Fields whose values are not in the record's row (links, formulas reading links or the clock): a listing cannot compare them in SQL. */
export const isComputedAtRead = (field: FieldShape): boolean => comparisonOf(field) === "read";

/** Fields that cannot be sorted or range-filtered: their values are lists or documents, or are not in the record's row. */
export const isUnsortable = (field: FieldShape): boolean => ["choices", "list", "read"].includes(comparisonOf(field));

/** Fields compared as true or false: a checkbox, a formula yielding one. */
export const isBoolean = (field: FieldShape): boolean => comparisonOf(field) === "flag";

/** Fields compared as numbers (a true or false as 1 or 0), as the triggers of migrations/0029 also decide. */
export const isNumeric = (field: FieldShape): boolean => comparisonOf(field) === "number" || isBoolean(field);

/** Fields whose `contains` matches one of their choices. */
export const holdsChoices = (field: FieldShape): boolean => comparisonOf(field) === "choices";

/** What an unset value sorts as: below every number, or the empty string; so keyset comparisons never meet a NULL. */
const sentinelOf = (field: FieldRow) => (isNumeric(field) ? String(-Number.MAX_VALUE) : "''");

/** Ids and slugs come from the server's own generators and checks; this guards the SQL they are written into. */
function safe(text: string, pattern: RegExp): string {
  if (!pattern.test(text)) throw new Error(`refusing to write ${JSON.stringify(text)} into SQL`);
  return text;
}
const ID = /^[a-z]{3}_[0-9A-Za-z]+$/;
const SLUG = /^[a-z0-9_-]{1,64}$/;

/** Fields whose values are moments: stored as milliseconds (`instant`), shown and matched by `contains` as ISO text. */
export const isTime = (field: FieldShape) => comparisonOf(field) === "moment";

/** The field's value as the API shows it (NULL when unset); `table` qualifies the column in a query, and is empty in an index. */
export function valueSql(field: FieldRow, table = RECORDS): string {
  const column = columnOf(field);
  if (column && isTime(field)) return `strftime('%Y-%m-%dT%H:%M:%fZ', ${table}${column} / 1000.0, 'unixepoch')`;
  if (column) return `${table}${column}`;
  return `json_extract(${table}${DATA}, '$."${safe(field.slug, SLUG)}"')`;
}

/** The value as sorts and indexed filters see it: unset as the sentinel. Computed columns are never NULL. */
export function sortableSql(field: FieldRow, table = RECORDS): string {
  const column = columnOf(field);
  if (column) return `${table}${column}`;
  return `coalesce(${valueSql(field, table)}, ${sentinelOf(field)})`;
}

/** The bound below which only unset values sort: `lt` and `lte` must stop above it. */
export const unsetBoundSql = (field: FieldRow): string | null => (columnOf(field) ? null : sentinelOf(field));

/** The base in a listing's SQL as a literal: one statement per base, whose plan SQLite picks for it. */
export const baseLiteral = (baseId: string) => `'${safe(baseId, ID)}'`;

/** A field `field_values` can hold: not lists or documents, and not the timestamps `records` already indexes. */
export const isIndexable = (field: FieldShape) => !isUnsortable(field) && !isTime(field);
