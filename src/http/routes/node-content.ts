import type { SpaceScope } from "../../spaces/resolve";
import { Elysia, t } from "elysia";
import { viewOf } from "../../changes/lifecycle";
import { proposeDoc, proposeFile, proposeFileTree, proposeNodeContent, proposeTreeChanges } from "../../changes/node-content";
import { ChangeRequestSchema } from "../../changes/views";
import { MAX_DOC_BYTES, readDocLines } from "../../content/documents";
import { FileTreeFileSchema, findTree, MAX_FILES_GIVEN, readTreeFile, TREE_VISIBILITIES, TreeMetadataSchema, treeFiles } from "../../content/file-trees";
import { nodeDetail, treeDetail } from "../../content/node-kinds";
import { findNode, NodeSchema } from "../../content/nodes";
import type { AppContext } from "../../context";
import { AssetSchema } from "../../assets/assets";
import { lineRangeOf, LinesQuery, ReadLinesSchema } from "../../shared/lines";
import { Name, oneOf, Slug } from "../../shared/schemas";
import { FILE_TREE_TYPES } from "../../tables/content";
import { access } from "../access";
import { answers } from "../openapi";
import { Materialized, materialized, MERGE_REFUSALS, proposer } from "./content";

const Review = { message: t.Optional(t.String({ maxLength: 10_000 })), autoMerge: t.Optional(t.Boolean()) };
const NewNode = { parentNodeId: t.Optional(t.String()), slug: Slug, name: Name, description: t.Optional(t.String({ maxLength: 10_000 })) };
const Path = t.String({ minLength: 1, maxLength: 1024, description: "Relative: no leading /, no . or .. segments." });
const ContentHash = t.String({ description: "sha256:<64 hex> of the file the change was made on: a file that changed since is a conflict at merge." });
const TextFile = t.Object({ path: Path, content: t.String({ description: "UTF-8 text, stored as an asset of the space." }), mimeType: t.Optional(t.String({ maxLength: 200 })) }, { additionalProperties: false });
const AssetFile = t.Object({ path: Path, assetId: t.String({ minLength: 1 }), displayName: t.Optional(t.String({ maxLength: 255 })), mimeType: t.Optional(t.String({ maxLength: 200 })) }, { additionalProperties: false });
const TreeType = t.Optional(oneOf(FILE_TREE_TYPES, { description: "The tree's type: a tree of another type is not found." }));

const DocSchema = t.Object({ node: NodeSchema, storagePrefix: t.String(), body: t.String() });
const FileNodeSchema = t.Object({ node: NodeSchema, asset: AssetSchema });
const FileTreeNodeSchema = t.Object({
  node: NodeSchema,
  entryFile: t.String(),
  visibility: oneOf(TREE_VISIBILITIES),
  version: t.String(),
  files: t.Array(FileTreeFileSchema),
  skippedGitignorePaths: t.Array(t.String({ description: "Files a .gitignore among them left out." })),
});

const TreeOperation = t.Union([
  t.Object({ kind: oneOf(["create", "update"]), path: Path, content: t.String(), mimeType: t.Optional(t.String({ maxLength: 200 })), baseContentHash: t.Optional(ContentHash) }, { additionalProperties: false }),
  t.Object({ kind: oneOf(["create", "update"]), path: Path, assetId: t.String({ minLength: 1 }), displayName: t.Optional(t.String({ maxLength: 255 })), mimeType: t.Optional(t.String({ maxLength: 200 })), baseContentHash: t.Optional(ContentHash) }, { additionalProperties: false }),
  t.Object({ kind: t.Literal("delete"), path: Path, baseContentHash: t.Optional(ContentHash) }, { additionalProperties: false }),
  t.Object({ kind: t.Literal("metadata_update"), metadata: t.Optional(TreeMetadataSchema) }, { additionalProperties: false }),
]);

const DOCUMENT = t.Unknown({ description: "The node's document (contract §3.7)." });
const NodeContent = t.Union([
  t.Object({ kind: t.Literal("doc"), body: t.String({ description: `Markdown, at most ${MAX_DOC_BYTES} bytes.` }) }),
  t.Object({ kind: oneOf(["whiteboard", "workflow", "html"]), document: DOCUMENT }),
]);

