import type { AppContext } from "../context";
import { named as n, rawStatement } from "../db/client";
import type { Level } from "../shared/levels";
import { changeRequests, operations } from "../tables/changes";
import { bases, commits, fields, nodeFiles, nodePrincipals, nodes, records, views } from "../tables/content";
import { imports } from "../tables/transfer";

/**
 * The raw SQL of who sees what (`sight.ts`): whether a space has a private node, its tree with
 * each node's visibility and base, a member's grants, and the node each kind of reference lives in.
 * Names come from the tables' declarations.
 */

const ANY_PRIVATE = `SELECT 1 AS "found" FROM ${n(nodes)} WHERE ${n(nodes.spaceId)} = ?1 AND ${n(nodes.explicitVisibility)} = 'private' LIMIT 1`;

/** Whether any node of the space is private (a probe of a partial index). */
export const anyPrivate = (ctx: AppContext, spaceId: string): boolean => rawStatement<{ found: number }, [string]>(ctx.store, ANY_PRIVATE).get(spaceId) !== null;

export type TreeRow = { id: string; parentId: string | null; visibility: string | null; baseId: string | null };

const TREE = `SELECT t.${n(nodes.id)} AS "id", t.${n(nodes.parentId)} AS "parentId", t.${n(nodes.explicitVisibility)} AS "visibility", b.${n(bases.id)} AS "baseId"
  FROM ${n(nodes)} t LEFT JOIN ${n(bases)} b ON b.${n(bases.nodeId)} = t.${n(nodes.id)} WHERE t.${n(nodes.spaceId)} = ?1`;

/** Every node of the space with its visibility and its base. */
export const visibilityTree = (ctx: AppContext, spaceId: string): TreeRow[] => rawStatement<TreeRow, [string]>(ctx.store, TREE).all(spaceId);

const GRANTS = `SELECT ${n(nodePrincipals.nodeId)} AS "nodeId", ${n(nodePrincipals.role)} AS "role" FROM ${n(nodePrincipals)} WHERE ${n(nodePrincipals.spaceId)} = ?1
  AND ((${n(nodePrincipals.principalType)} = 'user' AND ${n(nodePrincipals.principalId)} = ?2) OR (${n(nodePrincipals.principalType)} = 'space' AND ${n(nodePrincipals.principalId)} = ?1))`;

/** The grants of the space that name a member: theirs, and the whole space's. */
export const grantsOf = (ctx: AppContext, spaceId: string, userId: string) => rawStatement<{ nodeId: string; role: Level }, [string, string]>(ctx.store, GRANTS).all(spaceId, userId);

const B = n(bases);
const ofBase = (alias: string, column: string) => `LEFT JOIN ${B} b ON b.${n(bases.id)} = ${alias}.${column}`;
const opNode = `coalesce(o.${n(operations.nodeId)}, b.${n(bases.nodeId)})`;
const OPERATIONS_OF = `FROM ${n(operations)} o JOIN ${n(changeRequests)} c ON c.${n(changeRequests.id)} = o.${n(operations.changeRequestId)} ${ofBase("o", n(operations.baseId))}`;

