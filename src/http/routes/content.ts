import type { Sight } from "../../spaces/sight";
import { seenBase } from "../../content/records/seen-base";
import { MATCH_NAMES_LIMIT, matchNames, NameMatchesSchema } from "../../content/relations/match";
import { readyListing, recordShape } from "../../content/records/grammar";
import { CONVERSION_TARGETS, ConvertPreviewSchema, previewConversion, SELECT_CHOICE_MODES } from "../../content/field-convert";
import { checkNewFormula, FormulaCheckSchema } from "../../content/fields/formula/plan";
import type { TObject } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Actor } from "../../auth/actor";
import { mergedRecord, viewOf } from "../../changes/lifecycle";
import { type Proposed, sourceAttribution } from "../../changes/propose";
import { CommitSchema } from "../../content/commits";
import { ChangeRequestSchema } from "../../changes/views";
import { MAX_BULK_UPDATES, type Proposer, proposeBaseLifecycle, proposeRecordLifecycles, proposeFieldChange, proposeNodeChanges, proposeRecordChange, proposeRecords, proposeRecordUpdates, proposeViewChange } from "../../changes/proposals";
import { iso } from "../../shared/clock";
import type { AppContext } from "../../context";
import { write } from "../../db/tx";
import { access } from "../access";
import { answers } from "../openapi";
import { badRequest, notFound } from "../../shared/errors";
import { limitParam, nestedQuery, oneString, stringList, wholeNumberParam } from "../../shared/query-params";
import { Name, oneOf, queryParameter, Slug, variants, WholeNumber } from "../../shared/schemas";
import { BaseSchema, baseView, DeletedFieldSchema, findBase, listBases, listDeletedFields, updateBase } from "../../content/bases";
import { DEFAULT_TREE_DEPTH, favoriteNodes, isDescendant, listNodes, NodeHitSchema, NodeSchema, purgeNode, searchNodes, toggleFavorite, updateMetadata } from "../../content/nodes";
import { RecordLinkSchema } from "../../content/relations/view";
import { nodeDetail, NodeDetailSchema } from "../../content/node-kinds";
import { countRecords, listRecords, NUMBERED_PAGE_BOUNDS, numberedPage, recordsWithValue } from "../../content/records/list";
import { getRecord, linksOfRecordJson, recordHistory } from "../../content/records/read";
import { linkedNamesOf, pageJson, NumberedRecordPageSchema, recordJson, RecordPageSchema, RecordSchema } from "../../content/records/view";
import type { SpaceScope } from "../../spaces/resolve";
import { FIELD_TYPES, FILTER_OPERATORS } from "../../shared/field-types";
import { NODE_TYPES, VIEW_TYPES } from "../../tables/content";
import { getView, listViews, ViewConfigSchema, ViewSchema } from "../../content/views";

const Json = t.Record(t.String(), t.Unknown());
const Message = t.Optional(t.String({ maxLength: 10_000 }));
const Review = { message: Message, autoMerge: t.Optional(t.Boolean()) };
/** A key repeated by the same caller on the same base answers the first result instead of proposing again. */
const IdempotencyKey = t.Optional(t.String({ minLength: 1, maxLength: 200 }));
const FieldType = t.Optional(oneOf(FIELD_TYPES, { description: "text when not given." }));
const FieldDefinition = t.Object({ slug: Slug, name: Name, type: FieldType, required: t.Optional(t.Boolean()), options: t.Optional(Json) });
const ReviewPolicy = t.Object({ kind: t.Optional(t.Literal("single")), requiredApprovals: WholeNumber({ minimum: 1, maximum: 10 }) });
const Status = oneOf(["active", "archived"]);

