import type { Static } from "@sinclair/typebox";
import { and, asc, eq, or, sql } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext } from "../context";
import { insertRow, preparedFor, preparedWrite } from "../db/client";
import { newId } from "../db/ids";
import { requireWithin } from "../limits";
import type { Tx } from "../db/tx";
import { checkName } from "../formats";
import { badRequest, conflict, notFound } from "../http/errors";
import { oneOf, Timestamp, WholeNumber } from "../http/schemas";
import { isIndexable } from "./field-sql";
import { checkFieldOptions, checkFieldSlug, FIELD_TYPES, type FieldType, renamedChoices } from "./field-types";
import { bases, droppedFields, type FieldIndexState, fields, nodes, type NodeStatus, records, type ReviewPolicy } from "./schema";

export type BaseRow = typeof bases.$inferSelect;
export type FieldRow = typeof fields.$inferSelect;
type NodeRow = typeof nodes.$inferSelect;

export const DEFAULT_REVIEW_POLICY: ReviewPolicy = { kind: "single", requiredApprovals: 1 };

export interface LoadedBase {
  base: BaseRow;
  node: NodeRow;
  fields: FieldRow[];
}

export const FieldSchema = t.Object(
  {
    id: t.String(),
    baseId: t.String(),
    slug: t.String(),
    name: t.String(),
    type: oneOf(FIELD_TYPES),
    required: t.Boolean(),
    position: WholeNumber(),
    options: t.Record(t.String(), t.Unknown(), { description: "By type: choices of a select, precision of a number…" }),
  },
  { $id: "Field" },
);
export type FieldView = Static<typeof FieldSchema>;

export const ReviewPolicySchema = t.Object({ kind: t.Literal("single"), requiredApprovals: WholeNumber({ minimum: 1, maximum: 10 }) }, { $id: "ReviewPolicy" });

export const BaseSchema = t.Object(
  {
    id: t.String(),
    nodeId: t.String(),
    slug: t.String(),
    name: t.String(),
    description: t.String(),
    reviewPolicy: ReviewPolicySchema,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    fields: t.Array(FieldSchema),
  },
  { $id: "Base", description: "A table: its node's name and slug, its review policy and its typed fields in order." },
);
export type BaseView = Static<typeof BaseSchema>;

const fieldView = (field: FieldRow): FieldView => ({
  id: field.id,
  baseId: field.baseId,
  slug: field.slug,
  name: field.name,
  type: field.type,
  required: field.required,
  position: field.position,
  options: field.options,
});

export const baseView = ({ base, node, fields: list }: LoadedBase): BaseView => ({
  id: base.id,
  nodeId: node.id,
  slug: node.slug,
  name: node.name,
  description: node.description,
  reviewPolicy: base.reviewPolicy,
  createdAt: base.createdAt,
  updatedAt: base.updatedAt,
  fields: list.map(fieldView),
});

const fieldsOfBase = preparedFor((db) => db.select().from(fields).where(eq(fields.baseId, sql.placeholder("baseId"))).orderBy(asc(fields.position), asc(fields.id)).prepare());

export const loadFields = (ctx: AppContext, baseId: string): FieldRow[] => fieldsOfBase(ctx.db).all({ baseId });

const baseByRef = preparedFor((db) =>
  db
    .select({ base: bases, node: nodes })
    .from(bases)
    .innerJoin(nodes, eq(nodes.id, bases.nodeId))
    .where(and(eq(bases.spaceId, sql.placeholder("spaceId")), or(eq(bases.id, sql.placeholder("ref")), eq(nodes.id, sql.placeholder("ref")), eq(nodes.slug, sql.placeholder("ref")))))
    .orderBy(asc(nodes.status), asc(bases.id))
    .prepare(),
);

/**
 * A base of the space by id, node id or slug; archived bases only when asked for. Bases with their
 * fields are kept in memory (every record read and write needs them); every write that changes a
 * base, its fields or any node calls `forgetBases`.
 */
export function findBase(ctx: AppContext, spaceId: string, ref: string, options: { archived?: boolean } = {}): LoadedBase {
  const key = `${spaceId} ${ref}`;
  let loaded = ctx.bases.get(key);
  if (!loaded) {
    const row = baseByRef(ctx.db).get({ spaceId, ref });
    if (!row) throw notFound("No such base in this space.");
    loaded = { ...row, fields: loadFields(ctx, row.base.id) };
    ctx.bases.set(key, loaded);
  }
  if (loaded.node.status === "archived" && !options.archived) throw notFound("No such base in this space.");
  return loaded;
}

/** Called by every write that changes bases, fields or nodes. */
export const forgetBases = (tx: Tx): void => tx.bases.invalidate(tx);

