import type { Database } from "bun:sqlite";
import type { FieldRow } from "./bases";
import type { FieldType } from "./field-types";

/**
 * How listings read a field in SQL, and the one expression index per field that answers its
 * filters and sorts. The index and the queries are written from the same text, so SQLite's planner
 * (which matches index expressions literally) always finds it.
 */

const COMPUTED_COLUMNS: Partial<Record<FieldType, string>> = {
  created_time: "created_at",
  updated_time: "updated_at",
  created_by: "created_by",
  updated_by: "updated_by",
  auto_number: "auto_number",
};

const NUMERIC_TYPES: ReadonlySet<FieldType> = new Set(["number", "auto_number", "checkbox"]);

/** Fields that cannot be sorted or range-filtered: their values are lists or documents. */
export const UNSORTABLE_TYPES: ReadonlySet<FieldType> = new Set(["multiselect", "json"]);

/** What an unset value sorts as: below every number, or the empty string; so keyset comparisons never meet a NULL. */
const sentinelOf = (field: FieldRow) => (NUMERIC_TYPES.has(field.type) ? String(-Number.MAX_VALUE) : "''");

export const isNumeric = (field: FieldRow) => NUMERIC_TYPES.has(field.type);

/** Ids and slugs come from the server's own generators and checks; this guards the SQL they are written into. */
function safe(text: string, pattern: RegExp): string {
  if (!pattern.test(text)) throw new Error(`refusing to write ${JSON.stringify(text)} into SQL`);
  return text;
}
const ID = /^[a-z]{3}_[0-9A-Za-z]+$/;
const SLUG = /^[a-z0-9_-]{1,64}$/;

/** Fields whose values are moments: stored as milliseconds (`instant`), shown and matched by `contains` as ISO text. */
export const isTime = (field: Pick<FieldRow, "type">) => field.type === "created_time" || field.type === "updated_time";

/** The field's value as the API shows it (NULL when unset); `table` qualifies the column in a query, and is empty in an index. */
export function valueSql(field: FieldRow, table = '"records".'): string {
  const column = COMPUTED_COLUMNS[field.type];
  if (column && isTime(field)) return `strftime('%Y-%m-%dT%H:%M:%fZ', ${table}"${column}" / 1000.0, 'unixepoch')`;
  if (column) return `${table}"${column}"`;
  return `json_extract(${table}"data", '$."${safe(field.slug, SLUG)}"')`;
}

/** The value as sorts and indexed filters see it: unset as the sentinel. Computed columns are never NULL. */
export function sortableSql(field: FieldRow, table = '"records".'): string {
  const column = COMPUTED_COLUMNS[field.type];
  if (column) return `${table}"${column}"`;
  return `coalesce(${valueSql(field, table)}, ${sentinelOf(field)})`;
}

/** The bound below which only unset values sort: `lt` and `lte` must stop above it. */
export const unsetBoundSql = (field: FieldRow): string | null => (COMPUTED_COLUMNS[field.type] ? null : sentinelOf(field));

/** The base in a listing's SQL as a literal, so SQLite may use that base's partial indexes. */
export const baseLiteral = (baseId: string) => `'${safe(baseId, ID)}'`;

const INDEX_PREFIX = "records_f_";

/** A field gets an index but for lists and documents, and the timestamps the table already indexes. */
export const hasFieldIndex = (field: Pick<FieldRow, "type">) => !UNSORTABLE_TYPES.has(field.type) && !isTime(field);

function indexSql(field: FieldRow): string | null {
  if (!hasFieldIndex(field)) return null;
  const name = `${INDEX_PREFIX}${safe(field.id, ID)}`;
  // Then creation order: an `eq` page in the default order (newest first) is read from here in order; ties of a sort by the field follow it too.
  return `CREATE INDEX "${name}" ON "records" ("status", ${sortableSql(field, "")}, "created_at", "id") WHERE "base_id" = ${baseLiteral(field.baseId)}`;
}

/**
 * Makes the field indexes match the fields: creates the missing ones, drops those of deleted
 * fields and bases. Runs inside the write that changed the fields (and at start-up), so an index
 * exists exactly when its field does.
 */
export function syncFieldIndexes(sqlite: Database): void {
  if (!sqlite.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'fields'").get()) return;
  const existing = new Map(
    (sqlite.query(`SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND name LIKE '${INDEX_PREFIX}%'`).all() as { name: string; sql: string }[]).map((row) => [row.name, row.sql]),
  );
  const wanted = new Map<string, string>();
  for (const field of sqlite.query('SELECT id, base_id AS baseId, slug, type FROM "fields"').all() as FieldRow[]) {
    const ddl = indexSql(field);
    if (ddl) wanted.set(`${INDEX_PREFIX}${field.id}`, ddl);
  }
  for (const [name, ddl] of existing) if (wanted.get(name) !== ddl) sqlite.run(`DROP INDEX "${name}"`);
  for (const [name, ddl] of wanted) if (existing.get(name) !== ddl) sqlite.run(ddl);
}
