import { indexFields } from "./indexes";
import type { Static } from "@sinclair/typebox";
import { and, asc, eq, sql } from "drizzle-orm";
import { t } from "elysia";
import { preparedFor } from "../db/client";
import { type IdMaker, newId } from "../db/ids";
import type { AppContext, Tx } from "../context";
import { checkName, checkSlug, slugify } from "../shared/formats";
import { ApiError, badRequest, conflict, invalid, notInSpace, pathText, type Issue } from "../shared/errors";
import { Value } from "@sinclair/typebox/value";
import { Nullable, oneOf, Timestamp, WholeNumber } from "../shared/schemas";
import { type LoadedBase, findBase } from "./bases";
import { hiddenFieldsOf } from "./records/seen";
import { FIELD_KEYS, type FieldKey, seenViewConfig } from "./view-fields";
import type { Sight } from "../spaces/sight";
import { UserRefSchema, userRefs, userRefView } from "./commits";
import { type FieldType, FILTER_OPERATORS, type FilterOperator, typesWith } from "../shared/field-types";
import { checkRecordQuery, type FilterGroup, LISTING_BOUNDS, type RecordFilter, type RecordQuery } from "./records/query";
import { type FieldRow, NODE_STATUSES, type NodeStatus, VIEW_TYPES, type ViewConfig, type ViewFilter, type ViewFilterGroup, type ViewSort, type ViewType, views } from "../tables/content";

export type ViewRow = typeof views.$inferSelect;
type Path = Issue["path"];


/** Field types a key may name: grouping needs one choice each; the calendar and gantt keys need moments. */
const KEY_TYPES: Partial<Record<FieldKey, readonly FieldType[]>> = {
  groupByFieldSlug: typesWith("stacks"),
  stackByFieldSlug: typesWith("stacks"),
  dateFieldSlug: typesWith("dated"),
  startFieldSlug: typesWith("dated"),
  endFieldSlug: typesWith("dated"),
};

/** A view's sort is one field: the listing's keyset pages follow one sort key (and creation order). */
export const VIEW_BOUNDS = { sorts: 1, visibleFields: 500, fieldWidth: { minimum: 40, maximum: 2000 } } as const;

const FieldSlugRef = t.String({ minLength: 1, maxLength: 64 });
const ViewFilterSchema = t.Object({
  fieldSlug: FieldSlugRef,
  fieldId: t.Optional(t.String({ description: "The field's id when the view was saved (set by the merge)." })),
  operator: t.String({ description: `${FILTER_OPERATORS.join(", ")}: kept as given.` }),
  value: t.Optional(t.Unknown({ description: "Read by the field's type: a text, number or boolean, or a list of them for in." })),
});
const Match = oneOf(["all", "any"], { description: "all: every condition holds (AND); any: one of them does (OR)." });
const InnerGroupSchema = t.Object({ match: Match, filters: t.Array(ViewFilterSchema, { maxItems: LISTING_BOUNDS.filters }) });
const ViewFilterGroupSchema = t.Object({ match: Match, filters: t.Array(ViewFilterSchema, { maxItems: LISTING_BOUNDS.filters }), groups: t.Optional(t.Array(InnerGroupSchema, { maxItems: LISTING_BOUNDS.filters })) });
const ViewSortSchema = t.Object({ fieldSlug: FieldSlugRef, fieldId: t.Optional(t.String()), direction: t.Optional(oneOf(["asc", "desc"])) });

export const ViewConfigSchema = t.Object(
  {
    filters: t.Optional(t.Array(ViewFilterSchema, { maxItems: LISTING_BOUNDS.filters, description: "Combined with AND, as the listing's filters." })),
    sorts: t.Optional(t.Array(ViewSortSchema, { maxItems: VIEW_BOUNDS.sorts, description: "At most one: the listing sorts by one field, then by creation." })),
    groups: t.Optional(t.Array(ViewFilterGroupSchema, { maxItems: LISTING_BOUNDS.filters, description: "Groups of filters, each ANDed with filters: its own filters (and inner groups) combined by match (Basalt's own key)." })),
    visibleFieldSlugs: t.Optional(Nullable(t.Array(FieldSlugRef, { maxItems: VIEW_BOUNDS.visibleFields }))),
    fieldWidths: t.Optional(t.Record(t.String({ minLength: 1, maxLength: 64 }), WholeNumber(VIEW_BOUNDS.fieldWidth))),
    rowHeight: t.Optional(oneOf(["short", "medium", "tall"], { description: "How tall the grid's rows are (Basalt's own key); short by default." })),
    groupByFieldSlug: t.Optional(Nullable(FieldSlugRef)),
    stackByFieldSlug: t.Optional(Nullable(FieldSlugRef)),
    dateFieldSlug: t.Optional(Nullable(FieldSlugRef)),
    startFieldSlug: t.Optional(Nullable(FieldSlugRef)),
    endFieldSlug: t.Optional(Nullable(FieldSlugRef)),
    coverFieldSlug: t.Optional(Nullable(FieldSlugRef)),
    coverFit: t.Optional(oneOf(["cover", "fit"])),
    cardSize: t.Optional(oneOf(["small", "medium", "large"])),
    showFieldLabels: t.Optional(t.Boolean()),
    ganttScale: t.Optional(oneOf(["week", "month"])),
  },
  { description: "Filters and sort in the listing's object forms, the fields shown, and how each view type draws its records." },
);
export type ViewConfigInput = Static<typeof ViewConfigSchema>;

