import type { Static } from "@sinclair/typebox";
import { and, count, eq, sql } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext, Tx } from "../context";
import { insertRow, preparedWrite } from "../db/client";
import { badRequest, conflict, invalid } from "../shared/errors";
import { foldName } from "../shared/formats";
import { WholeNumber } from "../shared/schemas";
import { type FieldRow, fieldOf, findBase, forgetBases, type LoadedBase, sourceOf } from "./bases";
import { isIndexable } from "./field-sql";
import { checkFieldOptions, recordValueErrors } from "./field-types";
import { type FieldType, isEmpty } from "../shared/field-types";
import { CONVERTIBLE_TYPES, FIELD_KINDS } from "./fields/registry";
import { NOT_CONVERTIBLE, textOf } from "./fields/kind";
import { requireNoFormulaOf } from "./fields/formula/plan";
import { requireNoLookupOf, resolveLinkedField } from "./relations/schema";
import { type LinkMatcher, linkMatcher } from "./relations/match";
import { writeLinks } from "./relations/write";
import { type ConversionState, fields, records } from "../tables/content";

/** Values a select's choices lack: left out (null), or added as choices. */
export const SELECT_CHOICE_MODES = ["null_on_missing", "auto_create"] as const;
export type SelectChoiceMode = (typeof SELECT_CHOICE_MODES)[number];

/** A preview reads every record's value on the request's thread, so it is bounded; the conversion itself is not (it runs in bounded steps). */
export const CONVERT_BOUNDS = { preview: 100_000, conflicts: 100, choices: 1000, nameExamples: 20 } as const;

/** The types a field converts to: those it converts between, and a relation (its text names records of the target base). */
export const CONVERSION_TARGETS: readonly FieldType[] = [...CONVERTIBLE_TYPES, "relation"];

export type FieldConversion = {
  fieldId: string;
  newType: FieldType;
  selectChoiceMode?: SelectChoiceMode;
  /** To a multiple select: text split on its commas into several choices (else each value is one choice). */
  splitText?: boolean;
  /** To a relation: the base whose records the values name (id or slug). */
  targetBaseId?: string;
};

export const ConvertPreviewSchema = t.Object(
  {
    totalCount: WholeNumber({ description: "The base's records, active and archived." }),
    convertibleCount: WholeNumber({ description: "Records whose value converts to a value of the new type." }),
    nullCount: WholeNumber({ description: "Records that will hold null: empty before, or a value the new type cannot hold." }),
    keptCount: WholeNumber({ description: "Records whose value carries over and reads the same (\"12\" → 12, \"infra\" → [\"infra\"])." }),
    changedCount: WholeNumber({ description: "Records whose value carries over but reads otherwise (\" 3.5 \" → 3.5, a rating's 4.6 → 5)." }),
    lostCount: WholeNumber({ description: "Records whose value the new type cannot hold: they become empty (the conflicts)." }),
    conflicts: t.Array(t.Object({ recordId: t.String(), currentValue: t.Unknown() }), { description: `Values the new type cannot hold, which become null (the first ${CONVERT_BOUNDS.conflicts}).` }),
    unmatched: t.Optional(
      t.Object(
        {
          count: WholeNumber({ description: "Distinct names (as matched: case and accents folded) no record of the target base has: they link nothing and are dropped." }),
          examples: t.Array(t.String(), { description: `The first ${CONVERT_BOUNDS.nameExamples} of them.` }),
        },
        { description: "To a relation only: the names that match no record (a record naming some it matches keeps those, and counts as changed)." },
      ),
    ),
    ambiguous: t.Optional(
      t.Object(
        {
          count: WholeNumber({ description: "Distinct names (as matched) several records of the target base bear: they do not say which record, so they link nothing and are dropped." }),
          examples: t.Array(t.String(), { description: `The first ${CONVERT_BOUNDS.nameExamples} of them.` }),
        },
        { description: "To a relation only: the names that match more than one record, counted as the unmatched ones are (rename the records that share a name to link it)." },
      ),
    ),
  },
  { description: "What converting a field would do, before anything changes." },
);
export type ConvertPreview = Static<typeof ConvertPreviewSchema>;

