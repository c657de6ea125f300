import { isFormula } from "./fields/formula/kind";
import { isLookup } from "./fields/lookup";
import { isAttachment } from "./fields/attachment";
import { isRelation } from "./fields/relation";
import { FIELD_KINDS } from "./fields/registry";
import type { Database } from "bun:sqlite";
import { resolveAttachments } from "../assets/assets";
import type { Static } from "@sinclair/typebox";
import { getTableColumns } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext, Tx } from "../context";
import { decodeRow, insertRow } from "../db/client";
import { StampedCache } from "../db/stamped-cache";
import { newId } from "../db/ids";
import { ApiError, badRequest, conflict } from "../shared/errors";
import { Timestamp, WholeNumber } from "../shared/schemas";
import { MAX_VALUE_BYTES, requireWithin } from "../shared/limits";
import { type FieldRow, findBase, findBaseOrNull, type LoadedBase, sourceOf } from "./bases";
import { isComputedAtRead } from "./field-sql";
import { type FieldError, isFreeFieldSlug, invalidValues, recordValueErrors } from "./field-types";
import { MAX_LINKS } from "./fields/relation";
import { lookupOf, type Rollup } from "./fields/lookup";
import { holdsMany, isEmpty, primaryField } from "../shared/field-types";
import { recordLinks, records } from "../tables/content";

/**
 * Relation fields come in pairs: a field on base A linking to base B, and its inverse on B linking
 * back (`options.inverseFieldId` names the other). A link is stored once, in `record_links`, under
 * the pair's owner: the field of the two with the smaller id. Its source is the owner's record, its
 * target the inverse's. A record's value in either field is read from there (never from the record's
 * `data`), so writing one side is the other side's change too, and "what links here" is an index
 * seek. A linked record that is archived drops out of every value and lookup, and comes back when
 * it is restored; nothing is written either time.
 */

