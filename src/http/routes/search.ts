import { Elysia, t } from "elysia";
import { grep, GREP_BOUNDS, GREP_SOURCES, GrepAnswerSchema } from "../../search/grep";
import type { AppContext } from "../../context";
import { access } from "../access";
import { badRequest } from "../../shared/errors";
import { answers } from "../openapi";
import { limitParam, nestedQuery, oneString, stringList, wholeNumberParam } from "../../shared/query-params";
import { oneOf, queryParameter } from "../../shared/schemas";
import { SEARCH_BOUNDS, SEARCH_SOURCES, SearchAnswerSchema, type SearchSource, searchSpace } from "../../search/search";

const SEARCH_QUERY = [
  queryParameter("query", "Words to find; each matches the start of a word, in any script.", true),
  queryParameter("limit", `1..${SEARCH_BOUNDS.limit}, default 20.`),
  queryParameter("offset", `0..${SEARCH_BOUNDS.offset}, default 0.`),
  queryParameter("sources[i]", `${SEARCH_SOURCES.join(", ")} (a list, or one comma-separated value); default records and names.`),
];

/** `sources`: a list (`sources[0]=records`, repeated) or one comma-separated value. */
function sourcesParam(value: unknown): SearchSource[] {
  const listed = stringList("sources", value).flatMap((item) => item.split(",")).map((item) => item.trim()).filter(Boolean);
  for (const source of listed) if (!(SEARCH_SOURCES as readonly string[]).includes(source)) throw badRequest(`sources must be among ${SEARCH_SOURCES.join(", ")}; "${source}" is not.`);
  return listed.length > 0 ? (listed as SearchSource[]) : ["records", "names"];
}

/** Search across the caller's space. */
export function searchRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .post("/grep", ({ space, body }) => grep(ctx, space.space.id, space.sight, body), {
      answers: { 200: GrepAnswerSchema },
      level: "read",
      body: t.Object({
        pattern: t.String({ minLength: 1, maxLength: GREP_BOUNDS.pattern, description: "A JavaScript regular expression, matched line by line." }),
        flags: t.Optional(t.String({ maxLength: 10, description: "Only i (ignore case) is honoured." })),
        sources: t.Optional(t.Array(oneOf(GREP_SOURCES), { maxItems: 3 })),
        scope: t.Optional(
          t.Object(
            {
              files: t.Optional(
                t.Object({
                  assetIds: t.Optional(t.Array(t.String(), { maxItems: 1000 })),
                  drivePath: t.Optional(t.String({ maxLength: 1000, description: "Only files a skill, drive or airapp mounts under this path." })),
                  mimeTypes: t.Optional(t.Array(t.String(), { maxItems: 100 })),
                }),
              ),
              docs: t.Optional(t.Object({ nodeIds: t.Optional(t.Array(t.String(), { maxItems: 1000 })) })),
              records: t.Optional(t.Object({ baseIds: t.Optional(t.Array(t.String(), { maxItems: 100 })), baseSlugs: t.Optional(t.Array(t.String(), { maxItems: 100 })) })),
            },
            { additionalProperties: true },
          ),
        ),
        maxMatches: t.Optional(t.Integer({ minimum: 1, maximum: GREP_BOUNDS.maxMatches })),
        contextLines: t.Optional(t.Integer({ minimum: 0, maximum: GREP_BOUNDS.contextLines })),
      }),
    })
    .get(
      "/search",
      ({ space, request }) => {
        const raw = nestedQuery(request.url);
        const query = oneString("query", raw.query)?.trim();
        if (!query) throw badRequest("The query parameter query is required.");
        if (query.length > 500) throw badRequest("query takes at most 500 characters.");
        return searchSpace(ctx, space.space.id, space.sight, {
          query,
          limit: limitParam(oneString("limit", raw.limit), 20, SEARCH_BOUNDS.limit),
          offset: wholeNumberParam("offset", oneString("offset", raw.offset), 0, 0, SEARCH_BOUNDS.offset),
          sources: sourcesParam(raw.sources),
        });
      },
      { answers: { 200: SearchAnswerSchema }, level: "read", detail: { parameters: SEARCH_QUERY } },
    );
}