/** Docs, file nodes, file trees and document content (contract §2.6 and §2.7). */
export function nodeContentRoutes(ctx: AppContext) {
  const view = (space: SpaceScope, nodeId: string) => nodeDetail(ctx, space.space.id, space.sight, nodeId);
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .post(
      "/docs",
      async ({ space, actor, request, body, set }) => {
        set.status = 201;
        const { message, autoMerge, ...doc } = body;
        const proposed = await proposeDoc(ctx, proposer(space, actor, request), doc, { message, autoMerge });
        return materialized(ctx, space.sight, proposed, () => {
          const { node, storagePrefix, body: markdown } = view(space, proposed.changeRequest.nodeId!);
          return { node, storagePrefix: storagePrefix!, body: markdown! };
        });
      },
      { answers: { 201: Materialized(DocSchema), 409: MERGE_REFUSALS }, level: "changeRequest", body: t.Object({ ...NewNode, body: t.Optional(t.String({ description: `Markdown, at most ${MAX_DOC_BYTES} bytes.` })), ...Review }) },
    )
    .get(
      "/docs/:nodeId/lines",
      ({ space, params, query }) => readDocLines(ctx, space.space.id, params.nodeId, ...lineRangeOf(query)),
      { answers: { 200: ReadLinesSchema }, level: "read", query: LinesQuery },
    )
    .post(
      "/files",
      async ({ space, actor, request, body, set }) => {
        set.status = 201;
        const { message, autoMerge, ...file } = body;
        const proposed = await proposeFile(ctx, proposer(space, actor, request), file, { message, autoMerge });
        return materialized(ctx, space.sight, proposed, () => {
          const { node, asset } = view(space, proposed.changeRequest.nodeId!);
          return { node, asset: asset! };
        });
      },
      { answers: { 201: Materialized(FileNodeSchema), 409: MERGE_REFUSALS }, level: "changeRequest", body: t.Object({ ...NewNode, assetId: t.String({ minLength: 1 }), ...Review }) },
    )
    .post(
      "/file-trees",
      async ({ space, actor, request, body, set }) => {
        set.status = 201;
        const { message, autoMerge, ...tree } = body;
        const { proposed, skipped } = await proposeFileTree(ctx, proposer(space, actor, request), tree, { message, autoMerge });
        return materialized(ctx, space.sight, proposed, () => {
          const node = findNode(ctx, space.space.id, proposed.changeRequest.nodeId!);
          return { node: view(space, node.id).node, ...treeDetail(ctx, node), skippedGitignorePaths: skipped };
        });
      },
      {
        answers: { 201: Materialized(FileTreeNodeSchema), 409: MERGE_REFUSALS },
        level: "changeRequest",
        body: t.Object({
          type: oneOf(FILE_TREE_TYPES),
          ...NewNode,
          visibility: t.Optional(oneOf(TREE_VISIBILITIES)),
          version: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
          files: t.Optional(t.Array(t.Union([TextFile, AssetFile]), { maxItems: MAX_FILES_GIVEN })),
          mergeMode: t.Optional(oneOf(["merge", "replace"], { description: "merge (default): the files over the type's seed files; replace: the files only." })),
          ...Review,
        }),
      },
    )
    .get("/file-trees/:nodeId/files", ({ space, params, query }) => treeFiles(ctx, findTree(ctx, space.space.id, params.nodeId, query.type).id), {
      answers: { 200: t.Array(FileTreeFileSchema) }, level: "read",
      query: t.Object({ type: TreeType }),
    })
    .get("/file-trees/:nodeId/files/*", ({ space, params, query }) => readTreeFile(ctx, findTree(ctx, space.space.id, params.nodeId, query.type), decodeURIComponent(params["*"])), {
      answers: {
        200: t.Object({
          nodeId: t.String(),
          path: t.String(),
          encoding: oneOf(["utf8", "url"], { description: "utf8: the text is in content; url: the bytes are at assetUrl." }),
          content: t.String(),
          mimeType: t.String(),
          assetId: t.String(),
          displayName: t.Union([t.String(), t.Null()]),
          assetUrl: t.Union([t.String(), t.Null()]),
          contentHash: t.Union([t.String(), t.Null()]),
        }),
      },
      level: "read",
      query: t.Object({ type: TreeType }),
    })
    .post(
      "/file-trees/:nodeId/change-requests",
      async ({ space, actor, request, params, body, set }) => {
        set.status = 201;
        const { message, autoMerge, type, operations } = body;
        const operationsWithMetadata = operations.map((op) => (op.kind === "metadata_update" ? { ...op, metadata: op.metadata ?? {} } : op));
        const proposed = await proposeTreeChanges(ctx, proposer(space, actor, request), params.nodeId, type, operationsWithMetadata as Parameters<typeof proposeTreeChanges>[4], { message, autoMerge });
        return viewOf(ctx, space.sight, proposed.changeRequest);
      },
      {
        answers: { 201: ChangeRequestSchema, 409: MERGE_REFUSALS },
        level: "changeRequest",
        body: t.Object({ type: TreeType, operations: t.Array(TreeOperation, { minItems: 1, maxItems: MAX_FILES_GIVEN }), ...Review }),
      },
    )
    .put(
      "/nodes/:nodeId/content",
      async ({ space, actor, request, params, body }) => {
        const { content, message, autoMerge } = body;
        return viewOf(ctx, space.sight, (await proposeNodeContent(ctx, proposer(space, actor, request), params.nodeId, content, { message, autoMerge })).changeRequest);
      },
      { answers: { 200: ChangeRequestSchema, 409: MERGE_REFUSALS }, level: "changeRequest", body: t.Object({ content: NodeContent, ...Review }) },
    );
}