export function listBases(ctx: AppContext, spaceId: string, status: NodeStatus = "active"): BaseView[] {
  const rows = ctx.db
    .select({ base: bases, node: nodes })
    .from(bases)
    .innerJoin(nodes, eq(nodes.id, bases.nodeId))
    .where(and(eq(bases.spaceId, spaceId), eq(nodes.status, status)))
    .orderBy(asc(bases.id))
    .all();
  return rows.map((row) => baseView({ ...row, fields: loadFields(ctx, row.base.id) }));
}

export type FieldPatch = {
  name?: string;
  required?: boolean;
  options?: Record<string, unknown>;
};

export type NewField = {
  slug: string;
  name: string;
  type: FieldType;
  required?: boolean;
  options?: Record<string, unknown>;
};

/**
 * Checks a new field against the base's others; answers the row to insert. `indexing` is what its
 * index will be once filled: `ready` in a base without records, `building` (filled in the
 * background) in one with records.
 */
export function prepareField(baseId: string, input: NewField, existing: { slug: string }[], position: number, at: string, indexing: Exclude<FieldIndexState, "none"> = "ready"): FieldRow {
  checkFieldSlug(input.slug);
  const name = checkName(input.name);
  if (!(FIELD_TYPES as readonly string[]).includes(input.type)) throw badRequest(`"${input.type}" is not a field type; use one of ${FIELD_TYPES.join(", ")}.`);
  if (existing.some((field) => field.slug === input.slug)) throw badRequest(`The base already has a field "${input.slug}".`);
  return {
    id: newId("fld"),
    baseId,
    slug: input.slug,
    name,
    type: input.type,
    required: input.required ?? false,
    position,
    options: checkFieldOptions(input.type, input.options),
    createdAt: at,
    indexState: isIndexable(input) ? indexing : "none",
  };
}

export function checkReviewPolicy(policy: { requiredApprovals?: number } | undefined): ReviewPolicy {
  const requiredApprovals = policy?.requiredApprovals ?? 1;
  if (!Number.isInteger(requiredApprovals) || requiredApprovals < 1 || requiredApprovals > 10) throw badRequest("reviewPolicy.requiredApprovals must be a whole number from 1 to 10.");
  return { kind: "single", requiredApprovals };
}

/** Creates the base behind a new base node, with its fields (checked first, all or none). */
export function createBaseForNode(tx: Tx, spaceId: string, nodeId: string, input: { fields?: NewField[]; reviewPolicy?: ReviewPolicy }, at: string): BaseRow {
  forgetBases(tx);
  const count = tx.db.select({ n: sql<number>`count(*)` }).from(bases).where(eq(bases.spaceId, spaceId)).get()!.n;
  requireWithin(tx.config.limits, "basesPerSpace", count + 1);
  requireWithin(tx.config.limits, "fieldsPerBase", input.fields?.length ?? 0);
  const base: BaseRow = { id: newId("bse"), spaceId, nodeId, reviewPolicy: input.reviewPolicy ?? DEFAULT_REVIEW_POLICY, lastAutoNumber: 0, createdAt: at, updatedAt: at };
  const rows: FieldRow[] = [];
  for (const field of input.fields ?? []) rows.push(prepareField(base.id, field, rows, rows.length, at));
  insertRow(tx, bases, base);
  // One prepared insert per field: building one statement of 200 rows cost drizzle more than SQLite's work.
  for (const row of rows) insertRow(tx, fields, row);
  return base;
}

function touchBase(tx: Tx, baseId: string, at: string): void {
  forgetBases(tx);
  tx.db.update(bases).set({ updatedAt: at }).where(eq(bases.id, baseId)).run();
}

const anyRecordOf = preparedFor((db) => db.select({ one: sql`1` }).from(records).where(eq(records.baseId, sql.placeholder("baseId"))).limit(1).prepare());
const slugBeingFreed = preparedFor((db) =>
  db
    .select({ one: sql`1` })
    .from(droppedFields)
    .where(and(eq(droppedFields.baseId, sql.placeholder("baseId")), eq(droppedFields.slug, sql.placeholder("slug"))))
    .limit(1)
    .prepare(),
);

/**
 * A new field of a base. A field of the base deleted under the same slug may still have values
 * left in records, which the upkeep clears in the background (a batch at a time, so the writer is
 * never held): until it has, the slug is refused, so a new field never shows an old one's values.
 */
export function addField(tx: Tx, baseId: string, input: NewField, at: string): FieldRow {
  const existing = loadFields(tx, baseId);
  requireWithin(tx.config.limits, "fieldsPerBase", existing.length + 1);
  const indexing = anyRecordOf(tx.db).get({ baseId }) ? "building" : "ready";
  const row = prepareField(baseId, input, existing, existing.length === 0 ? 0 : Math.max(...existing.map((f) => f.position)) + 1, at, indexing);
  if (slugBeingFreed(tx.db).get({ baseId, slug: row.slug })) {
    throw conflict(`The slug "${row.slug}" belonged to a field deleted moments ago whose values are still being cleared from the records; try again in a few seconds.`, { reason: "SLUG_BEING_FREED" });
  }
  insertRow(tx, fields, row);
  if (row.indexState === "building") tx.afterCommit(tx.fieldUpkeep.wake);
  touchBase(tx, baseId, at);
  return row;
}