type Converting = Pick<FieldRow, "slug" | "type" | "options" | "convertFrom">;

/** A value of the old type as a candidate for the new one, before the new type's own check (a value already of the new type stays as it is). */
function candidate(value: unknown, field: Converting): unknown {
  if (isEmpty(value)) return null;
  const source = { type: field.convertFrom?.type ?? field.type, split: field.convertFrom?.split === true };
  return FIELD_KINDS[field.type].convertsFrom?.(value, source) ?? NOT_CONVERTIBLE;
}

/** The choice names a candidate names (for `auto_create`). */
const namesOf = (value: unknown): string[] => (value === null || value === NOT_CONVERTIBLE ? [] : (Array.isArray(value) ? value : [value]).filter((name): name is string => typeof name === "string"));

/**
 * A stored value as the field now holds it: converted, or null where the new type cannot hold it.
 * While `auto_create` is still adding choices, a name the choices lack yet is kept.
 */
export function convertedValue(value: unknown, field: Converting): unknown {
  const proposed = candidate(value, field);
  if (proposed === NOT_CONVERTIBLE || proposed === null) return null;
  const checked = recordValueErrors([{ slug: field.slug, type: field.type, required: false, options: field.options }], { [field.slug]: proposed }, "update");
  if (checked.errors.length === 0) return checked.values[field.slug] ?? null;
  return field.convertFrom?.mode === "auto_create" && FIELD_KINDS[field.type].choices ? proposed : null;
}

/** Checks a conversion against the base as it is: the field, the new type, and what reads the field. Answers the field and its options after it. */
function checkConvertible(ctx: AppContext, loaded: LoadedBase, conversion: FieldConversion): { field: FieldRow; options: Record<string, unknown>; target?: LoadedBase } {
  const field = fieldOf(loaded.fields, conversion.fieldId);
  if (conversion.targetBaseId !== undefined && conversion.newType !== "relation") throw invalid(["targetBaseId"], "targetBaseId names the base a conversion to a relation links to: only a conversion to relation takes it.");
  if (field.convertFrom) throw conflict(`"${field.slug}" is still being converted; try again when it is done.`, { reason: "FIELD_CONVERTING" });
  if (!CONVERTIBLE_TYPES.includes(field.type)) throw badRequest(`A ${field.type} field cannot be converted; make a new field and copy its values.`);
  if (field.type === conversion.newType) throw badRequest(`"${field.slug}" is already a ${field.type} field.`);
  if (conversion.splitText && conversion.newType !== "relation" && !(FIELD_KINDS[conversion.newType].choices && FIELD_KINDS[conversion.newType].formulaType === "list")) {
    throw badRequest("splitText splits text on its commas into several values: only a conversion to multiselect or relation takes it.");
  }
  requireNoLookupOf(ctx, loaded.base.spaceId, [field]);
  requireNoFormulaOf(ctx, loaded.base.spaceId, [field]);
  if (conversion.newType === "relation") {
    const target = linkTarget(ctx, loaded, conversion.targetBaseId);
    return { field, options: { targetBaseId: target.base.id, multiple: true }, target };
  }
  const keepsChoices = FIELD_KINDS[field.type].choices && FIELD_KINDS[conversion.newType].choices;
  if (!FIELD_KINDS[conversion.newType].choices) return { field, options: checkFieldOptions(conversion.newType, {}) };
  const choices = keepsChoices ? ((field.options.choices as unknown[] | undefined) ?? []) : [];
  // `null_on_missing` (the default) onto no choices leaves every value empty, as Busabase does: the preview says so first.
  if (conversion.selectChoiceMode === "auto_create" || choices.length === 0) return { field, options: { choices } };
  return { field, options: checkFieldOptions(conversion.newType, { choices }) };
}