/** For each kind of reference, the nodes it lives in (a base's node for what lives in a base), found as the routes' own lookups find it: ?1 the space, ?2 the reference. */
const TARGETS = {
  node: `SELECT ${n(nodes.id)} AS "id" FROM ${n(nodes)} WHERE ${n(nodes.spaceId)} = ?1 AND (${n(nodes.id)} = ?2 OR ${n(nodes.slug)} = ?2) ORDER BY ${n(nodes.status)}, ${n(nodes.id)} LIMIT 1`,
  base: `SELECT t.${n(nodes.id)} AS "id" FROM ${B} b JOIN ${n(nodes)} t ON t.${n(nodes.id)} = b.${n(bases.nodeId)}
    WHERE b.${n(bases.spaceId)} = ?1 AND (b.${n(bases.id)} = ?2 OR t.${n(nodes.id)} = ?2 OR t.${n(nodes.slug)} = ?2) ORDER BY t.${n(nodes.status)}, b.${n(bases.id)} LIMIT 1`,
  record: `SELECT b.${n(bases.nodeId)} AS "id" FROM ${n(records)} r ${ofBase("r", n(records.baseId))} WHERE r.${n(records.id)} = ?2 AND b.${n(bases.spaceId)} = ?1`,
  view: `SELECT b.${n(bases.nodeId)} AS "id" FROM ${n(views)} v ${ofBase("v", n(views.baseId))} WHERE v.${n(views.id)} = ?2 AND b.${n(bases.spaceId)} = ?1`,
  changeRequest: `SELECT ${opNode} AS "id" ${OPERATIONS_OF} WHERE c.${n(changeRequests.id)} = ?2 AND c.${n(changeRequests.spaceId)} = ?1
    UNION ALL SELECT coalesce(c.${n(changeRequests.nodeId)}, b.${n(bases.nodeId)}) FROM ${n(changeRequests)} c ${ofBase("c", n(changeRequests.baseId))} WHERE c.${n(changeRequests.id)} = ?2 AND c.${n(changeRequests.spaceId)} = ?1`,
  operation: `SELECT ${opNode} AS "id" ${OPERATIONS_OF} WHERE o.${n(operations.id)} = ?2 AND c.${n(changeRequests.spaceId)} = ?1`,
  commit: `SELECT coalesce(m.${n(commits.nodeId)}, b.${n(bases.nodeId)}) AS "id" FROM ${n(commits)} m ${ofBase("m", n(commits.baseId))} WHERE m.${n(commits.id)} = ?2 AND m.${n(commits.spaceId)} = ?1`,
  field: `SELECT b.${n(bases.nodeId)} AS "id" FROM ${n(fields)} f ${ofBase("f", n(fields.baseId))} WHERE f.${n(fields.id)} = ?2 AND b.${n(bases.spaceId)} = ?1`,
  import: `SELECT b.${n(bases.nodeId)} AS "id" FROM ${n(imports)} i ${ofBase("i", n(imports.baseId))} WHERE i.${n(imports.id)} = ?2 AND i.${n(imports.spaceId)} = ?1`,
  // Every place an asset is used: mounted in a node, or named by a record's values (read whole: an asset id is not found by chance).
  asset: `SELECT f.${n(nodeFiles.nodeId)} AS "id" FROM ${n(nodeFiles)} f JOIN ${n(nodes)} t ON t.${n(nodes.id)} = f.${n(nodeFiles.nodeId)} WHERE f.${n(nodeFiles.assetId)} = ?2 AND t.${n(nodes.spaceId)} = ?1
    UNION SELECT b.${n(bases.nodeId)} FROM ${n(records)} r ${ofBase("r", n(records.baseId))} WHERE r.${n(records.spaceId)} = ?1 AND instr(r.${n(records.data)}, ?2) > 0`,
} as const;
export type TargetKind = keyof typeof TARGETS;

/** The nodes (of bases, for `base`) a slug names, in the order the routes' own lookups take the first: ?1 the space, ?2 the slug. */
const SLUG_HOLDERS = {
  node: `SELECT ${n(nodes.id)} AS "id" FROM ${n(nodes)} WHERE ${n(nodes.spaceId)} = ?1 AND ${n(nodes.slug)} = ?2 ORDER BY ${n(nodes.status)}, ${n(nodes.id)}`,
  base: `SELECT t.${n(nodes.id)} AS "id" FROM ${B} b JOIN ${n(nodes)} t ON t.${n(nodes.id)} = b.${n(bases.nodeId)} WHERE b.${n(bases.spaceId)} = ?1 AND t.${n(nodes.slug)} = ?2 ORDER BY t.${n(nodes.status)}, b.${n(bases.id)}`,
} as const;

/** The nodes that hold a slug, first the one a lookup by that slug finds. */
export const slugHolders = (ctx: AppContext, spaceId: string, kind: keyof typeof SLUG_HOLDERS, slug: string): string[] =>
  rawStatement<{ id: string }, [string, string]>(ctx.store, SLUG_HOLDERS[kind]).all(spaceId, slug).map((row) => row.id);

/** The nodes a reference of a kind lives in (none when it names nothing: the route answers its own 404). */
export const nodesOfTarget = (ctx: AppContext, spaceId: string, kind: TargetKind, ref: string): string[] =>
  rawStatement<{ id: string | null }, [string, string]>(ctx.store, TARGETS[kind])
    .all(spaceId, ref)
    .flatMap((row) => (row.id ? [row.id] : []));
