import { recordEvent } from "../events/outbox";
import { formulaOf, isFormula } from "./fields/formula/kind";
import { isRelation } from "./fields/relation";
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { AppContext, Tx } from "../context";
import { insertRow, preparedFor, preparedWrite } from "../db/client";
import { type IdMaker, newId } from "../db/ids";
import { checkName } from "../shared/formats";
import { isComputed } from "../shared/field-types";
import { badRequest, conflict, notFound, within } from "../shared/errors";
import { requireWithin } from "../shared/limits";
import { type BaseRow, DEFAULT_REVIEW_POLICY, type FieldPatch, type FieldRow, fieldOf, fieldOrder, forgetBases, type LoadedBase, loadFields, type NewField, type NodeRow, prepareField, sourceOf } from "./bases";
import { checkFieldOptions } from "./field-types";
import { renamedChoices } from "./fields/choice";
import { recomputeFormulas, requireNoFormulaOf, resolveFormulas, resolveNewFormulas } from "./fields/formula/plan";
import { changedLinkOptions, fieldsDeletedWith, ownership, requireNoLookupOf, resolveLinkedField } from "./relations/schema";
import { bases, deletedFields, deletedFieldValues, droppedFields, fields, recordLinks, records, type ReviewPolicy } from "../tables/content";

/**
 * Changes to a base's fields, as a merge applies them (inside its transaction). A relation field
 * is one of a pair (`relations/schema.ts`): making one makes its inverse on the target base, deleting either
 * deletes both.
 */

/**
 * Creates the base behind a new base node, with its fields (checked first, all or none), and records
 * `base.created` for the change request that made it; a relation among the fields makes its inverse too.
 */