const NodeOperation = variants([
  t.Object({
    kind: t.Literal("create"),
    ref: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    parentNodeId: t.Optional(t.String()),
    parentNodeRef: t.Optional(t.String()),
    nodeType: oneOf(NODE_TYPES),
    slug: Slug,
    name: Name,
    description: t.Optional(t.String({ maxLength: 10_000 })),
    metadata: t.Optional(Json),
    fields: t.Optional(t.Array(FieldDefinition, { maxItems: 200 })),
    reviewPolicy: t.Optional(ReviewPolicy),
  }),
  t.Object({ kind: t.Literal("rename"), nodeId: t.String(), slug: t.Optional(Slug), name: t.Optional(Name), description: t.Optional(t.String({ maxLength: 10_000 })) }),
  t.Object({ kind: t.Literal("move"), nodeId: t.String(), parentNodeId: t.Optional(t.String()), parentNodeRef: t.Optional(t.String()), position: t.Optional(WholeNumber({ minimum: 0 })) }),
  t.Object({ kind: t.Literal("delete"), nodeId: t.String() }),
  t.Object({ kind: t.Literal("restore"), nodeId: t.String() }),
]);

const Conversion = {
  fieldId: t.String({ minLength: 1 }),
  newType: oneOf(CONVERSION_TARGETS),
  targetBaseId: t.Optional(t.String({ minLength: 1, description: "To a relation: the base (id or slug) whose records the values name, matched by its primary field (case and accents folded)." })),
  selectChoiceMode: t.Optional(t.Union(SELECT_CHOICE_MODES.map((mode) => t.Literal(mode)), { description: "For a select or multiselect: values its choices lack become null (default), or are added as choices." })),
  splitText: t.Optional(t.Boolean({ description: "To a multiselect or a relation: split text on its commas into several choices. Without it each value is one choice (a select's \"infra, p1\" stays one)." })),
};

const FieldChange = variants([
  t.Object({ operation: t.Literal("create"), slug: Slug, name: Name, type: FieldType, required: t.Optional(t.Boolean()), options: t.Optional(Json), ...Review }),
  t.Object({
    operation: t.Literal("update"),
    fieldId: t.String(),
    patch: t.Object({
      type: t.Optional(oneOf(FIELD_TYPES)),
      name: t.Optional(Name),
      required: t.Optional(t.Boolean()),
      options: t.Optional(Json),
    }),
    ...Review,
  }),
  t.Object({ operation: t.Literal("delete"), fieldId: t.String(), ...Review }),
  t.Object({ operation: t.Literal("reorder"), fieldIds: t.Array(t.String(), { minItems: 1, maxItems: 500 }), ...Review }),
  t.Object({ operation: t.Literal("convert"), ...Conversion, ...Review }),
  t.Object({ operation: t.Literal("restore"), fieldId: t.String({ minLength: 1, description: "A deleted field of the base (GET /bases/{id}/fields/deleted)." }), ...Review }),
]);

const RecordChange = variants([
  t.Object({ operation: t.Literal("update"), fields: Json, baseCommitId: t.Optional(t.String()), ...Review }),
  t.Object({ operation: t.Literal("delete"), deleteMode: t.Optional(t.Literal("archive")), ...Review }),
  t.Object({ operation: t.Literal("restore"), ...Review }),
]);

const ViewFields = { name: t.Optional(Name), type: t.Optional(oneOf(VIEW_TYPES)), description: t.Optional(t.String({ maxLength: 10_000 })), config: t.Optional(ViewConfigSchema) };
const ViewChange = variants([
  t.Object({ operation: t.Literal("create"), baseId: t.String({ minLength: 1 }), slug: t.Optional(Slug), ...ViewFields, name: Name, ...Review }),
  t.Object({ operation: t.Literal("update"), viewId: t.String({ minLength: 1 }), ...ViewFields, ...Review }),
  t.Object({ operation: t.Literal("delete"), viewId: t.String({ minLength: 1 }), ...Review }),
  t.Object({ operation: t.Literal("restore"), viewId: t.String({ minLength: 1 }), ...Review }),
]);

const ShapeParams = {
  include: t.Optional(t.String({ description: "Comma list of base and headCommit, or none: the lean shape leaves out what it does not name. Absent: both." })),
  fields: t.Optional(t.String({ description: "Comma list of field slugs: only those values are shown. Absent: every field." })),
};

const now = (ctx: AppContext) => iso(ctx.clock.now());

/** The bracketed query of the record listing, parsed by hand, shown in the OpenAPI document. */

