import { isRelation } from "../fields/relation";
import { FIELD_KINDS } from "../fields/registry";
import { isLookup } from "../fields/lookup";
import type { RecordSnapshot } from "../../events/outbox";
import { convertedValue } from "../field-convert";
import type { Static } from "@sinclair/typebox";
import { t } from "elysia";
import { CommitSchema, commitView, type ShownCommit, type UserRef } from "../commits";
import type { AppContext } from "../../context";
import { badRequest } from "../../shared/errors";
import { Nullable, oneOf, Timestamp, WholeNumber } from "../../shared/schemas";
import { BaseSchema, type BaseView, type FieldRow, type LoadedBase, sharedBaseView } from "../bases";
import { computeFormulas, hasFormulas } from "../fields/formula/plan";
import { linkedValues, recordNames } from "../relations/read";
import { idsOf } from "../relations/schema";
import { NODE_STATUSES, records } from "../../tables/content";
import type { Sight } from "../../spaces/sight";

/** A record as the API shows it: its row and fields read together, the answer's shape (`include=`, `fields=`), and the snapshot events carry. */

export type RecordRow = typeof records.$inferSelect;

export const RecordSchema = t.Object(
  {
    id: t.String(),
    baseId: t.String(),
    status: oneOf(NODE_STATUSES),
    fields: t.Record(t.String(), t.Unknown(), { description: "Every field of the base by slug; null where unset." }),
    headCommitId: t.String(),
    createdBy: t.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    archivedAt: Nullable(Timestamp),
    headCommit: t.Optional(Nullable(CommitSchema)),
    parentRecordId: t.Null({ description: "Busabase's record shape: Basalt records have no parent record." }),
    parentCommitId: Nullable(t.String({ description: "The head commit's parent." })),
    base: t.Optional(BaseSchema),
  },
  { $id: "Record", description: "A row of a base: its values, its head commit and its base (the lean shape, include= and fields=, leaves out what is not asked for)." },
);
export type RecordView = Static<typeof RecordSchema>;
/** A record in the full shape (the default): with its base and head commit. */
export type FullRecordView = RecordView & Required<Pick<RecordView, "base" | "headCommit">>;

/** With `linkedNames=true`: the records the page's relation values name, by id, each one's primary value (null when it has none). */
const LinkedNames = t.Optional(t.Record(t.String(), Nullable(t.String()), { description: "With linkedNames=true: the records the page's relation values name, by id: each one's primary value (its base's first text field), null when it has none." }));

export const RecordPageSchema = t.Object({ records: t.Array(RecordSchema), nextCursor: Nullable(t.String({ description: "Send as cursor for the next page; null on the last." })), linkedRecords: LinkedNames });

export const NumberedRecordPageSchema = t.Object(
  {
    records: t.Array(RecordSchema),
    total: WholeNumber({ description: "How many records match." }),
    totalPages: WholeNumber(),
    page: WholeNumber({ minimum: 1 }),
    pageSize: WholeNumber({ minimum: 1 }),
    linkedRecords: LinkedNames,
  },
  { description: "Busabase's numbered page: the records of page `page` of `pageSize`, and how many match." },
);

/**
 * Every field of the base, unset ones as null; computed fields from the record's own columns,
 * relations and lookups from `linked` (read from the links, `relations/read.ts`), formulas from the rest
 * (`fields/formula/plan.ts`; those computed when read only given `now`).
 */
export function recordFields(row: RecordRow, fieldRows: FieldRow[], linked?: Record<string, unknown>, now: number | null = null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fieldRows) {
    const { unlinked, column } = FIELD_KINDS[field.type];
    if (unlinked) out[field.slug] = linked?.[field.slug] ?? unlinked(field.options);
    else if (column) out[field.slug] = column.read(row);
    // Until the upkeep has rewritten every record of a field being converted, its stored values are converted as they are read.
    else out[field.slug] = field.convertFrom ? convertedValue(row.data[field.slug] ?? null, field) : (row.data[field.slug] ?? null);
  }
  if (hasFormulas(fieldRows)) computeFormulas(fieldRows, out, now);
  return out;
}

/**
 * What a record answer holds: Busabase's full shape by default; the lean one leaves out the base
 * and head commit every record repeats (`include=`), and may pick field slugs (`fields=`).
 */
export interface RecordShape {
  base: boolean;
  headCommit: boolean;
  fields: readonly string[] | null;
}
export const FULL_SHAPE: RecordShape = { base: true, headCommit: true, fields: null };

export function requireShapeFields(loaded: LoadedBase, shape: RecordShape): void {
  for (const slug of shape.fields ?? []) if (!loaded.fields.some((field) => field.slug === slug)) throw badRequest(`fields: the base has no field "${slug}".`);
}

/** A head commit as records show it: its payload is the record's field map, so it is not read. */
export type CommitHead = ShownCommit;

/** What a record shows of its head commit: all of it, or (the lean shape) only its parent. */
type HeadOfRecord = CommitHead | { id?: undefined; parentCommitId: string | null };

