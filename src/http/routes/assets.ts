import { Elysia, t } from "elysia";
import type { OpenAPIV3 } from "openapi-types";
import type { AppContext } from "../../context";
import { access, countUpload } from "../access";
import { ApiError, badRequest } from "../../shared/errors";
import { answers, mediaAnswer } from "../openapi";
import { nestedQuery, oneString } from "../../shared/query-params";
import { queryParameter } from "../../shared/schemas";
import { assetDetail, AssetSchema, AssetUsageSchema, assetOfDownloadLink, assetOfUploadLink, downloadDescriptor, DownloadDescriptorSchema, confirmAsset, confirmation, confirmedAssetId, createUploadUrl, deleteAsset, findAsset, listAssets, putAssetBytes, updateAssetMetadata, uploadAsset } from "../../assets/assets";
import { findBaseOrNull } from "../../content/bases";
import { contentPath } from "../../db/content-files";
import { INLINE_IMAGES } from "../../assets/storage";
import type { AssetRow } from "../../tables/assets";
import { recordUpload } from "../../events/outbox";
import { createTextUploadUrl, MAX_INLINE_TEXT_BYTES, putAssetText, readAssetLines, TextWrittenSchema } from "../../assets/texts";
import { lineRangeOf, LinesQuery, ReadLinesSchema } from "../../shared/lines";
import { actingAs } from "../../auth/actor";
import { viewOf } from "../../changes/lifecycle";
import { proposeEditContent } from "../../changes/node-content";
import { ChangeRequestSchema } from "../../changes/views";
import { proposer } from "./content";

const FILE_BODY: OpenAPIV3.RequestBodyObject = {
  required: true,
  content: {
    "application/octet-stream": { schema: { type: "string", format: "binary" } },
    "multipart/form-data": { schema: { type: "object", properties: { file: { type: "string", format: "binary" } }, required: ["file"] } },
  },
};

/** The file of a one-request upload: the body itself (its Content-Type the file's), or a multipart `file` part. */
async function uploadedFile(request: Request, fileName: string | undefined) {
  const contentType = request.headers.get("content-type") ?? "application/octet-stream";
  if (contentType.toLowerCase().startsWith("multipart/form-data")) {
    const part = (await request.formData().catch(() => null))?.get("file");
    if (!(part instanceof File)) throw badRequest("A multipart upload sends the file in a part named file.");
    return { fileName: fileName ?? part.name, declaredType: part.type || "application/octet-stream", body: part };
  }
  if (!request.body) throw badRequest("Send the file as the request's body.");
  return { fileName, declaredType: contentType, body: request };
}

/** One `bytes=` range of a file of `size` bytes, as [first, last]; null when none was asked; 416 when it cannot be served. */
function rangeOf(header: string | null, size: number): [number, number] | null {
  if (header === null) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  const unsatisfiable = () => new ApiError(416, "RANGE_NOT_SATISFIABLE", `The range ${header} is not one range within the file's ${size} bytes.`, undefined, { "content-range": `bytes */${size}` });
  if (!match || (match[1] === "" && match[2] === "")) throw unsatisfiable();
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) throw unsatisfiable();
    return [Math.max(0, size - suffix), size - 1];
  }
  const first = Number(match[1]);
  const last = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (first >= size || last < first) throw unsatisfiable();
  return [first, last];
}

