import { FIELD_KINDS } from "./fields/registry";
import type { Static } from "@sinclair/typebox";
import { and, asc, desc, eq, or, sql } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext, Tx } from "../context";
import { preparedFor, type Reading } from "../db/client";
import { type IdMaker, newId } from "../db/ids";
import { checkName } from "../shared/formats";
import { badRequest, invalid, notInSpace } from "../shared/errors";
import { type Sight, unseen } from "../spaces/sight";
import { oneOf, Timestamp, WholeNumber } from "../shared/schemas";
import { isIndexable } from "./field-sql";
import { checkFieldOptions, checkFieldSlug } from "./field-types";
import { DEFAULT_TYPE, FIELD_TYPES, type FieldType } from "../shared/field-types";
import { bases, deletedFields, type FieldIndexState, type FieldRow, fields, type LoadedBase, type NodeRow, nodes, type NodeStatus, type ReviewPolicy } from "../tables/content";

export type { BaseRow, FieldRow, LoadedBase, NodeRow } from "../tables/content";

export const DEFAULT_REVIEW_POLICY: ReviewPolicy = { kind: "single", requiredApprovals: 1 };

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

export const DeletedFieldSchema = t.Composite([FieldSchema, t.Object({ deletedAt: Timestamp })], { description: "A field as it was when deleted; its values are cleared from the records." });
export type DeletedFieldView = Static<typeof DeletedFieldSchema>;

/** `GET /bases/{id}/fields/deleted`: the base's deleted fields, the latest deleted first. */
export function listDeletedFields(ctx: AppContext, spaceId: string, baseRef: string): Static<typeof DeletedFieldSchema>[] {
  const loaded = findBase(ctx, spaceId, baseRef);
  return ctx.db
    .select()
    .from(deletedFields)
    .where(eq(deletedFields.baseId, loaded.base.id))
    .orderBy(desc(deletedFields.deletedAt), desc(deletedFields.id))
    .all()
    .map(({ deletedAt, ...field }) => ({ ...fieldView({ ...field, indexState: "none", indexUsedAt: null, convertFrom: null }), deletedAt }));
}

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

const viewsOfLoaded = new WeakMap<LoadedBase, BaseView>();

/**
 * A loaded base's view, made once per loaded base (a change to the base or its fields loads it
 * anew) and shared by the answers that show it, which never change it: a create answers its base
 * with every record, and building it was a share of the create's allocations.
 */
export function sharedBaseView(loaded: LoadedBase): BaseView {
  let view = viewsOfLoaded.get(loaded);
  if (!view) viewsOfLoaded.set(loaded, (view = baseView(loaded)));
  return view;
}

const fieldsOfBase = preparedFor((db) => db.select().from(fields).where(eq(fields.baseId, sql.placeholder("baseId"))).orderBy(asc(fields.position), asc(fields.id)).prepare());

export const loadFields = (reader: Reading, baseId: string): FieldRow[] => fieldsOfBase(reader).all({ baseId });

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
    const row = baseByRef(ctx).get({ spaceId, ref });
    if (!row) throw notInSpace("base", ref);
    loaded = { ...row, fields: loadFields(ctx, row.base.id) };
    ctx.bases.set(key, loaded);
  }
  if (loaded.node.status === "archived" && !options.archived) throw notInSpace("base", ref);
  return loaded;
}

/** A base by id that may have gone (a link or lookup naming a base deleted since): null rather than a 404. */
export function findBaseOrNull(ctx: AppContext, spaceId: string, baseId: string): LoadedBase | null {
  try {
    return findBase(ctx, spaceId, baseId, { archived: true });
  } catch {
    return null;
  }
}

/** Called by every write that changes bases, fields or nodes. */
export const forgetBases = (tx: Tx): void => tx.bases.invalidate(tx);

/** The space's bases the caller sees, each as `narrow` shows it to them (`seenBase`: without links into what they cannot see). */
export function listBases(ctx: AppContext, spaceId: string, sight: Sight, status: NodeStatus = "active", narrow: (loaded: LoadedBase) => LoadedBase = (loaded) => loaded): BaseView[] {
  const rows = ctx.db
    .select({ base: bases, node: nodes })
    .from(bases)
    .innerJoin(nodes, eq(nodes.id, bases.nodeId))
    .where(and(eq(bases.spaceId, spaceId), eq(nodes.status, status), unseen(bases.id, sight.hiddenBases)))
    .orderBy(asc(bases.id))
    .all();
  return rows.map((row) => baseView(narrow({ ...row, fields: loadFields(ctx, row.base.id) })));
}

