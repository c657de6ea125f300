import { Elysia, type Static, t } from "elysia";
import type { OpenAPIV3 } from "openapi-types";
import { type Upload, uploadBytes } from "../../assets/storage";
import { MERGE_REFUSALS, proposer, RECORD_QUERY } from "./content";
import { recordListing } from "../../content/records/grammar";
import type { AppContext } from "../../context";
import { access } from "../access";
import { BaseSchema, baseView, findBase } from "../../content/bases";
import { seenBase } from "../../content/records/seen-base";
import { ApiError, badRequest } from "../../shared/errors";
import { answers, mediaAnswer } from "../openapi";
import { nestedQuery, oneString } from "../../shared/query-params";
import { Nullable, queryParameter, WholeNumber } from "../../shared/schemas";
import { EXPORT_FORMATS, EXPORT_HEADERS, EXPORT_MEDIA, type ExportFormat, ExportedRecordSchema, type ExportHeaders, exportParts } from "../../transfer/export";
import { commitImport, type ImportReview, importNewBase, NO_BASE } from "../../transfer/import";
import { checkedUpload, chosenTypes, ImportPreviewSchema, ImportResultSchema, previewImport } from "../../transfer/import-plan";
import { getImportJob, ImportJobSchema, listImportJobs } from "../../transfer/import-jobs";
import { formatOf, IMPORT_FORMATS, type ImportFormat, XLSX_MEDIA } from "../../shared/import-formats";
import { abortDumpImport, assetText, AssetTextSchema, BLOBS, beginDumpImport, commitDumpImport, DUMP_TABLE_LIST, DumpRowsSchema, exportTablePage, MAX_DUMP_ROWS, stageImportRows } from "../../transfer/dump-api";
import { actingAs } from "../../auth/actor";
import { install, InstallPlanSchema, InstallResultSchema, planInstall, type InstallOptions } from "../../transfer/install";
import { readPackage } from "../../transfer/package-format";
import { archiveTooLarge, githubPackage, parseGithubUrl, unpackArchive } from "../../transfer/package-source";
import type { SpaceScope } from "../../spaces/resolve";

const EXPORT_QUERY = [
  queryParameter("format", `${EXPORT_FORMATS.join(", ")}; default csv.`),
  queryParameter("headers", "CSV only: slugs (the default: id, the field slugs, createdAt, updatedAt) or names (the fields' names, Created, Last modified), as a screen shows them."),
  ...RECORD_QUERY.filter((parameter) => !["baseId", "limit", "cursor"].includes(parameter.name)),
];

const IMPORT_QUERY = [
  queryParameter("preview", "true: answer the columns, suggested types, mapping, first rows and errors by line, and write nothing."),
  queryParameter("createFields", "true: make a field (of its suggested type) for each column no field has the slug or name of; needs write."),
  queryParameter("types", "types[<column>]=<field type>: the type a column that makes a field takes instead of the suggested one (values a file can hold: not links, files or computed); its values are checked as that type."),
  queryParameter("format", `${IMPORT_FORMATS.join(", ")}: how to read the file when its Content-Type does not say.`),
  queryParameter("message", "The change request's message."),
  queryParameter("autoMerge", "false: wait for review even with write."),
  queryParameter("idempotencyKey", "Names the import's job, as the Idempotency-Key header does: the same file sent again with the same key merges only the parts not merged before (an import cut short is finished, a finished one is answered again)."),
];

/** An import's body: the file itself, or a multipart upload's `file` part. */
const FILE_BODY: OpenAPIV3.RequestBodyObject = {
  required: true,
  content: {
    "text/csv": { schema: { type: "string" } },
    "application/json": { schema: { type: "array", items: { type: "object" } } },
    "application/x-ndjson": { schema: { type: "string" } },
    [XLSX_MEDIA]: { schema: { type: "string", format: "binary" } },
    "multipart/form-data": { schema: { type: "object", properties: { file: { type: "string", format: "binary" } }, required: ["file"] } },
  },
};

/** `true` or `false`, or undefined when absent. */
function optionalBoolean(name: string, value: unknown): boolean | undefined {
  const text = oneString(name, value);
  if (text === undefined) return undefined;
  if (text === "true" || text === "false") return text === "true";
  throw badRequest(`${name} must be true or false.`);
}

const booleanParam = (name: string, value: unknown) => optionalBoolean(name, value) ?? false;

/** How an import is proposed: its message, autoMerge, and the key that names its job (the `Idempotency-Key` header, or `idempotencyKey`). */
function reviewOf(raw: Record<string, unknown>, request: Request): ImportReview {
  const idempotencyKey = request.headers.get("idempotency-key") ?? oneString("idempotencyKey", raw.idempotencyKey);
  if (idempotencyKey !== undefined && !/^[\x21-\x7e]{1,200}$/.test(idempotencyKey)) throw badRequest("The Idempotency-Key is 1 to 200 visible ASCII characters.");
  return { message: oneString("message", raw.message), autoMerge: optionalBoolean("autoMerge", raw.autoMerge), idempotencyKey };
}

