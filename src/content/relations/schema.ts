import { and, eq, inArray, sql } from "drizzle-orm";
import { bases, fields, recordLinks } from "../../tables/content";
import { FIELD_KINDS, typesWhere } from "../fields/registry";
import { isFormula } from "../fields/formula/kind";
import { isLookup, lookupOf } from "../fields/lookup";
import { isRelation } from "../fields/relation";
import type { AppContext } from "../../context";
import { type IdMaker, newId } from "../../db/ids";
import { badRequest, conflict, invalid } from "../../shared/errors";
import { requireWithin } from "../../shared/limits";
import { type FieldRow, findBase, findBaseOrNull, type LoadedBase, sourceOf } from "../bases";
import { isComputedAtRead } from "../field-sql";
import { checkFieldSlug, isFreeFieldSlug } from "../field-types";
import { holdsMany } from "../../shared/field-types";

/**
 * The relation pairs of a schema: their targets and inverses, what deleting one takes with it, and
 * what reads them. Relation fields come in pairs: a field on base A linking to base B, and its inverse on B linking
 * back (`options.inverseFieldId` names the other). A link is stored once, in `record_links`, under
 * the pair's owner: the field of the two with the smaller id. Its source is the owner's record, its
 * target the inverse's. A record's value in either field is read from there (never from the record's
 * `data`), so writing one side is the other side's change too, and "what links here" is an index
 * seek. A linked record that is archived drops out of every value and lookup, and comes back when
 * it is restored; nothing is written either time.
 */

/** The field of a pair that stores its links, and whether `field` is it. */
export function ownership(field: FieldRow): { ownerId: string; owns: boolean } {
  const inverseId = field.options.inverseFieldId as string;
  return field.id < inverseId ? { ownerId: field.id, owns: true } : { ownerId: inverseId, owns: false };
}

export const targetBaseOf = (field: FieldRow) => field.options.targetBaseId as string;

/**
 * The records whose derived values a change of one record alters, by base: those whose link to it
 * came or went (their side of the relation changed), and, when its values or its being active
 * changed, every record linked to it whose base reads it when read (a lookup through that
 * relation, or a formula computed when read). `before` and `after` are its field maps (null when
 * it did not exist, or does not any more).
 */
export function recordsDerivingFrom(ctx: AppContext, loaded: LoadedBase, before: Record<string, unknown> | null, after: Record<string, unknown> | null, valuesChanged: boolean): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const relation of loaded.fields.filter(isRelation)) {
    const far = findBaseOrNull(ctx, loaded.base.spaceId, targetBaseOf(relation));
    if (!far) continue;
    const inverse = far.fields.find((field) => field.id === relation.options.inverseFieldId);
    const reads = far.fields.some((field) => (isLookup(field) && inverse !== undefined && lookupOf(field.options).relationFieldSlug === inverse.slug) || (isFormula(field) && isComputedAtRead(field)));
    const was = new Set(idsOf(before?.[relation.slug]));
    const is = new Set(idsOf(after?.[relation.slug]));
    for (const id of new Set([...was, ...is])) {
      if (was.has(id) === is.has(id) && !(reads && valuesChanged)) continue;
      let ids = out.get(far.base.id);
      if (!ids) out.set(far.base.id, (ids = new Set()));
      ids.add(id);
    }
  }
  return out;
}

/** A relation value as the list of ids it holds. */
export const idsOf = (value: unknown): string[] => (Array.isArray(value) ? (value as string[]) : typeof value === "string" ? [value] : []);

/** A field slug for the inverse of a new relation: the source base's slug, made unique on the target base. */
function inverseSlug(sourceSlug: string, taken: { slug: string }[]): string {
  const stem = sourceSlug.toLowerCase().replace(/[^a-z0-9_-]/g, "_").slice(0, 56) || "links";
  for (let n = 1; ; n++) {
    const slug = n === 1 ? stem : `${stem}_${n}`;
    if (isFreeFieldSlug(slug) && !taken.some((field) => field.slug === slug)) return slug;
  }
}

