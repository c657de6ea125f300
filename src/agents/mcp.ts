import type { FilterGroup, RecordFilter } from "../content/records/query";
import { seenEvent } from "../content/records/seen";
import { seenBase } from "../content/records/seen-base";
import { grep, GREP_BOUNDS } from "../search/grep";
import { SEARCH_BOUNDS, searchSpace } from "../search/search";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { type Actor, actingAs } from "../auth/actor";
import type { Level } from "../shared/levels";
import { describeCaller } from "../spaces/whoami";
import { agentTasks } from "../changes/agent-tasks";
import { addComment, changeRequestDetail, listComments, MAX_COMMENT, MAX_LISTED } from "../changes/comments";
import { COMMENT_SUBJECTS, type CommentSubject } from "../tables/changes";
import { iso } from "../shared/clock";
import { write } from "../db/tx";
import { mergeChangeRequest, reviewChangeRequest, reviseOperation, viewOf } from "../changes/lifecycle";
import { sourceAttribution } from "../changes/propose";
import { proposeRecordChange, proposeRecords, proposeViewChange, type ViewChange } from "../changes/proposals";
import { baseView, findBase, listBases } from "../content/bases";
import { listNodes } from "../content/nodes";
import { readDocLines } from "../content/documents";
import { findTree, MAX_FILES_GIVEN, readTreeFile, treeFiles } from "../content/file-trees";
import { proposeDoc, proposeNodeContent, proposeTreeChanges, type TreeOperation } from "../changes/node-content";
import { FILTER_OPERATORS } from "../shared/field-types";
import { listRecords, recordsWithValue } from "../content/records/list";
import { getRecord, linksOfRecord } from "../content/records/read";
import { type RecordShape } from "../content/records/view";
import { VIEW_TYPES } from "../tables/content";
import { listViews, throughView } from "../content/views";
import type { AppContext } from "../context";
import { ApiError, badRequest, forbidden } from "../shared/errors";
import { requireLevel, resolveSpace, type SpaceScope } from "../spaces/resolve";
import { namedTargets, requireSeenTargets, seenSlugs } from "../spaces/sight";
import { VERSION } from "../shared/version";

type ToolAnswer = { content: { type: "text"; text: string }[]; isError?: boolean };

/**
 * A tool's result as JSON text. An ApiError becomes the tool's error, in its own words; anything
 * else is logged with its cause and answered as REST answers a 500, with no internals.
 */