/** The file an import reads: the body itself, or the `file` part of a multipart upload, and how to read it. */
async function uploadedFile(request: Request, named: string | undefined): Promise<{ format: ImportFormat; body: Upload }> {
  if (named !== undefined && !(IMPORT_FORMATS as readonly string[]).includes(named)) throw badRequest(`format must be one of ${IMPORT_FORMATS.join(", ")}.`);
  const contentType = request.headers.get("content-type") ?? "";
  let file: { type: string; name: string; body: Upload | null };
  if (contentType.toLowerCase().startsWith("multipart/form-data")) {
    const part = (await request.formData().catch(() => null))?.get("file");
    if (!(part instanceof File)) throw badRequest("A multipart import sends the file in a part named file.");
    file = { type: part.type, name: part.name, body: part };
  } else file = { type: contentType, name: "", body: request.body ? request : null };
  const format = (named as ImportFormat | undefined) ?? formatOf(file.type, file.name);
  if (!format) throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "Send the file as text/csv, application/json (an array of objects), application/x-ndjson or an Excel workbook (.xlsx), or say which with format=.");
  if (!file.body) throw badRequest("Send the file as the request's body.");
  return { format, body: file.body };
}

/** The parts as a byte stream that reads the next page only when the client has taken the last. */
function streamOf(parts: Iterator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    pull(controller) {
      const part = parts.next();
      if (part.done) controller.close();
      else controller.enqueue(encoder.encode(part.value));
    },
  });
}

const SessionBody = t.Object({ sessionId: t.String() });

const InstallInput = t.Object({
  repoUrl: t.String({ minLength: 1, maxLength: 2000, description: "https://github.com/<owner>/<repo>[/tree/<ref>[/<subdir>]]; GitHub only." }),
  intoFolder: t.Optional(t.String({ description: "The slug of the folder at the top of the space to install into; default: the package's name as a slug." })),
  rename: t.Optional(t.Boolean({ description: "Make taken slugs free by adding -2, -3, …, instead of refusing." })),
  autoMerge: t.Optional(t.Boolean({ description: "Merge the content at once instead of leaving it for review (a package can carry skills and airapps: code agents run)." })),
});

const ARCHIVE_QUERY = [
  queryParameter("intoFolder", "The slug of the folder at the top of the space to install into; default: the package's name as a slug."),
  queryParameter("rename", "true: make taken slugs free by adding -2, -3, …, instead of refusing."),
  queryParameter("autoMerge", "true: merge the content at once instead of leaving it for review."),
];

const ARCHIVE_BODY: OpenAPIV3.RequestBodyObject = {
  required: true,
  description: "The package (busabase-package@1: busabase.json and content/) as a .tar or .tar.gz, its files at the top or in one folder.",
  content: { "application/gzip": { schema: { type: "string", format: "binary" } }, "application/x-tar": { schema: { type: "string", format: "binary" } } },
};

/** A GitHub package, planned as the caller sees the space. */
async function githubPlan(ctx: AppContext, scope: SpaceScope, body: Static<typeof InstallInput>) {
  const source = parseGithubUrl(body.repoUrl);
  return planInstall(ctx, scope.space.id, scope.sight, readPackage(await githubPackage(ctx.config.githubArchiveUrl, source)), source, body);
}

/** An uploaded archive's package, planned as the caller sees the space, with the options of the query. */
async function archivePlan(ctx: AppContext, scope: SpaceScope, request: Request) {
  const raw = nestedQuery(request.url);
  const options: InstallOptions = { intoFolder: oneString("intoFolder", raw.intoFolder), rename: optionalBoolean("rename", raw.rename), autoMerge: optionalBoolean("autoMerge", raw.autoMerge) };
  const files = await unpackArchive(await uploadBytes(request, ctx.config.maxImportBytes, archiveTooLarge(ctx.config.maxImportBytes)));
  return { planned: planInstall(ctx, scope.space.id, scope.sight, readPackage(files), { archive: "upload" }, options), options };
}