/** A field of the base by id or slug; anything else (another base's field included) is a 400. */
export function fieldOf(fieldRows: FieldRow[], ref: string): FieldRow {
  const field = fieldRows.find((f) => f.id === ref || f.slug === ref);
  if (!field) throw badRequest(`The base has no field "${ref}".`);
  return field;
}

/** The ids of a new field order: `refs` must name every field of the base exactly once. */
export function fieldOrder(fieldRows: FieldRow[], refs: string[]): string[] {
  const ids = refs.map((ref) => fieldOf(fieldRows, ref).id);
  if (new Set(ids).size !== fieldRows.length || ids.length !== fieldRows.length) throw badRequest("fieldIds must list every field of the base exactly once.");
  return ids;
}

const findField = (ctx: AppContext, baseId: string, ref: string): FieldRow => fieldOf(loadFields(ctx, baseId), ref);

const writeData = preparedWrite((db) =>
  db
    .update(records)
    .set({ data: sql.placeholder("data") } as never)
    .where(eq(records.id, sql.placeholder("id")))
    .prepare(),
);

/**
 * Records holding a choice that new options rename (the same id, another name) take its new name,
 * as in any table editor. Values of choices the options dropped are kept as they are.
 */
function renameChoiceValues(tx: Tx, field: FieldRow, renames: Map<string, string>): void {
  if (renames.size === 0) return;
  const path = `$."${field.slug}"`;
  const held = sql.join([...renames.keys()].map((name) => sql`${name}`), sql`, `);
  const rows = tx.db
    .select({ id: records.id, data: records.data })
    .from(records)
    .where(and(eq(records.baseId, field.baseId), sql`EXISTS (SELECT 1 FROM json_each(${records.data}, ${path}) WHERE "value" IN (${held}))`))
    .all();
  const renamed = (value: unknown) => (typeof value === "string" ? (renames.get(value) ?? value) : value);
  for (const { id, data } of rows) {
    const value = data[field.slug];
    data[field.slug] = Array.isArray(value) ? [...new Set(value.map(renamed))] : renamed(value);
    writeData(tx).run({ id, data });
  }
}

export function updateField(tx: Tx, baseId: string, fieldId: string, patch: FieldPatch, at: string): void {
  const field = findField(tx, baseId, fieldId);
  const changes: Partial<FieldRow> = {};
  if (patch.name !== undefined) changes.name = checkName(patch.name);
  if (patch.required !== undefined) changes.required = patch.required;
  if (patch.options !== undefined) {
    changes.options = checkFieldOptions(field.type, patch.options);
    renameChoiceValues(tx, field, renamedChoices(field.options, changes.options));
  }
  tx.db.update(fields).set(changes).where(eq(fields.id, field.id)).run();
  touchBase(tx, baseId, at);
}

/**
 * Removes the field from the base; its values stay in history. A trigger notes it in
 * `dropped_fields`, and the upkeep removes its indexed values and clears its slug from the records
 * in the background.
 */
export function deleteField(tx: Tx, baseId: string, fieldId: string, at: string): void {
  const field = findField(tx, baseId, fieldId);
  tx.db.delete(fields).where(eq(fields.id, field.id)).run();
  tx.afterCommit(tx.fieldUpkeep.wake);
  touchBase(tx, baseId, at);
}

/** `fieldIds` must name every field of the base exactly once. */
export function reorderFields(tx: Tx, baseId: string, fieldIds: string[], at: string): void {
  const ids = fieldOrder(loadFields(tx, baseId), fieldIds);
  ids.forEach((id, position) => tx.db.update(fields).set({ position }).where(eq(fields.id, id)).run());
  touchBase(tx, baseId, at);
}

export interface BasePatch {
  name?: string;
  description?: string;
  reviewPolicy?: { requiredApprovals?: number };
}

/** Direct edit of a base's name, description and review policy (the route requires manage for the policy). */
export function updateBase(tx: Tx, loaded: LoadedBase, patch: BasePatch, at: string): BaseView {
  forgetBases(tx);
  const nodeChanges: Partial<NodeRow> = { updatedAt: at };
  if (patch.name !== undefined) nodeChanges.name = checkName(patch.name);
  if (patch.description !== undefined) nodeChanges.description = patch.description;
  const reviewPolicy = patch.reviewPolicy ? checkReviewPolicy(patch.reviewPolicy) : loaded.base.reviewPolicy;
  tx.db.update(nodes).set(nodeChanges).where(eq(nodes.id, loaded.node.id)).run();
  tx.db.update(bases).set({ reviewPolicy, updatedAt: at }).where(eq(bases.id, loaded.base.id)).run();
  return baseView({ base: { ...loaded.base, reviewPolicy, updatedAt: at }, node: { ...loaded.node, ...nodeChanges }, fields: loaded.fields });
}