async function toolAnswer(ctx: AppContext, run: () => unknown): Promise<ToolAnswer> {
  try {
    return { content: [{ type: "text", text: JSON.stringify(await run()) }] };
  } catch (error) {
    if (error instanceof ApiError) return { content: [{ type: "text", text: error.message }], isError: true };
    ctx.log.error(`unhandled error in an MCP tool: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return { content: [{ type: "text", text: "Something went wrong on the server." }], isError: true };
  }
}

/** The lean record shape, as REST's include= and fields=: what an agent leaves out saves it reading. */
const shapeArgs = {
  include: z.array(z.enum(["base", "headCommit"])).optional().describe("What to add to each record besides its values: base, headCommit (default: both)"),
  fields: z.array(z.string()).max(500).optional().describe("Only these field slugs (default: every field)"),
};
type ShapeArgs = { include?: ("base" | "headCommit")[]; fields?: string[] };
type GroupArg = Omit<FilterGroup, "groups"> & { groups?: GroupArg[] };
const groupOfArg = (group: GroupArg): FilterGroup => ({ ...group, groups: (group.groups ?? []).map(groupOfArg) });
const FilterArg = z.object({ fieldSlug: z.string(), operator: z.enum(FILTER_OPERATORS), value: z.union([z.string(), z.array(z.string())]).optional() });

const shapeOf = (args: ShapeArgs): RecordShape => ({
  base: args.include ? args.include.includes("base") : true,
  headCommit: args.include ? args.include.includes("headCommit") : true,
  fields: args.fields ?? null,
});

/** The longest an agent's `wait_for_events` holds its request open. */
const MAX_EVENT_WAIT_SECONDS = 30;

/**
 * Who calls the tools: the request's actor, the space its header names, and whether its credential
 * still reads that space (asked again while a tool waits).
 */
export interface ToolCaller {
  actor: Actor;
  spaceRef: string | undefined;
  /** The header that named the space, so an error names what the client sent. */
  spaceHeader?: string;
  stillReads(spaceId: string): boolean;
}

/**
 * The MCP server's tools: the core loop over the same credentials, space resolution and levels as
 * the REST routes. Each tool resolves the space from `x-basalt-space` and requires its level with
 * the very functions the access macro uses, so a refusal carries the REST 403's sentence.
 */
export function toolsFor(ctx: AppContext, { actor, spaceRef, spaceHeader, stillReads }: ToolCaller): McpServer {
  const server = new McpServer({ name: "basalt", version: VERSION });
  /** Runs a tool in the request's space at a level. */
  const inSpace =
    <A>(level: Level, run: (scope: SpaceScope, args: A) => unknown) =>
    (args: A) =>
      toolAnswer(ctx, () => {
        const scope = resolveSpace(ctx, actor, spaceRef, spaceHeader);
        requireLevel(scope.level, level);
        if (args && typeof args === "object") seenSlugs(ctx, scope.space.id, scope.sight, args as Record<string, string>);
        requireSeenTargets(ctx, scope, namedTargets(args), level);
        return run(scope, args);
      });
  const who = (scope: SpaceScope) => ({ scope, actor, attribution: sourceAttribution(actor, "mcp") });
  const proposal = { message: z.string().max(10_000).optional().describe("Why, for the reviewer") };

  server.registerTool("whoami", { description: "Who you are, your credential's level, the space in effect and all your spaces." }, () =>
    toolAnswer(ctx, () => describeCaller(ctx, actor, spaceRef)),
  );
  server.registerTool(
    "list_tree",
    { description: "The space's nodes (folders, bases, docs, files, skills, drives, forms, …), as a tree.", inputSchema: { depth: z.number().int().min(1).max(5).optional() } },
    inSpace("read", (scope, { depth }: { depth?: number }) => listNodes(ctx, scope.space.id, scope.sight, { depth })),
  );
  server.registerTool("list_bases", { description: "Every base of the space with its fields (slug, type, required, options)." }, inSpace("read", (scope) => listBases(ctx, scope.space.id, scope.sight, "active", (loaded) => seenBase(loaded, scope.sight))));
  server.registerTool(
    "get_base",
    { description: "One base (id, node id or slug) with its fields.", inputSchema: { base: z.string().min(1) } },
    inSpace("read", (scope, { base }: { base: string }) => baseView(seenBase(findBase(ctx, scope.space.id, base), scope.sight))),
  );
  server.registerTool(
    "list_records",
    {
      description: "A page of a base's records, newest first unless sorted; pass nextCursor back for the next page.",
      inputSchema: {
        base: z.string().min(1),
        limit: z.number().int().min(1).max(100).optional(),
        cursor: z.string().optional(),
        sort: z.string().optional().describe("<slug> or -<slug>"),
        filters: z.array(FilterArg).optional(),
        groups: z
          .array(z.object({ match: z.enum(["all", "any"]), filters: z.array(FilterArg), groups: z.array(z.object({ match: z.enum(["all", "any"]), filters: z.array(FilterArg) })).optional() }))
          .optional()
          .describe("Groups of filters, each ANDed with filters; match any is OR"),
        viewId: z.string().optional().describe("A saved view of the base: its filters apply too, and its sort unless you give one"),
        ...shapeArgs,
      },
    },
    inSpace("read", (scope, args: { base: string; limit?: number; cursor?: string; sort?: string; filters?: RecordFilter[]; groups?: GroupArg[]; viewId?: string } & ShapeArgs) => {
      const query = { status: "active" as const, filters: args.filters ?? [], groups: args.groups?.map(groupOfArg), sort: args.sort, cursor: args.cursor, limit: args.limit ?? 50, shape: shapeOf(args) };
      const listing = args.viewId ? throughView(ctx, scope.space.id, args.viewId, args.base, query) : { loaded: findBase(ctx, scope.space.id, args.base), query };
      listing.loaded = seenBase(listing.loaded, scope.sight);
      return listRecords(ctx, listing.loaded, listing.query);
    }),
  );
  server.registerTool(
    "search",
    {
      description: "Search the space: records whose text fields hold every word (as the start of a word), and folders and bases by name; most relevant first.",
      inputSchema: { query: z.string().min(1).max(500), limit: z.number().int().min(1).max(SEARCH_BOUNDS.limit).optional(), offset: z.number().int().min(0).max(SEARCH_BOUNDS.offset).optional() },
    },
    inSpace("read", (scope, args: { query: string; limit?: number; offset?: number }) => searchSpace(ctx, scope.space.id, scope.sight, { query: args.query, limit: args.limit ?? 20, offset: args.offset ?? 0, sources: ["records", "names"] })),
  );
  server.registerTool(
    "grep",
    {
      description: "One JavaScript regular expression over the space's record values, line by line (as POST /api/v1/grep): each match with its base, record, field, line and column; bounded by maxMatches and time.",
      inputSchema: {
        pattern: z.string().min(1).max(GREP_BOUNDS.pattern),
        flags: z.string().max(10).optional(),
        baseSlugs: z.array(z.string()).max(100).optional(),
        maxMatches: z.number().int().min(1).max(GREP_BOUNDS.maxMatches).optional(),
        contextLines: z.number().int().min(0).max(GREP_BOUNDS.contextLines).optional(),
      },
    },
    inSpace("read", (scope, args: { pattern: string; flags?: string; baseSlugs?: string[]; maxMatches?: number; contextLines?: number }) =>
      grep(ctx, scope.space.id, scope.sight, { ...args, sources: ["records"], scope: args.baseSlugs ? { records: { baseSlugs: args.baseSlugs } } : undefined }),
    ),
  );
  server.registerTool(
    "wait_for_events",
    {
      description:
        "The space's events after the one you last saw (its seq; omit it to start from now), waiting up to timeoutSeconds for one to come: what an agent polls to hear of reviews, merges and others' changes. Answers { events, lastEventId }; pass lastEventId back as after. reset: true means events you missed are no longer kept: read the state again.",
      inputSchema: { after: z.number().int().min(0).optional(), timeoutSeconds: z.number().int().min(0).max(MAX_EVENT_WAIT_SECONDS).optional() },
    },
    inSpace("read", async (scope, { after, timeoutSeconds }: { after?: number; timeoutSeconds?: number }) => {
      const hub = ctx.eventStream;
      const from = after ?? hub.latest();
      let events = hub.since(scope.space.id, from);
      // Woken by an event, or by access taken away anywhere (`recheck`): the credential is checked again before anything is answered.
      for (const until = performance.now() + (timeoutSeconds ?? 0) * 1000; events?.length === 0 && performance.now() < until; ) {
        await hub.next(scope.space.id, until - performance.now());
        if (!stillReads(scope.space.id)) throw forbidden("This credential no longer reads the space.");
        events = hub.since(scope.space.id, from);
      }
      if (events === null) return { reset: true, events: [], lastEventId: hub.latest() };
      // Worked out again now: a grant revoked, or a base made in a private folder, while it waited.
      const sight = resolveSpace(ctx, actor, spaceRef, spaceHeader).sight;
      return { events: events.flatMap((event) => seenEvent(ctx, sight, event) ?? []), lastEventId: events.at(-1)?.seq ?? from };
    }),
  );
  server.registerTool(
    "list_views",
    { description: "A base's saved views: type, filters, sort and the fields they show.", inputSchema: { base: z.string().min(1) } },
    inSpace("read", (scope, { base }: { base: string }) => listViews(ctx, scope.space.id, scope.sight, base)),
  );
  server.registerTool(
    "propose_view_change",
    {
      description: "Create, update, delete or restore a saved view. Filters are { fieldSlug, operator, value }, sorts [{ fieldSlug, direction }] (at most one). Merged at once with write, else waits for review.",
      inputSchema: {
        operation: z.enum(["create", "update", "delete", "restore"]),
        baseId: z.string().optional().describe("The base, for create"),
        viewId: z.string().optional().describe("The view, for update, delete and restore"),
        name: z.string().max(200).optional(),
        slug: z.string().max(64).optional(),
        type: z.enum(VIEW_TYPES).optional(),
        description: z.string().max(10_000).optional(),
        config: z.record(z.string(), z.unknown()).optional().describe("{ filters, sorts, visibleFieldSlugs, groupByFieldSlug, dateFieldSlug, ... }"),
        ...proposal,
      },
    },
    inSpace("changeRequest", async (scope, { message, ...args }: Record<string, unknown> & { operation: ViewChange["operation"]; message?: string }) => {
      const key = args.operation === "create" ? "baseId" : "viewId";
      if (typeof args[key] !== "string") throw badRequest(`${key} is required to ${args.operation} a view.`);
      const proposed = await proposeViewChange(ctx, who(scope), args as ViewChange, { message });
      return viewOf(ctx, scope.sight, proposed.changeRequest);
    }),
  );
  server.registerTool(
    "search_records",
    { description: "Active records whose field equals a value (read by the field's type), newest first.", inputSchema: { base: z.string().min(1), fieldSlug: z.string(), value: z.string(), limit: z.number().int().min(1).max(100).optional() } },
    inSpace("read", (scope, args: { base: string; fieldSlug: string; value: string; limit?: number }) => recordsWithValue(ctx, seenBase(findBase(ctx, scope.space.id, args.base), scope.sight), args.fieldSlug, args.value, args.limit ?? 20)),
  );
  server.registerTool(
    "get_record",
    { description: "One record with its head commit.", inputSchema: { recordId: z.string().min(1), ...shapeArgs } },
    inSpace("read", (scope, args: { recordId: string } & ShapeArgs) => getRecord(ctx, scope.space.id, args.recordId, shapeOf(args), scope.sight)),
  );
  server.registerTool(
    "get_record_links",
    { description: "The links of a record either way (its relation values, and the records that link to it), as GET /records/{id}/links answers them.", inputSchema: { recordId: z.string().min(1) } },
    inSpace("read", (scope, { recordId }: { recordId: string }) => linksOfRecord(ctx, scope.space.id, recordId, scope.sight)),
  );
  server.registerTool(
    "propose_record_create",
    { description: "Propose a new record (values keyed by field slug). Merged at once with write, else waits for review.", inputSchema: { base: z.string().min(1), fields: z.record(z.string(), z.unknown()), ...proposal } },
    inSpace("changeRequest", async (scope, args: { base: string; fields: Record<string, unknown>; message?: string }) => {
      const proposed = await proposeRecords(ctx, who(scope), args.base, [{ fields: args.fields }], { message: args.message });
      return viewOf(ctx, scope.sight, proposed.changeRequest);
    }),
  );
  server.registerTool(
    "propose_record_update",
    { description: "Propose new values for some fields of a record.", inputSchema: { recordId: z.string().min(1), fields: z.record(z.string(), z.unknown()), ...proposal } },
    inSpace("changeRequest", async (scope, args: { recordId: string; fields: Record<string, unknown>; message?: string }) => {
      const proposed = await proposeRecordChange(ctx, who(scope), args.recordId, { operation: "update", fields: args.fields }, { message: args.message });
      return viewOf(ctx, scope.sight, proposed.changeRequest);
    }),
  );
  server.registerTool(
    "propose_record_delete",
    { description: "Propose archiving a record (always waits for review).", inputSchema: { recordId: z.string().min(1), ...proposal } },
    inSpace("changeRequest", async (scope, args: { recordId: string; message?: string }) => {
      const proposed = await proposeRecordChange(ctx, who(scope), args.recordId, { operation: "delete" }, { message: args.message });
      return viewOf(ctx, scope.sight, proposed.changeRequest);
    }),
  );
  server.registerTool(
    "get_change_request",
    { description: "A change request: its status, operations, reviews, merge summary and comments.", inputSchema: { changeRequestId: z.string().min(1) } },
    inSpace("read", (scope, { changeRequestId }: { changeRequestId: string }) => changeRequestDetail(ctx, scope.space.id, scope.sight, changeRequestId)),
  );
  server.registerTool(
    "list_comments",
    {
      description: "Comments on a record, change request, operation or commit, oldest first; pass the last id as after for more.",
      inputSchema: { subjectType: z.enum(COMMENT_SUBJECTS), subjectId: z.string().min(1), limit: z.number().int().min(1).max(MAX_LISTED).optional(), after: z.string().optional() },
    },
    inSpace("read", (scope, args: { subjectType: CommentSubject; subjectId: string; limit?: number; after?: string }) => listComments(ctx, scope.space.id, { ...args, limit: args.limit ?? 50 })),
  );
  server.registerTool(
    "add_comment",
    {
      description: "Comment on a record, change request, operation or commit, as yourself.",
      inputSchema: { subjectType: z.enum(COMMENT_SUBJECTS), subjectId: z.string().min(1), body: z.string().min(1).max(MAX_COMMENT) },
    },
    inSpace("changeRequest", (scope, args: { subjectType: CommentSubject; subjectId: string; body: string }) => write(ctx, (tx) => addComment(tx, scope.space.id, actor, args, iso(ctx.clock.now())))),
  );
  server.registerTool(
    "list_agent_tasks",
    { description: "Your change requests that a reviewer sent back (changes requested), newest first, each with the reviewer's reason: fix them with revise_operation." },
    inSpace("read", (scope) => agentTasks(ctx, scope, actor)),
  );
  server.registerTool(
    "revise_operation",
    {
      description: "Revise an operation of your open change request with new values (keyed by field slug); the change request goes back to review.",
      inputSchema: { operationId: z.string().min(1), fields: z.record(z.string(), z.unknown()), ...proposal },
    },
    inSpace("changeRequest", (scope, args: { operationId: string; fields: Record<string, unknown>; message?: string }) => reviseOperation(ctx, scope, actor, args.operationId, args)),
  );
  server.registerTool(
    "review_change_request",
    { description: "Approve or reject a change request (needs write).", inputSchema: { changeRequestId: z.string().min(1), verdict: z.enum(["approved", "rejected"]), reason: z.string().max(10_000).optional() } },
    inSpace("write", (scope, args: { changeRequestId: string; verdict: "approved" | "rejected"; reason?: string }) => reviewChangeRequest(ctx, scope, actor, args.changeRequestId, args)),
  );
  server.registerTool(
    "merge_change_request",
    { description: "Merge an approved change request (needs write); answers it and the merged record.", inputSchema: { changeRequestId: z.string().min(1) } },
    inSpace("write", (scope, { changeRequestId }: { changeRequestId: string }) => mergeChangeRequest(ctx, scope, changeRequestId, actingAs(actor))),
  );
  server.registerTool(
    "read_doc",
    { description: "A doc's markdown, by lines (at most 2000 a call).", inputSchema: { doc: z.string().min(1).describe("The doc node's id or slug"), startLine: z.number().int().min(1).optional(), endLine: z.number().int().min(1).optional() } },
    inSpace("read", (scope, args: { doc: string; startLine?: number; endLine?: number }) => readDocLines(ctx, scope.space.id, args.doc, args.startLine, args.endLine)),
  );
  server.registerTool(
    "create_doc",
    { description: "Propose a new doc with its markdown (merged at once with write).", inputSchema: { slug: z.string().min(1).max(64), name: z.string().min(1).max(200), body: z.string().optional(), parentNodeId: z.string().optional(), ...proposal } },
    inSpace("changeRequest", async (scope, { message, ...doc }: { slug: string; name: string; body?: string; parentNodeId?: string; message?: string }) => viewOf(ctx, scope.sight, (await proposeDoc(ctx, who(scope), doc, { message })).changeRequest)),
  );
  server.registerTool(
    "update_doc",
    { description: "Propose a doc's whole new markdown (merged at once with write).", inputSchema: { doc: z.string().min(1), body: z.string(), ...proposal } },
    inSpace("changeRequest", async (scope, args: { doc: string; body: string; message?: string }) => viewOf(ctx, scope.sight, (await proposeNodeContent(ctx, who(scope), args.doc, { kind: "doc", body: args.body }, { message: args.message })).changeRequest)),
  );
  server.registerTool(
    "list_files",
    { description: "The files of a skill, drive or airapp.", inputSchema: { tree: z.string().min(1).describe("The file tree's node id or slug") } },
    inSpace("read", (scope, { tree }: { tree: string }) => treeFiles(ctx, findTree(ctx, scope.space.id, tree).id)),
  );
  server.registerTool(
    "read_file",
    { description: "One file of a skill, drive or airapp: its text, or where its bytes are.", inputSchema: { tree: z.string().min(1), path: z.string().min(1) } },
    inSpace("read", (scope, args: { tree: string; path: string }) => readTreeFile(ctx, findTree(ctx, scope.space.id, args.tree), args.path)),
  );
  server.registerTool(
    "change_files",
    {
      description: "Propose files created, updated or deleted in a skill, drive or airapp (text content); give baseContentHash (from read_file) to refuse a change made on an older file.",
      inputSchema: {
        tree: z.string().min(1),
        operations: z
          .array(z.union([z.object({ kind: z.enum(["create", "update"]), path: z.string().min(1), content: z.string(), baseContentHash: z.string().optional() }), z.object({ kind: z.literal("delete"), path: z.string().min(1), baseContentHash: z.string().optional() })]))
          .min(1)
          .max(MAX_FILES_GIVEN),
        ...proposal,
      },
    },
    inSpace("changeRequest", async (scope, args: { tree: string; operations: TreeOperation[]; message?: string }) => viewOf(ctx, scope.sight, (await proposeTreeChanges(ctx, who(scope), args.tree, undefined, args.operations, { message: args.message })).changeRequest)),
  );
  return server;
}
