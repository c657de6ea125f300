import type { AppContext, Tx } from "../../context";
import { named as n, rawStatement } from "../../db/client";
import { RECORD_LINKS_TARGET_INDEX, recordLinks as l, records as r } from "../../tables/content";

/**
 * The relations' raw SQL, on paths drizzle builds too slowly for (every link a write touches, a
 * page's links in one statement); each name from the tables' declarations. A link is stored once,
 * under the pair's owner (`schema.ts`): the owner's record is its source, the inverse's its target.
 */

/** The columns of one side of a pair: the record's own, the other's, and their places in each list. */
const SIDES = {
  owner: { near: l.sourceRecordId, far: l.targetRecordId, nearPlace: l.position, farPlace: l.targetPosition },
  inverse: { near: l.targetRecordId, far: l.sourceRecordId, nearPlace: l.targetPosition, farPlace: l.position },
};
export type SideName = keyof typeof SIDES;

const L = n(l);
const sideSql = ({ near, far, nearPlace, farPlace }: (typeof SIDES)[SideName]) => ({
  held: `SELECT ${n(far)} AS "far", ${n(nearPlace)} AS "place" FROM ${L} WHERE ${n(near)} = ?1 AND ${n(l.fieldId)} = ?2`,
  remove: `DELETE FROM ${L} WHERE ${n(near)} = ?1 AND ${n(l.fieldId)} = ?2 AND ${n(far)} = ?3`,
  move: `UPDATE ${L} SET ${n(nearPlace)} = ?4, ${n(l.commitId)} = ?5, ${n(l.updatedAt)} = ?6 WHERE ${n(near)} = ?1 AND ${n(l.fieldId)} = ?2 AND ${n(far)} = ?3`,
  farHolds: `SELECT count(*) AS "count", max(${n(farPlace)}) AS "last" FROM ${L} WHERE ${n(far)} = ?1 AND ${n(l.fieldId)} = ?2`,
});
const SIDE_SQL = { owner: sideSql(SIDES.owner), inverse: sideSql(SIDES.inverse) };

/** The records `recordId` links through the pair `ownerId` from its side, with its places in their lists. */
export const heldLinks = (tx: Tx, side: SideName, recordId: string, ownerId: string) => rawStatement<{ far: string; place: number }, [string, string]>(tx.store, SIDE_SQL[side].held).all(recordId, ownerId);

export const removeLink = (tx: Tx, side: SideName, recordId: string, ownerId: string, far: string) => void rawStatement(tx.store, SIDE_SQL[side].remove).run(recordId, ownerId, far);

/** Moves a kept link to `place` in `recordId`'s list. */
export const moveLink = (tx: Tx, side: SideName, recordId: string, ownerId: string, far: string, place: number, commitId: string, moment: number) =>
  void rawStatement(tx.store, SIDE_SQL[side].move).run(recordId, ownerId, far, place, commitId, moment);

/** How many links the far record holds through the pair, and the last place in its list. */
export const farHolds = (tx: Tx, side: SideName, far: string, ownerId: string) => rawStatement<{ count: number; last: number | null }, [string, string]>(tx.store, SIDE_SQL[side].farHolds).get(far, ownerId)!;

const DROP = `DELETE FROM ${L} WHERE ${n(l.fieldId)} = ?1 AND (${n(l.sourceRecordId)}, ${n(l.targetRecordId)}) IN (SELECT ${n(l.sourceRecordId)}, ${n(l.targetRecordId)} FROM ${L} WHERE ${n(l.fieldId)} = ?1 LIMIT ?2)`;

/** Removes up to `limit` links of a deleted field (the upkeep's step); answers how many went. */
export const dropLinks = (tx: Tx, fieldId: string, limit: number): number => rawStatement(tx.store, DROP).run(fieldId, limit).changes;

/** A link row as `linkRows` reads it: which side, the pair, the record, the linked record, its place; with `columns`, the linked record's own columns. */
export type LinkRow = [side: number, ownerId: string, near: string, far: string, place: number, createdAt?: number, updatedAt?: number, createdBy?: string, updatedBy?: string, autoNumber?: number];