/** An answer already written as JSON text, sent as Elysia sends the objects it writes. */
const jsonAnswer = (text: string) => new Response(text, { headers: { "content-type": "application/json;charset=utf-8" } });
export const RECORD_QUERY = [
  queryParameter("baseId", "The base (id or slug); may be left out when viewId is given.", true),
  queryParameter("viewId", "A view of the base: its filters apply with the query's, and its sort unless the query has one."),
  queryParameter("limit", "1..100, default 50."),
  queryParameter("cursor", "nextCursor of the previous page."),
  queryParameter("status", "active (default) or archived."),
  queryParameter("sort", "<slug>, -<slug>, createdAt or updatedAt; default -createdAt."),
  queryParameter("filters[i][fieldSlug]", "Field of filter i; filters combine with AND."),
  queryParameter("filters[i][operator]", FILTER_OPERATORS.join(", ")),
  queryParameter("filters[i][value]", "Read by the field's type; for in, value[j] or a comma list."),
  queryParameter("groups[i][match]", "all (AND, the default) or any (OR): how group i's filters (groups[i][filters][j][fieldSlug|operator|value]) and inner groups (groups[i][groups][k][…], at most 3 deep) combine; each group is ANDed with filters."),
];

/** `linkedNames=true`: the page's answer names the records its relation values link to. */
const wantsLinkedNames = (raw: Record<string, unknown>) => oneString("linkedNames", raw.linkedNames) === "true";
const LINKED_NAMES_QUERY = queryParameter("linkedNames", "true: the answer's linkedRecords gives each linked record's primary value, by id (for showing links by name).");

const SHAPE_QUERY = [
  queryParameter("include", "Comma list of base and headCommit, or none: the lean shape leaves out what it does not name. Absent: both (Busabase's full shape)."),
  queryParameter("fields", "Comma list of field slugs: only those values are shown. Absent: every field."),
];

/** Busabase's numbered page: the listing's query, with `page` and `pageSize` for `limit` and `cursor`. */
const NUMBERED_PAGE_QUERY = [
  ...RECORD_QUERY.filter((p) => !["limit", "cursor"].includes(p.name)),
  queryParameter("page", "From 1, default 1."),
  queryParameter("pageSize", `1..${NUMBERED_PAGE_BOUNDS.pageSize}, default 50; page × pageSize reaches at most ${NUMBERED_PAGE_BOUNDS.reach.toLocaleString("en")} records.`),
];

/**
 * A bulk item is `{ fields: { <slug>: value } }` or Busabase's bare map `{ <slug>: value }`; an item
 * whose only key is `fields`, holding an object, is the wrapped form.
 */
function bulkItemFields(item: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(item);
  const wrapped = keys.length === 1 && keys[0] === "fields" && item.fields !== null && typeof item.fields === "object" && !Array.isArray(item.fields);
  return wrapped ? (item.fields as Record<string, unknown>) : item;
}

/** A proposal's answer: the record (or base) when it merged at once, else the change request. */
export const Materialized = <T extends TObject>(merged: T) =>
  t.Union([t.Composite([merged, t.Object({ materialized: t.Literal(true) })]), t.Composite([ChangeRequestSchema, t.Object({ materialized: t.Literal(false) })])], {
    description: "materialized: true when the write merged at once (the result), false when it waits for review (the change request).",
  });

/** The errors of a merge made at once (autoMerge, or a write-level key on a base without review). */
/** What a write that merges at once may be refused with (409), besides its own reasons. */
export const MERGE_REFUSALS = ["MERGE_CONFLICT", "NOT_MERGEABLE", "LIMIT_REACHED", "TARGET_BASE_ARCHIVED", "FIELD_CONVERTING"];

export function materialized<T extends object>(ctx: AppContext, sight: Sight, proposed: Proposed, merged: () => T) {
  if (proposed.outcome?.merged) return { ...merged(), materialized: true as const };
  return { ...viewOf(ctx, sight, proposed.changeRequest), materialized: false as const };
}

