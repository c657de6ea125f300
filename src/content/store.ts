import { type SQL, sql } from "drizzle-orm";
import type { Tx } from "../context";
import { named as n, rawStatement } from "../db/client";
import { records } from "../tables/content";
import { fieldValues as v } from "../tables/derived/tables";

/**
 * Content's raw SQL besides the relations' (`relations/store.ts`): what the field upkeep writes a
 * bounded step at a time, the fields' indexed values and the stored values of formulas. Names come
 * from the tables' declarations.
 */

const V = n(v);
const VALUE_COLUMNS = [v.fieldId, v.status, v.value, v.createdAt, v.recordId].map(n).join(", ");

/** Indexes the records `where` selects under `fieldId`, each by its sortable value (`sortable`, from `field-sql.ts`). */
export function fillIndexedValues(tx: Tx, fieldId: string, sortable: string, where: SQL): void {
  tx.db.run(sql`INSERT OR IGNORE INTO ${v} (${sql.raw(VALUE_COLUMNS)}) SELECT ${fieldId}, ${records.status}, ${sql.raw(sortable)}, ${records.createdAt}, ${records.id} FROM ${records} WHERE ${where}`);
}

const REMOVE = `DELETE FROM ${V} WHERE ${n(v.fieldId)} = ?1 AND (${n(v.status)}, ${n(v.value)}, ${n(v.createdAt)}, ${n(v.recordId)}) IN
  (SELECT ${n(v.status)}, ${n(v.value)}, ${n(v.createdAt)}, ${n(v.recordId)} FROM ${V} WHERE ${n(v.fieldId)} = ?1 LIMIT ?2)`;

/** Removes up to `limit` of a field's indexed values; answers how many. */
export const removeIndexedValues = (tx: Tx, fieldId: string, limit: number): number => rawStatement(tx.store, REMOVE).run(fieldId, limit).changes;

const STORE_VALUE = `UPDATE ${n(records)} SET ${n(records.data)} = json_set(${n(records.data)}, ?1, json(?2)) WHERE ${n(records.id)} = ?3`;

/** Sets one value (JSON text) at `path` of a record's data, leaving the rest as it is. */
export const storeValue = (tx: Tx, recordId: string, path: string, json: string): void => void rawStatement(tx.store, STORE_VALUE).run(path, json, recordId);
