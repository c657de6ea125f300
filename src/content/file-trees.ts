import { and, asc, eq, sql } from "drizzle-orm";
import ignore from "ignore";
import { type Static, t } from "elysia";
import { assetText, assetUrl, contentKindOf, findAsset, uploadTexts } from "../assets/assets";
import type { AppContext, Tx } from "../context";
import { assets } from "../tables/assets";
import { badRequest, conflict, notFound, notInSpace } from "../shared/errors";
import { checkMetadata } from "../shared/json";
import { Nullable, oneOf, Timestamp, WholeNumber } from "../shared/schemas";
import { type FileTreeType, isFileTree, nodeFiles, nodes } from "../tables/content";
import { findNode, type NodeRow, touchNode } from "./nodes";

/**
 * File trees (skills, drives and airapps): files mounted at paths, each an asset of the space
 * (contract §2.7). A file given as text becomes an asset before the write that mounts it, so every
 * write here only mounts, replaces or unmounts assets. A file node is the same with one file.
 */

interface TextFile {
  path: string;
  content: string;
  mimeType?: string;
}

interface FileTreeKind {
  /** How errors name it: "Skill file not found: …". */
  label: string;
  /** The file a reader opens first. */
  entryFile: string;
  /** The files a new one starts with. */
  seeds(node: { slug: string; name: string; description: string }): TextFile[];
}

export const FILE_TREE_KINDS: { readonly [T in FileTreeType]: FileTreeKind } = {
  skill: {
    label: "Skill",
    entryFile: "SKILL.md",
    seeds: ({ slug, name, description }) => [
      { path: "SKILL.md", content: `---\nname: ${slug}\ndescription: ${description || name}\n---\n\n# ${name}\n\nDescribe when an agent should use this skill and how.\n` },
      { path: "skill.json", content: `${JSON.stringify({ name: slug, version: "0.1.0", description: description || name }, null, 2)}\n` },
    ],
  },
  drive: {
    label: "Drive",
    entryFile: "README.md",
    seeds: ({ name, description }) => [{ path: "README.md", content: `# ${name}\n${description ? `\n${description}\n` : ""}` }],
  },
  airapp: {
    label: "Airapp",
    entryFile: "package.json",
    seeds: ({ slug, description }) => [
      { path: "package.json", content: `${JSON.stringify({ name: slug, version: "0.1.0", private: true, description, type: "module", scripts: { start: "bun index.ts" } }, null, 2)}\n` },
      { path: "index.ts", content: 'Bun.serve({ port: Number(process.env.PORT ?? 3000), fetch: () => new Response("Hello from an airapp") });\n' },
    ],
  },
};

/** A file as a tree mounts it: the asset, and what the tree says of it. */
export type MountedFile = {
  path: string;
  assetId: string;
  displayName?: string | null;
  mimeType?: string | null;
};

/** A file of a request: its text, or an asset of the space. */
export type GivenFile = TextFile | (MountedFile & { content?: undefined });

/** The most files one request may give, and one tree may hold. */
export const MAX_FILES_GIVEN = 500;
const MAX_TREE_FILES = 5000;
const MAX_PATH = 1024;

/** A relative path of segments (no leading `/`, no `.` or `..`, no empty segment, no NUL or backslash), at most 1024 characters. */
export function checkFilePath(path: string): string {
  const segments = path.split("/");
  if (path.length === 0 || path.length > MAX_PATH || /[\u0000\\]/.test(path) || segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
    throw badRequest(`"${path.slice(0, 100)}" is not a file path: give a relative path (a/b.md) of at most ${MAX_PATH} characters, without a leading /, . or .. segments.`);
  }
  return path;
}

/**
 * The paths a tree's `.gitignore` files leave out: each `.gitignore` among `paths` rules the paths
 * below its folder (git's rules, by the `ignore` package); the `.gitignore` files themselves stay.
 */
export function ignoredPaths(paths: string[], gitignores: Map<string, string>): string[] {
  const rules = [...gitignores].map(([path, text]) => ({ folder: path.slice(0, -".gitignore".length), matcher: ignore().add(text) }));
  return paths.filter((path) => !path.endsWith(".gitignore") && rules.some(({ folder, matcher }) => path.startsWith(folder) && matcher.ignores(path.slice(folder.length))));
}