const RECORD_CREATED_HEADERS = { "content-type": "application/json;charset=utf-8" };
/**
 * `materialized` of a record's change request, answered 201: the merged record's answer written as
 * text (`recordJson`: its base's text is kept), in a response of its own. The route leaves `set`
 * alone on that path: a status set there makes Elysia copy the response into another, reading its
 * body as a stream (measured in docs/performance.md, fourth round).
 */
function materializedRecord(ctx: AppContext, scope: SpaceScope, proposed: Proposed, set: { status?: number | string }) {
  if (!proposed.outcome?.merged) {
    set.status = 201;
    return materialized(ctx, scope.sight, proposed, () => ({}));
  }
  const record = mergedRecord(ctx, scope.space.id, scope.sight, proposed.outcome)!;
  return new Response(recordJson(record, ',"materialized":true'), { status: 201, headers: RECORD_CREATED_HEADERS });
}

/** Who proposes a change through a request: its caller, in its space, shown with its channel header. */
export const proposer = (scope: SpaceScope, actor: Actor, request: Request): Proposer => ({
  scope,
  actor,
  attribution: sourceAttribution(actor, request.headers.get("x-basalt-channel") ?? undefined),
});

/** Nodes, bases, fields and records, in the space of section 2.3 of the contract. */
/** `types` of `GET /nodes`: one type or a list (`types[0]=doc`), each a node type of the contract. */
function nodeTypesParam(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const types = stringList("types", value);
  const unknown = types.find((type) => !(NODE_TYPES as readonly string[]).includes(type));
  if (unknown !== undefined) throw badRequest(`types holds "${unknown}", which is not a node type; use ${NODE_TYPES.join(", ")}.`);
  return types;
}

