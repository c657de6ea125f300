import { type Column, type Placeholder, type SQL, sql } from "drizzle-orm";
import type { AppContext } from "../context";
import { anyPrivate, grantsOf, nodesOfTarget, slugHolders, type TargetKind, type TreeRow, visibilityTree } from "./store";
import { forbidden, notFound, notInSpace } from "../shared/errors";
import { atLeast, type Level, lowerOf, ROLE_LEVEL } from "../shared/levels";
import type { Membership } from "../tables/spaces";

/**
 * What one member sees of a space's tree (docs/visibility.md). A node is hidden when it or a node
 * above it is `private` and no grant for the member sits on it or above it; what is below a hidden
 * node is hidden with it unless a grant opens it. Managers (owner, admin) see everything.
 */
export interface Sight {
  readonly hiddenNodes: ReadonlySet<string>;
  /** The bases of the hidden nodes. */
  readonly hiddenBases: ReadonlySet<string>;
  /** A private node seen through grants: the highest level they give, which bounds the caller's level there. */
  readonly grantLevels: ReadonlyMap<string, Level>;
  /** Every node and base of the tree when the sight was worked out: one made since may lie in a hidden node (`knowsOf`). */
  readonly knownNodes: ReadonlySet<string>;
  readonly knownBases: ReadonlySet<string>;
}

const NOTHING = new Set<string>();
export const SEES_ALL: Sight = { hiddenNodes: NOTHING, hiddenBases: NOTHING, grantLevels: new Map(), knownNodes: NOTHING, knownBases: NOTHING };

/**
 * The member's sight of the space. Free where nothing is private (one indexed probe) and for
 * managers; otherwise one pass over the tree and the member's grants, linear in the nodes.
 */
export function sightOf(ctx: AppContext, userId: string, membership: Membership): Sight {
  const spaceId = membership.space.id;
  if (ROLE_LEVEL[membership.role] === "manage") return SEES_ALL;
  if (!anyPrivate(ctx, spaceId)) return SEES_ALL;
  const grants = new Map<string, Level>();
  for (const grant of grantsOf(ctx, spaceId, userId)) {
    const held = grants.get(grant.nodeId);
    grants.set(grant.nodeId, held && atLeast(held, grant.role) ? held : grant.role);
  }
  return sightWith(ctx, spaceId, grants);
}

/** What a reader without a key (a public share, an embed link) sees: nothing private, whatever grants members hold. */
export const outsiderSight = (ctx: AppContext, spaceId: string): Sight => (anyPrivate(ctx, spaceId) ? sightWith(ctx, spaceId, new Map()) : SEES_ALL);

function sightWith(ctx: AppContext, spaceId: string, grants: ReadonlyMap<string, Level>): Sight {
  const rows = visibilityTree(ctx, spaceId);
  const children = new Map<string | null, TreeRow[]>();
  for (const row of rows) {
    const siblings = children.get(row.parentId);
    if (siblings) siblings.push(row);
    else children.set(row.parentId, [row]);
  }
  const hiddenNodes = new Set<string>();
  const hiddenBases = new Set<string>();
  const grantLevels = new Map<string, Level>();
  const knownNodes = new Set(rows.map((row) => row.id));
  const knownBases = new Set(rows.flatMap((row) => (row.baseId ? [row.baseId] : [])));
  const stack: { row: TreeRow; inPrivate: boolean; granted: Level | undefined }[] = (children.get(null) ?? []).map((row) => ({ row, inPrivate: false, granted: undefined }));
  while (stack.length > 0) {
    const { row, inPrivate: above, granted: heldAbove } = stack.pop()!;
    const own = grants.get(row.id);
    const granted = own && (!heldAbove || atLeast(own, heldAbove)) ? own : heldAbove;
    const inPrivate = above || row.visibility === "private";
    if (inPrivate && !granted) {
      hiddenNodes.add(row.id);
      if (row.baseId) hiddenBases.add(row.baseId);
    } else if (inPrivate && granted) grantLevels.set(row.id, granted);
    for (const child of children.get(row.id) ?? []) stack.push({ row: child, inPrivate, granted });
  }
  return { hiddenNodes, hiddenBases, grantLevels, knownNodes, knownBases };
}

