import { assetText, contentKindOf, findAsset, mountsOfAsset } from "../assets/assets";
import { MAX_INLINE_TEXT_BYTES, textOfAsset } from "../assets/texts";
import { checkDocument, DOCUMENT_KINDS } from "../content/documents";
import { Value } from "@sinclair/typebox/value";
import { checkFilePath, FILE_TREE_KINDS, findTree, type GivenFile, ignoredPaths, mountable, type TreeMetadata, TreeMetadataSchema } from "../content/file-trees";
import { findNode } from "../content/nodes";
import type { AppContext } from "../context";
import { badRequest, payloadTooLarge } from "../shared/errors";
import { DEFAULT_REVIEW_POLICY } from "../content/bases";
import { FILE_TREE_TYPES, type FileTreeType, isDocumentType, type OperationKind } from "../tables/content";
import { type Proposer, proposeNodeChanges, proposal, type Review } from "./proposals";
import { type Proposed, type ProposedOperation, propose } from "./propose";

/** Docs, file nodes and file trees made, and their content changed, as change requests (contract §2.6 and §2.7). */

interface NewNode {
  parentNodeId?: string;
  slug: string;
  name: string;
  description?: string;
}

/** `POST /docs`: a doc node with its markdown. */
export function proposeDoc(ctx: AppContext, who: Proposer, input: NewNode & { body?: string }, review: Review): Promise<Proposed> {
  const { body, ...node } = input;
  return proposeNodeChanges(ctx, who, [{ kind: "create", nodeType: "doc", ...node, document: body ?? "" }], review);
}

/** `POST /files`: a file node mounting an asset of the space, at its file name. */
export async function proposeFile(ctx: AppContext, who: Proposer, input: NewNode & { assetId: string }, review: Review): Promise<Proposed> {
  const { assetId, ...node } = input;
  const asset = findAsset(ctx, who.scope.space.id, assetId);
  const files = await mountable(ctx, who.scope.space.id, who.actor.user.id, [{ path: asset.fileName, assetId: asset.id }]);
  return proposeNodeChanges(ctx, who, [{ kind: "create", nodeType: "file", ...node, files }], review);
}

export interface NewFileTree extends NewNode {
  type: FileTreeType;
  visibility?: TreeMetadata["visibility"];
  version?: string;
  files?: GivenFile[];
  /** merge (default): the given files over the type's seed files; replace: the given files only (the seeds when none are given). */
  mergeMode?: "merge" | "replace";
}

/** The text of each `.gitignore` among the files, by path: given inline, or an asset's text. */
async function gitignoresOf(ctx: AppContext, spaceId: string, files: GivenFile[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const file of files) {
    if (file.path !== ".gitignore" && !file.path.endsWith("/.gitignore")) continue;
    const text = file.content ?? (await assetText(ctx, findAsset(ctx, spaceId, file.assetId), 64 * 1024));
    if (text !== null) found.set(file.path, text);
  }
  return found;
}

/**
 * `POST /file-trees`: a skill, drive or airapp with its files. Files a `.gitignore` among them
 * leaves out are skipped and named in the answer; when every given file is skipped nothing is made.
 */
export async function proposeFileTree(ctx: AppContext, who: Proposer, input: NewFileTree, review: Review): Promise<{ proposed: Proposed; skipped: string[] }> {
  const { type, visibility, version, files: given = [], mergeMode = "merge", ...node } = input;
  for (const file of given) checkFilePath(file.path);
  const seeds = FILE_TREE_KINDS[type].seeds({ slug: node.slug, name: node.name, description: node.description ?? "" });
  const givenPaths = new Set(given.map((file) => file.path));
  const files: GivenFile[] = mergeMode === "replace" && given.length > 0 ? given : [...seeds.filter((seed) => !givenPaths.has(seed.path)), ...given];
  const skipped = ignoredPaths(files.map((file) => file.path), await gitignoresOf(ctx, who.scope.space.id, files));
  if (given.length > 0 && given.every((file) => skipped.includes(file.path))) throw badRequest(`Every file given is left out by .gitignore: ${skipped.slice(0, 10).join(", ")}.`);
  const mounted = await mountable(ctx, who.scope.space.id, who.actor.user.id, files.filter((file) => !skipped.includes(file.path)));
  const metadata = { entryFile: FILE_TREE_KINDS[type].entryFile, visibility: visibility ?? "private", version: version ?? "0.1.0" };
  const proposed = await proposeNodeChanges(ctx, who, [{ kind: "create", nodeType: type, ...node, metadata, files: mounted }], review);
  return { proposed, skipped };
}

export type NodeContent = { kind: "doc"; body: string } | { kind: "whiteboard" | "workflow" | "html"; document: unknown };