/** The slug a client asks the inverse to have: refused when the target base has it already. */
function freeInverseSlug(slug: string, taken: { slug: string }[]): string {
  checkFieldSlug(slug);
  if (taken.some((field) => field.slug === slug)) throw invalid(["options", "inverseFieldSlug"], `options.inverseFieldSlug "${slug}" is a field of the linked base already.`);
  return slug;
}

/** The base a relation links to, in the space; an archived one refuses new links (409). */
function linkableBase(ctx: AppContext, spaceId: string, ref: string): LoadedBase {
  // A base the space lacks is the 404 a hidden one gets (spaces/sight.ts), so neither tells the other.
  const target = findBase(ctx, spaceId, ref, { archived: true });
  if (target.node.status === "archived") throw conflict(`The base "${target.node.slug}" is archived: restore it before linking to it.`, { reason: "TARGET_BASE_ARCHIVED" });
  return target;
}

/** The base a field belongs to, as a relation's inverse names it. */
export interface FieldSource {
  spaceId: string;
  baseId: string;
  slug: string;
  name: string;
}

/**
 * Resolves what a new relation or lookup field refers to, against the space as it is. A relation
 * gets its target base's id and the inverse field this answers (to be inserted with it); a lookup
 * must name a relation of its base (`siblings`, the fields before it) and a field of that
 * relation's target base whose values are stored or computed by the record itself.
 */
export function resolveLinkedField(ctx: AppContext, source: FieldSource, row: FieldRow, siblings: FieldRow[], at: string, ids: IdMaker = newId): FieldRow | null {
  if (isLookup(row)) {
    const { relationFieldSlug, targetFieldSlug } = lookupOf(row.options);
    const relation = siblings.find((field) => field.slug === relationFieldSlug);
    if (!relation || !isRelation(relation)) throw invalid(["options", "lookup", "relationFieldSlug"], `options.lookup.relationFieldSlug "${relationFieldSlug}" is not a relation field of this base.`);
    const target = findBase(ctx, source.spaceId, targetBaseOf(relation), { archived: true });
    const looked = target.fields.find((field) => field.slug === targetFieldSlug);
    if (!looked) throw invalid(["options", "lookup", "targetFieldSlug"], `options.lookup.targetFieldSlug "${targetFieldSlug}" is not a field of the base "${target.node.slug}".`);
    if (FIELD_KINDS[looked.type].unlinked) throw invalid(["options", "lookup", "targetFieldSlug"], `A lookup reads a field of the linked records, not another ${looked.type} ("${targetFieldSlug}").`);
    if (isComputedAtRead(looked)) throw invalid(["options", "lookup", "targetFieldSlug"], `A lookup reads values the linked records store; the formula "${targetFieldSlug}" is computed when read.`);
    return null;
  }
  if (!isRelation(row)) return null;
  const ref = (row.options.targetBaseId ?? row.options.targetBaseSlug) as string;
  const found = ref === source.baseId ? null : linkableBase(ctx, source.spaceId, ref);
  // A relation of a base to itself: its inverse is made on the same base, beside the fields before it.
  const target = found?.base.id === source.baseId ? null : found;
  const targetFields = target ? target.fields : [...siblings, row];
  requireWithin(ctx.config.limits, "fieldsPerBase", targetFields.length + 1);
  const targetBaseId = target?.base.id ?? source.baseId;
  const wanted = { slug: row.options.inverseFieldSlug, name: row.options.inverseFieldName };
  const inverse: FieldRow = {
    id: ids("fld"),
    baseId: targetBaseId,
    slug: typeof wanted.slug === "string" ? freeInverseSlug(wanted.slug, [...targetFields, row]) : inverseSlug(target ? source.slug : `${row.slug}_of`, targetFields),
    name: typeof wanted.name === "string" ? wanted.name : target ? source.name : `${row.name} (linked from)`,
    type: "relation",
    required: false,
    position: Math.max(-1, ...targetFields.map((field) => field.position)) + 1,
    options: { targetBaseId: source.baseId, multiple: true, inverseFieldId: row.id },
    createdAt: at,
    indexState: "none",
    indexUsedAt: null,
    convertFrom: null,
  };
  row.options = { multiple: row.options.multiple, targetBaseId, inverseFieldId: inverse.id };
  return inverse;
}