/** A proposal's check: the conversion must be possible now (the merge checks it again against the base as it is then). */
export const checkConversion = (ctx: AppContext, loaded: LoadedBase, conversion: FieldConversion): void => void checkConvertible(ctx, loaded, conversion);

/** `POST /bases/{id}/fields/convert/preview`: counts and the values that would be lost, before any change. */
export function previewConversion(ctx: AppContext, loaded: LoadedBase, conversion: FieldConversion): ConvertPreview {
  const { field, options, target } = checkConvertible(ctx, loaded, conversion);
  const total = ctx.db.select({ n: count() }).from(records).where(eq(records.baseId, loaded.base.id)).get()!.n;
  if (total > CONVERT_BOUNDS.preview) {
    throw conflict(`A preview reads at most ${CONVERT_BOUNDS.preview.toLocaleString("en")} records (this base has ${total.toLocaleString("en")}); the conversion itself has no such bound.`, {
      reason: "PREVIEW_TOO_LARGE",
      limit: CONVERT_BOUNDS.preview,
    });
  }
  if (target) return previewLinking(ctx, loaded, field, linkMatcher(ctx, target, conversion.splitText === true));
  const after = { slug: field.slug, type: conversion.newType, options, convertFrom: conversionState(field, conversion, false) };
  const preview: ConvertPreview = { totalCount: 0, convertibleCount: 0, nullCount: 0, keptCount: 0, changedCount: 0, lostCount: 0, conflicts: [] };
  for (const { id, data } of ctx.db.select({ id: records.id, data: records.data }).from(records).where(eq(records.baseId, loaded.base.id)).all()) {
    const before = data[field.slug] ?? null;
    const converted = convertedValue(before, after);
    preview.totalCount++;
    if (converted === null) preview.nullCount++;
    else preview.convertibleCount++;
    if (isEmpty(before)) continue;
    if (converted === null) {
      preview.lostCount++;
      if (preview.conflicts.length < CONVERT_BOUNDS.conflicts) preview.conflicts.push({ recordId: id, currentValue: before });
    } else if (textOf(before) === textOf(converted)) preview.keptCount++;
    else preview.changedCount++;
  }
  return preview;
}

/** The most values a change request keeps of those a conversion loses, to show its reviewer. */
const LOST_EXAMPLES = 10;

/** What a conversion's reviewer reads: the field's name, its type before and after, and the preview's counts the proposer saw (none past the preview's bound). */
export type ConversionSummary = {
  fieldName: string;
  fromType: FieldType;
  toType: FieldType;
  counts: Pick<ConvertPreview, "totalCount" | "keptCount" | "changedCount" | "lostCount"> | null;
  lost: ConvertPreview["conflicts"];
  /** To a relation: the names that match no record of the target base, and those that match several. */
  unmatched?: ConvertPreview["unmatched"];
  ambiguous?: ConvertPreview["ambiguous"];
};

/** The summary a conversion's proposal keeps (`payload.preview`), worked out as the preview does. */
export function conversionSummary(ctx: AppContext, loaded: LoadedBase, conversion: FieldConversion): ConversionSummary {
  const field = fieldOf(loaded.fields, conversion.fieldId);
  const total = ctx.db.select({ n: count() }).from(records).where(eq(records.baseId, loaded.base.id)).get()!.n;
  const preview = total <= CONVERT_BOUNDS.preview ? previewConversion(ctx, loaded, conversion) : null;
  return {
    fieldName: field.name,
    fromType: field.type,
    toType: conversion.newType,
    counts: preview && { totalCount: preview.totalCount, keptCount: preview.keptCount, changedCount: preview.changedCount, lostCount: preview.lostCount },
    lost: preview?.conflicts.slice(0, LOST_EXAMPLES) ?? [],
    ...(preview?.unmatched ? { unmatched: preview.unmatched } : {}),
    ...(preview?.ambiguous ? { ambiguous: preview.ambiguous } : {}),
  };
}