export const ViewSchema = t.Object(
  {
    id: t.String(),
    baseId: t.String(),
    slug: t.String(),
    name: t.String(),
    description: t.String(),
    type: oneOf(VIEW_TYPES),
    config: t.Composite([t.Object({ filters: t.Array(ViewFilterSchema), sorts: t.Array(ViewSortSchema) }), t.Omit(ViewConfigSchema, ["filters", "sorts"])]),
    status: oneOf(NODE_STATUSES),
    createdBy: t.String(),
    createdByUser: Nullable(UserRefSchema),
    archivedAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    missingFieldSlugs: t.Array(t.String(), {
      description: "Fields the configuration names that the base no longer has (deleted, or re-made under the same slug): the view keeps working without them.",
    }),
  },
  { $id: "View", description: "A saved way to look at a base's records." },
);
export type ViewView = Static<typeof ViewSchema>;

/** What a view change proposes (a create's slug is decided when it is proposed). */
export type NewView = {
  name: string;
  slug: string;
  type: ViewType;
  description: string;
  config: ViewConfig;
};
export type ViewPatch = Partial<Omit<NewView, "slug">>;

/** The field a reference names: by the id saved with it when there is one (a field re-made under the slug is another field). */
function referenced(fieldRows: FieldRow[], ref: { fieldSlug: string; fieldId?: string }): FieldRow | undefined {
  return ref.fieldId ? fieldRows.find((field) => field.id === ref.fieldId) : fieldRows.find((field) => field.slug === ref.fieldSlug);
}

function filterValue(value: unknown, where: Path): string | string[] | undefined {
  const scalar = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : typeof v === "boolean" ? String(v) : null);
  const at = [...where, "value"];
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) {
    const list = value.map(scalar);
    if (list.length > LISTING_BOUNDS.inValues || list.some((v) => v === null)) throw invalid(at, `${pathText(at)} must be a text, number or boolean, or a list of at most ${LISTING_BOUNDS.inValues} of them.`);
    return list as string[];
  }
  const one = scalar(value);
  if (one === null) throw invalid(at, `${pathText(at)} must be a text, number or boolean, or a list of them.`);
  return one;
}

/**
 * A configuration checked against the base's fields as they are now, in the listing's own forms,
 * each field reference keeping the field's id: every filter and the sort must be one the listing
 * can run, and each named field must exist (and be of a type its key can use).
 */