/** The field of a pair that stores its links, and whether `field` is it. */
function ownership(field: FieldRow): { ownerId: string; owns: boolean } {
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

/** The base a relation links to, in the space; an archived one refuses new links (409). */
function linkableBase(ctx: AppContext, spaceId: string, ref: string): LoadedBase {
  let target: LoadedBase;
  try {
    target = findBase(ctx, spaceId, ref, { archived: true });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw badRequest(`options.targetBaseId names no base of this space: "${ref}".`);
    throw error;
  }
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
export function resolveLinkedField(ctx: AppContext, source: FieldSource, row: FieldRow, siblings: FieldRow[], at: string): FieldRow | null {
  if (isLookup(row)) {
    const { relationFieldSlug, targetFieldSlug } = lookupOf(row.options);
    const relation = siblings.find((field) => field.slug === relationFieldSlug);
    if (!relation || !isRelation(relation)) throw badRequest(`options.lookup.relationFieldSlug "${relationFieldSlug}" is not a relation field of this base.`);
    const target = findBase(ctx, source.spaceId, targetBaseOf(relation), { archived: true });
    const looked = target.fields.find((field) => field.slug === targetFieldSlug);
    if (!looked) throw badRequest(`options.lookup.targetFieldSlug "${targetFieldSlug}" is not a field of the base "${target.node.slug}".`);
    if (FIELD_KINDS[looked.type].unlinked) throw badRequest(`A lookup reads a field of the linked records, not another ${looked.type} ("${targetFieldSlug}").`);
    if (isComputedAtRead(looked)) throw badRequest(`A lookup reads values the linked records store; the formula "${targetFieldSlug}" is computed when read.`);
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
  const inverse: FieldRow = {
    id: newId("fld"),
    baseId: targetBaseId,
    slug: inverseSlug(target ? source.slug : `${row.slug}_of`, targetFields),
    name: target ? source.name : `${row.name} (linked from)`,
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
    const near = owns ? "source_record_id" : "target_record_id";
    const crowded = ctx.store.sqlite
      .query<{ id: string }, [string]>(`SELECT "${near}" AS "id" FROM "record_links" WHERE "field_id" = ?1 GROUP BY "${near}" HAVING count(*) > 1 LIMIT 1`)
      .get(ownerId);
    if (crowded) throw badRequest(`"${field.slug}" cannot hold one record only: ${crowded.id} links to more than one.`);
  }
  return { targetBaseId: targetBaseOf(field), multiple, inverseFieldId: field.options.inverseFieldId };
}

const inverseOf = (ctx: AppContext, spaceId: string, field: FieldRow): FieldRow | undefined =>
  findBase(ctx, spaceId, targetBaseOf(field), { archived: true }).fields.find((other) => other.id === field.options.inverseFieldId);

/** The fields that go with `field` when it is deleted: a relation's inverse. */
export function fieldsDeletedWith(ctx: AppContext, spaceId: string, field: FieldRow): FieldRow[] {
  if (!isRelation(field)) return [field];
  const inverse = inverseOf(ctx, spaceId, field);
  return inverse ? [field, inverse] : [field];
}

/** The lookups of the space, with the base each sits on. */
const lookupsOfSpace = (ctx: AppContext, spaceId: string) =>
  ctx.store.sqlite
    .query<{ base_id: string; slug: string; options: string }, [string]>(
      `SELECT f."base_id", f."slug", f."options" FROM "fields" f JOIN "bases" b ON b."id" = f."base_id" WHERE b."space_id" = ?1 AND f."type" = 'lookup'`,
    )
    .all(spaceId);

/** Refuses to delete fields a lookup reads (its relation, or the field it looks up): the lookup goes first. */
export function requireNoLookupOf(ctx: AppContext, spaceId: string, going: FieldRow[]): void {
  const ids = new Set(going.map((field) => field.id));
  for (const lookup of lookupsOfSpace(ctx, spaceId)) {
    if (going.some((field) => field.baseId === lookup.base_id && field.slug === lookup.slug)) continue;
    const { relationFieldSlug, targetFieldSlug } = lookupOf(JSON.parse(lookup.options));
    const base = findBase(ctx, spaceId, lookup.base_id, { archived: true });
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
  return ctx.store.sqlite
    .query<{ id: string }, [string]>(`SELECT "id" FROM "fields" WHERE "type" = 'relation' AND json_extract("options", '$.targetBaseId') IN (SELECT "value" FROM json_each(?1))`)
    .all(JSON.stringify(baseIds))
    .map((row) => row.id);
}

// ---- record values ----

/**
 * Checks the ids of the relation values a write gives, against the database: each must name a
 * record of the field's target base (which is in the same space: a record of another space reads
 * as unknown), and an active one. New links to an archived base are a 409. `current` is the
 * record's values now, for an update.
 */
function linkErrors(ctx: AppContext, loaded: LoadedBase, values: Record<string, unknown>, current?: () => Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of loaded.fields) {
    if (!isRelation(field) || !Object.hasOwn(values, field.slug)) continue;
    const ids = idsOf(values[field.slug]);
    if (ids.length === 0) continue;
    const target = findBase(ctx, loaded.base.spaceId, targetBaseOf(field), { archived: true });
    if (target.node.status === "archived") {
      const had = new Set(idsOf(current?.()[field.slug]));
      if (ids.some((id) => !had.has(id))) throw conflict(`${field.slug} links to the base "${target.node.slug}", which is archived: restore it before linking to its records.`, { reason: "TARGET_BASE_ARCHIVED" });
    }
    // Read by id alone (a seek per id; with the base in the WHERE, SQLite walked the base's index), then matched to the base.
    const found = new Map(
      ctx.store.sqlite
        .query<{ id: string; base_id: string; status: string }, [string]>(`SELECT "id", "base_id", "status" FROM "records" WHERE "id" IN (SELECT "value" FROM json_each(?1))`)
        .all(JSON.stringify(ids))
        .filter((row) => row.base_id === target.base.id)
        .map((row) => [row.id, row.status]),
    );
    for (const id of ids) {
      const status = found.get(id);
      if (status === undefined) errors.push({ slug: field.slug, type: field.type, message: `${field.slug} names ${id}, which is not a record of the base "${target.node.slug}".` });
      else if (status !== "active") errors.push({ slug: field.slug, type: field.type, message: `${field.slug} names ${id}, which is archived.` });
    }
  }
  return errors;
}

/** Attachment values name assets by id: each becomes the asset as the space holds it, or an error of its field. */
function resolveAttachmentValues(ctx: AppContext, loaded: LoadedBase, checked: { values: Record<string, unknown>; errors: FieldError[] }): void {
  for (const field of loaded.fields) {
    if (!isAttachment(field) || !Array.isArray(checked.values[field.slug])) continue;
    const resolved = resolveAttachments(ctx, loaded.node.spaceId, field.options, checked.values[field.slug] as string[]);
    if ("value" in resolved) checked.values[field.slug] = resolved.value;
    else checked.errors.push({ slug: field.slug, type: field.type, message: `${field.slug} ${resolved.error}.` });
  }
}

/**
 * How a record's values are checked: `current` is the record's values now (for an update);
 * `linkIds: false` leaves the ids of relation values to the merge in the same write, which checks
 * them in its transaction.
 */
export interface InputCheck {
  current?: () => Record<string, unknown>;
  linkIds?: boolean;
}

/** Every error of a record's values as a client gave them: each value's own, then its links'. */
export function recordInputErrors(ctx: AppContext, loaded: LoadedBase, input: Record<string, unknown>, mode: "create" | "update", { current, linkIds = true }: InputCheck = {}) {
  const checked = recordValueErrors(loaded.fields, input, mode);
  resolveAttachmentValues(ctx, loaded, checked);
  if (!linkIds || !loaded.fields.some(isRelation)) return checked;
  const wrong = new Set(checked.errors.map((error) => error.slug));
  const linked = Object.fromEntries(Object.entries(checked.values).filter(([slug]) => !wrong.has(slug)));
  return { values: checked.values, errors: [...checked.errors, ...linkErrors(ctx, loaded, linked, current)] };
}

/** `recordInputErrors`, throwing the 400 when any value is wrong. */
export function checkRecordInput(ctx: AppContext, loaded: LoadedBase, input: Record<string, unknown>, mode: "create" | "update", check?: InputCheck): Record<string, unknown> {
  const { values, errors } = recordInputErrors(ctx, loaded, input, mode, check);
  if (errors.length > 0) throw invalidValues(loaded.fields, errors, `Invalid field values: ${errors.map((e) => e.message).join(" ")}`);
  return values;
}

/** The relation fields whose values are lists: a merge combines two sides' links instead of choosing one side's list. */
export const linkLists = (loaded: LoadedBase): Set<string> => new Set(loaded.fields.filter((field) => isRelation(field) && holdsMany(field.options)).map((field) => field.slug));

/** One side of a pair as SQL sees it: the record's own column, the other's, and their places in each list. */
interface Side {
  ownerId: string;
  near: "source_record_id" | "target_record_id";
  far: "source_record_id" | "target_record_id";
  nearPlace: "position" | "target_position";
  farPlace: "position" | "target_position";
  /** The owner's base and its target, which every link of the pair carries. */
  baseId: string;
  targetBaseId: string;
  /** Whether a far record may hold more than one link of the pair, and the field it sees them through. */
  farMany: boolean;
  farSlug: string;
}

function sideOf(ctx: AppContext, spaceId: string, field: FieldRow): Side {
  const { ownerId, owns } = ownership(field);
  const inverse = inverseOf(ctx, spaceId, field);
  const farMany = inverse ? holdsMany(inverse.options) : true;
  const farSlug = inverse?.slug ?? "";
  if (owns) return { ownerId, near: "source_record_id", far: "target_record_id", nearPlace: "position", farPlace: "target_position", baseId: field.baseId, targetBaseId: targetBaseOf(field), farMany, farSlug };
  return { ownerId, near: "target_record_id", far: "source_record_id", nearPlace: "target_position", farPlace: "position", baseId: targetBaseOf(field), targetBaseId: field.baseId, farMany, farSlug };
}

/**
 * Makes `recordId`'s links in each relation field of `values` exactly the ids given, in order:
 * links kept stay (with their id and creation), others go, new ones are appended to the far
 * record's list. A far record whose field holds one record, or already holds `MAX_LINKS`, refuses
 * the link (400). Runs inside the write of the record's commit; `created` when the record is new.
 */
export function writeLinks(tx: Tx, loaded: LoadedBase, recordId: string, values: Record<string, unknown>, commitId: string, at: string, created = false): void {
  const sqlite = tx.store.sqlite;
  const moment = Date.parse(at);
  for (const field of loaded.fields) {
    if (!isRelation(field) || !Object.hasOwn(values, field.slug)) continue;
    const side = sideOf(tx, loaded.base.spaceId, field);
    const ids = idsOf(values[field.slug]);
    // A record being created holds no links yet.
    const held = new Map(
      created
        ? []
        : sqlite
            .query<{ far: string; place: number }, [string, string]>(`SELECT "${side.far}" AS "far", "${side.nearPlace}" AS "place" FROM "record_links" WHERE "${side.near}" = ?1 AND "field_id" = ?2`)
            .all(recordId, side.ownerId)
            .map((row) => [row.far, row.place]),
    );
    const wanted = new Set(ids);
    for (const far of held.keys()) {
      if (!wanted.has(far)) sqlite.query(`DELETE FROM "record_links" WHERE "${side.near}" = ?1 AND "field_id" = ?2 AND "${side.far}" = ?3`).run(recordId, side.ownerId, far);
    }
    ids.forEach((far, place) => {
      const was = held.get(far);
      if (was === place) return;
      if (was !== undefined) {
        sqlite.query(`UPDATE "record_links" SET "${side.nearPlace}" = ?4, "commit_id" = ?5, "updated_at" = ?6 WHERE "${side.near}" = ?1 AND "field_id" = ?2 AND "${side.far}" = ?3`).run(recordId, side.ownerId, far, place, commitId, moment);
        return;
      }
      const { count, last } = sqlite
        .query<{ count: number; last: number | null }, [string, string]>(`SELECT count(*) AS "count", max("${side.farPlace}") AS "last" FROM "record_links" WHERE "${side.far}" = ?1 AND "field_id" = ?2`)
        .get(far, side.ownerId)!;
      if (count >= (side.farMany ? MAX_LINKS : 1)) {
        throw badRequest(side.farMany ? `${far} already holds ${MAX_LINKS} links in ${side.farSlug}.` : `${far} already links to a record through ${side.farSlug}, which holds one record.`, {
          errors: [{ slug: field.slug, type: field.type, message: `${field.slug} cannot link ${far}.` }],
        });
      }
      const [source, target] = side.near === "source_record_id" ? [recordId, far] : [far, recordId];
      insertRow(tx, recordLinks, {
        sourceRecordId: source,
        fieldId: side.ownerId,
        targetRecordId: target,
        id: newId("lnk"),
        spaceId: loaded.base.spaceId,
        baseId: side.baseId,
        targetBaseId: side.targetBaseId,
        commitId,
        position: side.near === "source_record_id" ? place : (last ?? -1) + 1,
        targetPosition: side.near === "source_record_id" ? (last ?? -1) + 1 : place,
        createdAt: at,
        updatedAt: at,
      });
    });
  }
}

/**
 * What reads keep of linked data, per database connection (a store has one): records' relation and
 * lookup values, and the text of `GET /records/{id}/links` answers. Measured at 200,000 records
 * (docs/performance.md, "Linked data"): reading a page's links and the linked records they name is
 * most of what a page with lookups costs beyond a plain page.
 */
const kept = new WeakMap<Database, { values: StampedCache<string, Readonly<Record<string, unknown>>>; linksJson: StampedCache<string, string> }>();

function keptFor(sqlite: Database) {
  let caches = kept.get(sqlite);
  if (!caches) kept.set(sqlite, (caches = { values: new StampedCache(sqlite, 50_000), linksJson: new StampedCache(sqlite, 200) }));
  return caches;
}

/** The relation values of records, read in one statement; lookups too when asked. */
export type LinkedValues = Map<string, Readonly<Record<string, unknown>>>;

const EMPTY: LinkedValues = new Map();

/** Whether records of the base have values read from links (a relation or lookup field). */
export const hasLinkedFields = (loaded: LoadedBase): boolean => loaded.fields.some((field) => FIELD_KINDS[field.type].unlinked !== undefined);

/** Each lookup of the base that resolves, with the relation it reads through and the field it reads. */
function lookupPlans(ctx: AppContext, loaded: LoadedBase) {
  return loaded.fields.flatMap((field) => {
    if (!isLookup(field)) return [];
    const options = lookupOf(field.options);
    const relation = loaded.fields.find((other) => other.slug === options.relationFieldSlug && isRelation(other));
    const target = relation && findBaseOrNull(ctx, loaded.base.spaceId, targetBaseOf(relation));
    const looked = target?.fields.find((other) => other.slug === options.targetFieldSlug);
    return relation && looked ? [{ field, options, relation, looked }] : [];
  });
}

/**
 * The links of records, both sides; with `far`, the linked record's columns a lookup may read.
 * CROSS JOIN pins the order (links by record, then each linked record by id): statistics taken
 * while the tables were small (or none) would otherwise have SQLite read a field's every link, or
 * every record, first (measured: 45 ms instead of 0.3 for a record with 100 links). Rows are put
 * in list order here: a sort in SQL cost a third of the read.
 */
const linkRows = (far: "none" | "columns") => {
  const columns = far === "none" ? "" : `, o."created_at", o."updated_at", o."created_by", o."updated_by", o."auto_number"`;
  return `SELECT 0, l."field_id", l."source_record_id", l."target_record_id", l."position"${columns} FROM json_each(?2) fi CROSS JOIN json_each(?1) p
      CROSS JOIN "record_links" l ON l."field_id" = fi."value" AND l."source_record_id" = p."value"
      CROSS JOIN "records" o ON o."id" = l."target_record_id" AND o."status" = 'active'
    UNION ALL
    SELECT 1, l."field_id", l."target_record_id", l."source_record_id", l."target_position"${columns} FROM json_each(?3) fi CROSS JOIN json_each(?1) p
      CROSS JOIN "record_links" l ON l."field_id" = fi."value" AND l."target_record_id" = p."value"
      CROSS JOIN "records" o ON o."id" = l."source_record_id" AND o."status" = 'active'`;
};
const LINK_ROWS = { none: linkRows("none"), columns: linkRows("columns") };
/** Whether a lookup reads the field from a linked record's own columns rather than its data. */
const inColumn = (field: FieldRow) => FIELD_KINDS[field.type].column !== undefined;

type LinkRow = [side: number, ownerId: string, near: string, far: string, place: number, createdAt?: number, updatedAt?: number, createdBy?: string, updatedBy?: string, autoNumber?: number];

/**
 * The stored values lookups read, of each linked record once (however many records of the page
 * link to it), and only the fields they read: a linked record's whole data, read for each link,
 * multiplied its text by the links (issue 35).
 */
function lookedUpValues(ctx: AppContext, rows: LinkRow[], slugs: string[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  if (slugs.length === 0 || rows.length === 0) return out;
  // Slugs match FIELD_SLUG_PATTERN (letters, digits, _ and -), so each is a safe JSON path key.
  const columns = slugs.map((slug) => `o."data" -> '$."${slug}"'`).join(", ");
  const far = [...new Set(rows.map((row) => row[3]))];
  for (const [id, ...values] of ctx.store.sqlite.query<unknown[], [string]>(`SELECT o."id", ${columns} FROM json_each(?1) i CROSS JOIN "records" o ON o."id" = i."value"`).values(JSON.stringify(far)) as [string, ...(string | null)[]][]) {
    out.set(id, values.map((value) => (value === null ? null : JSON.parse(value))));
  }
  return out;
}

/** A linked record's value of the field a lookup reads: stored in its data, or kept by the record itself. */
function farValue(row: LinkRow, looked: Map<string, unknown[]>, slugs: string[], field: FieldRow): unknown {
  const column = FIELD_KINDS[field.type].column;
  if (column) return column.read({ createdAt: records.createdAt.mapFromDriverValue(row[5]!) as string, updatedAt: records.updatedAt.mapFromDriverValue(row[6]!) as string, createdBy: row[7]!, updatedBy: row[8]!, autoNumber: row[9]! });
  return looked.get(row[3])?.[slugs.indexOf(field.slug)] ?? null;
}

/**
 * Every relation value (and, with `lookups`, every lookup value) of the records. Outside a write,
 * each record's values are kept (a cache emptied by any change to the database, `StampedCache`) and
 * only the records not kept are read; a write reads them all. Every reader shares kept values, so
 * none may change them (they are typed read-only; freezing them measured 3.7x slower JSON of a page).
 */
export function linkedValues(ctx: AppContext, loaded: LoadedBase, recordIds: string[], options: { lookups: boolean }): LinkedValues {
  if (recordIds.length === 0 || !hasLinkedFields(loaded)) return EMPTY;
  const cache = keptFor(ctx.store.sqlite).values;
  if (!cache.open()) return readLinkedValues(ctx, loaded, recordIds, options);
  const keyOf = (id: string) => `${options.lookups ? "+" : "-"}${id}`;
  const out: LinkedValues = new Map();
  const missing: string[] = [];
  for (const id of recordIds) {
    const kept = cache.get(keyOf(id));
    if (kept) out.set(id, kept);
    else missing.push(id);
  }
  if (missing.length === 0) return out;
  for (const [id, values] of readLinkedValues(ctx, loaded, missing, options)) {
    cache.set(keyOf(id), values);
    out.set(id, values);
  }
  return out;
}

/**
 * The values of `linkedValues` read from the database, in one statement whatever the number of
 * records: the links of all of them, with the linked records' columns when lookups read them.
 */
function readLinkedValues(ctx: AppContext, loaded: LoadedBase, recordIds: string[], options: { lookups: boolean }): LinkedValues {
  const relations = loaded.fields.filter(isRelation);
  const lookups = options.lookups ? loaded.fields.filter(isLookup) : [];
  const out = new Map<string, Record<string, unknown>>();
  for (const id of recordIds) {
    const values: Record<string, unknown> = {};
    for (const field of relations) values[field.slug] = holdsMany(field.options) ? [] : null;
    for (const field of lookups) values[field.slug] = null;
    out.set(id, values);
  }
  if (relations.length === 0) return out;
  const slugs = [new Map<string, string>(), new Map<string, string>()];
  const owned: string[] = [];
  const inverse: string[] = [];
  for (const field of relations) {
    const { ownerId, owns } = ownership(field);
    (owns ? owned : inverse).push(ownerId);
    slugs[owns ? 0 : 1].set(ownerId, field.slug);
  }
  const plans = lookups.length > 0 ? lookupPlans(ctx, loaded) : [];
  const far = plans.some((plan) => inColumn(plan.looked)) ? "columns" : "none";
  const rows = ctx.store.sqlite.query<unknown, [string, string, string]>(LINK_ROWS[far]).values(JSON.stringify(recordIds), JSON.stringify(owned), JSON.stringify(inverse)) as LinkRow[];
  const lookedSlugs = [...new Set(plans.filter((plan) => !inColumn(plan.looked)).map((plan) => plan.looked.slug))];
  const looked = lookedUpValues(ctx, rows, lookedSlugs);
  // Each record's rows of each field, put in list order (a lookup reads the linked records' columns from them).
  const held = new Map<string, Record<string, LinkRow[]>>();
  for (const row of rows) {
    const slug = slugs[row[0]].get(row[1])!;
    let lists = held.get(row[2]);
    if (!lists) held.set(row[2], (lists = {}));
    (lists[slug] ??= []).push(row);
  }
  const none: LinkRow[] = [];
  for (const [id, values] of out) {
    const lists = held.get(id) ?? {};
    for (const field of relations) {
      const list = lists[field.slug];
      if (!list) continue;
      if (list.length > 1) list.sort((a, b) => a[4] - b[4]);
      values[field.slug] = Array.isArray(values[field.slug]) ? list.map((row) => row[3]) : list[0][3];
    }
    for (const plan of plans) {
      const list = firstOrAll(lists[plan.relation.slug] ?? none, plan.options.limit);
      values[plan.field.slug] = rollUp(plan.options.rollup, list.map((row) => farValue(row, looked, lookedSlugs, plan.looked)));
    }
  }
  return out;
}

/** The last item of a lookup's list (or text) cut at `MAX_VALUE_BYTES`. */
const TRUNCATED = "…";

const firstOrAll = <T>(items: T[], limit: "all" | "first") => (limit === "first" ? items.slice(0, 1) : items);

/**
 * Rolls the looked-up values (one per linked record, in link order) into the lookup's value. The
 * values a list or a text gathers are bounded like a stored value (`MAX_VALUE_BYTES`): past it the
 * rest is left out and the value ends with `TRUNCATED`, so a read never multiplies stored text.
 */
export function rollUp(rollup: Rollup, looked: unknown[]): unknown {
  if (rollup === "count") return looked.length;
  const values: unknown[] = [];
  let bytes = 0;
  let cut = false;
  const gather = (item: unknown) => {
    if (cut || isEmpty(item)) return;
    const size = typeof item === "string" ? item.length : typeof item === "object" ? JSON.stringify(item).length : 8;
    if (bytes + size > MAX_VALUE_BYTES) return void (cut = true);
    bytes += size + 2;
    values.push(item);
  };
  for (const value of looked) {
    if (Array.isArray(value)) for (const item of value) gather(item);
    else gather(value);
  }
  if (rollup === "values") return cut ? [...values, TRUNCATED] : values;
  if (rollup === "concatenate") return values.map((value) => (typeof value === "string" ? value : JSON.stringify(value))).join(", ") + (cut ? `, ${TRUNCATED}` : "");
  const numbers = values.filter((value): value is number => typeof value === "number");
  switch (rollup) {
    case "sum":
      return numbers.reduce((sum, n) => sum + n, 0);
    case "average":
      return numbers.length === 0 ? null : numbers.reduce((sum, n) => sum + n, 0) / numbers.length;
    case "min":
    case "max": {
      const pool: (number | string)[] = numbers.length > 0 ? numbers : values.filter((value): value is string => typeof value === "string");
      if (pool.length === 0) return null;
      return pool.reduce((best, value) => ((rollup === "min" ? value < best : value > best) ? value : best));
    }
  }
}

/**
 * The primary value (the base's first text field) of each record of the space that `ids` names, for
 * showing links by name: one statement for all of them. Ids that name no record are left out.
 */
export function recordNames(ctx: AppContext, spaceId: string, ids: string[]): Record<string, string | null> {
  const names: Record<string, string | null> = {};
  if (ids.length === 0) return names;
  const rows = ctx.store.sqlite
    .query<{ id: string; base_id: string; data: string }, [string, string]>(`SELECT "id", "base_id", "data" FROM "records" WHERE "space_id" = ?1 AND "id" IN (SELECT "value" FROM json_each(?2))`)
    .all(spaceId, JSON.stringify([...new Set(ids)]));
  for (const row of rows) {
    const primary = primaryField(findBaseOrNull(ctx, spaceId, row.base_id)?.fields ?? []);
    const value = primary ? (JSON.parse(row.data) as Record<string, unknown>)[primary.slug] : null;
    names[row.id] = typeof value === "string" && value !== "" ? value : null;
  }
  return names;
}

// ---- GET /records/{id}/links ----

export const RecordLinkSchema = t.Object(
  {
    id: t.String(),
    baseId: t.String({ description: "The base of the source record." }),
    fieldId: t.String({ description: "The relation field the link is stored under (the source's side)." }),
    fieldSlug: t.String(),
    sourceRecordId: t.String(),
    targetBaseId: t.String(),
    targetRecordId: t.String(),
    commitId: t.String({ description: "The commit that made the link or last moved it." }),
    position: WholeNumber({ description: "Its place in the source record's list." }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "RecordLink", description: "One link between two records: the record is its source or its target." },
);
export type RecordLinkView = Static<typeof RecordLinkSchema>;

const LINK_COLUMNS = Object.entries(getTableColumns(recordLinks));

/** How many links a record may have for its answer's text to be kept (at most 200 answers are). */
const KEPT_LINKS = 200;

/**
 * `recordLinkViews` as the JSON text `GET /records/{id}/links` answers. Outside a write it is kept
 * until the database changes (up to `KEPT_LINKS` links): writing 100 link objects as JSON is most
 * of what the answer costs (measured: 22 µs of a 51 µs answer).
 */
export function recordLinksJson(ctx: AppContext, loaded: LoadedBase, recordId: string): string {
  const cache = keptFor(ctx.store.sqlite).linksJson;
  const open = cache.open();
  const kept = open ? cache.get(recordId) : undefined;
  if (kept !== undefined) return kept;
  const views = recordLinkViews(ctx, loaded, recordId);
  const json = JSON.stringify(views);
  if (open && views.length <= KEPT_LINKS) cache.set(recordId, json);
  return json;
}

/**
 * The links of a record either way, in Busabase's shape: those it holds as their source (in its
 * list's order), then those that point at it. Links to archived records are left out, as in the
 * values. Each part is a seek per relation field of the record's base.
 */
export function recordLinkViews(ctx: AppContext, loaded: LoadedBase, recordId: string): RecordLinkView[] {
  const owned: string[] = [];
  const inverse: string[] = [];
  // Each link is shown under its owner's slug: the field itself, or its inverse on the other base.
  const slugs = new Map<string, string>();
  for (const field of loaded.fields.filter(isRelation)) {
    const { ownerId, owns } = ownership(field);
    (owns ? owned : inverse).push(ownerId);
    const slug = owns ? field.slug : inverseOf(ctx, loaded.base.spaceId, field)?.slug;
    if (slug !== undefined) slugs.set(ownerId, slug);
  }
  // The incoming part names its index: without statistics SQLite reads a WITHOUT ROWID table's rows
  // through its key on field_id alone, every link of the field (measured: 9.5 ms instead of 0.15 ms
  // for 100 links among 40,000). The order is made here: a sort in SQL cost more than the read.
  const part = (side: number, fieldIds: string, near: string, far: string, index = "") =>
    `SELECT ${side}, l.* FROM json_each(${fieldIds}) p CROSS JOIN "record_links" l ${index} ON l."field_id" = p."value" AND l."${near}" = ?1
       CROSS JOIN "records" o ON o."id" = l."${far}" AND o."status" = 'active'`;
  const rows = ctx.store.sqlite
    .query<unknown[], [string, string, string]>(
      `${part(0, "?2", "source_record_id", "target_record_id")}
       UNION ALL ${part(1, "?3", "target_record_id", "source_record_id", 'INDEXED BY "record_links_target_idx"')} AND l."source_record_id" != ?1`,
    )
    .values(recordId, JSON.stringify(owned), JSON.stringify(inverse));
  const links = rows.flatMap((values) => {
    const link = decodeRow<typeof recordLinks.$inferSelect>(values, 1, LINK_COLUMNS);
    const fieldSlug = slugs.get(link.fieldId);
    return fieldSlug === undefined ? [] : [{ side: values[0] as number, place: values[0] === 0 ? link.position : link.targetPosition, link, fieldSlug }];
  });
  links.sort((a, b) => a.side - b.side || (a.link.fieldId < b.link.fieldId ? -1 : a.link.fieldId > b.link.fieldId ? 1 : a.place - b.place));
  return links.map(({ link, fieldSlug }) => ({
    id: link.id,
    baseId: link.baseId,
    fieldId: link.fieldId,
    fieldSlug,
    sourceRecordId: link.sourceRecordId,
    targetBaseId: link.targetBaseId,
    targetRecordId: link.targetRecordId,
    commitId: link.commitId,
    position: link.position,
    createdAt: link.createdAt,
    updatedAt: link.updatedAt,
  }));
}

/** Removes up to `limit` links of a deleted field (the upkeep's step); answers how many went. */
export function dropLinks(tx: Tx, fieldId: string, limit: number): number {
  return tx.store.sqlite.run(
    `DELETE FROM "record_links" WHERE "field_id" = ?1 AND ("source_record_id", "target_record_id") IN (SELECT "source_record_id", "target_record_id" FROM "record_links" WHERE "field_id" = ?1 LIMIT ?2)`,
    [fieldId, limit],
  ).changes;
}
