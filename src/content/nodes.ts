import { ancestorsOf, depthOf } from "./store";
import { SEES_ALL, type Sight } from "../spaces/sight";
import type { Static } from "@sinclair/typebox";
import { and, asc, eq, getTableColumns, gt, inArray, isNull, or, type Placeholder, sql } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext, Tx } from "../context";
import { compiledRows, decodeRow, preparedFor, type ReadDb } from "../db/client";
import { type IdMaker, newId } from "../db/ids";
import { requireWithin } from "../shared/limits";
import { checkName, checkSlug } from "../shared/formats";
import { badRequest, conflict, notInSpace, onUniqueViolation } from "../shared/errors";
import { JsonObject, Nullable, oneOf, Timestamp, WholeNumber } from "../shared/schemas";
import { forgetBases } from "./bases";
import { checkMetadata } from "../shared/json";
import { relationsInto } from "./relations/schema";
import { bases, fields, NODE_STATUSES, NODE_TYPES, NODE_VISIBILITIES, nodeFavorites, nodes, nodeShares, type NodeStatus, type NodeType, type SpaceTree } from "../tables/content";
import { iso } from "../shared/clock";

export type NodeRow = typeof nodes.$inferSelect;
type NodeWithBase = NodeRow & { baseId: string | null };

export const NODE_PROPERTIES = {
  id: t.String(),
  parentId: Nullable(t.String()),
  type: oneOf(NODE_TYPES),
  slug: t.String(),
  name: t.String(),
  description: t.String(),
  baseId: Nullable(t.String({ description: "The base of a base node." })),
  metadata: JsonObject,
  settings: JsonObject,
  explicitVisibility: Nullable(oneOf(NODE_VISIBILITIES), { description: "Set on this node (POST /nodes/{id}/visibility); null inherits. private hides it, and what is below it, from members without a grant." }),
  icon: t.Null(),
  position: WholeNumber(),
  status: oneOf(NODE_STATUSES),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  hasChildren: t.Boolean(),
  shared: t.Boolean({ description: "Whether it is shared publicly right now, by its own share (what is below it reads through it too)." }),
};

export const NodeSchema = t.Recursive(
  (Self) => t.Object({ ...NODE_PROPERTIES, children: t.Array(Self, { description: "Filled down to the depth asked for; empty at the limit, where hasChildren tells whether there is more." }) }),
  { $id: "Node", description: "A node of the space's tree: a folder, base, doc, file, file tree (skill, drive, airapp), form, whiteboard, workflow or html page." },
);
export type NodeView = Static<typeof NodeSchema>;


const nodesOfSpace = (db: ReadDb) =>
  db
    .select({ node: nodes, baseId: bases.id })
    .from(nodes)
    .leftJoin(bases, eq(bases.nodeId, nodes.id))
    .where(eq(nodes.spaceId, sql.placeholder("spaceId")))
    .orderBy(asc(nodes.position), asc(nodes.id));

const rootOfSpace = preparedFor((db) => db.select().from(nodes).where(and(eq(nodes.spaceId, sql.placeholder("spaceId")), isNull(nodes.parentId))).prepare());

const nodeByRef = preparedFor((db) =>
  db
    .select()
    .from(nodes)
    .where(and(eq(nodes.spaceId, sql.placeholder("spaceId")), or(eq(nodes.id, sql.placeholder("ref")), eq(nodes.slug, sql.placeholder("ref")))))
    .orderBy(asc(nodes.status), asc(nodes.id))
    .prepare(),
);

const NODE_COLUMNS = Object.entries(getTableColumns(nodes));

/**
 * The whole tree of a space in one query, grouped by parent (the root under `null`). Rows are read
 * as arrays and decoded column by column, cheaper than drizzle's mapping of joined rows (with the
 * root taken from here rather than read again, `listNodes` went from 22 to 9.5 us).
 */
/**
 * The space's tree as `sight` sees it, by parent. Kept until the database changes (`ctx.trees`),
 * under the space and the nodes the sight hides (the only part of a sight the tree depends on):
 * shared by every caller with the same sight (read-only; its public shares are read again once the
 * first of them expires).
 */