export function checkViewConfig(loaded: Pick<LoadedBase, "fields">, input: ViewConfigInput): ViewConfig {
  const fieldRows = loaded.fields;
  /** The field `slug` names, at `where` (its issue's path goes on to `key` when the slug is one key of an object there). */
  const named = (slug: string, where: Path, key?: string): FieldRow => {
    const field = fieldRows.find((f) => f.slug === slug);
    if (!field) throw invalid(key ? [...where, key] : where, `${pathText(where)}: the base has no field "${slug}".`);
    return field;
  };
  const filtersAt = (given: ViewConfigInput["filters"], at: Path): ViewFilter[] =>
    (given ?? []).map((filter, i) => {
      const where = [...at, i];
      if (!(FILTER_OPERATORS as readonly string[]).includes(filter.operator)) throw invalid([...where, "operator"], `${pathText(where)}.operator must be one of ${FILTER_OPERATORS.join(", ")}.`);
      const field = named(filter.fieldSlug, where, "fieldSlug");
      const value = filterValue(filter.value, where);
      return { fieldSlug: field.slug, fieldId: field.id, operator: filter.operator, ...(value === undefined ? {} : { value }) };
    });
  const filters = filtersAt(input.filters, ["config", "filters"]);
  const groupsAt = (given: { match: string; filters: ViewConfigInput["filters"]; groups?: { match: string; filters: ViewConfigInput["filters"] }[] }[] | undefined, at: Path): ViewFilterGroup[] | undefined =>
    given?.map((group, i) => ({ match: group.match as ViewFilterGroup["match"], filters: filtersAt(group.filters, [...at, i, "filters"]), ...(group.groups ? { groups: groupsAt(group.groups, [...at, i, "groups"]) } : {}) }));
  const groups = groupsAt(input.groups, ["config", "groups"]);
  const sorts: ViewSort[] = (input.sorts ?? []).map((sort, i) => {
    const field = named(sort.fieldSlug, ["config", "sorts", i], "fieldSlug");
    return { fieldSlug: field.slug, fieldId: field.id, direction: sort.direction ?? "asc" };
  });
  checkRecordQuery(fieldRows, { status: "active", ...viewQueryOf(filters, sorts, groups) });
  (input.visibleFieldSlugs ?? []).forEach((slug, i) => named(slug, ["config", "visibleFieldSlugs", i]));
  for (const key of FIELD_KEYS) {
    const slug = input[key];
    if (slug === undefined || slug === null) continue;
    const field = named(slug, ["config", key]);
    const types = KEY_TYPES[key];
    if (types && !types.includes(field.type)) throw invalid(["config", key], `config.${key}: "${slug}" is a ${field.type} field; it must be one of ${types.join(", ")}.`);
  }
  const { groups: _, ...rest } = input;
  return { ...rest, filters, sorts, ...(groups ? { groups } : {}) };
}

const recordFilters = (filters: ViewFilter[]): RecordFilter[] => filters.map((filter) => ({ fieldSlug: filter.fieldSlug, operator: filter.operator as FilterOperator, value: filter.value }));
const recordGroups = (groups: ViewFilterGroup[] = []): FilterGroup[] => groups.map((group) => ({ match: group.match, filters: recordFilters(group.filters), groups: recordGroups(group.groups) }));

const viewQueryOf = (filters: ViewFilter[], sorts: ViewSort[], groups?: ViewFilterGroup[]): Pick<RecordQuery, "filters" | "sort" | "groups"> => ({
  filters: recordFilters(filters),
  sort: sorts[0] ? `${sorts[0].direction === "desc" ? "-" : ""}${sorts[0].fieldSlug}` : undefined,
  groups: recordGroups(groups),
});

/** Every filter of a view's groups, however deep. */
const groupFilters = (groups: ViewFilterGroup[] = []): ViewFilter[] => groups.flatMap((group) => [...group.filters, ...groupFilters(group.groups)]);

/** Slugs the configuration names that the base no longer has. */
function missingFields(fieldRows: FieldRow[], config: ViewConfig): string[] {
  const refs: { fieldSlug: string; fieldId?: string }[] = [
    ...config.filters,
    ...groupFilters(config.groups),
    ...config.sorts,
    ...((config.visibleFieldSlugs as string[] | null | undefined) ?? []).map((fieldSlug) => ({ fieldSlug })),
    ...FIELD_KEYS.flatMap((key) => (typeof config[key] === "string" ? [{ fieldSlug: config[key] as string }] : [])),
  ];
  return [...new Set(refs.filter((ref) => !referenced(fieldRows, ref)).map((ref) => ref.fieldSlug))];
}

/**
 * A stored configuration as the API would have saved it against the base's fields now, less what
 * names a field the base no longer has (a view keeps working without it): the schema and every
 * check of `checkViewConfig`, or the 400 the API would have answered. Whatever wrote the row (an
 * older version, a dump), nothing reaches a listing that the API would refuse.
 */
export function storedViewConfig(fieldRows: FieldRow[], stored: unknown): ViewConfig {
  if (!Value.Check(ViewConfigSchema, stored)) {
    const first = Value.Errors(ViewConfigSchema, stored).First();
    const path = (first?.path ?? "").split("/").filter(Boolean).map((part) => (/^\d+$/.test(part) ? Number(part) : part));
    throw invalid(["config", ...path], `${pathText(["config", ...path])}: ${first?.message ?? "not a view configuration"}.`);
  }
  const config = stored as ViewConfigInput;
  const present = <T extends { fieldSlug: string; fieldId?: string }>(refs: T[] = []): T[] => refs.flatMap((ref) => {
    const field = referenced(fieldRows, ref);
    return field ? [{ ...ref, fieldSlug: field.slug }] : [];
  });
  const presentGroups = <G extends { filters: ViewConfigInput["filters"]; groups?: G[] }>(groups?: G[]): G[] | undefined => groups?.map((group) => ({ ...group, filters: present(group.filters), ...(group.groups ? { groups: presentGroups(group.groups) } : {}) }));
  const has = (slug: string | null | undefined) => typeof slug === "string" && fieldRows.some((field) => field.slug === slug);
  const keys = Object.fromEntries(FIELD_KEYS.filter((key) => config[key] !== undefined).map((key) => [key, has(config[key]) ? config[key] : null]));
  const visibleFieldSlugs = config.visibleFieldSlugs?.filter(has);
  return checkViewConfig({ fields: fieldRows }, { ...config, ...keys, filters: present(config.filters), sorts: present(config.sorts), groups: presentGroups(config.groups), ...(visibleFieldSlugs ? { visibleFieldSlugs } : {}) });
}

