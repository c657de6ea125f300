import { and, asc, eq, isNull, or, sql } from "drizzle-orm";
import { preparedFor } from "../db/client";
import type { AppContext } from "../context";
import { notFound } from "../http/errors";
import { nodes, type NodeStatus } from "./schema";

type NodeRow = typeof nodes.$inferSelect;

export interface NodeView {
  id: string;
  parentId: string | null;
  type: NodeRow["type"];
  slug: string;
  name: string;
  description: string;
  baseId: string | null;
  metadata: Record<string, unknown>;
  settings: Record<string, unknown>;
  explicitVisibility: null;
  icon: null;
  position: number;
  status: NodeStatus;
  createdAt: string;
  updatedAt: string;
  hasChildren: boolean;
  shared: false;
  children?: NodeView[];
}

const nodesOfSpace = preparedFor((db) =>
  db
    .select()
    .from(nodes)
    .where(and(eq(nodes.spaceId, sql.placeholder("spaceId")), eq(nodes.status, sql.placeholder("status"))))
    .orderBy(asc(nodes.position), asc(nodes.id))
    .prepare(),
);

const rootOfSpace = preparedFor((db) => db.select().from(nodes).where(and(eq(nodes.spaceId, sql.placeholder("spaceId")), isNull(nodes.parentId))).prepare());

const activeNodeByRef = preparedFor((db) =>
  db
    .select()
    .from(nodes)
    .where(and(eq(nodes.spaceId, sql.placeholder("spaceId")), eq(nodes.status, "active"), or(eq(nodes.id, sql.placeholder("ref")), eq(nodes.slug, sql.placeholder("ref")))))
    .orderBy(asc(nodes.id))
    .prepare(),
);

/** A space's nodes of one status, grouped by parent: one query, then the tree is built in memory. */
function childrenByParent(ctx: AppContext, spaceId: string, status: NodeStatus): Map<string | null, NodeRow[]> {
  const rows = nodesOfSpace(ctx.db).all({ spaceId, status });
  const byParent = new Map<string | null, NodeRow[]>();
  for (const row of rows) byParent.set(row.parentId, [...(byParent.get(row.parentId) ?? []), row]);
  return byParent;
}

function view(row: NodeRow, byParent: Map<string | null, NodeRow[]>, depth: number): NodeView {
  const children = byParent.get(row.id) ?? [];
  return {
    id: row.id,
    parentId: row.parentId,
    type: row.type,
    slug: row.slug,
    name: row.name,
    description: row.description,
    baseId: null,
    metadata: row.metadata,
    settings: row.settings,
    explicitVisibility: null,
    icon: null,
    position: row.position,
    status: row.status,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    hasChildren: children.length > 0,
    shared: false,
    ...(depth > 0 ? { children: children.map((child) => view(child, byParent, depth - 1)) } : {}),
  };
}

export function rootNode(ctx: AppContext, spaceId: string): NodeRow {
  return rootOfSpace(ctx.db).get({ spaceId })!;
}

function findNode(ctx: AppContext, spaceId: string, ref: string): NodeRow {
  const row = activeNodeByRef(ctx.db).get({ spaceId, ref });
  if (!row) throw notFound("No such node in this space.");
  return row;
}

/** `GET /nodes`: the children of `parentId` (default: the root), each filled down to `depth`. */
export function listNodes(ctx: AppContext, spaceId: string, query: { parentId?: string; depth?: number; status?: NodeStatus }): NodeView[] {
  const parent = query.parentId ? findNode(ctx, spaceId, query.parentId) : rootNode(ctx, spaceId);
  const byParent = childrenByParent(ctx, spaceId, query.status ?? "active");
  return (byParent.get(parent.id) ?? []).map((row) => view(row, byParent, (query.depth ?? 1) - 1));
}

/** `GET /nodes/{nodeId}` (id or slug): the node and its direct children; archived nodes are not found. */
export function getNode(ctx: AppContext, spaceId: string, ref: string): NodeView {
  const row = findNode(ctx, spaceId, ref);
  return view(row, childrenByParent(ctx, spaceId, "active"), 1);
}
