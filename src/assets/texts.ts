import { and, eq } from "drizzle-orm";
import { type Static, t } from "elysia";
import { type AuditActor, recordAudit } from "../audit/audit";
import type { AppContext } from "../context";
import { contentPath } from "../db/content-files";
import { write } from "../db/tx";
import { iso } from "../shared/clock";
import { badRequest, payloadTooLarge } from "../shared/errors";
import { readLines } from "../shared/lines";
import { type AssetRow, assets, assetTexts, type TextStatus } from "../tables/assets";
import { assetText, createUploadUrl, findAsset, UPLOAD_LINK_SECONDS } from "./assets";

/**
 * Asset texts (Busabase's text slot, contract §2.1): what reading lines and grep take as an
 * asset's text. A text file's text is its own bytes; its uploader may set another (the text of a
 * PDF, say), or say it has none. Set inline (at most 1 MiB) or, for a larger text, uploaded first
 * to a link of its own, as a file is.
 */

/** The most bytes `PUT /assets/{id}/text` takes inline (a larger text is uploaded first). */
export const MAX_INLINE_TEXT_BYTES = 1024 * 1024;
const PENDING_PREFIX = "asset-texts/pending/";

export type AssetTextStatus = TextStatus | "missing";

/** An asset's text and its status: its slot's, else a text file's own bytes, else none there (`missing`). */
export async function textOfAsset(ctx: AppContext, row: AssetRow): Promise<{ status: AssetTextStatus; text: string | null }> {
  const slot = ctx.db.select().from(assetTexts).where(eq(assetTexts.assetId, row.id)).get();
  if (slot) return { status: slot.status, text: slot.text };
  const own = await assetText(ctx, row, Number.MAX_SAFE_INTEGER);
  return own === null ? { status: "missing", text: null } : { status: "present", text: own };
}

/** `GET /assets/{id}/text/lines`: a range of an asset's text (2000 lines, about 2 MiB at most). */
export async function readAssetLines(ctx: AppContext, spaceId: string, assetId: string, startLine: number, endLine?: number) {
  const { status, text } = await textOfAsset(ctx, findAsset(ctx, spaceId, assetId));
  if (text === null) throw badRequest(`Asset has no readable text (status: ${status}).`);
  return readLines(text, startLine, endLine);
}

export const TextWrittenSchema = t.Object({
  assetId: t.String(),
  textStatus: t.Union([t.Literal("present"), t.Literal("none")]),
  lineCount: t.Integer({ minimum: 0 }),
  charCount: t.Integer({ minimum: 0 }),
  byteCount: t.Integer({ minimum: 0 }),
});

export interface TextInput {
  text?: string;
  storageKey?: string;
  contentHash?: string;
  none?: boolean;
}

const sha256 = (bytes: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

/** The text of an upload a text link took (`asset-texts/pending/<asset>.txt`): UTF-8, and the bytes `contentHash` claims when it claims any. */
async function uploadedText(ctx: AppContext, spaceId: string, storageKey: string, contentHash: string | undefined): Promise<{ text: string; pending: AssetRow }> {
  const id = storageKey.startsWith(PENDING_PREFIX) && storageKey.endsWith(".txt") ? storageKey.slice(PENDING_PREFIX.length, -".txt".length) : "";
  if (!/^ast_[0-9A-Za-z]+$/.test(id)) throw badRequest(`storageKey must be one a text upload link gave (${PENDING_PREFIX}<id>.txt).`);
  const pending = findAsset(ctx, spaceId, id);
  if (pending.contentHash === null) throw badRequest("Nothing was uploaded to this storageKey yet: PUT the text to its uploadUrl first.");
  const bytes = await Bun.file(contentPath(ctx.config.dataDir, pending.contentHash)).bytes();
  if (contentHash !== undefined && contentHash.replace(/^sha256:/, "") !== sha256(bytes)) throw badRequest("Claimed contentHash does not match the actual bytes.");
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), pending };
  } catch {
    throw badRequest("The uploaded text is not UTF-8.");
  }
}

/**
 * `PUT /assets/{id}/text`: sets an asset's text, from `text` (inline) or `storageKey` (uploaded
 * first), or says it has none (`none`): exactly one of them. An uploaded text's temporary asset goes.
 */
export async function putAssetText(ctx: AppContext, spaceId: string, actor: AuditActor, assetId: string, input: TextInput): Promise<Static<typeof TextWrittenSchema>> {
  if ([input.text !== undefined, input.storageKey !== undefined, input.none === true].filter(Boolean).length !== 1) throw badRequest("putText requires exactly one of: text, storageKey, or none.");
  const asset = findAsset(ctx, spaceId, assetId);
  if (input.text !== undefined && Buffer.byteLength(input.text) > MAX_INLINE_TEXT_BYTES) throw payloadTooLarge(`An inline text holds at most ${MAX_INLINE_TEXT_BYTES} bytes; upload a larger one (POST /assets/text/upload-urls) and send its storageKey.`);
  const uploaded = input.storageKey !== undefined ? await uploadedText(ctx, spaceId, input.storageKey, input.contentHash) : undefined;
  const text = input.none ? null : (uploaded?.text ?? input.text!);
  const status: TextStatus = text === null ? "none" : "present";
  await write(ctx, (tx) => {
    const at = iso(tx.clock.now());
    tx.db.insert(assetTexts).values({ assetId: asset.id, status, text, updatedAt: at }).onConflictDoUpdate({ target: assetTexts.assetId, set: { status, text, updatedAt: at } }).run();
    if (uploaded) tx.db.delete(assets).where(and(eq(assets.id, uploaded.pending.id), eq(assets.spaceId, spaceId))).run();
    recordAudit(tx, { spaceId, actor, action: text === null ? "asset.text_marked_none" : "asset.text_written", targetType: "asset", targetId: asset.id });
  });
  if (text === null) return { assetId: asset.id, textStatus: "none", lineCount: 0, charCount: 0, byteCount: 0 };
  return { assetId: asset.id, textStatus: "present", lineCount: readLines(text).totalLines, charCount: [...text].length, byteCount: Buffer.byteLength(text) };
}

/** `POST /assets/text/upload-urls`: where to PUT a text too large to send inline, and the storageKey that names it afterwards. */
export async function createTextUploadUrl(ctx: AppContext, spaceId: string, userId: string, input: { assetId: string; sizeBytes: number }) {
  const asset = findAsset(ctx, spaceId, input.assetId);
  const link = await createUploadUrl(ctx, spaceId, userId, { fileName: `${asset.id}.txt`, mimeType: "text/plain;charset=utf-8", sizeBytes: input.sizeBytes });
  return { uploadUrl: link.uploadUrl, storageKey: `${PENDING_PREFIX}${link.assetId}.txt`, expiresIn: UPLOAD_LINK_SECONDS };
}
