import { eq } from "drizzle-orm";
import { type Static, t } from "elysia";
import { AssetSchema, assetWithUsage } from "../assets/assets";
import type { AppContext } from "../context";
import { type DocumentType, type NodeType, nodeFiles } from "../tables/content";
import { readDocument } from "./documents";
import { FileTreeFileSchema, treeFiles, treeSettings, TREE_VISIBILITIES } from "./file-trees";
import { getNode, NodeSchema, NODE_PROPERTIES, type NodeRow } from "./nodes";
import { oneOf } from "../shared/schemas";
import type { Sight } from "../spaces/sight";

/**
 * Each type of node, one object: what Busabase's typed detail (`GET /nodes/{id}`) shows of a node
 * of that type beyond `type` and `node` (contract §2.6). A folder's children are the tree's.
 */
interface NodeKind {
  detail?(ctx: AppContext, node: NodeRow): Record<string, unknown>;
}

const documentDetail = (type: DocumentType): NodeKind => ({ detail: (ctx, node) => ({ document: readDocument(ctx, node.id, type) }) });

/** A file tree's detail: its settings and files (none is skipped once made). */
export const treeDetail = (ctx: AppContext, node: NodeRow) => ({ ...treeSettings(node), files: treeFiles(ctx, node.id), skippedGitignorePaths: [] as string[] });
const fileTree: NodeKind = { detail: treeDetail };

export const NODE_KINDS: { readonly [T in NodeType]: NodeKind } = {
  folder: {},
  base: {},
  form: {},
  doc: { detail: (ctx, node) => ({ storagePrefix: `nodes/${node.id}/doc/`, body: readDocument(ctx, node.id, "doc") }) },
  whiteboard: documentDetail("whiteboard"),
  workflow: documentDetail("workflow"),
  html: documentDetail("html"),
  file: {
    detail(ctx, node) {
      const mounted = ctx.db.select({ assetId: nodeFiles.assetId }).from(nodeFiles).where(eq(nodeFiles.nodeId, node.id)).get();
      return mounted ? { asset: assetWithUsage(ctx, node.spaceId, mounted.assetId) } : {};
    },
  },
  skill: fileTree,
  drive: fileTree,
  airapp: fileTree,
};

export const NodeDetailSchema = t.Object(
  {
    ...NODE_PROPERTIES,
    children: t.Array(NodeSchema),
    node: NodeSchema,
    storagePrefix: t.Optional(t.String({ description: "A doc's: where its content lives." })),
    body: t.Optional(t.String({ description: "A doc's markdown." })),
    document: t.Optional(t.Unknown({ description: "A whiteboard's, workflow's or html node's document." })),
    asset: t.Optional(AssetSchema),
    entryFile: t.Optional(t.String({ description: "A file tree's entry file." })),
    visibility: t.Optional(oneOf(TREE_VISIBILITIES)),
    version: t.Optional(t.String()),
    files: t.Optional(t.Array(FileTreeFileSchema)),
    skippedGitignorePaths: t.Optional(t.Array(t.String())),
  },
  { $id: "NodeDetail", description: "The node with its direct children, and Busabase's typed detail: `type`, `node`, and what its type adds (a doc's body, a file's asset, a tree's files, a document)." },
);

export type NodeDetailView = Static<typeof NodeDetailSchema>;

/** `GET /nodes/{nodeId}`: the node with its direct children, and what its type adds. */
export function nodeDetail(ctx: AppContext, spaceId: string, sight: Sight, ref: string, type?: string): NodeDetailView {
  const { row, shown } = getNode(ctx, spaceId, sight, ref, type);
  return { ...shown, node: shown, ...NODE_KINDS[row.type].detail?.(ctx, row) };
}