/** The type of a file given as text: the one given, else its extension's when that is a text type, else plain text. */
function textTypeOf(path: string, given?: string): string {
  if (given !== undefined) return given;
  const byExtension = Bun.file(path).type;
  return contentKindOf(byExtension) === "text" ? byExtension : "text/plain;charset=utf-8";
}
const fileName = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/**
 * The files of a request as the tree will mount them: each text stored as an asset now (one write
 * for all of them), each asset checked to be a ready asset of the space. Paths are checked and
 * must be distinct.
 */
export async function mountable(ctx: AppContext, spaceId: string, userId: string, files: GivenFile[]): Promise<MountedFile[]> {
  if (files.length > MAX_FILES_GIVEN) throw badRequest(`At most ${MAX_FILES_GIVEN} files a request.`);
  const seen = new Set<string>();
  for (const file of files) {
    if (seen.has(checkFilePath(file.path))) throw badRequest(`The path "${file.path}" is given twice.`);
    seen.add(file.path);
  }
  const texts = files.filter((file): file is TextFile => file.content !== undefined);
  const stored = await uploadTexts(ctx, spaceId, userId, texts.map((file) => ({ fileName: fileName(file.path), mimeType: textTypeOf(file.path, file.mimeType), text: file.content })));
  const byPath = new Map(texts.map((file, index) => [file.path, stored[index].id]));
  return files.map((file) => {
    if (file.content !== undefined) return { path: file.path, assetId: byPath.get(file.path)!, displayName: null, mimeType: file.mimeType ?? null };
    const asset = findAsset(ctx, spaceId, file.assetId);
    if (asset.status !== "ready") throw badRequest(`The asset ${asset.id} is not confirmed yet.`);
    return { path: file.path, assetId: asset.id, displayName: file.displayName ?? null, mimeType: file.mimeType ?? null };
  });
}

export const FileTreeFileSchema = t.Object(
  {
    path: t.String(),
    name: t.String({ description: "The last segment of its path." }),
    size: WholeNumber(),
    updatedAt: Nullable(Timestamp),
    mimeType: Nullable(t.String()),
    assetId: t.String(),
    displayName: Nullable(t.String()),
  },
  { $id: "FileTreeFile" },
);
export type FileTreeFile = Static<typeof FileTreeFileSchema>;

const filesOf = (ctx: AppContext, nodeId: string) =>
  ctx.db
    .select({ file: nodeFiles, size: assets.size, assetType: assets.mimeType, hash: assets.contentHash })
    .from(nodeFiles)
    .innerJoin(assets, eq(assets.id, nodeFiles.assetId))
    .where(eq(nodeFiles.nodeId, nodeId))
    .orderBy(asc(nodeFiles.path))
    .all();

/** A tree's files, by path. */
export function treeFiles(ctx: AppContext, nodeId: string): FileTreeFile[] {
  return filesOf(ctx, nodeId).map(({ file, size, assetType }) => ({
    path: file.path,
    name: fileName(file.path),
    size,
    updatedAt: file.updatedAt,
    mimeType: file.mimeType ?? assetType,
    assetId: file.assetId,
    displayName: file.displayName,
  }));
}

export const TREE_VISIBILITIES = ["private", "workspace", "public"] as const;

/** What a tree says of itself (its node's metadata): entry file, visibility and version. */
export const TreeMetadataSchema = t.Object({
  entryFile: t.Optional(t.String({ minLength: 1, maxLength: MAX_PATH })),
  visibility: t.Optional(oneOf(TREE_VISIBILITIES)),
  version: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
});
export type TreeMetadata = Static<typeof TreeMetadataSchema>;

/** A tree's entry file, visibility and version: its metadata's, else its type's defaults. */
export function treeSettings(node: NodeRow): { entryFile: string; visibility: (typeof TREE_VISIBILITIES)[number]; version: string } {
  const metadata = node.metadata as TreeMetadata;
  return { entryFile: metadata.entryFile ?? FILE_TREE_KINDS[node.type as FileTreeType].entryFile, visibility: metadata.visibility ?? "private", version: metadata.version ?? "0.1.0" };
}

/** An active file tree of the space (id or slug), of `type` when given. */
export function findTree(ctx: AppContext, spaceId: string, ref: string, type?: FileTreeType): NodeRow & { type: FileTreeType } {
  const node = findNode(ctx, spaceId, ref);
  if (node.status !== "active" || !isFileTree(node.type) || (type !== undefined && node.type !== type)) throw notInSpace("node", ref);
  return node as NodeRow & { type: FileTreeType };
}