/** How a field remembers what it was while its records convert. */
const conversionState = (field: FieldRow, conversion: FieldConversion, indexed: boolean): ConversionState => ({
  type: field.type,
  options: field.options,
  mode: conversion.selectChoiceMode ?? "null_on_missing",
  indexed,
  ...(conversion.splitText ? { split: true } : {}),
});

/**
 * Merges a conversion: the field takes its new type and options at once, and remembers what it
 * was; reads convert each stored value until the upkeep has rewritten every record
 * (`conversionStep`), a bounded step at a time, so the writer is never held for long. Meanwhile
 * the field is not indexed, and listings may not filter or sort by it (409 `FIELD_CONVERTING`).
 */
export function convertField(tx: Tx, loaded: LoadedBase, conversion: FieldConversion, at: string, commitId: string): void {
  const { field, options, target } = checkConvertible(tx, loaded, conversion);
  if (target) return linkField(tx, loaded, field, target, conversion, at, commitId);
  const convertFrom = conversionState(field, conversion, field.indexState !== "none");
  tx.db.update(fields).set({ type: conversion.newType, options, convertFrom, indexState: "none" }).where(eq(fields.id, field.id)).run();
  forgetBases(tx);
  tx.afterCommit(tx.fieldUpkeep.wake);
}

const storeValue = preparedWrite((db) =>
  db
    .update(records)
    .set({ data: sql`json_set(${records.data}, ${sql.placeholder("path")}, json(${sql.placeholder("value")}))` } as never)
    .where(eq(records.id, sql.placeholder("id")))
    .prepare(),
);

/**
 * One part of a conversion, inside the upkeep's write: `rows` (a batch of the base's records)
 * rewritten where the converted value differs, an `auto_create` select first gaining the names the
 * batch holds. Answers the field as it now is.
 */
export function convertRows(tx: Tx, field: FieldRow, rows: { id: string; data: Record<string, unknown> }[]): FieldRow {
  let current = field;
  if (current.convertFrom?.mode === "auto_create" && FIELD_KINDS[current.type].choices) {
    const had = (current.options.choices as { name: string }[] | undefined) ?? [];
    const choices = [...had];
    const known = new Set(choices.map((choice) => choice.name));
    for (const { data } of rows) {
      for (const name of namesOf(candidate(data[field.slug], current))) {
        if (!known.has(name) && choices.length < CONVERT_BOUNDS.choices) {
          known.add(name);
          choices.push({ name });
        }
      }
    }
    if (choices.length !== had.length) {
      current = { ...current, options: checkFieldOptions(current.type, { ...current.options, choices }) };
      tx.db.update(fields).set({ options: current.options }).where(eq(fields.id, field.id)).run();
      forgetBases(tx);
    }
  }
  const path = `$."${field.slug}"`;
  for (const { id, data } of rows) {
    const before = data[field.slug] ?? null;
    const after = convertedValue(before, current);
    if (JSON.stringify(before) !== JSON.stringify(after)) storeValue(tx).run({ id, path, value: JSON.stringify(after) });
  }
  return current;
}

/** Ends a conversion once every record holds its converted value: the field is indexed again (filled by the upkeep) if it was. */
export function finishConversion(tx: Tx, field: FieldRow): void {
  const indexed = field.convertFrom?.indexed === true && isIndexable(field);
  tx.db.update(fields).set({ convertFrom: null, indexState: indexed ? "building" : "none" }).where(eq(fields.id, field.id)).run();
  forgetBases(tx);
}

/** The base a conversion to a relation links to: another base of the space, named by id or slug. */
function linkTarget(ctx: AppContext, loaded: LoadedBase, ref: string | undefined): LoadedBase {
  if (ref === undefined) throw invalid(["targetBaseId"], "A conversion to a relation needs targetBaseId: the base whose records the values name.");
  // A base the space lacks is the 404 a hidden one gets (spaces/sight.ts), so neither tells the other.
  const target = findBase(ctx, loaded.base.spaceId, ref);
  if (target.base.id === loaded.base.id) throw invalid(["targetBaseId"], "A conversion links to records of another base; to link records of this base, add a relation field.");
  return target;
}

