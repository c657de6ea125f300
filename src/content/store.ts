import { type SQL, sql } from "drizzle-orm";
import type { AppContext, Tx } from "../context";
import { named as n, rawStatement } from "../db/client";
import { nodes, records, views } from "../tables/content";
import { fieldValues as v } from "../tables/derived/tables";

/**
 * Content's raw SQL besides the relations' (`relations/store.ts`): records read by many ids at once,
 * the tree walked up, what views name, and what the field upkeep writes a bounded step at a time
 * (the fields' indexed values, the stored values of formulas). Names come from the tables'
 * declarations.
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

const R = n(records);
const RECORD_STATES = `SELECT ${n(records.id)} AS "id", ${n(records.baseId)} AS "baseId", ${n(records.status)} AS "status" FROM ${R} WHERE ${n(records.id)} IN (SELECT "value" FROM json_each(?1))`;

/** The base and status of each record `ids` names (read by id alone: a seek per id; with the base in the WHERE, SQLite walked the base's index). */
export const recordStates = (ctx: AppContext, ids: string[]) => rawStatement<{ id: string; baseId: string; status: string }, [string]>(ctx.store, RECORD_STATES).all(JSON.stringify(ids));

const RECORD_DATA = `SELECT ${n(records.id)} AS "id", ${n(records.baseId)} AS "baseId", ${n(records.data)} AS "data" FROM ${R} WHERE ${n(records.spaceId)} = ?1 AND ${n(records.id)} IN (SELECT "value" FROM json_each(?2))`;

/** The stored values (JSON text) of each record of the space that `ids` names. */
export const recordData = (ctx: AppContext, spaceId: string, ids: string[]) => rawStatement<{ id: string; baseId: string; data: string }, [string, string]>(ctx.store, RECORD_DATA).all(spaceId, JSON.stringify(ids));

const N = n(nodes);
const UP = `WITH RECURSIVE up(id, parent) AS (SELECT ${n(nodes.id)}, ${n(nodes.parentId)} FROM ${N} WHERE ${n(nodes.id)} = ?1
  UNION ALL SELECT ${N}.${n(nodes.id)}, ${N}.${n(nodes.parentId)} FROM ${N} JOIN up ON ${N}.${n(nodes.id)} = up.parent)`;

/** How many folders are above a node (0 for the root). */
export const depthOf = (ctx: AppContext, nodeId: string): number => rawStatement<{ n: number }, [string]>(ctx.store, `${UP} SELECT count(*) - 1 AS "n" FROM up`).get(nodeId)!.n;

/** The ids of the folders above a node, nearest first (the folder depth bounds the walk). */
export const ancestorsOf = (ctx: AppContext, nodeId: string): string[] =>
  rawStatement<{ id: string }, [string]>(ctx.store, `${UP} SELECT id FROM up WHERE id != ?1`)
    .all(nodeId)
    .map((row) => row.id);

const NAMED_BY_VIEWS = `SELECT DISTINCT json_extract(item."value", '$.fieldId') AS "id" FROM ${n(views)} v, json_each(v.${n(views.config)}) part, json_each(part."value") item
  WHERE v.${n(views.status)} = 'active' AND json_valid(v.${n(views.config)}) AND json_type(v.${n(views.config)}) = 'object' AND part."key" IN ('filters', 'sorts') AND part."type" = 'array' AND item."type" = 'object'`;

/**
 * The ids of the fields every active view filters or sorts by. Read in SQL, tolerating any stored
 * shape: a view row no client could have written must not stop the upkeep.
 */
export const fieldsNamedByViews = (ctx: AppContext): string[] =>
  rawStatement<{ id: unknown }, []>(ctx.store, NAMED_BY_VIEWS)
    .all()
    .map((row) => row.id)
    .filter((id): id is string => typeof id === "string");
