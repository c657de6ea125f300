import { Elysia, t } from "elysia";
import { RECORD_QUERY, recordListing } from "../content/routes";
import type { AppContext } from "../context";
import { access } from "../http/access";
import { badRequest } from "../http/errors";
import { answers, mediaAnswer } from "../http/openapi";
import { nestedQuery, oneString } from "../http/query";
import { queryParameter } from "../http/schemas";
import { EXPORT_FORMATS, EXPORT_MEDIA, type ExportFormat, ExportedRecordSchema, exportParts } from "./export";

const EXPORT_QUERY = [
  queryParameter("format", `${EXPORT_FORMATS.join(", ")}; default csv.`),
  ...RECORD_QUERY.filter((parameter) => !["baseId", "limit", "cursor"].includes(parameter.name)),
];

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

/** Data out of a base (export) and into it (import). */
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
        const { loaded, query } = recordListing(ctx, space.space.id, { ...raw, baseId: params.baseId });
        const parts = exportParts(ctx, loaded, query, format, space.space.id);
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
    );
}