function treeOf(ctx: AppContext, spaceId: string, sight: Sight): SpaceTree {
  const cached = ctx.trees.open();
  const key = sight.hiddenNodes.size === 0 ? spaceId : `${spaceId} ${[...sight.hiddenNodes].sort().join(" ")}`;
  const kept = cached ? ctx.trees.get(key) : undefined;
  if (kept) return kept;
  const byParent = new Map<string | null, NodeWithBase[]>();
  const rows = compiledRows(ctx.store, "tree", () => nodesOfSpace(ctx.db))({ spaceId }).map((values): NodeWithBase => ({ ...decodeRow<NodeRow>(values, 0, NODE_COLUMNS), baseId: values[NODE_COLUMNS.length] as string | null }));
  const parentOf = sight.hiddenNodes.size === 0 ? (node: NodeWithBase) => node.parentId : seenParent(rows, sight.hiddenNodes);
  for (const node of rows) {
    if (sight.hiddenNodes.has(node.id)) continue;
    const parentId = parentOf(node);
    const seen = parentId === node.parentId ? node : { ...node, parentId };
    const siblings = byParent.get(parentId);
    if (siblings) siblings.push(seen);
    else byParent.set(parentId, [seen]);
  }
  const tree: SpaceTree = { byParent };
  if (cached) ctx.trees.set(key, tree);
  return tree;
}

/** A node the caller sees under a hidden one (a grant opened it) hangs from its nearest seen ancestor (the root is never hidden). */
function seenParent(rows: NodeWithBase[], hidden: ReadonlySet<string>): (node: NodeWithBase) => string | null {
  const parents = new Map(rows.map((row) => [row.id, row.parentId]));
  return (node) => {
    let parentId = node.parentId;
    while (parentId !== null && hidden.has(parentId)) parentId = parents.get(parentId) ?? null;
    return parentId;
  };
}

/** A share that is public and has not expired at `now` (an ISO moment). */
export const liveShare = (now: string | Placeholder) => and(eq(nodeShares.scope, "public"), or(isNull(nodeShares.expiresAt), gt(nodeShares.expiresAt, now)));

const sharedOfSpace = preparedFor((db) =>
  db
    .select({ id: nodeShares.nodeId, expiresAt: nodeShares.expiresAt })
    .from(nodeShares)
    .where(and(eq(nodeShares.spaceId, sql.placeholder("spaceId")), liveShare(sql.placeholder("now"))))
    .prepare(),
);

/** The nodes of the space shared publicly right now, by their own share (one indexed select), and when the first of those shares expires. */
function liveShares(ctx: AppContext, spaceId: string): { ids: ReadonlySet<string>; until: number } {
  const now = ctx.clock.now();
  const rows = sharedOfSpace(ctx).all({ spaceId, now: iso(now) });
  let until = Number.POSITIVE_INFINITY;
  // A moment that does not parse is read again on the next request.
  for (const { expiresAt } of rows) if (expiresAt !== null) until = Math.min(until, Date.parse(expiresAt) || now);
  return { ids: new Set(rows.map((row) => row.id)), until };
}

/**
 * The space's public shares, kept with its tree until the first of them expires (read per
 * request, they were a ninth of a `GET /nodes`). A share made, changed or revoked is a change to
 * the database, which empties the tree's cache.
 */
function sharedNow(ctx: AppContext, spaceId: string, tree: SpaceTree): ReadonlySet<string> {
  if (!tree.shares || ctx.clock.now() >= tree.shares.until) tree.shares = liveShares(ctx, spaceId);
  return tree.shares.ids;
}

function view(row: NodeWithBase, byParent: ReadonlyMap<string | null, readonly NodeWithBase[]>, status: NodeStatus, depth: number, shared: ReadonlySet<string>): NodeView {
  const children = (byParent.get(row.id) ?? []).filter((child) => child.status === status);
  return {
    id: row.id,
    parentId: row.parentId,
    type: row.type,
    slug: row.slug,
    name: row.name,
    description: row.description,
    baseId: row.baseId,
    metadata: row.metadata,
    settings: row.settings,
    explicitVisibility: row.explicitVisibility,
    icon: null,
    position: row.position,
    status: row.status,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    hasChildren: children.length > 0,
    shared: shared.has(row.id),
    children: depth > 0 ? children.map((child) => view(child, byParent, status, depth - 1, shared)) : [],
  };
}