/**
 * A relation's or lookup's new options, checked: a relation keeps its target base and its inverse
 * (only `multiple` changes, and to one record only while no record holds more); a lookup must
 * still name a relation of its base and a field of the target.
 */
export function changedLinkOptions(ctx: AppContext, loaded: LoadedBase, field: FieldRow, options: Record<string, unknown>): Record<string, unknown> {
  if (isLookup(field)) {
    resolveLinkedField(ctx, sourceOf(loaded), { ...field, options }, loaded.fields.filter((other) => other.id !== field.id), "");
    return options;
  }
  if (!isRelation(field)) return options;
  const ref = (options.targetBaseId ?? options.targetBaseSlug) as string;
  if (ref !== targetBaseOf(field) && findBaseOrNull(ctx, loaded.base.spaceId, ref)?.base.id !== targetBaseOf(field)) {
    throw badRequest(`A relation's target base cannot change ("${field.slug}" links to ${targetBaseOf(field)}); make a new relation field instead.`);
  }
  const multiple = holdsMany(options);
  if (!multiple && holdsMany(field.options)) {
    const { ownerId, owns } = ownership(field);
    const near = owns ? recordLinks.sourceRecordId : recordLinks.targetRecordId;
    const crowded = ctx.db.select({ id: near }).from(recordLinks).where(eq(recordLinks.fieldId, ownerId)).groupBy(near).having(sql`count(*) > 1`).limit(1).get();
    if (crowded) throw badRequest(`"${field.slug}" cannot hold one record only: ${crowded.id} links to more than one.`);
  }
  return { targetBaseId: targetBaseOf(field), multiple, inverseFieldId: field.options.inverseFieldId };
}

export const inverseOf = (ctx: AppContext, spaceId: string, field: FieldRow): FieldRow | undefined =>
  findBase(ctx, spaceId, targetBaseOf(field), { archived: true }).fields.find((other) => other.id === field.options.inverseFieldId);

/** The fields that go with `field` when it is deleted: a relation's inverse. */
export function fieldsDeletedWith(ctx: AppContext, spaceId: string, field: FieldRow): FieldRow[] {
  if (!isRelation(field)) return [field];
  const inverse = inverseOf(ctx, spaceId, field);
  return inverse ? [field, inverse] : [field];
}

/** The lookups of the space, with the base each sits on. */
const lookupsOfSpace = (ctx: AppContext, spaceId: string) =>
  ctx.db
    .select({ baseId: fields.baseId, slug: fields.slug, options: fields.options })
    .from(fields)
    .innerJoin(bases, eq(bases.id, fields.baseId))
    .where(and(eq(bases.spaceId, spaceId), inArray(fields.type, typesWhere(isLookup))))
    .all();

/** Refuses to delete fields a lookup reads (its relation, or the field it looks up): the lookup goes first. */
export function requireNoLookupOf(ctx: AppContext, spaceId: string, going: FieldRow[]): void {
  const ids = new Set(going.map((field) => field.id));
  for (const lookup of lookupsOfSpace(ctx, spaceId)) {
    if (going.some((field) => field.baseId === lookup.baseId && field.slug === lookup.slug)) continue;
    const { relationFieldSlug, targetFieldSlug } = lookupOf(lookup.options);
    const base = findBase(ctx, spaceId, lookup.baseId, { archived: true });
    const relation = base.fields.find((field) => field.slug === relationFieldSlug);
    if (!relation) continue;
    const looked = findBase(ctx, spaceId, targetBaseOf(relation), { archived: true }).fields.find((field) => field.slug === targetFieldSlug);
    if (ids.has(relation.id) || (looked && ids.has(looked.id))) {
      throw badRequest(`The lookup "${lookup.slug}" of the base "${base.node.slug}" reads this field; delete or change that lookup first.`);
    }
  }
}

/** The relation fields of other bases that link to a base being deleted for good: they go with it. */
export function relationsInto(ctx: AppContext, baseIds: string[]): string[] {
  if (baseIds.length === 0) return [];
  return ctx.db
    .select({ id: fields.id })
    .from(fields)
    .where(and(inArray(fields.type, typesWhere(isRelation)), inArray(sql`json_extract(${fields.options}, '$.targetBaseId')`, baseIds)))
    .all()
    .map((row) => row.id);
}