type ViewQuery = Pick<RecordQuery, "filters" | "sort" | "groups">;

/**
 * `viewQuery`'s answers by the base as loaded (a new object after any change to the base or its
 * fields) and the view's stored configuration: a memo of those two values, not a cache of the
 * database. Checking a stored configuration again on every page was 6% of a page through a view.
 */
const viewQueries = new WeakMap<LoadedBase, Map<string, ViewQuery>>();

/** The listing a view asks for, less what names a field the base no longer has; a stored configuration the API would refuse is a 400 naming the view, never run. */
export function viewQuery(loaded: LoadedBase, view: ViewRow): ViewQuery {
  const key = JSON.stringify(view.config);
  let known = viewQueries.get(loaded);
  const kept = known?.get(key);
  if (kept) return kept;
  const query = checkedViewQuery(loaded, view);
  if (!known) viewQueries.set(loaded, (known = new Map()));
  if (known.size >= 64) known.clear();
  known.set(key, query);
  return query;
}

function checkedViewQuery(loaded: LoadedBase, view: ViewRow): ViewQuery {
  let config: ViewConfig;
  try {
    config = storedViewConfig(loaded.fields, view.config);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw invalid(["viewId"], `The view ${view.id} holds a configuration Basalt cannot run (${error.message}): update its config.`);
  }
  return viewQueryOf(config.filters, config.sorts, config.groups);
}

/** Views as a caller with `sight` sees them: their configurations name no field hidden from them (`seenViewConfig`). */
export function viewViews(ctx: AppContext, sight: Sight, rows: ViewRow[], fieldRows: FieldRow[]): ViewView[] {
  const hidden = new Map<string, ReturnType<typeof hiddenFieldsOf>>();
  const hiddenOf = (row: ViewRow) => hidden.get(row.baseId) ?? hidden.set(row.baseId, hiddenFieldsOf(ctx, row.spaceId, sight, row.baseId)).get(row.baseId)!;
  const people = userRefs(
    ctx,
    rows.map((row) => row.createdBy),
  );
  return rows.map((row) => {
    const config = seenViewConfig(row.config, hiddenOf(row));
    return {
      id: row.id,
      baseId: row.baseId,
      slug: row.slug,
      name: row.name,
      description: row.description,
      type: row.type,
      config: config as ViewView["config"],
      status: row.status,
      createdBy: row.createdBy,
      createdByUser: userRefView(people.get(row.createdBy)),
      archivedAt: row.archivedAt,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      missingFieldSlugs: missingFields(fieldRows, config),
    };
  });
}

const viewById = preparedFor((db) =>
  db
    .select()
    .from(views)
    .where(and(eq(views.id, sql.placeholder("id")), eq(views.spaceId, sql.placeholder("spaceId"))))
    .prepare(),
);

/** A view's row, kept until the database next changes (`ctx.views`): every page through a view reads it. */
function viewRow(ctx: AppContext, spaceId: string, viewId: string): ViewRow | undefined {
  const open = ctx.views.open();
  const key = `${spaceId} ${viewId}`;
  const kept = open ? ctx.views.get(key) : undefined;
  if (kept) return kept;
  const row = viewById(ctx).get({ id: viewId, spaceId });
  if (row && open) ctx.views.set(key, row);
  return row;
}

/** A view of the space, or 404 (another space's ids are not found). */
export function findView(ctx: AppContext, spaceId: string, viewId: string, status?: NodeStatus): ViewRow {
  const row = viewRow(ctx, spaceId, viewId);
  if (!row || (status && row.status !== status)) throw notInSpace("view", viewId);
  return row;
}

export function getView(ctx: AppContext, spaceId: string, sight: Sight, viewId: string): ViewView {
  const row = findView(ctx, spaceId, viewId);
  return viewViews(ctx, sight, [row], findBase(ctx, spaceId, row.baseId, { archived: true }).fields)[0];
}