export function contentRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/nodes", ({ space, query, request }) => listNodes(ctx, space.space.id, space.sight, { ...query, depth: wholeNumberParam("depth", query.depth, DEFAULT_TREE_DEPTH, 1, 5), types: nodeTypesParam(nestedQuery(request.url).types) }), {
      answers: { 200: t.Array(NodeSchema) }, level: "read",
      query: t.Object(
        { parentId: t.Optional(t.String({ minLength: 1 })), depth: t.Optional(t.String({ description: "Levels of children under each node, 1..5; default 5." })), status: t.Optional(Status) },
        { additionalProperties: true },
      ),
      detail: { parameters: [queryParameter("types[i]", `Node types (${NODE_TYPES.join(", ")}): a flat list of every node of those types instead of the tree.`)] },
    })
    .get("/nodes/search", ({ space, query }) => searchNodes(ctx, space.space.id, space.sight, [query.query], limitParam(query.limit, 20, 50)), {
      answers: { 200: t.Array(NodeHitSchema) }, level: "read",
      query: t.Object({ query: t.String({ minLength: 1, maxLength: 200 }), limit: t.Optional(t.String()) }),
    })
    .get("/nodes/favorites", ({ space, actor }) => favoriteNodes(ctx, space.space.id, space.sight, actor.user.id), { answers: { 200: t.Array(NodeSchema) }, level: "read" })
    .post("/nodes/:nodeId/favorite", ({ space, actor, params }) => write(ctx, (tx) => toggleFavorite(tx, space.space.id, actor.user.id, params.nodeId, now(ctx))), {
      answers: { 200: t.Object({ favorited: t.Boolean({ description: "Whether the node is now one of the caller's favorites." }) }) },
      level: "read",
      noBody: true,
    })
    .get("/nodes/:nodeId", ({ space, params, query }) => nodeDetail(ctx, space.space.id, space.sight, params.nodeId, query.type), {
      answers: { 200: NodeDetailSchema }, level: "read",
      query: t.Object({ type: t.Optional(oneOf(NODE_TYPES, { description: "The node's type: a node of another type is not found." })) }),
    })
    .get("/nodes/:nodeId/is-descendant", ({ space, params, query }) => isDescendant(ctx, space.space.id, params.nodeId, query.potentialAncestorId), {
      answers: { 200: t.Object({ isDescendant: t.Boolean({ description: "True when the node lies below potentialAncestorId; a node is not below itself." }) }) },
      level: "read",
      query: t.Object({ potentialAncestorId: t.String({ minLength: 1, description: "A node (id or slug) of the space." }) }),
    })
    .post(
      "/nodes/change-requests",
      async ({ space, actor, request, body, set }) => {
        set.status = 201;
        const proposed = await proposeNodeChanges(ctx, proposer(space, actor, request), body.operations, body, "operations");
        return viewOf(ctx, space.sight, proposed.changeRequest);
      },
      { answers: { 201: ChangeRequestSchema, 409: ["PARENT_ARCHIVED", ...MERGE_REFUSALS] }, level: "changeRequest", body: t.Object({ operations: t.Array(NodeOperation, { minItems: 1, maxItems: 100 }), ...Review }) },
    )
    .post(
      "/nodes/:nodeId/move",
      async ({ space, actor, request, params, body }) => {
        const proposed = await proposeNodeChanges(ctx, proposer(space, actor, request), [{ kind: "move", nodeId: params.nodeId, ...body }], { autoMerge: true });
        return viewOf(ctx, space.sight, proposed.changeRequest);
      },
      { answers: { 200: ChangeRequestSchema, 409: MERGE_REFUSALS }, level: "write", body: t.Object({ parentNodeId: t.Optional(t.String()), position: t.Optional(WholeNumber({ minimum: 0 })) }) },
    )
    .patch("/nodes/:nodeId/metadata", ({ space, params, body }) => write(ctx, (tx) => updateMetadata(tx, space.space.id, space.sight, params.nodeId, body.metadata, now(ctx))), {
      answers: { 200: NodeSchema, 409: ["LIMIT_REACHED"] }, level: "write",
      body: t.Object({ metadata: Json }),
    })
    .delete("/nodes/:nodeId", ({ space, params }) => write(ctx, (tx) => ({ success: true, purged: purgeNode(tx, space.space.id, params.nodeId) > 0 })), { answers: { 200: t.Object({ success: t.Boolean(), purged: t.Boolean({ description: "Whether the node (and everything below it) was deleted." }) }), 409: ["NOT_ARCHIVED"] }, level: "manage" })
    .get("/bases", ({ space, query }) => listBases(ctx, space.space.id, space.sight, query.status, (loaded) => seenBase(loaded, space.sight)), { answers: { 200: t.Array(BaseSchema) }, level: "read", query: t.Object({ status: t.Optional(Status) }) })
    .get("/bases/:baseId", ({ space, params }) => baseView(seenBase(findBase(ctx, space.space.id, params.baseId), space.sight)), { answers: { 200: BaseSchema }, level: "read" })
    .post(
      "/bases",
      async ({ space, actor, request, body, set }) => {
        set.status = 201;
        const { parentNodeId, fields, reviewPolicy, ...rest } = body;
        const proposed = await proposeNodeChanges(ctx, proposer(space, actor, request), [{ kind: "create", nodeType: "base", parentNodeId, fields, reviewPolicy, ...rest }], body);
        return materialized(ctx, space.sight, proposed, () => baseView(seenBase(findBase(ctx, space.space.id, proposed.changeRequest.baseId!), space.sight)));
      },
      {
        answers: { 201: Materialized(BaseSchema), 409: MERGE_REFUSALS },
        level: "changeRequest",
        body: t.Object({
          parentNodeId: t.Optional(t.String()),
          slug: Slug,
          name: Name,
          description: t.Optional(t.String({ maxLength: 10_000 })),
          fields: t.Array(FieldDefinition, { maxItems: 200 }),
          reviewPolicy: t.Optional(ReviewPolicy),
          ...Review,
        }),
      },
    )
    .patch("/bases/:baseId", ({ space, params, body }) => write(ctx, (tx) => baseView(seenBase(updateBase(tx, findBase(tx, space.space.id, params.baseId), body, now(ctx)), space.sight))), {
      answers: { 200: BaseSchema }, level: { level: "write", raisedBy: { reviewPolicy: "manage" } },
      body: t.Object({ name: t.Optional(Name), description: t.Optional(t.String({ maxLength: 10_000 })), reviewPolicy: t.Optional(ReviewPolicy) }),
    })
    .post(
      "/bases/:baseId/fields",
      async ({ space, actor, request, params, body }) => {
        await proposeFieldChange(ctx, proposer(space, actor, request), params.baseId, { operation: "create", ...body }, { autoMerge: true });
        return baseView(seenBase(findBase(ctx, space.space.id, params.baseId), space.sight));
      },
      { answers: { 200: BaseSchema, 409: [...MERGE_REFUSALS, "SLUG_BEING_FREED"] }, level: "write", body: FieldDefinition },
    )
    .post("/bases/:baseId/fields/convert/preview", ({ space, params, body }) => previewConversion(ctx, seenBase(findBase(ctx, space.space.id, params.baseId), space.sight), body), {
      answers: { 200: ConvertPreviewSchema, 409: ["PREVIEW_TOO_LARGE", "FIELD_CONVERTING"] },
      level: "read",
      body: t.Object(Conversion),
    })
    .post("/bases/:baseId/formulas/check", ({ space, params, body }) => checkNewFormula(ctx, seenBase(findBase(ctx, space.space.id, params.baseId), space.sight), body.expression), {
      answers: { 200: FormulaCheckSchema },
      level: "read",
      body: t.Object({ expression: t.String({ minLength: 1, maxLength: 10_000 }) }),
    })
    .get("/bases/:baseId/fields/deleted", ({ space, params }) => listDeletedFields(ctx, space.space.id, params.baseId), { answers: { 200: t.Array(DeletedFieldSchema) }, level: "read" })
    .post(
      "/bases/:baseId/fields/change-requests",
      async ({ space, actor, request, params, body, set }) => {
        set.status = 201;
        const { message, autoMerge, ...change } = body;
        return viewOf(ctx, space.sight, (await proposeFieldChange(ctx, proposer(space, actor, request), params.baseId, change, { message, autoMerge })).changeRequest);
      },
      { answers: { 201: ChangeRequestSchema, 409: [...MERGE_REFUSALS, "SLUG_BEING_FREED", "SLUG_TAKEN"] }, level: "changeRequest", body: FieldChange },
    )
    .post(
      "/bases/:baseId/lifecycle/change-requests",
      async ({ space, actor, request, params, body, set }) => {
        set.status = 201;
        const { operation, ...review } = body;
        return viewOf(ctx, space.sight, (await proposeBaseLifecycle(ctx, proposer(space, actor, request), params.baseId, operation, review)).changeRequest);
      },
      {
        answers: { 201: ChangeRequestSchema, 409: MERGE_REFUSALS },
        level: "changeRequest",
        body: t.Object({ operation: t.Union([t.Literal("archive"), t.Literal("restore")]), ...Review }),
      },
    )
    .post(
      "/bases/:baseId/change-requests",
      async ({ space, actor, request, params, body, set }) => {
        const proposed = await proposeRecords(ctx, proposer(space, actor, request), params.baseId, [{ fields: body.fields }], body);
        return materializedRecord(ctx, space, proposed, set);
      },
      { answers: { 201: Materialized(RecordSchema), 409: MERGE_REFUSALS }, level: "changeRequest", body: t.Object({ fields: Json, idempotencyKey: IdempotencyKey, ...Review }) },
    )
    .post(
      "/bases/:baseId/records/bulk-change-request",
      async ({ space, actor, request, params, body, set }) => {
        set.status = 201;
        const records = body.records.map((item) => ({ fields: bulkItemFields(item) }));
        return viewOf(ctx, space.sight, (await proposeRecords(ctx, proposer(space, actor, request), params.baseId, records, body)).changeRequest);
      },
      {
        answers: { 201: ChangeRequestSchema, 409: MERGE_REFUSALS },
        level: "changeRequest",
        body: t.Object({ records: t.Array(Json, { minItems: 1, maxItems: 1000 }), idempotencyKey: IdempotencyKey, ...Review }),
      },
    )
    .post(
      "/bases/:baseId/records/bulk-lifecycle-change-request",
      async ({ space, actor, request, params, body, set }) => {
        set.status = 201;
        const { recordIds, operation, ...review } = body;
        return viewOf(ctx, space.sight, (await proposeRecordLifecycles(ctx, proposer(space, actor, request), params.baseId, recordIds, operation, review)).changeRequest);
      },
      {
        answers: { 201: ChangeRequestSchema, 409: MERGE_REFUSALS },
        level: "changeRequest",
        body: t.Object({ operation: oneOf(["delete", "restore"], { description: "delete archives each record (restore brings it back)." }), recordIds: t.Array(t.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_BULK_UPDATES }), ...Review }),
      },
    )
    .post(
      "/bases/:baseId/records/bulk-update-change-request",
      async ({ space, actor, request, params, body, set }) => {
        set.status = 201;
        const { updates, ...review } = body;
        return viewOf(ctx, space.sight, (await proposeRecordUpdates(ctx, proposer(space, actor, request), params.baseId, updates, review)).changeRequest);
      },
      {
        answers: { 201: ChangeRequestSchema, 409: MERGE_REFUSALS },
        level: "changeRequest",
        body: t.Object({
          updates: t.Array(t.Object({ recordId: t.String({ minLength: 1 }), fields: Json, baseCommitId: t.Optional(t.String()) }), { minItems: 1, maxItems: MAX_BULK_UPDATES }),
          ...Review,
        }),
      },
    )
    .get("/bases/:baseId/views", ({ space, params, query }) => listViews(ctx, space.space.id, space.sight, params.baseId, query.status), {
      answers: { 200: t.Array(ViewSchema) }, level: "read", query: t.Object({ status: t.Optional(Status) }),
    })
    .get("/views/:viewId", ({ space, params }) => getView(ctx, space.space.id, space.sight, params.viewId), { answers: { 200: ViewSchema }, level: "read" })
    .post(
      "/views/change-requests",
      async ({ space, actor, request, body, set }) => {
        set.status = 201;
        const { message, autoMerge, ...change } = body;
        const proposed = await proposeViewChange(ctx, proposer(space, actor, request), change, { message, autoMerge });
        return materialized(ctx, space.sight, proposed, () => getView(ctx, space.space.id, space.sight, (proposed.outcome as { viewIds: string[] }).viewIds[0]));
      },
      { answers: { 201: Materialized(ViewSchema), 409: ["SLUG_TAKEN", "VIEW_STATE", ...MERGE_REFUSALS] }, level: "changeRequest", body: ViewChange },
    )
    .get(
      "/records",
      async ({ space, request }) => {
        const raw = nestedQuery(request.url);
        const { loaded, query } = await readyListing(ctx, space.space.id, space.sight, raw);
        const page = listRecords(ctx, loaded, query);
        return jsonAnswer(pageJson(wantsLinkedNames(raw) ? { ...page, linkedRecords: linkedNamesOf(ctx, loaded, space.sight, page.records) } : page));
      },
      { answers: { 200: RecordPageSchema, 409: ["FIELD_CONVERTING"] }, level: "read", detail: { parameters: [...RECORD_QUERY, ...SHAPE_QUERY, LINKED_NAMES_QUERY] } },
    )
    .get(
      "/records/page",
      async ({ space, request }) => {
        const raw = nestedQuery(request.url);
        const { loaded, query } = await readyListing(ctx, space.space.id, space.sight, raw);
        const page = wholeNumberParam("page", oneString("page", raw.page), 1, 1, NUMBERED_PAGE_BOUNDS.reach);
        const pageSize = wholeNumberParam("pageSize", oneString("pageSize", raw.pageSize), 50, 1, NUMBERED_PAGE_BOUNDS.pageSize);
        const answer = numberedPage(ctx, loaded, query, page, pageSize);
        return jsonAnswer(pageJson(wantsLinkedNames(raw) ? { ...answer, linkedRecords: linkedNamesOf(ctx, loaded, space.sight, answer.records) } : answer));
      },
      { answers: { 200: NumberedRecordPageSchema, 409: ["FIELD_CONVERTING"] }, level: "read", detail: { parameters: [...NUMBERED_PAGE_QUERY, ...SHAPE_QUERY, LINKED_NAMES_QUERY] } },
    )
    .get(
      "/records/count",
      async ({ space, request }) => {
        const { loaded, query } = await readyListing(ctx, space.space.id, space.sight, nestedQuery(request.url));
        return countRecords(ctx, loaded, query);
      },
      { answers: { 200: t.Object({ total: WholeNumber() }), 409: ["FIELD_CONVERTING"] }, level: "read", detail: { parameters: RECORD_QUERY.filter((p) => !["limit", "cursor", "sort"].includes(p.name)) } },
    )
    .get(
      "/records/get",
      ({ space, query }) => {
        if (query.recordId !== undefined) return getRecord(ctx, space.space.id, query.recordId, recordShape(query), space.sight);
        const { baseId, fieldSlug, valueText } = query;
        if (baseId === undefined || fieldSlug === undefined || valueText === undefined) throw badRequest("Name the record: recordId, or baseId with fieldSlug and valueText.");
        const loaded = seenBase(findBase(ctx, space.space.id, baseId), space.sight);
        const [record] = recordsWithValue(ctx, loaded, fieldSlug, valueText, 1, recordShape(query));
        if (!record) throw notFound(`No active record has ${fieldSlug} = ${valueText}.`);
        return record;
      },
      {
        answers: { 200: RecordSchema, 409: ["FIELD_CONVERTING"] },
        level: "read",
        query: t.Object({ recordId: t.Optional(t.String({ minLength: 1 })), baseId: t.Optional(t.String({ minLength: 1 })), fieldSlug: t.Optional(t.String({ minLength: 1 })), valueText: t.Optional(t.String()), ...ShapeParams }),
      },
    )
    .post("/bases/:baseId/records/match", ({ space, params, body }) => matchNames(ctx, seenBase(findBase(ctx, space.space.id, params.baseId), space.sight), body.names), {
      answers: { 200: NameMatchesSchema },
      level: "read",
      body: t.Object({ names: t.Array(t.String({ maxLength: 1000 }), { maxItems: MATCH_NAMES_LIMIT, description: "Names to match to the base's records by its primary field." }) }),
    })
    .get(
      "/records/search",
      ({ space, query }) => {
        const loaded = seenBase(findBase(ctx, space.space.id, query.baseId), space.sight);
        return recordsWithValue(ctx, loaded, query.fieldSlug, query.valueText, limitParam(query.limit, 50), recordShape(query));
      },
      {
        answers: { 200: t.Array(RecordSchema), 409: ["FIELD_CONVERTING"] },
        level: "read",
        query: t.Object({ baseId: t.String({ minLength: 1 }), fieldSlug: t.String({ minLength: 1 }), valueText: t.String(), limit: t.Optional(t.String()), ...ShapeParams }),
      },
    )
    .get("/records/:recordId", ({ space, params, query }) => getRecord(ctx, space.space.id, params.recordId, recordShape(query), space.sight), {
      answers: { 200: RecordSchema },
      level: "read",
      query: t.Object(ShapeParams),
    })
    .get("/records/:recordId/links", ({ space, params }) => jsonAnswer(linksOfRecordJson(ctx, space.space.id, params.recordId, space.sight)), { answers: { 200: t.Array(RecordLinkSchema) }, level: "read" })
    .get("/records/:recordId/history", ({ space, params }) => recordHistory(ctx, space.space.id, params.recordId, space.sight), { answers: { 200: t.Array(CommitSchema) }, level: "read" })
    .post(
      "/records/:recordId/change-requests",
      async ({ space, actor, request, params, body, set }) => {
        const { message, ...change } = body;
        const autoMerge = "autoMerge" in body ? body.autoMerge : undefined;
        const proposed = await proposeRecordChange(ctx, proposer(space, actor, request), params.recordId, change, { message, autoMerge });
        return materializedRecord(ctx, space, proposed, set);
      },
      { answers: { 201: Materialized(RecordSchema), 409: ["RECORD_STATE", "RECORD_ARCHIVED", ...MERGE_REFUSALS] }, level: "changeRequest", body: RecordChange },
    );
}