/** `attachment; filename="…"` with an ASCII fallback and the UTF-8 name (RFC 6266). */
const disposition = (kind: "inline" | "attachment", fileName: string) =>
  `${kind}; filename="${fileName.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;

/** An asset as `GET /assets/{id}` answers it: as before, with Busabase's `{asset, usages}` in the same object. */
const AssetDetailSchema = t.Composite([AssetSchema, t.Object({ asset: AssetSchema, usages: t.Array(AssetUsageSchema) })], { $id: "AssetDetail" });

/** The node of a base of the space, for naming where an asset is used. */
const nodeOfBase = (ctx: AppContext, spaceId: string) => (baseId: string) => findBaseOrNull(ctx, spaceId, baseId)?.node;

/** Files of a space: upload (one request, or Busabase's upload URL then confirmation), read and download. */
export function assetRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .post(
      "/assets",
      async ({ space, actor, request, set }) => {
        const file = await uploadedFile(request, oneString("fileName", nestedQuery(request.url).fileName));
        set.status = 201;
        return uploadAsset(ctx, space.space.id, actor.user.id, file, recordUpload(space.space.id));
      },
      {
        answers: { 201: AssetSchema },
        level: "changeRequest",
        detail: { parameters: [queryParameter("fileName", "The file's name (a multipart part's own name otherwise); only its last path segment is kept.")], requestBody: FILE_BODY },
      },
    )
    .post(
      "/assets/upload-urls",
      async ({ space, actor, body, set }) => {
        set.status = 201;
        return createUploadUrl(ctx, space.space.id, actor.user.id, body);
      },
      {
        answers: {
          201: t.Object({
            assetId: t.String(),
            uploadUrl: t.String({ description: "PUT the bytes here: with the same credentials (Basalt's form, a path), or as it is (Busabase's form, an absolute link that carries its own authority; empty for a duplicate)." }),
            method: t.Literal("PUT"),
            headers: t.Record(t.String(), t.String()),
            maxSize: t.Integer({ description: "The most bytes the upload may have." }),
            duplicate: t.Optional(t.Boolean({ description: "Busabase's form: the space has these bytes already (by contentHash); nothing to upload or confirm." })),
            attachmentId: t.Optional(t.String()),
            storageKey: t.Optional(t.String({ description: "Busabase's form: what the confirmation names." })),
            publicUrl: t.Optional(t.String({ description: "Busabase's form: where the bytes are read." })),
            expiresIn: t.Optional(t.Integer({ minimum: 0, description: "Busabase's form: seconds the upload link works." })),
          }),
        },
        level: "changeRequest",
        body: t.Object({
          fileName: t.String({ minLength: 1, maxLength: 1000 }),
          mimeType: t.Optional(t.String({ maxLength: 255 })),
          size: t.Optional(t.Integer({ minimum: 0 })),
          sizeBytes: t.Optional(t.Integer({ minimum: 1, description: "Busabase's form: the answer is Busabase's too." })),
          context: t.Optional(t.String({ maxLength: 100, pattern: "^[a-zA-Z0-9_/-]+$" })),
          contentHash: t.Optional(t.String({ maxLength: 200 })),
        }),
      },
    )
    .put("/assets/uploads/:link", ({ params, request, body }) => {
      const row = assetOfUploadLink(ctx, params.link);
      if (!request.body) throw badRequest("Send the file as the request's body.");
      countUpload(ctx, request, row.createdBy, body);
      return putAssetBytes(ctx, row.spaceId, row.createdBy, row.id, request);
    }, { answers: { 200: AssetSchema, 409: ["ASSET_READY"] }, public: true, detail: { requestBody: FILE_BODY, description: "Busabase's upload: the link an upload-urls answer gave carries its own authority (one asset, for an hour)." } })
    .put("/assets/:assetId/upload", async ({ space, actor, params, request }) => {
      if (!request.body) throw badRequest("Send the file as the request's body.");
      return putAssetBytes(ctx, space.space.id, actor.user.id, params.assetId, request);
    }, { answers: { 200: AssetSchema, 409: ["ASSET_READY"] }, level: "changeRequest", detail: { requestBody: FILE_BODY } })
    .post("/assets/confirmations", async ({ space, actor, body }) => confirmation(ctx, await confirmAsset(ctx, space.space.id, actor.user.id, confirmedAssetId(body), recordUpload(space.space.id))), {
      answers: {
        200: t.Composite([AssetSchema, t.Object({ success: t.Literal(true), assetId: t.String(), storageKey: t.String(), publicUrl: t.String() })], { description: "The asset, and Busabase's confirmation." }),
        409: ["ASSET_EMPTY"],
      },
      level: "changeRequest",
      body: t.Object({
        assetId: t.Optional(t.String({ minLength: 1 })),
        storageKey: t.Optional(t.String({ minLength: 1, description: "Busabase's form: the storageKey the upload link came with." })),
        fileName: t.Optional(t.String()),
        mimeType: t.Optional(t.String()),
        sizeBytes: t.Optional(t.Integer({ minimum: 1 })),
        context: t.Optional(t.String()),
        metadata: t.Optional(t.Record(t.String(), t.Unknown())),
        contentHash: t.Optional(t.String()),
      }),
    })
    .post("/assets/text/upload-urls", ({ space, actor, body }) => createTextUploadUrl(ctx, space.space.id, actor.user.id, body), {
      answers: { 200: t.Object({ uploadUrl: t.String({ description: "Where to PUT the text, without a credential, for an hour." }), storageKey: t.String({ description: "What PUT /assets/{id}/text names the text by, once uploaded." }), expiresIn: t.Integer() }) },
      level: "write",
      body: t.Object({ assetId: t.String({ minLength: 1 }), sizeBytes: t.Integer({ minimum: 1 }), contentHash: t.Optional(t.String({ maxLength: 80 })) }),
    })
    .put("/assets/:assetId/text", ({ space, actor, params, body }) => putAssetText(ctx, space.space.id, actingAs(actor), params.assetId, body), {
      answers: { 200: TextWrittenSchema },
      level: "write",
      body: t.Object({
        text: t.Optional(t.String({ description: `The text, at most ${MAX_INLINE_TEXT_BYTES} bytes.` })),
        storageKey: t.Optional(t.String({ description: "A text uploaded first (POST /assets/text/upload-urls)." })),
        contentHash: t.Optional(t.String({ maxLength: 80, description: "sha256:<hex> the uploaded text must have." })),
        none: t.Optional(t.Boolean({ description: "true: the asset has no text." })),
      }),
    })
    .get(
      "/assets/:assetId/text/lines",
      ({ space, params, query }) => readAssetLines(ctx, space.space.id, params.assetId, ...lineRangeOf(query)),
      { answers: { 200: ReadLinesSchema }, level: "read", query: LinesQuery },
    )
    .post(
      "/assets/:assetId/edit-content",
      async ({ space, actor, request, params, body, set }) => {
        set.status = 201;
        const { edits, message, autoMerge } = body;
        return viewOf(ctx, space.sight, (await proposeEditContent(ctx, proposer(space, actor, request), params.assetId, edits, { message, autoMerge })).changeRequest);
      },
      {
        answers: { 201: ChangeRequestSchema },
        level: "write",
        body: t.Object({
          edits: t.Array(t.Object({ oldString: t.String({ minLength: 1 }), newString: t.String(), replaceAll: t.Optional(t.Boolean()) }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
          message: t.Optional(t.String({ maxLength: 10_000 })),
          autoMerge: t.Optional(t.Boolean({ description: "Only false: an edit always waits for review." })),
        }),
      },
    )
    .get("/assets", ({ space }) => listAssets(ctx, space.space.id, space.sight), { answers: { 200: t.Array(AssetSchema) }, level: "read" })
    .get("/assets/:assetId", ({ space, params }) => assetDetail(ctx, space.space.id, params.assetId, nodeOfBase(ctx, space.space.id)), { answers: { 200: AssetDetailSchema }, level: "read" })
    .patch(
      "/assets/:assetId/metadata",
      async ({ space, params, body }) => {
        await updateAssetMetadata(ctx, space.space.id, params.assetId, body.metadata, body.mode ?? "merge");
        return assetDetail(ctx, space.space.id, params.assetId, nodeOfBase(ctx, space.space.id));
      },
      {
        answers: { 200: AssetDetailSchema },
        level: "write",
        body: t.Object({ metadata: t.Record(t.String(), t.Unknown()), mode: t.Optional(t.Union([t.Literal("merge"), t.Literal("replace")], { description: "merge (default): shallow, into what it has; replace: instead of it." })) }),
      },
    )
    .delete("/assets/:assetId", ({ space, params }) => deleteAsset(ctx, space.space.id, params.assetId), { answers: { 200: t.Object({ deleted: t.Literal(true) }), 409: ["ASSET_IN_USE"] }, level: "write" })
    .get(
      "/assets/:assetId/content",
      ({ space, params, request }) => {
        const asset = findAsset(ctx, space.space.id, params.assetId);
        return asksForDescriptor(request) ? Response.json(downloadDescriptor(ctx, asset)) : assetBytes(ctx, asset, request);
      },
      {
        answers: {
          200: mediaAnswer(
            { "*/*": t.String(), "application/json": DownloadDescriptorSchema },
            "The file's bytes, as its type; images inline, anything else as a download. Range and If-None-Match are honoured. Asked with Accept: application/json, or by a Busabase client (it names its space with x-busabase-space and asks for no other type): Busabase's download descriptor, whose downloadUrl reads the bytes for an hour without a credential.",
          ),
          206: mediaAnswer({ "*/*": t.String() }, "The range asked for."),
          416: [],
        },
        level: "read",
      },
    )
    .get("/assets/downloads/:link", ({ params, request }) => assetBytes(ctx, assetOfDownloadLink(ctx, params.link), request), {
      answers: { 200: mediaAnswer({ "*/*": t.String() }, "The file's bytes, as the content route serves them."), 206: mediaAnswer({ "*/*": t.String() }, "The range asked for."), 416: [] },
      public: true,
      detail: { description: "Busabase's download: the link a download descriptor gave carries its own authority (one asset, for an hour)." },
    });
}

/**
 * Whether a read of an asset's content wants Busabase's JSON descriptor rather than the bytes: it
 * asks for JSON, or it is Busabase's client (its space header) and asks for no particular type.
 */
function asksForDescriptor(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  if (/\bapplication\/json\b/.test(accept)) return true;
  return request.headers.has("x-busabase-space") && (accept === "" || accept === "*/*");
}

const PDF = "application/pdf";

/** An asset's bytes as a response: its type, inline only for images and PDFs, sandboxed (but PDFs), with ETag and ranges. */
function assetBytes(ctx: AppContext, asset: AssetRow, request: Request): Response {
  if (!asset.contentHash) throw new ApiError(404, "NOT_FOUND", `Asset ${asset.id} has no bytes yet.`);
  const etag = `"${asset.contentHash}"`;
  const headers: Record<string, string> = {
    "content-type": asset.mimeType,
    "content-disposition": disposition(INLINE_IMAGES.has(asset.mimeType) || asset.mimeType === PDF ? "inline" : "attachment", asset.fileName),
    "x-content-type-options": "nosniff",
    // A PDF opens in the browser's viewer, which a sandboxed document refuses; it runs no script of this site's.
    "content-security-policy": asset.mimeType === PDF ? "default-src 'none'; frame-ancestors 'none'" : "default-src 'none'; sandbox",
    "cache-control": "private, no-cache",
    "accept-ranges": "bytes",
    etag,
  };
  if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
  const file = Bun.file(contentPath(ctx.config.dataDir, asset.contentHash));
  const range = rangeOf(request.headers.get("range"), asset.size);
  if (!range) return new Response(file, { headers });
  return new Response(file.slice(range[0], range[1] + 1), { status: 206, headers: { ...headers, "content-range": `bytes ${range[0]}-${range[1]}/${asset.size}` } });
}