/** `PUT /nodes/{id}/content`: a document node's content replaced whole, as a change request. */
export function proposeNodeContent(ctx: AppContext, who: Proposer, nodeRef: string, content: NodeContent, review: Review): Promise<Proposed> {
  const node = findNode(ctx, who.scope.space.id, nodeRef, "active");
  if (!isDocumentType(node.type) || content.kind !== node.type) throw badRequest(`Content kind "${content.kind}" does not match node type "${node.type}" for node ${node.id}.`);
  const checked = checkDocument(node.type, content.kind === "doc" ? content.body : content.document);
  const op = { targetType: "node", baseId: null, nodeId: node.id, kind: DOCUMENT_KINDS[node.type].operation, payload: node.type === "doc" ? { body: checked } : { document: checked } } as ProposedOperation;
  return propose(ctx, proposal(who, review, { targetType: "node", baseId: null, nodeId: node.id, reviewPolicy: DEFAULT_REVIEW_POLICY, operations: [op] }));
}

export type TreeOperation =
  | { kind: "create" | "update"; path: string; content: string; mimeType?: string; baseContentHash?: string }
  | { kind: "create" | "update"; path: string; assetId: string; displayName?: string; mimeType?: string; baseContentHash?: string }
  | { kind: "delete"; path: string; baseContentHash?: string }
  | { kind: "metadata_update"; metadata: TreeMetadata };

const CONTENT_HASH = /^sha256:[0-9a-f]{64}$/;

/** A file's path and the bytes it was changed on, as a tree's change request gives them. */
function checkTreeFile(op: { path: string; baseContentHash?: string }): void {
  checkFilePath(op.path);
  if (op.baseContentHash !== undefined && !CONTENT_HASH.test(op.baseContentHash)) throw badRequest(`baseContentHash of "${op.path}" must be sha256: and 64 lowercase hex digits.`);
}

const TREE_CHANGES = ["file_create", "file_update", "file_delete", "metadata_update"] as const;

/** The tree type and change of an operation kind of a tree (`drive_file_update`), or null for any other kind. */
export function treeKindOf(kind: string): { type: FileTreeType; change: (typeof TREE_CHANGES)[number] } | null {
  const type = FILE_TREE_TYPES.find((each) => kind.startsWith(`${each}_`));
  const change = TREE_CHANGES.find((each) => kind === `${type}_${each}`);
  return type && change ? { type, change } : null;
}

const optionalText = (value: unknown, name: string, most: number): string | null => {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.length > most) throw badRequest(`${name} must be text of at most ${most} characters.`);
  return value;
};

/**
 * A tree's change pushed from another instance (docs/remotes.md), checked as a tree's change
 * request made here is (its payload read back as that request's operation): the tree of its type,
 * the path, the bytes it was made on, and the file, which must be a ready asset of this space (it
 * is sent first). Answers the payload to store.
 */
export function checkPushedTreeChange(ctx: AppContext, spaceId: string, op: { kind: string; nodeId: string | null; payload: Record<string, unknown> }): Record<string, unknown> {
  const tree = treeKindOf(op.kind);
  if (!tree) throw badRequest(`${op.kind} is not a change of a file tree.`);
  findTree(ctx, spaceId, op.nodeId ?? "", tree.type);
  const p = op.payload;
  if (tree.change === "metadata_update") {
    if (!Value.Check(TreeMetadataSchema, p.metadata)) throw badRequest("A tree's metadata holds entryFile, visibility (private, workspace or public) and version.");
    const { entryFile, visibility, version } = p.metadata;
    return { metadata: Object.fromEntries(Object.entries({ entryFile, visibility, version }).filter(([, value]) => value !== undefined)) };
  }
  if (typeof p.path !== "string" || (p.baseContentHash !== undefined && typeof p.baseContentHash !== "string")) throw badRequest("A tree's file change names its path (and the contentHash it was made on).");
  const file = { path: p.path, baseContentHash: p.baseContentHash as string | undefined };
  checkTreeFile(file);
  if (tree.change === "file_delete") return file;
  const asset = findAsset(ctx, spaceId, String(p.assetId));
  if (asset.status !== "ready") throw badRequest(`The asset ${asset.id} is not confirmed yet.`);
  return { ...file, assetId: asset.id, displayName: optionalText(p.displayName, "displayName", 255), mimeType: optionalText(p.mimeType, "mimeType", 200) };
}

/**
 * `POST /file-trees/{id}/change-requests`: files created, updated or deleted and the tree's
 * settings changed, as one change request; texts are stored as assets first. A file that changed
 * since the `baseContentHash` a change names is a conflict at merge.
 */