const hashOf = (hex: string | null) => (hex ? `sha256:${hex}` : null);

function mountedAt(ctx: AppContext, node: NodeRow & { type: FileTreeType }, path: string) {
  const found = filesOf(ctx, node.id).find(({ file }) => file.path === path);
  if (!found) throw notFound(`${FILE_TREE_KINDS[node.type].label} file not found: ${path}`);
  return found;
}

/** The most bytes of a text file a read answers inline; a larger one is read at its asset's URL. */
const MAX_INLINE_TEXT = 2 * 1024 * 1024;

/** `GET /file-trees/{id}/files/{path}`: a text file's text inline; any other file's bytes at its asset's URL. */
export async function readTreeFile(ctx: AppContext, node: NodeRow & { type: FileTreeType }, path: string) {
  const { file, hash } = mountedAt(ctx, node, checkFilePath(path));
  const asset = findAsset(ctx, node.spaceId, file.assetId);
  const text = await assetText(ctx, asset, MAX_INLINE_TEXT);
  return {
    nodeId: node.id,
    path: file.path,
    encoding: text === null ? ("url" as const) : ("utf8" as const),
    content: text ?? "",
    mimeType: file.mimeType ?? asset.mimeType,
    assetId: asset.id,
    displayName: file.displayName,
    assetUrl: text === null ? assetUrl(asset.id) : null,
    contentHash: hashOf(hash),
  };
}

/** Mounts files on a node (a new tree's, or a file node's one), replacing any at the same paths. */
export function mountFiles(tx: Tx, nodeId: string, files: MountedFile[], at: string): void {
  for (const file of files) {
    const row = { nodeId, path: file.path, assetId: file.assetId, displayName: file.displayName ?? null, mimeType: file.mimeType ?? null, createdAt: at, updatedAt: at };
    tx.db
      .insert(nodeFiles)
      .values(row)
      .onConflictDoUpdate({ target: [nodeFiles.nodeId, nodeFiles.path], set: { assetId: row.assetId, displayName: row.displayName, mimeType: row.mimeType, updatedAt: at } })
      .run();
  }
  const count = tx.db.select({ n: sql<number>`count(*)` }).from(nodeFiles).where(eq(nodeFiles.nodeId, nodeId)).get()!.n;
  if (count > MAX_TREE_FILES) throw badRequest(`A file tree holds at most ${MAX_TREE_FILES} files.`);
}

/** A file change of a tree's change request: what it mounts, or unmounts, at a path. */
export type TreeFileChange =
  | ({ change: "create" | "update"; baseContentHash?: string } & MountedFile)
  | { change: "delete"; path: string; baseContentHash?: string };

/**
 * Applies a file change in a merge: a create needs the path free, an update and a delete need a
 * file there; one that names `baseContentHash` needs the file still to hold those bytes (409).
 */
export function changeTreeFile(tx: Tx, node: NodeRow & { type: FileTreeType }, change: TreeFileChange, at: string): void {
  const label = FILE_TREE_KINDS[node.type].label;
  const current = filesOf(tx, node.id).find(({ file }) => file.path === change.path);
  if (change.baseContentHash !== undefined && hashOf(current?.hash ?? null) !== change.baseContentHash) {
    throw conflict(`${label} file changed before merge: ${change.path}`, { reason: "MERGE_CONFLICT" });
  }
  if (change.change === "create" && current) throw conflict(`${label} file already exists: ${change.path}`, { reason: "MERGE_CONFLICT" });
  if (change.change !== "create" && !current) throw conflict(`${label} file not found: ${change.path}`, { reason: "MERGE_CONFLICT" });
  if (change.change === "delete") tx.db.delete(nodeFiles).where(and(eq(nodeFiles.nodeId, node.id), eq(nodeFiles.path, change.path))).run();
  else mountFiles(tx, node.id, [change], at);
  touchNode(tx, node.id, at);
}

/** Merges a tree's entry file, visibility or version into its node's metadata. */
export function setTreeMetadata(tx: Tx, node: NodeRow, metadata: TreeMetadata, at: string): void {
  const merged = { ...node.metadata, ...metadata };
  checkMetadata(tx.config.limits, merged);
  tx.db.update(nodes).set({ metadata: merged, updatedAt: at }).where(eq(nodes.id, node.id)).run();
}