/** Data out of a base (export) and into it (import), a whole space out and in (Busabase's dump routes), and packages installed. */
export function transferRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get(
      "/bases/:baseId/export",
      ({ space, params, request }) => {
        const { cursor: _cursor, limit: _limit, ...raw } = nestedQuery(request.url);
        const format = (oneString("format", raw.format) ?? "csv") as ExportFormat;
        if (!EXPORT_FORMATS.includes(format)) throw badRequest(`format must be one of ${EXPORT_FORMATS.join(", ")}.`);
        const headers = (oneString("headers", raw.headers) ?? "slugs") as ExportHeaders;
        if (!EXPORT_HEADERS.includes(headers)) throw badRequest(`headers must be one of ${EXPORT_HEADERS.join(", ")}.`);
        const { headers: _headers, ...listing } = raw;
        const { loaded, query } = recordListing(ctx, space.space.id, space.sight, { ...listing, baseId: params.baseId });
        const parts = exportParts(ctx, loaded, query, format, space.space.id, space.sight, headers);
        return new Response(streamOf(parts), {
          headers: { "content-type": EXPORT_MEDIA[format], "content-disposition": `attachment; filename="${loaded.node.slug}.${format}"` },
        });
      },
      {
        answers: {
          200: mediaAnswer(
            { "text/csv": t.String(), "application/json": t.Array(ExportedRecordSchema), "application/x-ndjson": t.String() },
            "The base's records (through the view or filters), streamed: CSV with a header row of id, the field slugs, createdAt and updatedAt; JSON; or one JSON record a line.",
          ),
          409: ["FIELD_CONVERTING"],
        },
        level: "read",
        detail: { parameters: EXPORT_QUERY },
      },
    )
    .post(
      "/bases/:baseId/imports",
      async ({ space, actor, params, request, set }) => {
        const raw = nestedQuery(request.url);
        const file = await uploadedFile(request, oneString("format", raw.format));
        const loaded = findBase(ctx, space.space.id, params.baseId);
        const createFields = booleanParam("createFields", raw.createFields);
        const types = chosenTypes(raw.types);
        if (booleanParam("preview", raw.preview)) return previewImport(ctx, loaded, file, createFields, types);
        const who = proposer(space, actor, request);
        set.status = 201;
        return checkedUpload(ctx, loaded, file, createFields, (checked, reread) => commitImport(ctx, who, checked, reread, loaded.base.id, reviewOf(raw, request)), types);
      },
      {
        answers: { 200: ImportPreviewSchema, 201: ImportResultSchema, 409: ["NOT_MERGEABLE", "MERGE_CONFLICT", "LIMIT_REACHED", "TARGET_BASE_ARCHIVED", "FIELD_CONVERTING", "BASE_CHANGED", "IMPORT_RUNNING"] },
        level: "changeRequest",
        detail: { parameters: IMPORT_QUERY, requestBody: FILE_BODY },
      },
    )
    .get("/bases/:baseId/imports", ({ space, params }) => listImportJobs(ctx, findBase(ctx, space.space.id, params.baseId).base.id), {
      answers: { 200: t.Array(ImportJobSchema) },
      level: "read",
      detail: { description: "The base's imports, newest first (at most 20), each with how far it went: running, done, or failed with its reason." },
    })
    .get("/imports/:importId", ({ space, params }) => getImportJob(ctx, space.space.id, params.importId), { answers: { 200: ImportJobSchema }, level: "read" })
    .get("/dump/export/asset-texts/:assetId/content", ({ space, params }) => assetText(ctx, space.space.id, params.assetId), { answers: { 200: AssetTextSchema }, level: "manage" })
    .post("/dump/export/tables", ({ space, body }) => exportTablePage(ctx, space.space.id, body.table, body.cursor, body.limit ?? 500), {
      answers: { 200: t.Object({ rows: DumpRowsSchema, nextCursor: Nullable(t.String()) }) },
      level: "manage",
      body: t.Object({
        table: t.Union(DUMP_TABLE_LIST.map((name) => t.Literal(name))),
        cursor: t.Optional(t.String({ description: "The nextCursor of the page before; omit for the first page." })),
        limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_DUMP_ROWS, description: "Rows a page; default 500." })),
      }),
    })
    .post("/dump/import/begin", ({ space, actor }) => beginDumpImport(ctx, space.space.id, actor.user.id), {
      answers: { 200: t.Object({ sessionId: t.String() }), 409: ["SPACE_NOT_EMPTY"] },
      level: "manage",
      noBody: true,
    })
    .post("/dump/import/tables", ({ space, body }) => stageImportRows(ctx, space.space.id, body), {
      answers: { 200: t.Object({ inserted: WholeNumber({ description: "Rows the session took (none for tables Basalt rebuilds itself)." }) }), 404: [], 413: [] },
      level: "manage",
      body: t.Object({
        sessionId: t.String(),
        table: t.String({ description: `One of the export's tables, or ${BLOBS} ({ storageKey: SHA-256 hex, base64 }; rows of one key are its parts, in order).` }),
        rows: t.Array(t.Record(t.String(), t.Unknown()), { maxItems: MAX_DUMP_ROWS }),
      }),
    })
    .post("/dump/import/commit", ({ space, actor, body }) => commitDumpImport(ctx, space.space.id, body.sessionId, actingAs(actor), actor.user), {
      answers: { 200: t.Object({ ok: t.Boolean(), warnings: t.Array(t.String()) }), 404: [], 409: ["SPACE_NOT_EMPTY", "ALREADY_LOADED"] },
      level: "manage",
      body: SessionBody,
    })
    .post("/dump/import/abort", ({ space, body }) => abortDumpImport(ctx, space.space.id, body.sessionId), {
      answers: { 200: t.Object({ ok: t.Boolean() }), 404: [] },
      level: "manage",
      body: SessionBody,
    })
    .post("/install/github/plan", async ({ space, body }) => (await githubPlan(ctx, space, body)).plan, {
      answers: { 200: InstallPlanSchema, 409: ["SLUG_TAKEN"], 503: ["GITHUB_UNREACHABLE"] },
      level: "read",
      body: InstallInput,
      detail: { description: "What installing the package at repoUrl would make, and whether it would go through; writes nothing. The server fetches the repository's tarball." },
    })
    .post("/install/github", async ({ space, actor, body, request }) => install(ctx, proposer(space, actor, request), await githubPlan(ctx, space, body), body), {
      answers: { 200: InstallResultSchema, 409: ["SLUG_TAKEN", "INSTALL_NOT_APPLICABLE", ...MERGE_REFUSALS], 503: ["GITHUB_UNREACHABLE"] },
      level: "manage",
      body: InstallInput,
      detail: { description: "Installs the package at repoUrl: folders, bases, fields and views at once; records, docs, skills, drives, airapps and files as change requests, merged at once only with autoMerge." },
    })
    .post("/install/archive/plan", async ({ space, request }) => (await archivePlan(ctx, space, request)).planned.plan, {
      answers: { 200: InstallPlanSchema, 409: ["SLUG_TAKEN"], 413: [] },
      level: "read",
      detail: { description: "As /install/github/plan, for a package sent as the body.", parameters: ARCHIVE_QUERY, requestBody: ARCHIVE_BODY },
    })
    .post(
      "/install/archive",
      async ({ space, actor, request }) => {
        const { planned, options } = await archivePlan(ctx, space, request);
        return install(ctx, proposer(space, actor, request), planned, options);
      },
      {
        answers: { 200: InstallResultSchema, 409: ["SLUG_TAKEN", "INSTALL_NOT_APPLICABLE", ...MERGE_REFUSALS], 413: [] },
        level: "manage",
          detail: { description: "As /install/github, for a package sent as the body (.tar or .tar.gz).", parameters: ARCHIVE_QUERY, requestBody: ARCHIVE_BODY },
      },
    )
    .post(
      "/imports",
      async ({ space, actor, request, set }) => {
        const raw = nestedQuery(request.url);
        const types = chosenTypes(raw.types);
        if (booleanParam("preview", raw.preview)) return previewImport(ctx, NO_BASE, await uploadedFile(request, oneString("format", raw.format)), true, types);
        const name = oneString("name", raw.name)?.trim();
        if (!name) throw badRequest("The query parameter name (the new base's name) is required.");
        const file = await uploadedFile(request, oneString("format", raw.format));
        const who = proposer(space, actor, request);
        const base = { name, slug: oneString("slug", raw.slug), parentNodeId: oneString("parentNodeId", raw.parentNodeId) };
        const made = await checkedUpload(ctx, NO_BASE, file, true, (checked, reread) => importNewBase(ctx, who, checked, reread, base, reviewOf(raw, request)), types);
        set.status = 201;
        return { base: baseView(seenBase(findBase(ctx, space.space.id, made.baseId), space.sight)), import: made.imported };
      },
      {
        answers: { 200: ImportPreviewSchema, 201: t.Object({ base: BaseSchema, import: ImportResultSchema }), 409: ["NOT_MERGEABLE", "SLUG_TAKEN", "LIMIT_REACHED", "PARENT_ARCHIVED", "BASE_CHANGED"] },
        level: "changeRequest",
        detail: {
          parameters: [
            queryParameter("name", "The new base's name (required unless preview=true)."),
            queryParameter("preview", "true: answers what the base would be (a field for each column, of the type its values fit, and the first rows) and makes nothing."),
            ...IMPORT_QUERY.filter((parameter) => parameter.name === "types"),
            queryParameter("slug", "Its slug; default: from the name."),
            queryParameter("parentNodeId", "The folder it goes in; default: the root."),
            ...IMPORT_QUERY.filter((parameter) => ["format", "message", "autoMerge", "idempotencyKey"].includes(parameter.name)),
          ],
          requestBody: FILE_BODY,
        },
      },
    );
}