export function createBaseForNode(tx: Tx, node: Pick<NodeRow, "id" | "spaceId" | "slug" | "name">, input: { fields?: NewField[]; reviewPolicy?: ReviewPolicy }, at: string, changeRequestId: string, ids: IdMaker = newId): BaseRow {
  forgetBases(tx);
  const spaceId = node.spaceId;
  const count = tx.db.select({ n: sql<number>`count(*)` }).from(bases).where(eq(bases.spaceId, spaceId)).get()!.n;
  requireWithin(tx.config.limits, "basesPerSpace", count + 1);
  requireWithin(tx.config.limits, "fieldsPerBase", input.fields?.length ?? 0);
  const base: BaseRow = { id: ids("bse"), spaceId, nodeId: node.id, reviewPolicy: input.reviewPolicy ?? DEFAULT_REVIEW_POLICY, lastAutoNumber: 0, createdAt: at, updatedAt: at };
  const rows: FieldRow[] = [];
  for (const [index, field] of (input.fields ?? []).entries()) rows.push(within(["fields", index], () => prepareField(base.id, field, rows, rows.length, at, "ready", ids)));
  insertRow(tx, bases, base);
  const source = { spaceId, baseId: base.id, slug: node.slug, name: node.name };
  const inverses: FieldRow[] = [];
  rows.forEach((row, i) => {
    const inverse = resolveLinkedField(tx, source, row, [...rows.slice(0, i), ...inverses.filter((other) => other.baseId === base.id)], at, ids);
    if (inverse) inverses.push(inverse);
  });
  resolveNewFormulas(tx, spaceId, rows, [...rows, ...inverses.filter((other) => other.baseId === base.id)]);
  // One prepared insert per field: building one statement of 200 rows cost drizzle more than SQLite's work.
  for (const row of [...rows, ...inverses]) insertRow(tx, fields, row);
  recordEvent(tx, "base.created", { spaceId, baseId: base.id, at }, { base: { id: base.id, nodeId: node.id, slug: node.slug, name: node.name }, changeRequestId });
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
export function addField(tx: Tx, loaded: LoadedBase, input: NewField, at: string, ids: IdMaker = newId): FieldRow {
  const baseId = loaded.base.id;
  const existing = loadFields(tx, baseId);
  requireWithin(tx.config.limits, "fieldsPerBase", existing.length + 1);
  const indexing = anyRecordOf(tx).get({ baseId }) ? "building" : "ready";
  const row = prepareField(baseId, input, existing, existing.length === 0 ? 0 : Math.max(...existing.map((f) => f.position)) + 1, at, indexing, ids);
  if (slugBeingFreed(tx).get({ baseId, slug: row.slug })) {
    throw conflict(`The slug "${row.slug}" belonged to a field deleted moments ago whose values are still being cleared from the records; try again in a few seconds.`, { reason: "SLUG_BEING_FREED" });
  }
  const inverse = resolveLinkedField(tx, sourceOf(loaded), row, existing, at, ids);
  resolveNewFormulas(tx, loaded.base.spaceId, [row], [...existing, row]);
  insertRow(tx, fields, row);
  if (inverse) {
    insertRow(tx, fields, inverse);
    touchBase(tx, inverse.baseId, at);
  }
  if (row.indexState === "building") tx.afterCommit(tx.fieldUpkeep.wake);
  touchBase(tx, baseId, at);
  return row;
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

/** A relation's options as a patch leaves them: what it names replaces what the field had, a target by slug included. */
function relationPatch(field: FieldRow, options: Record<string, unknown>): Record<string, unknown> {
  const { targetBaseId: _, ...kept } = field.options;
  return options.targetBaseId === undefined && options.targetBaseSlug !== undefined ? { ...kept, ...options } : { ...field.options, ...options };
}

/** What a field update would change, checked: a field's type changes only by a conversion (`field-convert.ts`), and a relation keeps its target. */
export function fieldChanges(ctx: AppContext, loaded: LoadedBase, field: FieldRow, patch: FieldPatch): Partial<FieldRow> {
  if (patch.type !== undefined && patch.type !== field.type) {
    const relation = (patch.type !== undefined && isRelation({ type: patch.type })) || isRelation(field) ? " To or from a relation, make a new field and copy the values." : "";
    throw badRequest(
      `An update does not change a field's type ("${field.slug}" is ${field.type}, not ${patch.type}): propose { "operation": "convert", "fieldId", "newType" }, previewed by POST /bases/{id}/fields/convert/preview.${relation}`,
    );
  }
  const changes: Partial<FieldRow> = {};
  if (patch.name !== undefined) changes.name = checkName(patch.name);
  if (patch.required !== undefined) changes.required = patch.required;
  if (patch.options !== undefined) {
    changes.options = changedLinkOptions(ctx, loaded, field, checkFieldOptions(field.type, isRelation(field) ? relationPatch(field, patch.options) : patch.options));
    // The base's formulas must still hold with the new options (a lookup's rollup is what a formula reads).
    const after = loaded.fields.map((other) => (other.id === field.id ? { ...other, options: changes.options! } : other));
    const formulas = resolveFormulas(ctx, loaded.base.spaceId, after, loaded.fields);
    if (isFormula(field)) changes.options = formulas.get(field.id);
  }
  return changes;
}

export function updateField(tx: Tx, loaded: LoadedBase, fieldId: string, patch: FieldPatch, at: string): void {
  const baseId = loaded.base.id;
  const field = findField(tx, baseId, fieldId);
  const changes = fieldChanges(tx, loaded, field, patch);
  const renames = changes.options ? renamedChoices(field.options, changes.options) : new Map<string, string>();
  renameChoiceValues(tx, field, renames);
  tx.db.update(fields).set(changes).where(eq(fields.id, field.id)).run();
  const formulaChanged = isFormula(field) && changes.options && formulaOf(changes.options).expression !== formulaOf(field.options).expression;
  if (formulaChanged || renames.size > 0) recomputeFormulas(tx, baseId);
  touchBase(tx, baseId, at);
}

/** The fields deleting `field` removes (a relation's inverse too), once nothing reads them: a lookup or formula that does is a 400. */
export function fieldsToDelete(ctx: AppContext, spaceId: string, field: FieldRow): FieldRow[] {
  const going = fieldsDeletedWith(ctx, spaceId, field);
  requireNoLookupOf(ctx, spaceId, going);
  requireNoFormulaOf(ctx, spaceId, going);
  return going;
}

/** What a deletion's reviewer reads: the field's name and type, and how many records lose a value with it (a computed field's are worked out, none stored). */
export type DeletionSummary = { fieldName: string; type: string; totalCount: number; lostCount: number };

export function deletionSummary(ctx: AppContext, loaded: LoadedBase, field: FieldRow): DeletionSummary {
  const totalCount = ctx.db.select({ n: sql<number>`count(*)` }).from(records).where(eq(records.baseId, loaded.base.id)).get()!.n;
  const path = `$."${field.slug}"`;
  let lostCount = 0;
  if (isRelation(field)) {
    const { ownerId, owns } = ownership(field);
    const holder = owns ? recordLinks.sourceRecordId : recordLinks.targetRecordId;
    lostCount = ctx.db.select({ n: sql<number>`count(DISTINCT ${holder})` }).from(recordLinks).where(eq(recordLinks.fieldId, ownerId)).get()!.n;
  } else if (!isComputed(field.type)) {
    lostCount = ctx.db
      .select({ n: sql<number>`count(*)` })
      .from(records)
      .where(and(eq(records.baseId, loaded.base.id), sql`json_type(${records.data}, ${path}) NOT IN ('null') AND coalesce(${records.data} ->> ${path}, '') NOT IN ('', '[]')`))
      .get()!.n;
  }
  return { fieldName: field.name, type: field.type, totalCount, lostCount };
}

/**
 * Removes the field from the base; its values stay in history. A trigger notes it in
 * `dropped_fields`, and the upkeep removes its indexed values and clears its slug from the records
 * in the background.
 */
export function deleteField(tx: Tx, loaded: LoadedBase, fieldId: string, at: string): void {
  const going = fieldsToDelete(tx, loaded.base.spaceId, findField(tx, loaded.base.id, fieldId));
  for (const field of going) {
    const { indexState: _, ...kept } = field;
    insertRow(tx, deletedFields, { ...kept, deletedAt: at });
    tx.db.delete(fields).where(eq(fields.id, field.id)).run();
    touchBase(tx, field.baseId, at);
  }
  tx.afterCommit(tx.fieldUpkeep.wake);
}

const column = (name: string) => sql.identifier(name);

/**
 * Moves a deleted field's values in `where` (a part of its base's records) to
 * `deleted_field_values` before the upkeep clears them, when the field is kept as deleted (not
 * gone with its base or space).
 */
export function keepDeletedValues(tx: Tx, fieldId: string, path: string, where: SQL | undefined): void {
  const into = [deletedFieldValues.fieldId, deletedFieldValues.recordId, deletedFieldValues.value].map((c) => column(c.name));
  tx.db.run(
    sql`INSERT OR REPLACE INTO ${deletedFieldValues} (${sql.join(into, sql`, `)}) SELECT ${fieldId}, ${records.id}, ${records.data} -> ${path} FROM ${records}
      WHERE ${where} AND json_type(${records.data}, ${path}) IS NOT NULL AND EXISTS (SELECT 1 FROM ${deletedFields} WHERE ${deletedFields.id} = ${fieldId})`,
  );
}

/** Puts a restored field's moved values back into their records. */
function restoreValues(tx: Tx, fieldId: string, slug: string): void {
  const path = `$."${slug}"`;
  tx.db.run(
    sql`UPDATE ${records} SET ${column(records.data.name)} = json_set(${records.data}, ${path}, json(v.${column(deletedFieldValues.value.name)}))
      FROM ${deletedFieldValues} v WHERE v.${column(deletedFieldValues.recordId.name)} = ${records.id} AND v.${column(deletedFieldValues.fieldId.name)} = ${fieldId}`,
  );
}


/** A deleted field of the base that can be restored now: its slug free, its type one a restore brings back. */
export function restorableField(ctx: AppContext, loaded: LoadedBase, fieldId: string): typeof deletedFields.$inferSelect {
  const deleted = ctx.db.select().from(deletedFields).where(and(eq(deletedFields.baseId, loaded.base.id), eq(deletedFields.id, fieldId))).get();
  if (!deleted) throw notFound(`No deleted field ${fieldId} in the base "${loaded.node.slug}".`);
  // A relation's links went with it, and a computed field reads what may have changed since: those are added again.
  if (isRelation(deleted) || isComputed(deleted.type)) throw badRequest(`A deleted ${deleted.type} field cannot be restored: add it again.`);
  if (loaded.fields.some((field) => field.slug === deleted.slug)) throw conflict(`The base has a field "${deleted.slug}" again; rename it before restoring this one.`, { reason: "SLUG_TAKEN" });
  return deleted;
}

/**
 * Restores a deleted field with its values: its clearing stops, the values it moved out come back
 * into their records (those not cleared yet never left), and it is indexed again in the background.
 */
export function restoreField(tx: Tx, loaded: LoadedBase, fieldId: string, at: string): void {
  const deleted = restorableField(tx, loaded, fieldId);
  const existing = loadFields(tx, loaded.base.id);
  requireWithin(tx.config.limits, "fieldsPerBase", existing.length + 1);
  const { deletedAt: _, ...field } = deleted;
  const position = existing.length === 0 ? 0 : Math.max(...existing.map((f) => f.position)) + 1;
  insertRow(tx, fields, { ...field, position, indexState: anyRecordOf(tx).get({ baseId: loaded.base.id }) ? "building" : "ready", indexUsedAt: null, convertFrom: null });
  tx.db.delete(droppedFields).where(eq(droppedFields.fieldId, deleted.id)).run();
  restoreValues(tx, deleted.id, deleted.slug);
  tx.db.delete(deletedFields).where(eq(deletedFields.id, deleted.id)).run();
  tx.afterCommit(tx.fieldUpkeep.wake);
  touchBase(tx, loaded.base.id, at);
}

/** `fieldIds` must name every field of the base exactly once. */
export function reorderFields(tx: Tx, baseId: string, fieldIds: string[], at: string): void {
  const ids = fieldOrder(loadFields(tx, baseId), fieldIds);
  ids.forEach((id, position) => tx.db.update(fields).set({ position }).where(eq(fields.id, id)).run());
  touchBase(tx, baseId, at);
}