export type FieldPatch = {
  /** Only the field's own type: conversion is refused. */
  type?: FieldType;
  name?: string;
  required?: boolean;
  options?: Record<string, unknown>;
};

export type NewField = {
  slug: string;
  name: string;
  /** `text` when not given (Busabase's default). */
  type?: FieldType;
  required?: boolean;
  options?: Record<string, unknown>;
};

/**
 * Checks a new field against the base's others; answers the row to insert. A field is indexed
 * when queries ask for it (`indexes.ts`), but a stored formula, whose values the upkeep computes
 * as it fills the index: `indexing` is `ready` in a base without records, `building` (filled in
 * the background) in one with records.
 */
export function prepareField(baseId: string, input: NewField, existing: { slug: string }[], position: number, at: string, indexing: Exclude<FieldIndexState, "none"> = "ready", ids: IdMaker = newId): FieldRow {
  checkFieldSlug(input.slug);
  const name = checkName(input.name);
  const type = input.type ?? DEFAULT_TYPE;
  if (!(FIELD_TYPES as readonly string[]).includes(type)) throw invalid(["type"], `"${type}" is not a field type; use one of ${FIELD_TYPES.join(", ")}.`);
  if (existing.some((field) => field.slug === input.slug)) throw invalid(["slug"], `The base already has a field "${input.slug}".`);
  const options = checkFieldOptions(type, input.options);
  return {
    id: ids("fld"),
    baseId,
    slug: input.slug,
    name,
    type,
    required: input.required ?? false,
    position,
    options,
    createdAt: at,
    indexState: FIELD_KINDS[type].filledByUpkeep && isIndexable({ type, options }) ? indexing : "none",
    indexUsedAt: null,
    convertFrom: null,
  };
}

export function checkReviewPolicy(policy: { requiredApprovals?: number } | undefined): ReviewPolicy {
  const requiredApprovals = policy?.requiredApprovals ?? 1;
  if (!Number.isInteger(requiredApprovals) || requiredApprovals < 1 || requiredApprovals > 10) throw invalid(["reviewPolicy", "requiredApprovals"], "reviewPolicy.requiredApprovals must be a whole number from 1 to 10.");
  return { kind: "single", requiredApprovals };
}

/** A base as the fields made on other bases for it (a relation's inverse) name it. */
export const sourceOf = (loaded: LoadedBase) => ({ spaceId: loaded.base.spaceId, baseId: loaded.base.id, slug: loaded.node.slug, name: loaded.node.name });

/** A field of the base by id or slug; anything else (another base's field included) is a 400. */
export function fieldOf(fieldRows: FieldRow[], ref: string): FieldRow {
  const field = fieldRows.find((f) => f.id === ref || f.slug === ref);
  if (!field) throw badRequest(`The base has no field "${ref}".`);
  return field;
}

/** The ids of a new field order: `refs` must name every field of the base exactly once. */
export function fieldOrder(fieldRows: FieldRow[], refs: string[]): string[] {
  const ids = refs.map((ref) => fieldOf(fieldRows, ref).id);
  if (new Set(ids).size !== fieldRows.length || ids.length !== fieldRows.length) throw invalid(["fieldIds"], "fieldIds must list every field of the base exactly once.");
  return ids;
}

export interface BasePatch {
  name?: string;
  description?: string;
  reviewPolicy?: { requiredApprovals?: number };
}

/** Direct edit of a base's name, description and review policy (the route requires manage for the policy). */
export function updateBase(tx: Tx, loaded: LoadedBase, patch: BasePatch, at: string): LoadedBase {
  forgetBases(tx);
  const nodeChanges: Partial<NodeRow> = { updatedAt: at };
  if (patch.name !== undefined) nodeChanges.name = checkName(patch.name);
  if (patch.description !== undefined) nodeChanges.description = patch.description;
  const reviewPolicy = patch.reviewPolicy ? checkReviewPolicy(patch.reviewPolicy) : loaded.base.reviewPolicy;
  tx.db.update(nodes).set(nodeChanges).where(eq(nodes.id, loaded.node.id)).run();
  tx.db.update(bases).set({ reviewPolicy, updatedAt: at }).where(eq(bases.id, loaded.base.id)).run();
  return { base: { ...loaded.base, reviewPolicy, updatedAt: at }, node: { ...loaded.node, ...nodeChanges }, fields: loaded.fields };
}