/** `GET /bases/{baseId}/views`: the base's views of a status (default active), oldest first. */
export function listViews(ctx: AppContext, spaceId: string, sight: Sight, baseRef: string, status: NodeStatus = "active"): ViewView[] {
  const loaded = findBase(ctx, spaceId, baseRef);
  const rows = ctx.db
    .select()
    .from(views)
    .where(and(eq(views.baseId, loaded.base.id), eq(views.status, status)))
    .orderBy(asc(views.id))
    .all();
  return viewViews(ctx, sight, rows, loaded.fields);
}

/** A new view's fields checked now (the merge checks the configuration again against the base as it is then). */
export function checkNewView(loaded: LoadedBase, input: { name: string; slug?: string; type?: ViewType; description?: string; config?: ViewConfigInput }): NewView {
  const name = checkName(input.name);
  const slug = input.slug === undefined ? slugify(name, "view") : checkSlug(input.slug, "view slug");
  return { name, slug, type: input.type ?? "table", description: input.description ?? "", config: checkViewConfig(loaded, input.config ?? {}) };
}

function requireFreeSlug(tx: Tx, baseId: string, slug: string, exceptId?: string): void {
  const taken = tx.db
    .select({ id: views.id })
    .from(views)
    .where(and(eq(views.baseId, baseId), eq(views.slug, slug), eq(views.status, "active")))
    .get();
  if (taken && taken.id !== exceptId) throw conflict(`The base already has a view "${slug}".`, { reason: "SLUG_TAKEN" });
}

/** The fields a view filters or sorts by: indexed for it (`indexes.ts`). */
const viewedFields = (loaded: LoadedBase, config: ViewConfig): FieldRow[] => {
  const ids = new Set([...config.filters, ...config.sorts].map((ref) => ref.fieldId));
  return loaded.fields.filter((field) => ids.has(field.id));
};

/** Merges a view create: its configuration is checked again against the base as it is now. */
export function createView(tx: Tx, loaded: LoadedBase, input: NewView, createdBy: string, at: string, ids: IdMaker = newId): ViewRow {
  requireFreeSlug(tx, loaded.base.id, input.slug);
  const row: ViewRow = {
    id: ids("viw"),
    spaceId: loaded.base.spaceId,
    baseId: loaded.base.id,
    ...input,
    config: checkViewConfig(loaded, input.config),
    status: "active",
    createdBy,
    archivedAt: null,
    createdAt: at,
    updatedAt: at,
  };
  tx.db.insert(views).values(row).run();
  indexFields(tx, viewedFields(loaded, row.config));
  return row;
}

export function updateView(tx: Tx, loaded: LoadedBase, viewId: string, patch: ViewPatch, at: string): ViewRow {
  const row = findView(tx, loaded.base.spaceId, viewId, "active");
  const next = { ...row, ...patch, ...(patch.config ? { config: checkViewConfig(loaded, patch.config) } : {}), updatedAt: at };
  tx.db.update(views).set(next).where(eq(views.id, row.id)).run();
  indexFields(tx, viewedFields(loaded, next.config));
  return next;
}

/** Archives or restores a view; a restored view's slug must still be free. */
export function setViewStatus(tx: Tx, spaceId: string, viewId: string, status: NodeStatus, at: string): ViewRow {
  const row = findView(tx, spaceId, viewId);
  if (row.status === status) throw conflict(`The view is already ${status}.`, { reason: "VIEW_STATE" });
  if (status === "active") requireFreeSlug(tx, row.baseId, row.slug);
  const next = { ...row, status, archivedAt: status === "archived" ? at : null, updatedAt: at };
  tx.db.update(views).set({ status, archivedAt: next.archivedAt, updatedAt: at }).where(eq(views.id, row.id)).run();
  return next;
}

/**
 * A listing through a view: the view's filters and the query's together, the query's sort before
 * the view's. The view names its base; a `baseRef` naming another base is a 400. A deleted view
 * answers as a missing one (restoring it makes it usable again).
 */
export function throughView<Q extends RecordQuery>(ctx: AppContext, spaceId: string, viewId: string, baseRef: string | undefined, query: Q): { loaded: LoadedBase; query: Q } {
  const view = findView(ctx, spaceId, viewId, "active");
  const loaded = findBase(ctx, spaceId, view.baseId);
  if (baseRef !== undefined && findBase(ctx, spaceId, baseRef).base.id !== loaded.base.id) throw badRequest(`The view "${viewId}" belongs to another base.`);
  const own = viewQuery(loaded, view);
  return { loaded, query: { ...query, filters: [...own.filters, ...query.filters], groups: [...(own.groups ?? []), ...(query.groups ?? [])], sort: query.sort ?? own.sort } };
}
