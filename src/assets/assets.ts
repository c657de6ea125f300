import type { Sight } from "../spaces/sight";
import { type Static, t } from "elysia";
import { and, desc, eq, inArray, lt } from "drizzle-orm";
import { DAY_MS, iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { ApiError, badRequest, conflict, forbidden, notFound } from "../shared/errors";
import { timingSafeEqual } from "node:crypto";
import { Timestamp } from "../shared/schemas";
import { type AssetRow, assets, assetTexts, type TextStatus } from "../tables/assets";
import { servedType, type Stored, storeStream, type Upload } from "./storage";
import { contentPath } from "../db/content-files";
import { allows } from "./values";
import { assetMountsInSpace, assetsMountedOnNodes, assetsNamedByRecords, assetUsagesInSpace, mountsOf, pendingPayloadsNamingAssets } from "./store";
import { checkMetadata } from "../shared/json";


export const AssetSchema = t.Object(
  {
    id: t.String(),
    attachmentId: t.String({ description: "The same id (Busabase's name for it in attachment values)." }),
    status: t.Union([t.Literal("pending"), t.Literal("ready")], { description: "pending until its bytes are uploaded and confirmed." }),
    fileName: t.String(),
    mimeType: t.String({ description: "The type it is served as: what its first bytes show, else the declared type (a declared image its bytes do not bear out is served as application/octet-stream)." }),
    size: t.Integer({ minimum: 0 }),
    contentHash: t.Union([t.String(), t.Null()], { description: "sha256:<hex> of its bytes; null until uploaded." }),
    url: t.String({ description: "Where its bytes are read (GET, with the same credentials)." }),
    name: t.String({ description: "Busabase's name of it: its file name." }),
    contentKind: t.Union([t.Literal("text"), t.Literal("binary")], { description: "text for text/* and JSON, XML, YAML, JavaScript or TypeScript; else binary." }),
    metadata: t.Record(t.String(), t.Unknown(), { description: "What its uploader says of it." }),
    usageCount: t.Integer({ minimum: 0, description: "How many record values name it and node files mount it." }),
    textStatus: t.Union([t.Literal("present"), t.Literal("missing"), t.Literal("none")], {
      description: "present: it has a text (a text file's own bytes, or one its uploader set); none: its uploader said it has none; missing: neither (Basalt extracts no text from other files).",
    }),
    createdAt: Timestamp,
  },
  { $id: "Asset" },
);
export type AssetView = Static<typeof AssetSchema>;

const TEXT_TYPES = /json|xml|yaml|javascript|typescript/;
export const contentKindOf = (mimeType: string) => (mimeType.startsWith("text/") || TEXT_TYPES.test(mimeType) ? "text" : "binary");

export const assetUrl = (id: string) => `/api/v1/assets/${id}/content`;

/** The text status of each asset of `ids` whose uploader set its text (`texts.ts`). */
export function textStatuses(ctx: AppContext, ids: string[]): Map<string, TextStatus> {
  if (ids.length === 0) return new Map();
  return new Map(ctx.db.select({ id: assetTexts.assetId, status: assetTexts.status }).from(assetTexts).where(inArray(assetTexts.assetId, ids)).all().map((row) => [row.id, row.status]));
}

export const assetView = (row: AssetRow, usageCount = 0, textSlot?: TextStatus): AssetView => ({
  id: row.id,
  attachmentId: row.id,
  status: row.status,
  fileName: row.fileName,
  mimeType: row.mimeType,
  size: row.size,
  contentHash: row.contentHash ? `sha256:${row.contentHash}` : null,
  url: assetUrl(row.id),
  name: row.fileName,
  contentKind: contentKindOf(row.mimeType),
  metadata: row.metadata,
  usageCount,
  textStatus: textSlot ?? (contentKindOf(row.mimeType) === "text" ? "present" : "missing"),
  createdAt: row.createdAt,
});

/**
 * A file name as stored and sent back: its last path segment only (`../../x` is `x`), without
 * control characters or quotes, at most 200 characters; `file` when nothing is left.
 */
export function safeFileName(given: string | undefined): string {
  const last = (given ?? "").split(/[\\/]/).pop() ?? "";
  const cleaned = last.replace(/[\u0000-\u001f\u007f"]/g, "").trim().slice(0, 200);
  return cleaned === "" || cleaned === "." || cleaned === ".." ? "file" : cleaned;
}

const tooLarge = (max: number) => () => new ApiError(413, "PAYLOAD_TOO_LARGE", `The file is larger than ${max} bytes, the most one upload may be (the operator sets it with --max-file).`);

export function findAsset(ctx: AppContext, spaceId: string, assetId: string): AssetRow {
  const row = ctx.db.select().from(assets).where(and(eq(assets.id, assetId), eq(assets.spaceId, spaceId))).get();
  if (!row) throw notFound(`No asset ${assetId} in this space.`);
  return row;
}

/**
 * `POST /assets`: a file in one request, stored as its bytes arrive and ready at once. Nothing is
 * written to the database until every byte is stored.
 */
export async function uploadAsset(ctx: AppContext, spaceId: string, userId: string, file: { fileName?: string; declaredType: string; body: Upload }, uploaded?: OnUploaded): Promise<AssetView> {
  const max = ctx.config.maxFileBytes;
  const stored = await storeStream(ctx.config.dataDir, file.body, max, tooLarge(max));
  try {
    const row = await insertAsset(
      ctx,
      spaceId,
      userId,
      { status: "ready", fileName: safeFileName(file.fileName), declaredType: file.declaredType, mimeType: servedType(file.declaredType, stored.head), size: stored.size, contentHash: stored.hash },
      uploaded && ((tx, inserted) => uploaded(tx, assetView(inserted))),
    );
    return assetView(row);
  } finally {
    stored.landed();
  }
}

/**
 * Texts given inline (a file tree's files), stored as ready assets of the space, all in one write;
 * answered in the order given.
 */
export async function uploadTexts(ctx: AppContext, spaceId: string, userId: string, files: { fileName: string; mimeType: string; text: string }[]): Promise<AssetRow[]> {
  const max = ctx.config.maxFileBytes;
  const stored: Stored[] = [];
  try {
    for (const file of files) stored.push(await storeStream(ctx.config.dataDir, new Blob([file.text]), max, tooLarge(max)));
    const at = iso(ctx.clock.now());
    const rows: AssetRow[] = files.map((file, index) => ({
      id: newId("ast", ctx.clock.now()),
      spaceId,
      status: "ready",
      fileName: safeFileName(file.fileName),
      declaredType: file.mimeType,
      mimeType: file.mimeType,
      size: stored[index].size,
      contentHash: stored[index].hash,
      metadata: {},
      createdBy: userId,
      createdAt: at,
      updatedAt: at,
    }));
    if (rows.length > 0) await write(ctx, (tx) => tx.db.insert(assets).values(rows).run());
    return rows;
  } finally {
    for (const file of stored) file.landed();
  }
}

/** A text asset's text (its own bytes as UTF-8); null for a binary asset, one not uploaded yet, or one larger than `max` bytes. */
export async function assetText(ctx: AppContext, row: AssetRow, max: number): Promise<string | null> {
  if (contentKindOf(row.mimeType) !== "text" || row.contentHash === null || row.size > max) return null;
  return Bun.file(contentPath(ctx.config.dataDir, row.contentHash)).text();
}

/** A new asset of the space, written with its id and times (`then` runs in the same write). */
async function insertAsset(ctx: AppContext, spaceId: string, userId: string, given: Pick<AssetRow, "status" | "fileName" | "declaredType" | "mimeType" | "size" | "contentHash">, then?: (tx: Tx, row: AssetRow) => void): Promise<AssetRow> {
  const at = iso(ctx.clock.now());
  const row: AssetRow = { id: newId("ast", ctx.clock.now()), spaceId, createdBy: userId, createdAt: at, updatedAt: at, metadata: {}, ...given };
  await write(ctx, (tx) => {
    tx.db.insert(assets).values(row).run();
    then?.(tx, row);
  });
  return row;
}

/**
 * An asset copied from another instance with its id (docs/remotes.md): its bytes checked against
 * the SHA-256 it names before anything is stored, then stored and the asset written ready. One
 * already here with those bytes is answered as it is; an id taken otherwise is refused.
 */
export async function adoptAsset(ctx: AppContext, spaceId: string, given: Pick<AssetRow, "id" | "fileName" | "declaredType" | "createdBy"> & { contentHash: string }, bytes: Uint8Array): Promise<AssetRow> {
  const hash = given.contentHash.replace(/^sha256:/, "");
  const held = ctx.db.select().from(assets).where(eq(assets.id, given.id)).get();
  if (held?.spaceId === spaceId && held.status === "ready" && held.contentHash === hash) return held;
  if (held) throw conflict(`An asset ${given.id} exists already.`, { reason: "ASSET_EXISTS" });
  const max = ctx.config.maxFileBytes;
  if (bytes.byteLength > max) throw tooLarge(max)();
  if (new Bun.CryptoHasher("sha256").update(bytes).digest("hex") !== hash) throw badRequest(`The bytes of asset ${given.id} do not match its SHA-256 ${hash}.`);
  const stored = await storeStream(ctx.config.dataDir, new Blob([bytes as Uint8Array<ArrayBuffer>]), max, tooLarge(max));
  try {
    const at = iso(ctx.clock.now());
    const row: AssetRow = { id: given.id, spaceId, status: "ready", fileName: safeFileName(given.fileName), declaredType: given.declaredType, mimeType: servedType(given.declaredType, stored.head), size: stored.size, contentHash: stored.hash, metadata: {}, createdBy: given.createdBy, createdAt: at, updatedAt: at };
    await write(ctx, (tx) => tx.db.insert(assets).values(row).onConflictDoNothing().run());
    return row;
  } finally {
    stored.landed();
  }
}

/** How long a signed upload link works, in seconds (Busabase's `expiresIn`). */
export const UPLOAD_LINK_SECONDS = 3600;
const STORAGE_PREFIX = "attachments/";

/** Busabase's name for where an asset's bytes are kept: `attachments/<asset id>` here. */
export const storageKeyOf = (assetId: string) => `${STORAGE_PREFIX}${assetId}`;

/** The asset's bytes as an absolute URL (read with the same credentials). */
const publicUrlOf = (ctx: AppContext, assetId: string) => `${ctx.config.publicUrl}${assetUrl(assetId)}`;

/**
 * A link that lets whoever holds it act on one asset, for one purpose, until it expires: the
 * asset, the moment it expires, and this server's signature of all three. Busabase's clients PUT
 * an upload and GET a download there without a credential.
 */
function signedLink(ctx: AppContext, purpose: "upload" | "download", assetId: string): string {
  const link = `${assetId}.${Math.floor(ctx.clock.now() / 1000) + UPLOAD_LINK_SECONDS}`;
  return `${link}.${ctx.secretBox.sign(`${purpose} ${link}`)}`;
}

const signedUploadUrl = (ctx: AppContext, assetId: string) => `${ctx.config.publicUrl}/api/v1/assets/uploads/${signedLink(ctx, "upload", assetId)}`;

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The asset a signed link names for that purpose; a link this server did not sign, or that expired, is a 404 (one answer for both). */
function assetOfLink(ctx: AppContext, purpose: "upload" | "download", link: string): AssetRow {
  const [assetId = "", expires = "", signature = ""] = link.split(".");
  const signed = sameText(signature, ctx.secretBox.sign(`${purpose} ${assetId}.${expires}`)) && Number(expires) * 1000 > ctx.clock.now();
  const row = signed ? ctx.db.select().from(assets).where(eq(assets.id, assetId)).get() : undefined;
  if (!row) throw notFound(`This ${purpose} link is not one this server gave, or it has expired: ask for a new one.`);
  return row;
}

/** The pending asset a signed upload link names. */
export const assetOfUploadLink = (ctx: AppContext, link: string): AssetRow => assetOfLink(ctx, "upload", link);

/** The asset a signed download link names. */
export const assetOfDownloadLink = (ctx: AppContext, link: string): AssetRow => assetOfLink(ctx, "download", link);

export const DownloadDescriptorSchema = t.Object(
  {
    assetId: t.String(),
    downloadUrl: t.String({ description: "Where its bytes are read for an hour, without a credential." }),
    fileName: t.String(),
    mimeType: t.String(),
    size: t.Integer({ minimum: 0 }),
    contentHash: t.Union([t.String(), t.Null()]),
  },
  { $id: "DownloadDescriptor" },
);

/** Busabase's `GET /assets/{id}/content`: where the asset's bytes can be read without a credential (a signed link, for an hour). */
export function downloadDescriptor(ctx: AppContext, row: AssetRow): Static<typeof DownloadDescriptorSchema> {
  if (!row.contentHash) throw notFound(`Asset ${row.id} has no bytes yet.`);
  const view = assetView(row);
  return { assetId: row.id, downloadUrl: `${ctx.config.publicUrl}/api/v1/assets/downloads/${signedLink(ctx, "download", row.id)}`, fileName: row.fileName, mimeType: row.mimeType, size: row.size, contentHash: view.contentHash };
}

/** What an upload asks for: Basalt's (`size`) or Busabase's (`sizeBytes`, `context`, a `contentHash` of bytes it may already have). */
export interface UploadRequest {
  fileName: string;
  mimeType?: string;
  size?: number;
  sizeBytes?: number;
  context?: string;
  contentHash?: string;
}

/** A ready asset of the space with these bytes (`sha256:<hex>` or the hex), if any. */
function assetWithBytes(ctx: AppContext, spaceId: string, contentHash: string): AssetRow | undefined {
  const hex = contentHash.replace(/^sha256:/, "");
  return ctx.db.select().from(assets).where(and(eq(assets.spaceId, spaceId), eq(assets.contentHash, hex), eq(assets.status, "ready"))).get();
}

/**
 * `POST /assets/upload-urls`: a pending asset, and where to PUT its bytes. Asked in Busabase's form
 * (`sizeBytes`), the answer is Busabase's too: an absolute link that carries its own authority
 * (`signedUploadUrl`), `storageKey`, `publicUrl`, `expiresIn`, and for bytes the space already
 * holds (by `contentHash`) that asset, with nothing to upload (`duplicate: true`).
 */
export async function createUploadUrl(ctx: AppContext, spaceId: string, userId: string, input: UploadRequest) {
  const max = ctx.config.maxFileBytes;
  const size = input.size ?? input.sizeBytes;
  if (size !== undefined && size > max) throw tooLarge(max)();
  const contract = input.sizeBytes !== undefined;
  const known = contract && input.contentHash ? assetWithBytes(ctx, spaceId, input.contentHash) : undefined;
  if (known) {
    return { duplicate: true, assetId: known.id, attachmentId: known.id, uploadUrl: "", storageKey: storageKeyOf(known.id), publicUrl: publicUrlOf(ctx, known.id), expiresIn: 0, method: "PUT" as const, headers: {}, maxSize: max };
  }
  const declaredType = input.mimeType ?? "application/octet-stream";
  const row = await insertAsset(ctx, spaceId, userId, { status: "pending", fileName: safeFileName(input.fileName), declaredType, mimeType: servedType(declaredType, new Uint8Array()), size: size ?? 0, contentHash: null });
  const basalt = { assetId: row.id, uploadUrl: `/api/v1/assets/${row.id}/upload`, method: "PUT" as const, headers: { "content-type": row.declaredType }, maxSize: max };
  if (!contract) return basalt;
  return { ...basalt, duplicate: false, attachmentId: row.id, uploadUrl: signedUploadUrl(ctx, row.id), storageKey: storageKeyOf(row.id), publicUrl: publicUrlOf(ctx, row.id), expiresIn: UPLOAD_LINK_SECONDS };
}

/** The asset a confirmation names: by id (Basalt's), or by the `storageKey` an upload link gave (Busabase's). */
export function confirmedAssetId(input: { assetId?: string; storageKey?: string }): string {
  if (input.assetId) return input.assetId;
  const key = input.storageKey;
  if (key === undefined) throw badRequest("A confirmation names the asset: assetId, or the storageKey its upload link gave.");
  if (!key.startsWith(STORAGE_PREFIX) || key.split("/").includes("..")) throw badRequest("storageKey must be an attachment upload under attachments/ (from createUploadUrl).");
  return key.slice(STORAGE_PREFIX.length);
}

/** A confirmed asset as both answer it: Basalt's asset, with Busabase's `success`, `assetId`, `storageKey` and `publicUrl`. */
export const confirmation = (ctx: AppContext, view: AssetView) => ({ ...view, success: true, assetId: view.id, storageKey: storageKeyOf(view.id), publicUrl: publicUrlOf(ctx, view.id) });

/** A pending asset's bytes and confirmation are its uploader's: another member cannot swap them. */
function uploadersAsset(row: AssetRow, userId: string): AssetRow {
  if (row.status === "pending" && row.createdBy !== userId) throw forbidden(`Asset ${row.id} is being uploaded by someone else; only they send its bytes and confirm it.`);
  return row;
}

/** `PUT /assets/{id}/upload`: the bytes of a pending asset, as they arrive (again replaces them, until it is confirmed). */
export async function putAssetBytes(ctx: AppContext, spaceId: string, userId: string, assetId: string, body: Upload): Promise<AssetView> {
  const before = uploadersAsset(findAsset(ctx, spaceId, assetId), userId);
  if (before.status !== "pending") throw conflict(`Asset ${assetId} is confirmed; its bytes no longer change.`, { reason: "ASSET_READY" });
  const max = ctx.config.maxFileBytes;
  const stored = await storeStream(ctx.config.dataDir, body, max, tooLarge(max));
  const changes = { size: stored.size, contentHash: stored.hash, mimeType: servedType(before.declaredType, stored.head), updatedAt: iso(ctx.clock.now()) };
  // The bytes it replaces are noted by the update (migrations/0027) and removed once it commits.
  await write(ctx, (tx) => tx.db.update(assets).set(changes).where(and(eq(assets.id, assetId), eq(assets.status, "pending"))).run()).finally(stored.landed);
  return assetView({ ...before, ...changes });
}

/** What a layer above does in the write that makes an uploaded asset ready (its `asset.uploaded` event). */
export type OnUploaded = (tx: Tx, asset: AssetView) => void;

/** `POST /assets/confirmations`: a pending asset whose bytes arrived becomes ready (`uploaded` runs in that write; a second confirmation changes nothing). */
export function confirmAsset(ctx: AppContext, spaceId: string, userId: string, assetId: string, uploaded?: OnUploaded): Promise<AssetView> {
  return write(ctx, (tx) => {
    const row = uploadersAsset(findAsset(tx, spaceId, assetId), userId);
    if (row.status === "ready") return assetView(row);
    if (!row.contentHash) throw conflict(`Asset ${assetId} has no bytes yet: PUT them to its uploadUrl first.`, { reason: "ASSET_EMPTY" });
    tx.db.update(assets).set({ status: "ready", updatedAt: iso(tx.clock.now()) }).where(eq(assets.id, assetId)).run();
    const view = assetView({ ...row, status: "ready" });
    uploaded?.(tx, view);
    return view;
  });
}

export const AssetUsageSchema = t.Object(
  {
    ownerType: t.Union(["base", "file_node", "skill", "drive", "airapp"].map((type) => t.Literal(type))),
    nodeId: t.String(),
    nodeName: t.String(),
    nodeType: t.String(),
    nodeSlug: t.String(),
    path: t.Union([t.String(), t.Null()], { description: "Where a file tree mounts it." }),
    recordId: t.Union([t.String(), t.Null()]),
    fieldSlug: t.Union([t.String(), t.Null()]),
    blockId: t.Null(),
    createdAt: Timestamp,
  },
  { $id: "AssetUsage", description: "A record value that names the asset, or a file node or file tree that mounts it (Busabase's usage)." },
);
type AssetUsage = Static<typeof AssetUsageSchema>;

/** The space's usages of assets: each active record value that names one, with its base's node, and each file of an active node that mounts one. */
function usagesInSpace(ctx: AppContext, spaceId: string, nodeOf: (baseId: string) => { id: string; name: string; slug: string } | undefined): (AssetUsage & { assetId: string })[] {
  const values = assetUsagesInSpace(ctx, spaceId).flatMap((usage) => {
    const node = nodeOf(usage.baseId);
    return node ? [{ assetId: usage.assetId, ownerType: "base" as const, nodeId: node.id, nodeName: node.name, nodeType: "base", nodeSlug: node.slug, path: null, recordId: usage.recordId, fieldSlug: usage.fieldSlug, blockId: null, createdAt: usage.createdAt }] : [];
  });
  const mounts = assetMountsInSpace(ctx, spaceId).map((mount) => ({
    ...mount,
    ownerType: mount.nodeType === "file" ? ("file_node" as const) : (mount.nodeType as "skill" | "drive" | "airapp"),
    path: mount.nodeType === "file" ? null : mount.path,
    recordId: null,
    fieldSlug: null,
    blockId: null,
  }));
  return [...values, ...mounts];
}

const usagesOf = (ctx: AppContext, spaceId: string, assetId: string, nodeOf: (baseId: string) => { id: string; name: string; slug: string } | undefined): AssetUsage[] =>
  usagesInSpace(ctx, spaceId, nodeOf)
    .filter((usage) => usage.assetId === assetId)
    .map(({ assetId: _, ...usage }) => usage);

/** An asset with how many record values name it and node files mount it. */
export function assetWithUsage(ctx: AppContext, spaceId: string, assetId: string): AssetView {
  const used = [...assetUsagesInSpace(ctx, spaceId), ...assetMountsInSpace(ctx, spaceId)].filter((usage) => usage.assetId === assetId).length;
  return assetView(findAsset(ctx, spaceId, assetId), used, textStatuses(ctx, [assetId]).get(assetId));
}

/** Where the asset is mounted in the space's active file nodes and file trees. */
export const mountsOfAsset = (ctx: AppContext, spaceId: string, assetId: string) => assetMountsInSpace(ctx, spaceId).filter((mount) => mount.assetId === assetId);

/**
 * How many record values and node files use each asset, and whether the caller sees an asset: one
 * used only in what the caller does not see is not shown to them.
 */
export function assetSight(ctx: AppContext, spaceId: string, sight: Sight): { counts: Map<string, number>; shown: (assetId: string) => boolean } {
  const counts = new Map<string, number>();
  const seenSomewhere = new Set<string>();
  const usages = [...assetUsagesInSpace(ctx, spaceId).map((usage) => ({ assetId: usage.assetId, hidden: sight.hiddenBases.has(usage.baseId) })), ...assetMountsInSpace(ctx, spaceId).map((mount) => ({ assetId: mount.assetId, hidden: sight.hiddenNodes.has(mount.nodeId) }))];
  for (const usage of usages) {
    counts.set(usage.assetId, (counts.get(usage.assetId) ?? 0) + 1);
    if (!usage.hidden) seenSomewhere.add(usage.assetId);
  }
  return { counts, shown: (id) => !counts.has(id) || seenSomewhere.has(id) };
}

/** `GET /assets`: the space's assets, newest first, each with how many record values and node files name it. */
export function listAssets(ctx: AppContext, spaceId: string, sight: Sight): AssetView[] {
  const { counts, shown } = assetSight(ctx, spaceId, sight);
  return ctx.db
    .select({ row: assets, text: assetTexts.status })
    .from(assets)
    .leftJoin(assetTexts, eq(assetTexts.assetId, assets.id))
    .where(eq(assets.spaceId, spaceId))
    .orderBy(desc(assets.id))
    .all()
    .filter(({ row }) => shown(row.id))
    .map(({ row, text }) => assetView(row, counts.get(row.id) ?? 0, text ?? undefined));
}

/** `GET /assets/{id}`: the asset as it always was, with Busabase's `{asset, usages}` in the same object. */
export function assetDetail(ctx: AppContext, spaceId: string, assetId: string, nodeOf: (baseId: string) => { id: string; name: string; slug: string } | undefined) {
  const row = findAsset(ctx, spaceId, assetId);
  const usages = usagesOf(ctx, spaceId, assetId, nodeOf);
  const asset = assetView(row, usages.length, textStatuses(ctx, [assetId]).get(assetId));
  return { ...asset, asset, usages };
}

/** `PATCH /assets/{id}/metadata`: merged into (shallow) or replacing what its uploader said of it. */
export function updateAssetMetadata(ctx: AppContext, spaceId: string, assetId: string, metadata: Record<string, unknown>, mode: "merge" | "replace") {
  return write(ctx, (tx) => {
    const row = findAsset(tx, spaceId, assetId);
    const next = mode === "replace" ? metadata : { ...row.metadata, ...metadata };
    checkMetadata(tx.config.limits, next);
    tx.db.update(assets).set({ metadata: next, updatedAt: iso(tx.clock.now()) }).where(eq(assets.id, assetId)).run();
  });
}

/** `DELETE /assets/{id}`: an asset no record value and no open proposal names; its bytes go once no other asset holds them. */
export function deleteAsset(ctx: AppContext, spaceId: string, assetId: string): Promise<{ deleted: true }> {
  return write(ctx, (tx) => {
    findAsset(tx, spaceId, assetId);
    // A file of an archived node counts too: restoring the node brings it back.
    const named =
      assetUsagesInSpace(tx, spaceId).filter((usage) => usage.assetId === assetId).length +
      mountsOf(tx, assetId) +
      pendingPayloadsNamingAssets(tx).filter((payload) => payload.includes(`"${assetId}"`)).length;
    if (named > 0) throw conflict(`Asset is still referenced by ${named} place(s); remove those references first.`, { reason: "ASSET_IN_USE" });
    // Its bytes are noted by the delete (migrations/0027) and removed once it commits, when no other asset names them.
    tx.db.delete(assets).where(eq(assets.id, assetId)).run();
    return { deleted: true as const };
  });
}

/**
 * An attachment value as stored: each named asset of the space, ready, of an allowed type and
 * size, as `{ id, url, fileName, mimeType, size }` read from the asset (what a client sent besides
 * the id is not trusted). Answers the value, or why it cannot be.
 */
export function resolveAttachments(ctx: AppContext, spaceId: string, options: Record<string, unknown>, ids: string[]): { value: unknown[] } | { error: string } {
  const unique = [...new Set(ids)];
  const maxFiles = (options.maxFiles as number | undefined) ?? 10;
  if (unique.length > maxFiles) return { error: `holds at most ${maxFiles} files` };
  const rows = unique.length === 0 ? [] : ctx.db.select().from(assets).where(and(eq(assets.spaceId, spaceId), inArray(assets.id, unique))).all();
  const byId = new Map(rows.map((row) => [row.id, row]));
  const maxSize = Math.min(ctx.config.maxFileBytes, (options.maxFileSize as number | undefined) ?? Number.MAX_SAFE_INTEGER);
  const allowed = options.allowedMimeTypes as string[] | undefined;
  const value: unknown[] = [];
  for (const id of unique) {
    const row = byId.get(id);
    if (!row) return { error: `names ${id}, which is no asset of this space` };
    if (row.status !== "ready") return { error: `names ${id}, which is not confirmed yet` };
    if (row.size > maxSize) return { error: `names ${id} of ${row.size} bytes; files here are at most ${maxSize}` };
    if (allowed && !allows(allowed, row.mimeType)) return { error: `names ${id}, a ${row.mimeType}; this field takes ${allowed.join(", ")}` };
    value.push({ id: row.id, url: assetUrl(row.id), fileName: row.fileName, mimeType: row.mimeType, size: row.size });
  }
  return { value };
}

/** How long an asset no record or proposal names is kept: time to propose the record that will. */
export const UNUSED_ASSET_GRACE_MS = DAY_MS;

/**
 * Daily: the assets that no record's attachment value, no node's file and no open proposal names, a day or more
 * after they were made, go; and a stored file goes once no asset names its bytes (the store removes
 * it after the write commits, `db/content-files.ts`). A deleted attachment field's values no longer count. Answers how many assets went.
 */
export function removeUnusedAssets(tx: Tx): number {
  const referenced = new Set([...assetsNamedByRecords(tx), ...assetsMountedOnNodes(tx)]);
  for (const payload of pendingPayloadsNamingAssets(tx)) for (const id of payload.match(/ast_[0-9A-Za-z]+/g) ?? []) referenced.add(id);
  const unused = tx.db
    .select({ id: assets.id, hash: assets.contentHash })
    .from(assets)
    .where(lt(assets.createdAt, iso(tx.clock.now() - UNUSED_ASSET_GRACE_MS)))
    .all()
    .filter((asset) => !referenced.has(asset.id));
  if (unused.length === 0) return 0;
  // Their bytes are noted by the delete (migrations/0027) and removed once it commits, when no other asset names them.
  tx.db.delete(assets).where(inArray(assets.id, unused.map((asset) => asset.id))).run();
  return unused.length;
}