/**
 * A conversion to a relation's preview: a record whose names each name one record keeps its value,
 * one where only some do changes, one where none does loses it; the names matched by no record and
 * those matched by several are counted and shown.
 */
function previewLinking(ctx: AppContext, loaded: LoadedBase, field: FieldRow, matcher: LinkMatcher): ConvertPreview {
  const preview: ConvertPreview = { totalCount: 0, convertibleCount: 0, nullCount: 0, keptCount: 0, changedCount: 0, lostCount: 0, conflicts: [] };
  // Names as they are matched (folded), each shown as first written.
  const unmatched = new Map<string, string>();
  const ambiguous = new Map<string, string>();
  const note = (names: Map<string, string>, name: string) => {
    const key = foldName(name);
    if (!names.has(key)) names.set(key, name);
  };
  for (const { id, data } of ctx.db.select({ id: records.id, data: records.data }).from(records).where(eq(records.baseId, loaded.base.id)).all()) {
    const before = data[field.slug] ?? null;
    const match = matcher.match(before);
    preview.totalCount++;
    if (match.ids.length === 0) preview.nullCount++;
    else preview.convertibleCount++;
    for (const name of match.unmatched) note(unmatched, name);
    for (const name of match.ambiguous) note(ambiguous, name);
    if (isEmpty(before)) continue;
    if (match.ids.length === 0) {
      preview.lostCount++;
      if (preview.conflicts.length < CONVERT_BOUNDS.conflicts) preview.conflicts.push({ recordId: id, currentValue: before });
    } else if (match.unmatched.length === 0 && match.ambiguous.length === 0) preview.keptCount++;
    else preview.changedCount++;
  }
  const said = (names: Map<string, string>) => ({ count: names.size, examples: [...names.values()].slice(0, CONVERT_BOUNDS.nameExamples) });
  return { ...preview, unmatched: said(unmatched), ambiguous: said(ambiguous) };
}

const clearValues = preparedWrite((db) =>
  db
    .update(records)
    .set({ data: sql`json_remove(${records.data}, ${sql.placeholder("path")})` } as never)
    .where(and(eq(records.baseId, sql.placeholder("baseId")), sql`json_type(${records.data}, ${sql.placeholder("path")}) IS NOT NULL`))
    .prepare(),
);

/**
 * Merges a conversion to a relation, in the merge's write: each record's names are matched (as the
 * preview did, against the target base as it is now), the text leaves the records, the field
 * becomes a relation with its inverse on the target base, and the matches are written as links
 * (made by the change request, `commitId`). Names that match no record, or several, are dropped, as
 * the preview and the change request said.
 */
function linkField(tx: Tx, loaded: LoadedBase, field: FieldRow, target: LoadedBase, conversion: FieldConversion, at: string, commitId: string): void {
  const matcher = linkMatcher(tx, target, conversion.splitText === true);
  const links: [string, string[]][] = [];
  for (const { id, data } of tx.db.select({ id: records.id, data: records.data }).from(records).where(eq(records.baseId, loaded.base.id)).all()) {
    const { ids } = matcher.match(data[field.slug] ?? null);
    if (ids.length > 0) links.push([id, ids]);
  }
  // The text goes while the field is still text, so its index and search entries go with it.
  clearValues(tx).run({ baseId: loaded.base.id, path: `$."${field.slug}"` });
  const row: FieldRow = { ...field, type: "relation", options: { targetBaseId: target.base.id, multiple: true } };
  const inverse = resolveLinkedField(tx, sourceOf(loaded), row, loaded.fields.filter((other) => other.id !== field.id), at)!;
  tx.db.update(fields).set({ type: "relation", options: row.options, indexState: "none" }).where(eq(fields.id, field.id)).run();
  insertRow(tx, fields, inverse);
  forgetBases(tx);
  const linked = findBase(tx, loaded.base.spaceId, loaded.base.id, { archived: true });
  for (const [recordId, ids] of links) writeLinks(tx, linked, recordId, { [field.slug]: ids }, commitId, at, true);
}