/** The nodes a change request's operations landed in, for an event of one that names no base (a doc's, a folder's). */
export const nodesOfChange = (ctx: AppContext, event: { spaceId: string; baseId: string | null; data: object }): string[] => {
  const changeRequestId = (event.data as { changeRequestId?: string }).changeRequestId;
  return event.baseId === null && changeRequestId ? nodesOfTarget(ctx, event.spaceId, "changeRequest", changeRequestId) : [];
};

/**
 * Whether a sight can tell if its holder sees an event: not when the event is of a base or node
 * made after it was worked out (in a space with a private node), which may lie in a hidden folder.
 * A sight held for long (the live stream's) is worked out again then, before the event is sent.
 */
export function knowsOf(ctx: AppContext, sight: Sight, event: { spaceId: string; baseId: string | null; data: object }): boolean {
  if (sight === SEES_ALL) return true;
  if (event.baseId !== null) return sight.knownBases.has(event.baseId);
  return nodesOfChange(ctx, event).every((nodeId) => sight.knownNodes.has(nodeId));
}

/** Whether an event is about something the caller sees: its base, or the node of its change request. */
export function seesEvent(sight: Sight, event: { baseId: string | null; data: object }): boolean {
  if (sight === SEES_ALL) return true;
  if (event.baseId && sight.hiddenBases.has(event.baseId)) return false;
  const data = event.data as { changeRequest?: { nodeId?: string | null }; nodeId?: string };
  const nodeId = data.changeRequest?.nodeId ?? data.nodeId;
  return !(nodeId && sight.hiddenNodes.has(nodeId));
}

/** The level a caller with `level` in the space has on a node: a grant that opened it bounds it. */
export const levelOnNode = (sight: Sight, level: Level, nodeId: string): Level => {
  const granted = sight.grantLevels.get(nodeId);
  return granted ? lowerOf(level, granted) : level;
};

/** A condition keeping rows whose `column` is null or not among the ids of a JSON list (a placeholder's, in a statement compiled once). */
export const notAmong = (column: Column | SQL, ids: Placeholder | string): SQL => sql`(${column} IS NULL OR ${column} NOT IN (SELECT value FROM json_each(${ids})))`;

/** Conditions keeping the rows of a table with `baseId` and `nodeId` columns that lie in no hidden node. */
export const seenWhere = (table: { baseId: Column | SQL; nodeId: Column | SQL }, sight: Sight): SQL[] =>
  [unseen(table.baseId, sight.hiddenBases), unseen(table.nodeId, sight.hiddenNodes)].filter((condition) => condition !== undefined);

/** A condition keeping rows whose `column` is not among `ids` (none when nothing is hidden). */
export const unseen = (column: Column | SQL, ids: ReadonlySet<string>): SQL | undefined => (ids.size === 0 ? undefined : notAmong(column, JSON.stringify([...ids])));

/**
 * The names under which requests carry references, in the path, the query or the body (and the
 * MCP tools' arguments): each name says what kind of thing it names. `<name>s` lists name several.
 */
const NAMED: Record<string, TargetKind> = {
  nodeId: "node",
  parentId: "node",
  parentNodeId: "node",
  parentNodeRef: "node",
  potentialAncestorId: "node",
  doc: "node",
  tree: "node",
  baseId: "base",
  base: "base",
  targetBaseId: "base",
  targetBaseSlug: "base",
  recordId: "record",
  targetRecordId: "record",
  viewId: "view",
  changeRequestId: "changeRequest",
  operationId: "operation",
  fieldId: "field",
  importId: "import",
  assetId: "asset",
};
const SUBJECTS: Record<string, TargetKind> = { record: "record", change_request: "changeRequest", operation: "operation", commit: "commit" };

/**
 * Where an input carries references: its own keys, the objects of its lists at any depth (a change
 * request's operations, a bulk's records, a new base's field definitions), and a field definition's
 * `options` or a field update's `patch` (a relation's `targetBaseId`). A record's values are never
 * walked: a user's field slug is no reference. Bounded in depth and in objects, so no input makes
 * this walk long.
 */