export function rootNode(ctx: AppContext, spaceId: string): NodeRow {
  return rootOfSpace(ctx).get({ spaceId })!;
}

/** A node by id or slug (active ones first); `status` narrows it. */
export function findNode(ctx: AppContext, spaceId: string, ref: string, status?: NodeStatus): NodeRow {
  const row = nodeByRef(ctx).get({ spaceId, ref });
  if (!row || (status && row.status !== status)) throw notInSpace("node", ref);
  return row;
}

export const DEFAULT_TREE_DEPTH = 5;

/** `GET /nodes`: the children of `parentId` (default: the root), each with `depth` levels of children below it (default 5). */
export function listNodes(ctx: AppContext, spaceId: string, sight: Sight, query: { parentId?: string; depth?: number; status?: NodeStatus; types?: readonly string[] }): NodeView[] {
  const tree = treeOf(ctx, spaceId, sight);
  const { byParent } = tree;
  const status = query.status ?? "active";
  if (query.types && query.types.length > 0) return nodesOfTypes(byParent, new Set(query.types), status, sharedNow(ctx, spaceId, tree));
  const parent = query.parentId ? findNode(ctx, spaceId, query.parentId, "active") : byParent.get(null)![0];
  const shared = sharedNow(ctx, spaceId, tree);
  return (byParent.get(parent.id) ?? []).filter((row) => row.status === status).map((row) => view(row, byParent, status, query.depth ?? DEFAULT_TREE_DEPTH, shared));
}