export async function proposeTreeChanges(ctx: AppContext, who: Proposer, nodeRef: string, type: FileTreeType | undefined, operations: TreeOperation[], review: Review): Promise<Proposed> {
  const spaceId = who.scope.space.id;
  const node = findTree(ctx, spaceId, nodeRef, type);
  for (const op of operations) if (op.kind !== "metadata_update") checkTreeFile(op);
  const writes = operations.filter((op): op is Extract<TreeOperation, { kind: "create" | "update" }> => op.kind === "create" || op.kind === "update");
  const mounted = await mountable(ctx, spaceId, who.actor.user.id, writes.map(({ kind: _, baseContentHash: __, ...file }) => file as GivenFile));
  const ops = operations.map((op): ProposedOperation => {
    const target = { targetType: "node" as const, baseId: null, nodeId: node.id };
    if (op.kind === "metadata_update") return { ...target, kind: `${node.type}_metadata_update` as OperationKind, payload: { metadata: op.metadata } } as ProposedOperation;
    if (op.kind === "delete") return { ...target, kind: `${node.type}_file_delete` as OperationKind, payload: { path: op.path, baseContentHash: op.baseContentHash } } as ProposedOperation;
    const file = mounted[writes.indexOf(op)];
    return { ...target, kind: `${node.type}_file_${op.kind}` as OperationKind, payload: { ...file, baseContentHash: op.baseContentHash } } as ProposedOperation;
  });
  return propose(ctx, proposal(who, review, { targetType: "node", baseId: null, nodeId: node.id, reviewPolicy: DEFAULT_REVIEW_POLICY, operations: ops }));
}

export interface ContentEdit {
  oldString: string;
  newString: string;
  replaceAll?: boolean;
}

const EDIT_REVIEW = "editContent rewrites the real mounted file bytes, so it always requires review. Omit the flag.";

/** The text after each edit in turn: each must find its text, once unless `replaceAll`, and change something. */
function edited(text: string, edits: ContentEdit[]): string {
  let result = text;
  edits.forEach((edit, index) => {
    const at = `Edit ${index + 1}`;
    if (edit.oldString === edit.newString) throw badRequest(`${at}: oldString and newString are the same.`);
    const matches = result.split(edit.oldString).length - 1;
    if (matches === 0) throw badRequest(`${at}: oldString was not found.`);
    if (matches > 1 && !edit.replaceAll) throw badRequest(`${at}: oldString matches ${matches} times; either make it unique or set replaceAll: true.`);
    result = edit.replaceAll ? result.split(edit.oldString).join(edit.newString) : result.replace(edit.oldString, () => edit.newString);
  });
  if (result === text) throw badRequest("The edits leave the content as it was.");
  return result;
}

/**
 * `POST /assets/{id}/edit-content`: string replacements in a text file mounted in exactly one drive
 * or skill, proposed as that file's update on the bytes it has now (a change since is a conflict
 * at merge). It always waits for review.
 */
export async function proposeEditContent(ctx: AppContext, who: Proposer, assetId: string, edits: ContentEdit[], review: Review): Promise<Proposed> {
  if (review.autoMerge === true) throw badRequest(`\`autoMerge: true\` is not accepted here: ${EDIT_REVIEW}`);
  const spaceId = who.scope.space.id;
  const asset = findAsset(ctx, spaceId, assetId);
  const mounts = mountsOfAsset(ctx, spaceId, asset.id).filter((mount) => mount.nodeType === "drive" || mount.nodeType === "skill");
  if (mounts.length !== 1) throw badRequest("Asset is not mounted in an editable Drive or Skill location.");
  const [mount] = mounts;
  const { text } = await textOfAsset(ctx, asset);
  if (text === null || contentKindOf(asset.mimeType) !== "text") throw badRequest("Asset is not a text file: only text can be edited.");
  const content = edited(text, edits);
  if (Buffer.byteLength(content) > MAX_INLINE_TEXT_BYTES) throw payloadTooLarge(`The edited content would hold more than ${MAX_INLINE_TEXT_BYTES} bytes.`);
  const node = findTree(ctx, spaceId, mount.nodeId);
  const [file] = await mountable(ctx, spaceId, who.actor.user.id, [{ path: mount.path, content, mimeType: asset.mimeType }]);
  const op = { targetType: "node", baseId: null, nodeId: node.id, kind: `${node.type}_file_update`, payload: { ...file, baseContentHash: `sha256:${asset.contentHash}` } } as ProposedOperation;
  return propose(ctx, proposal(who, { ...review, autoMerge: false }, { targetType: "node", baseId: null, nodeId: node.id, reviewPolicy: DEFAULT_REVIEW_POLICY, operations: [op], reviewAlways: EDIT_REVIEW }));
}