const DEFINITIONS = new Set(["options", "patch"]);
const WALK_DEPTH = 5;
const WALK_OBJECTS = 5_000;
function eachReferenceHolder(inputs: unknown[], visit: (object: Record<string, unknown>) => void): void {
  let budget = WALK_OBJECTS;
  const walk = (value: unknown, depth: number): void => {
    if (depth > WALK_DEPTH || budget <= 0 || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const item of value.slice(0, 1000)) walk(item, depth + 1);
      return;
    }
    budget--;
    const object = value as Record<string, unknown>;
    visit(object);
    for (const [key, given] of Object.entries(object)) if (Array.isArray(given) || DEFINITIONS.has(key)) walk(given, depth + 1);
  };
  for (const input of inputs) walk(input, 0);
}

/** Every reference an input names, wherever `eachReferenceHolder` finds one. */
export function namedTargets(...inputs: unknown[]): [TargetKind, string][] {
  const found: [TargetKind, string][] = [];
  eachReferenceHolder(inputs, (object) => {
    for (const [key, given] of Object.entries(object)) {
      const kind = NAMED[key] ?? (key.endsWith("Ids") ? NAMED[key.slice(0, -1)] : undefined);
      if (!kind) continue;
      if (typeof given === "string" && given) found.push([kind, given]);
      else if (Array.isArray(given)) for (const item of given.slice(0, 1000)) if (typeof item === "string" && item) found.push([kind, item]);
    }
    const subject = typeof object.subjectType === "string" ? SUBJECTS[object.subjectType] : undefined;
    if (subject && typeof object.subjectId === "string") found.push([subject, object.subjectId]);
  });
  return found;
}

/**
 * A node or base named by a slug that a node hidden from the caller shares: a lookup by the slug
 * finds the first that holds it, so when that one is hidden, the input names instead the first the
 * caller sees, by its id. A hidden node then neither hides a visible one of the same slug nor
 * tells, by a 404, that it exists. Every input is walked as `namedTargets` walks it, so a path, a
 * query and a body are alike.
 */
export function seenSlugs(ctx: AppContext, spaceId: string, sight: Sight, ...inputs: unknown[]): void {
  if (sight === SEES_ALL) return;
  eachReferenceHolder(inputs, (object) => {
    for (const [key, ref] of Object.entries(object)) {
      const kind = NAMED[key];
      if ((kind !== "node" && kind !== "base") || typeof ref !== "string") continue;
      const holders = slugHolders(ctx, spaceId, kind, ref);
      if (holders.length < 2 || !sight.hiddenNodes.has(holders[0])) continue;
      const seen = holders.find((id) => !sight.hiddenNodes.has(id));
      if (seen) object[key] = seen;
    }
  });
}

/**
 * A hidden target is not found, exactly as one that does not exist; one seen through a grant
 * below `required` is a 403 that says so.
 */
export function requireSeenTargets(ctx: AppContext, scope: { space: { id: string }; level: Level; sight: Sight }, targets: [TargetKind, string][], required: Level): void {
  const { sight } = scope;
  if (sight === SEES_ALL) return;
  for (const [kind, ref] of targets) {
    const nodeIds = nodesOfTarget(ctx, scope.space.id, kind, ref);
    // An asset is the caller's to read while any place that uses it is (or none does: a new upload).
    if (kind === "asset") {
      if (nodeIds.length > 0 && nodeIds.every((nodeId) => sight.hiddenNodes.has(nodeId))) throw notFound(`No asset ${ref} in this space.`);
      continue;
    }
    for (const nodeId of nodeIds) {
      if (sight.hiddenNodes.has(nodeId)) throw notInSpace(kind === "changeRequest" ? "change request" : kind, ref);
      if (!atLeast(levelOnNode(sight, scope.level, nodeId), required)) throw forbidden(`Requires ${required} access on this node.`, { reason: "NODE_ACCESS_REQUIRED", required });
    }
  }
}