/** A record as the API shows it; `base` is one view shared by the records of a page. */
export function recordView(
  row: RecordRow,
  loaded: LoadedBase,
  head: HeadOfRecord | undefined,
  people: Map<string, UserRef>,
  base: BaseView,
  linked: Record<string, unknown> | undefined,
  now: number,
  shape: RecordShape = FULL_SHAPE,
): RecordView {
  const all = recordFields(row, loaded.fields, linked, now);
  const fields = shape.fields ? Object.fromEntries(shape.fields.map((slug) => [slug, all[slug] ?? null])) : all;
  // Keys are added in the answer's order (JSON keeps it), without spreading objects made for the purpose.
  const view: RecordView = {
    id: row.id,
    baseId: row.baseId,
    status: row.status,
    fields,
    headCommitId: row.headCommitId,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    archivedAt: row.archivedAt,
  } as RecordView;
  if (shape.headCommit) view.headCommit = head?.id !== undefined ? commitView(head, people, fields) : null;
  view.parentRecordId = null;
  view.parentCommitId = head?.parentCommitId ?? null;
  if (shape.base) view.base = base;
  return view;
}

/**
 * A page's answer (`{ records, ... }`, records first) as the JSON text `JSON.stringify` writes for
 * it, with the base its records share written once: a base with its fields is most of a full
 * record's bytes (2 of 3 KB for a base of nine fields), and writing it again for every record was
 * most of a page's JSON (docs/performance.md, "Linked data"). The text is joined in one go, with the
 * base in the separator: text made by concatenating (a rope) is copied again whole when the answer
 * is sent, which cost more than writing the base 50 times (docs/performance.md, "listing pages").
 * Relies on `recordView` putting `base` last.
 */
export function pageJson<A extends { records: RecordView[] }>(answer: A): string {
  const { records } = answer;
  const base = records[0]?.base;
  if (base === undefined || records.some((record) => record.base !== base)) return JSON.stringify(answer);
  const rest = JSON.stringify({ ...answer, records: undefined });
  const baseText = `,"base":${baseTextOf(base)}}`;
  const parts = records.map((record) => {
    // A property set to undefined is left out, and the object keeps its shape (a delete would not).
    record.base = undefined;
    const own = JSON.stringify(record);
    record.base = base;
    return own.slice(0, -1);
  });
  parts[0] = `{"records":[${parts[0]}`;
  parts[parts.length - 1] += `${baseText}]${rest === "{}" ? "" : `,${rest.slice(1, -1)}`}}`;
  return parts.join(`${baseText},`);
}

const baseTexts = new WeakMap<BaseView, string>();

/** A base view's JSON text, written once per base view (`sharedBaseView`: one per loaded base). */
function baseTextOf(base: BaseView): string {
  let text = baseTexts.get(base);
  if (text === undefined) baseTexts.set(base, (text = JSON.stringify(base)));
  return text;
}

/**
 * One record's answer as the JSON text `JSON.stringify` writes for it, `tail` (`,"key":value`)
 * added at its end: its base's text is written once per base view (`sharedBaseView`, one per
 * loaded base) instead of again for every create, whose answer it is most of. Relies on
 * `recordView` putting `base` last.
 */
export function recordJson(record: RecordView, tail = ""): string {
  const { base } = record;
  if (base === undefined) return `${JSON.stringify(record).slice(0, -1)}${tail}}`;
  const baseText = baseTextOf(base);
  // A property set to undefined is left out, and the object keeps its shape (as in `pageJson`).
  record.base = undefined;
  const own = JSON.stringify(record);
  record.base = base;
  return `${own.slice(0, -1)},"base":${baseText}${tail}}`;
}

/**
 * A record just written, as the API shows it: its links and lookups read in the same write. A new
 * record's links are the ids it was given (`given`, checked in this write), so without lookups to
 * read there is nothing to read.
 */
export function writtenView(ctx: AppContext, loaded: LoadedBase, row: RecordRow, head: CommitHead, people: Map<string, UserRef>, given?: Record<string, unknown>): RecordView {
  const linked = given && !loaded.fields.some(isLookup) ? given : linkedValues(ctx, loaded, [row.id], { lookups: true }).get(row.id);
  return recordView(row, loaded, head, people, sharedBaseView(loaded), linked, ctx.clock.now());
}

/** A record's values as stored and linked (not looked up): what a merge compares and a commit keeps. */
export function currentFields(ctx: AppContext, loaded: LoadedBase, row: RecordRow): Record<string, unknown> {
  return recordFields(row, loaded.fields, linkedValues(ctx, loaded, [row.id], { lookups: false }).get(row.id));
}

/** The names of the records a page's relation values name (`linkedNames=true`): one statement for the page. */
export function linkedNamesOf(ctx: AppContext, loaded: LoadedBase, sight: Sight, records: RecordView[]): Record<string, string | null> {
  const relations = loaded.fields.filter(isRelation).map((field) => field.slug);
  if (relations.length === 0) return {};
  return recordNames(ctx, loaded.base.spaceId, sight, records.flatMap((record) => relations.flatMap((slug) => idsOf(record.fields[slug]))));
}

/** The record part of an event: its view but the head commit (it repeats the values) and the base (named by `baseId`). */
export const snapshot = (record: RecordView): RecordSnapshot => ({
  // Built key by key in the view's order: a rest pattern copies the view through a generic path, a share of a create's collector work (docs/performance.md).
  id: record.id,
  baseId: record.baseId,
  status: record.status,
  fields: record.fields,
  headCommitId: record.headCommitId,
  createdBy: record.createdBy,
  createdAt: record.createdAt,
  updatedAt: record.updatedAt,
  archivedAt: record.archivedAt,
  parentRecordId: record.parentRecordId,
  parentCommitId: record.parentCommitId,
});
