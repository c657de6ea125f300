import { type Static, t } from "elysia";
import { and, eq, inArray, lt } from "drizzle-orm";
import { DAY_MS, iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { ApiError, conflict, forbidden, notFound } from "../shared/errors";
import { Timestamp } from "../shared/schemas";
import { type AssetRow, assets } from "../tables/assets";
import { servedType, storeStream, type Upload } from "./storage";
import { allows } from "./values";
import { assetsNamedByRecords, pendingPayloadsNamingAssets } from "./store";

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
    createdAt: Timestamp,
  },
  { $id: "Asset" },
);
export type AssetView = Static<typeof AssetSchema>;

export const assetUrl = (id: string) => `/api/v1/assets/${id}/content`;

export const assetView = (row: AssetRow): AssetView => ({
  id: row.id,
  attachmentId: row.id,
  status: row.status,
  fileName: row.fileName,
  mimeType: row.mimeType,
  size: row.size,
  contentHash: row.contentHash ? `sha256:${row.contentHash}` : null,
  url: assetUrl(row.id),
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
export async function uploadAsset(ctx: AppContext, spaceId: string, userId: string, file: { fileName?: string; declaredType: string; body: Upload }): Promise<AssetView> {
  const max = ctx.config.maxFileBytes;
  const stored = await storeStream(ctx.config.dataDir, file.body, max, tooLarge(max));
  try {
    const row = await insertAsset(ctx, spaceId, userId, {
      status: "ready",
      fileName: safeFileName(file.fileName),
      declaredType: file.declaredType,
      mimeType: servedType(file.declaredType, stored.head),
      size: stored.size,
      contentHash: stored.hash,
    });
    return assetView(row);
  } finally {
    stored.landed();
  }
}

/** A new asset of the space, written with its id and times. */
async function insertAsset(ctx: AppContext, spaceId: string, userId: string, given: Pick<AssetRow, "status" | "fileName" | "declaredType" | "mimeType" | "size" | "contentHash">): Promise<AssetRow> {
  const at = iso(ctx.clock.now());
  const row: AssetRow = { id: newId("ast", ctx.clock.now()), spaceId, createdBy: userId, createdAt: at, updatedAt: at, ...given };
  await write(ctx, (tx) => tx.db.insert(assets).values(row).run());
  return row;
}

/** `POST /assets/upload-urls`: a pending asset, and where to PUT its bytes. */
export async function createUploadUrl(ctx: AppContext, spaceId: string, userId: string, input: { fileName: string; mimeType?: string; size?: number }) {
  const max = ctx.config.maxFileBytes;
  if (input.size !== undefined && input.size > max) throw tooLarge(max)();
  const declaredType = input.mimeType ?? "application/octet-stream";
  const row = await insertAsset(ctx, spaceId, userId, { status: "pending", fileName: safeFileName(input.fileName), declaredType, mimeType: servedType(declaredType, new Uint8Array()), size: input.size ?? 0, contentHash: null });
  return { assetId: row.id, uploadUrl: `/api/v1/assets/${row.id}/upload`, method: "PUT" as const, headers: { "content-type": row.declaredType }, maxSize: max };
}

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

/** `POST /assets/confirmations`: a pending asset whose bytes arrived becomes ready. */
export function confirmAsset(ctx: AppContext, spaceId: string, userId: string, assetId: string): Promise<AssetView> {
  return write(ctx, (tx) => {
    const row = uploadersAsset(findAsset(tx, spaceId, assetId), userId);
    if (row.status === "ready") return assetView(row);
    if (!row.contentHash) throw conflict(`Asset ${assetId} has no bytes yet: PUT them to its uploadUrl first.`, { reason: "ASSET_EMPTY" });
    tx.db.update(assets).set({ status: "ready", updatedAt: iso(tx.clock.now()) }).where(eq(assets.id, assetId)).run();
    return assetView({ ...row, status: "ready" });
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
 * Daily: the assets that no record's attachment value and no open proposal names, a day or more
 * after they were made, go; and a stored file goes once no asset names its bytes (the store removes
 * it after the write commits, `db/content-files.ts`). A deleted attachment field's values no longer count. Answers how many assets went.
 */
export function removeUnusedAssets(tx: Tx): number {
  const referenced = new Set(assetsNamedByRecords(tx));
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
