import type { AppContext, Tx } from "../context";
import { named as n, rawStatement } from "../db/client";
import { typesWith } from "../shared/field-types";
import { operations } from "../tables/changes";
import { bases, commits, fields, nodeFiles, nodes, records } from "../tables/content";

/** The assets' raw SQL: what names an asset, read over every record's files and every pending proposal; names from the tables. */

const F = "f";
const R = "r";
const NAMED_BY_RECORDS = `SELECT json_extract(item.value, '$.id') AS id FROM ${n(fields)} ${F} JOIN ${n(records)} ${R} ON ${R}.${n(records.baseId)} = ${F}.${n(fields.baseId)},
  json_each(${R}.${n(records.data)}, '$."' || ${F}.${n(fields.slug)} || '"') AS item
  WHERE ${F}.${n(fields.type)} IN (SELECT value FROM json_each(?1))`;

/** The ids of the assets the records' file fields name. */
export const assetsNamedByRecords = (tx: Tx): string[] =>
  rawStatement<{ id: string }, [string]>(tx.store, NAMED_BY_RECORDS)
    .all(JSON.stringify(typesWith("holdsFiles")))
    .map((row) => row.id);

const PENDING_PAYLOADS = `SELECT c.${n(commits.payload)} AS payload FROM ${n(operations)} o JOIN ${n(commits)} c ON c.${n(commits.id)} = o.${n(operations.headCommitId)}
  WHERE o.${n(operations.status)} = 'pending' AND instr(c.${n(commits.payload)}, 'ast_') > 0`;

/** The payloads of pending proposals that may name an asset (their text holds an asset id). */
export const pendingPayloadsNamingAssets = (tx: Tx): string[] => rawStatement<{ payload: string }, []>(tx.store, PENDING_PAYLOADS).all().map((row) => row.payload);

const NAMED_IN_SPACE = `SELECT json_extract(item.value, '$.id') AS "assetId", ${R}.${n(records.id)} AS "recordId", ${R}.${n(records.baseId)} AS "baseId", ${F}.${n(fields.slug)} AS "fieldSlug", ${R}.${n(records.createdAt)} AS "createdAt"
  FROM ${n(fields)} ${F} JOIN ${n(bases)} b ON b.${n(bases.id)} = ${F}.${n(fields.baseId)} JOIN ${n(records)} ${R} ON ${R}.${n(records.baseId)} = ${F}.${n(fields.baseId)},
  json_each(${R}.${n(records.data)}, '$."' || ${F}.${n(fields.slug)} || '"') AS item
  WHERE b.${n(bases.spaceId)} = ?1 AND ${F}.${n(fields.type)} IN (SELECT value FROM json_each(?2)) AND ${R}.${n(records.status)} = 'active'`;

/** Each active record value of the space that names an asset: which asset, which record and field. Read in one statement over the space's file fields. */
export const assetUsagesInSpace = (ctx: AppContext, spaceId: string) =>
  rawStatement<{ assetId: string; recordId: string; baseId: string; fieldSlug: string; createdAt: number }, [string, string]>(ctx.store, NAMED_IN_SPACE)
    .all(spaceId, JSON.stringify(typesWith("holdsFiles")))
    .map((usage) => ({ ...usage, createdAt: records.createdAt.mapFromDriverValue(usage.createdAt) as string }));

const MOUNTED = `SELECT DISTINCT ${n(nodeFiles.assetId)} AS id FROM ${n(nodeFiles)}`;

/** The ids of the assets mounted as a file node's file or a file tree's. */
export const assetsMountedOnNodes = (tx: Tx): string[] => rawStatement<{ id: string }, []>(tx.store, MOUNTED).all().map((row) => row.id);

const MOUNTS_IN_SPACE = `SELECT m.${n(nodeFiles.assetId)} AS "assetId", m.${n(nodeFiles.path)} AS path, m.${n(nodeFiles.createdAt)} AS "createdAt", d.${n(nodes.id)} AS "nodeId", d.${n(nodes.name)} AS "nodeName", d.${n(nodes.type)} AS "nodeType", d.${n(nodes.slug)} AS "nodeSlug"
  FROM ${n(nodeFiles)} m JOIN ${n(nodes)} d ON d.${n(nodes.id)} = m.${n(nodeFiles.nodeId)} WHERE d.${n(nodes.spaceId)} = ?1 AND d.${n(nodes.status)} = 'active'`;

/** Each file of an active node of the space: which asset is mounted where. */
export const assetMountsInSpace = (ctx: AppContext, spaceId: string) =>
  rawStatement<{ assetId: string; path: string; createdAt: string; nodeId: string; nodeName: string; nodeType: string; nodeSlug: string }, [string]>(ctx.store, MOUNTS_IN_SPACE).all(spaceId);

const MOUNTS_OF = `SELECT count(*) AS n FROM ${n(nodeFiles)} WHERE ${n(nodeFiles.assetId)} = ?1`;

/** How many node files, of active or archived nodes, mount the asset. */
export const mountsOf = (tx: Tx, assetId: string): number => rawStatement<{ n: number }, [string]>(tx.store, MOUNTS_OF).get(assetId)!.n;