/** Busabase's flat listing (`types` given): every node of those types in the space, however deep, by position then creation, without children. */
function nodesOfTypes(byParent: ReadonlyMap<string | null, readonly NodeWithBase[]>, types: ReadonlySet<string>, status: NodeStatus, shared: ReadonlySet<string>): NodeView[] {
  return [...byParent.values()]
    .flat()
    .filter((row) => row.parentId !== null && types.has(row.type) && row.status === status)
    .sort((a, b) => a.position - b.position || (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
    .map((row) => ({ ...view(row, byParent, status, 0, shared), hasChildren: false }));
}

/**
 * `GET /nodes/{nodeId}` (id or slug): the node and its direct children; archived nodes are not
 * found, nor is a node of another `type` than the one asked for (Busabase's `?type=`).
 */
export function getNode(ctx: AppContext, spaceId: string, sight: Sight, ref: string, type?: string): { row: NodeRow; shown: NodeView } {
  const row = findNode(ctx, spaceId, ref, "active");
  if (type !== undefined && row.type !== type) throw notInSpace("node", ref);
  return { row, shown: withChildren(ctx, spaceId, sight, row) };
}

/** A node as the tree shows it, with its direct children. */
function withChildren(ctx: AppContext, spaceId: string, sight: Sight, row: NodeRow): NodeView {
  const tree = treeOf(ctx, spaceId, sight);
  const self = [...tree.byParent.values()].flat().find((node) => node.id === row.id)!;
  return view(self, tree.byParent, "active", 1, sharedNow(ctx, spaceId, tree));
}

export const NodeHitSchema = t.Object({
  id: t.String(),
  type: oneOf(NODE_TYPES),
  name: t.String(),
  slug: t.String(),
  path: t.String({ description: "The slugs from the root (excluded) down to the node, joined by /." }),
  updatedAt: Timestamp,
});
export type NodeHit = Static<typeof NodeHitSchema>;

type Place = { path: string; depth: number } | null;

/**
 * Each node's place in the tree: its path of slugs below the root and its depth, or null when it
 * or a folder above it is archived. Every node's place is worked out once, from its parent's, so
 * a tree of any depth costs time in proportion to its nodes.
 */
function placesIn(byId: Map<string, NodeWithBase>): (node: NodeWithBase) => Place {
  const known = new Map<string, Place>();
  return (start) => {
    const unplaced: NodeWithBase[] = [];
    let node: NodeWithBase | undefined = start;
    while (node && !known.has(node.id)) {
      unplaced.push(node);
      node = node.parentId === null ? undefined : byId.get(node.parentId);
    }
    let above: Place | undefined = node ? known.get(node.id) : undefined;
    for (const below of unplaced.reverse()) {
      const place: Place =
        below.status !== "active" ? null : below.parentId === null ? { path: "", depth: 0 } : above ? { path: above.depth === 0 ? below.slug : `${above.path}/${below.slug}`, depth: above.depth + 1 } : null;
      known.set(below.id, place);
      above = place;
    }
    return known.get(start.id)!;
  };
}

/** `GET /nodes/search` (and the names of `GET /search`): active nodes whose name or slug contains each of `texts`, case-insensitive; shallowest first. */
export function searchNodes(ctx: AppContext, spaceId: string, sight: Sight, texts: string[], limit: number): NodeHit[] {
  const byId = new Map<string, NodeWithBase>();
  for (const siblings of treeOf(ctx, spaceId, sight).byParent.values()) for (const node of siblings) byId.set(node.id, node);
  const placeOf = placesIn(byId);
  const needles = texts.map((text) => text.toLowerCase());
  const hits: (NodeHit & { depth: number })[] = [];
  for (const node of byId.values()) {
    const name = node.name.toLowerCase();
    if (node.parentId === null || !needles.every((needle) => name.includes(needle) || node.slug.includes(needle))) continue;
    const place = placeOf(node);
    if (place) hits.push({ id: node.id, type: node.type, name: node.name, slug: node.slug, path: place.path, updatedAt: node.updatedAt, depth: place.depth });
  }
  return hits
    .sort((a, b) => a.depth - b.depth || a.path.localeCompare(b.path))
    .slice(0, limit)
    .map(({ depth, ...hit }) => hit);
}

/** The node and every node below it. */
function subtree(ctx: AppContext, spaceId: string, rootId: string): string[] {
  const { byParent } = treeOf(ctx, spaceId, SEES_ALL);
  const ids: string[] = [];
  const visit = (id: string) => {
    ids.push(id);
    for (const child of byParent.get(id) ?? []) visit(child.id);
  };
  visit(rootId);
  return ids;
}

const takenSlug = (slug: string) => `A sibling node already has the slug "${slug}".`;

/** `GET /nodes/{nodeId}/is-descendant`: whether the node lies below `potentialAncestorId` (a node is not below itself). */
export function isDescendant(ctx: AppContext, spaceId: string, nodeRef: string, ancestorRef: string): { isDescendant: boolean } {
  const node = findNode(ctx, spaceId, nodeRef);
  const ancestor = findNode(ctx, spaceId, ancestorRef);
  return { isDescendant: ancestorsOf(ctx, node.id).includes(ancestor.id) };
}

/** How many levels of nodes hang below a node (0 for one with no children). */
function heightBelow(ctx: AppContext, spaceId: string, nodeId: string): number {
  const { byParent } = treeOf(ctx, spaceId, SEES_ALL);
  let height = 0;
  for (let level = byParent.get(nodeId) ?? []; level.length > 0; height++) level = level.flatMap((node) => byParent.get(node.id) ?? []);
  return height;
}


function activeFolder(ctx: AppContext, spaceId: string, ref: string | undefined): NodeRow {
  const parent = ref ? findNode(ctx, spaceId, ref, "active") : rootNode(ctx, spaceId);
  if (parent.type !== "folder") throw badRequest(`"${parent.slug}" is a ${parent.type}; only folders hold nodes.`);
  return parent;
}

function nextPosition(ctx: AppContext, parentId: string): number {
  const row = ctx.db.select({ max: sql<number | null>`max(${nodes.position})` }).from(nodes).where(eq(nodes.parentId, parentId)).get();
  return (row?.max ?? -1) + 1;
}

export type NodeRename = {
  nodeId: string;
  slug?: string;
  name?: string;
  description?: string;
};

export type NewNode = {
  parentId?: string;
  nodeType: NodeType;
  slug: string;
  name: string;
  description?: string;
  metadata?: Record<string, unknown>;
};

export function createNode(tx: Tx, spaceId: string, input: NewNode, at: string, ids: IdMaker = newId): NodeRow {
  forgetBases(tx);
  checkSlug(input.slug, "node slug");
  checkMetadata(tx.config.limits, input.metadata ?? {});
  const name = checkName(input.name);
  const parent = activeFolder(tx, spaceId, input.parentId);
  requireWithin(tx.config.limits, "folderDepth", depthOf(tx, parent.id) + 1);
  const row: NodeRow = {
    id: ids("nod"),
    spaceId,
    parentId: parent.id,
    type: input.nodeType,
    slug: input.slug,
    name,
    description: input.description ?? "",
    metadata: input.metadata ?? {},
    settings: {},
    position: nextPosition(tx, parent.id),
    status: "active",
    explicitVisibility: null,
    createdAt: at,
    updatedAt: at,
  };
  onUniqueViolation(() => tx.db.insert(nodes).values(row).run(), takenSlug(input.slug));
  return row;
}

export function renameNode(tx: Tx, spaceId: string, input: NodeRename, at: string): NodeRow {
  forgetBases(tx);
  const node = findNode(tx, spaceId, input.nodeId, "active");
  const changes: Partial<NodeRow> = { updatedAt: at };
  if (input.slug !== undefined) changes.slug = checkSlug(input.slug, "node slug");
  if (input.name !== undefined) changes.name = checkName(input.name);
  if (input.description !== undefined) changes.description = input.description;
  onUniqueViolation(() => tx.db.update(nodes).set(changes).where(eq(nodes.id, node.id)).run(), takenSlug(input.slug ?? ""));
  return { ...node, ...changes };
}

export function moveNode(tx: Tx, spaceId: string, input: { nodeId: string; parentId?: string; position?: number }, at: string): NodeRow {
  forgetBases(tx);
  const node = findNode(tx, spaceId, input.nodeId, "active");
  if (node.parentId === null) throw badRequest("The root folder cannot be moved.");
  const parent = activeFolder(tx, spaceId, input.parentId);
  if (subtree(tx, spaceId, node.id).includes(parent.id)) throw badRequest("A node cannot move into itself or below itself.");
  requireWithin(tx.config.limits, "folderDepth", depthOf(tx, parent.id) + 1 + heightBelow(tx, spaceId, node.id));
  const position = input.position ?? (parent.id === node.parentId ? node.position : nextPosition(tx, parent.id));
  onUniqueViolation(() => tx.db.update(nodes).set({ parentId: parent.id, position, updatedAt: at }).where(eq(nodes.id, node.id)).run(), takenSlug(node.slug));
  return { ...node, parentId: parent.id, position, updatedAt: at };
}

/** Archives the node and everything below it. */
export function archiveNode(tx: Tx, spaceId: string, nodeId: string, at: string): NodeRow {
  forgetBases(tx);
  const node = findNode(tx, spaceId, nodeId, "active");
  if (node.parentId === null) throw badRequest("The root folder cannot be deleted.");
  tx.db.update(nodes).set({ status: "archived", updatedAt: at }).where(inArray(nodes.id, subtree(tx, spaceId, node.id))).run();
  return { ...node, status: "archived", updatedAt: at };
}

/** Restores an archived node and everything below it, under an active parent. */
export function restoreNode(tx: Tx, spaceId: string, nodeId: string, at: string): NodeRow {
  forgetBases(tx);
  const node = findNode(tx, spaceId, nodeId, "archived");
  const parent = tx.db.select().from(nodes).where(eq(nodes.id, node.parentId!)).get();
  if (parent?.status !== "active") throw conflict("Restore the parent folder first.", { reason: "PARENT_ARCHIVED" });
  onUniqueViolation(
    () => tx.db.update(nodes).set({ status: "active", updatedAt: at }).where(inArray(nodes.id, subtree(tx, spaceId, node.id))).run(),
    takenSlug(node.slug),
  );
  return { ...node, status: "active", updatedAt: at };
}

/** Marks a node changed (its content was written). */
export function touchNode(tx: Tx, nodeId: string, at: string): void {
  tx.db.update(nodes).set({ updatedAt: at }).where(eq(nodes.id, nodeId)).run();
}

/** Shallow merge into the node's metadata. */
export function updateMetadata(tx: Tx, spaceId: string, sight: Sight, nodeId: string, metadata: Record<string, unknown>, at: string): NodeView {
  const node = findNode(tx, spaceId, nodeId, "active");
  const merged = { ...node.metadata, ...metadata };
  checkMetadata(tx.config.limits, merged);
  tx.db.update(nodes).set({ metadata: merged, updatedAt: at }).where(eq(nodes.id, node.id)).run();
  return withChildren(tx, spaceId, sight, { ...node, metadata: merged, updatedAt: at });
}

/**
 * Permanently deletes an archived node and all below it (their bases and records cascade), and the
 * relation fields of other bases that link into its bases (their links go with them).
 */
export function purgeNode(tx: Tx, spaceId: string, nodeId: string): number {
  forgetBases(tx);
  const node = findNode(tx, spaceId, nodeId);
  if (node.status !== "archived") throw conflict("Only an archived node can be deleted permanently; archive it first.", { reason: "NOT_ARCHIVED" });
  const ids = subtree(tx, spaceId, node.id);
  const baseIds = tx.db.select({ id: bases.id }).from(bases).where(inArray(bases.nodeId, ids)).all().map((row) => row.id);
  const inbound = relationsInto(tx, baseIds);
  if (inbound.length > 0) tx.db.delete(fields).where(inArray(fields.id, inbound)).run();
  tx.db.delete(nodes).where(eq(nodes.id, node.id)).run();
  tx.afterCommit(tx.fieldUpkeep.wake);
  return ids.length;
}

const nodeWithBase = preparedFor((db) =>
  db
    .select({ node: nodes, baseId: bases.id })
    .from(nodes)
    .leftJoin(bases, eq(bases.nodeId, nodes.id))
    .where(and(eq(nodes.spaceId, sql.placeholder("spaceId")), eq(nodes.id, sql.placeholder("nodeId"))))
    .prepare(),
);

const childCount = preparedFor((db) =>
  db
    .select({ n: sql<number>`count(*)` })
    .from(nodes)
    .where(and(eq(nodes.parentId, sql.placeholder("parentId")), eq(nodes.status, sql.placeholder("status"))))
    .prepare(),
);

/** A node as the change requests show it: itself, no children, whatever its status. */
export function nodeSummary(ctx: AppContext, spaceId: string, nodeId: string): NodeView | null {
  const row = nodeWithBase(ctx).get({ spaceId, nodeId });
  if (!row) return null;
  const node = { ...row.node, baseId: row.baseId };
  const hasChildren = (childCount(ctx).get({ parentId: node.id, status: node.status })?.n ?? 0) > 0;
  return { ...view(node, new Map(), node.status, 0, liveShares(ctx, spaceId).ids), hasChildren };
}

// ---- favorites: each user's own, per space ----

/** `GET /nodes/favorites`: the caller's favorite nodes of the space that are active, in the order they were marked. */
export function favoriteNodes(ctx: AppContext, spaceId: string, sight: Sight, userId: string): NodeView[] {
  const marked = ctx.db
    .select({ nodeId: nodeFavorites.nodeId })
    .from(nodeFavorites)
    .where(and(eq(nodeFavorites.userId, userId), eq(nodeFavorites.spaceId, spaceId)))
    .orderBy(asc(nodeFavorites.createdAt), asc(nodeFavorites.nodeId))
    .all();
  return marked.flatMap(({ nodeId }) => {
    const node = nodeSummary(ctx, spaceId, nodeId);
    return node && node.status === "active" && !sight.hiddenNodes.has(node.id) ? [node] : [];
  });
}

/** `POST /nodes/{nodeId}/favorite`: marks an active node as the caller's favorite, or unmarks it; answers which it is now. */
export function toggleFavorite(tx: Tx, spaceId: string, userId: string, nodeRef: string, at: string): { favorited: boolean } {
  const node = findNode(tx, spaceId, nodeRef, "active");
  const removed = tx.db
    .delete(nodeFavorites)
    .where(and(eq(nodeFavorites.userId, userId), eq(nodeFavorites.nodeId, node.id)))
    .returning({ nodeId: nodeFavorites.nodeId })
    .all();
  if (removed.length > 0) return { favorited: false };
  tx.db.insert(nodeFavorites).values({ userId, nodeId: node.id, spaceId, createdAt: at }).run();
  return { favorited: true };
}