/**
 * The links of records, both sides; with `columns`, the linked record's columns a lookup may read.
 * CROSS JOIN pins the order (links by record, then each linked record by id): statistics taken
 * while the tables were small (or none) would otherwise have SQLite read a field's every link, or
 * every record, first (measured: 45 ms instead of 0.3 for a record with 100 links).
 */
function linkRowsSql(far: "none" | "columns"): string {
  const columns = far === "none" ? "" : `, o.${n(r.createdAt)}, o.${n(r.updatedAt)}, o.${n(r.createdBy)}, o.${n(r.updatedBy)}, o.${n(r.autoNumber)}`;
  const side = (index: number, { near, far: other, nearPlace }: (typeof SIDES)[SideName], fieldIds: string) =>
    `SELECT ${index}, l.${n(l.fieldId)}, l.${n(near)}, l.${n(other)}, l.${n(nearPlace)}${columns} FROM json_each(${fieldIds}) fi CROSS JOIN json_each(?1) p
      CROSS JOIN ${L} l ON l.${n(l.fieldId)} = fi."value" AND l.${n(near)} = p."value"
      CROSS JOIN ${n(r)} o ON o.${n(r.id)} = l.${n(other)} AND o.${n(r.status)} = 'active'`;
  return `${side(0, SIDES.owner, "?2")}\n    UNION ALL\n    ${side(1, SIDES.inverse, "?3")}`;
}
const LINK_ROWS = { none: linkRowsSql("none"), columns: linkRowsSql("columns") };

/** The links of `recordIds` through the pairs they own (`owned`) and those they are the inverse of, in one statement. */
export const linkRows = (ctx: AppContext, far: "none" | "columns", recordIds: string[], owned: string[], inverse: string[]): LinkRow[] =>
  rawStatement<unknown, [string, string, string]>(ctx.store, LINK_ROWS[far]).values(JSON.stringify(recordIds), JSON.stringify(owned), JSON.stringify(inverse)) as LinkRow[];

/**
 * The stored values of `slugs` of each record of `ids` (JSON text, null when unset). Slugs match
 * FIELD_SLUG_PATTERN (letters, digits, _ and -), so each is a safe JSON path key.
 */
export function storedValues(ctx: AppContext, ids: string[], slugs: string[]): [string, ...(string | null)[]][] {
  const columns = slugs.map((slug) => `o.${n(r.data)} -> '$."${slug}"'`).join(", ");
  return rawStatement<unknown, [string]>(ctx.store, `SELECT o.${n(r.id)}, ${columns} FROM json_each(?1) i CROSS JOIN ${n(r)} o ON o.${n(r.id)} = i."value"`).values(JSON.stringify(ids)) as [string, ...(string | null)[]][];
}

/**
 * Every link of a record, both ways, whole rows after the side they were found from (0: the record
 * is their source, 1: their target, a link to itself once). The incoming part names its index:
 * without statistics SQLite reads a WITHOUT ROWID table's rows through its key on field_id alone,
 * every link of the field (measured: 9.5 ms instead of 0.15 ms for 100 links among 40,000).
 */
function linksOfRecordSql(): string {
  const part = (index: number, fieldIds: string, { near, far }: (typeof SIDES)[SideName], indexedBy = "") =>
    `SELECT ${index}, l.* FROM json_each(${fieldIds}) p CROSS JOIN ${L} l ${indexedBy} ON l.${n(l.fieldId)} = p."value" AND l.${n(near)} = ?1
       CROSS JOIN ${n(r)} o ON o.${n(r.id)} = l.${n(far)} AND o.${n(r.status)} = 'active'`;
  return `${part(0, "?2", SIDES.owner)}\n       UNION ALL ${part(1, "?3", SIDES.inverse, `INDEXED BY "${RECORD_LINKS_TARGET_INDEX}"`)} AND l.${n(l.sourceRecordId)} != ?1`;
}
const LINKS_OF_RECORD = linksOfRecordSql();

export const linksOfRecord = (ctx: AppContext, recordId: string, owned: string[], inverse: string[]): unknown[][] =>
  rawStatement<unknown, [string, string, string]>(ctx.store, LINKS_OF_RECORD).values(recordId, JSON.stringify(owned), JSON.stringify(inverse)) as unknown[][];
