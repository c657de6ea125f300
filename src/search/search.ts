import type { Static } from "@sinclair/typebox";
import { and, eq, sql } from "drizzle-orm";
import { t } from "elysia";
import { findBaseOrNull } from "../content/bases";
import { FIELD_KINDS } from "../content/fields/registry";
import { primaryField } from "../shared/field-types";
import { searchNodes } from "../content/nodes";
import { notAmong, type Sight } from "../spaces/sight";
import { bases, NODE_TYPES, nodes, records } from "../tables/content";
import { recordSearch } from "../tables/derived/tables";
import type { AppContext } from "../context";
import { compiledRows, qualified, queryPlan } from "../db/client";
import { spaceTag } from "../db/search-index";
import { badRequest } from "../shared/errors";
import { oneOf, Timestamp } from "../shared/schemas";

export const SEARCH_SOURCES = ["records", "names", "files"] as const;
export type SearchSource = (typeof SEARCH_SOURCES)[number];

/** What one search may ask: its terms are matched as prefixes, each a seek in the index. */
export const SEARCH_BOUNDS = { limit: 100, offset: 1000, terms: 16, termLength: 64, names: 1000 } as const;

/** The kinds of Busabase's search results (its `change_request` is never answered: proposals are found in the Inbox). */
const SEARCH_KINDS = ["record", "change_request", "base", "file"] as const;

export const SearchResultSchema = t.Object({
  id: t.String(),
  kind: oneOf(SEARCH_KINDS, { description: "record; base for a base whose name matched; file for any other node of the tree whose name matched (Busabase's kinds)." }),
  nodeType: t.Optional(oneOf(NODE_TYPES, { description: "For a node whose name matched: its type (folder, doc, skill, …)." })),
  title: t.String({ description: "A record's primary value (its id when it has none), or the node's name." }),
  body: t.String({ description: "For a record, the text around the first match; for a node, its path." }),
  eyebrow: t.String({ description: "Where it lives: the record's base, or the node's type (Base, Folder, Doc, …)." }),
  href: t.String({ description: "The API path that reads it." }),
  updatedAt: Timestamp,
});

export const SearchAnswerSchema = t.Object(
  { query: t.String(), limit: t.Integer(), offset: t.Integer(), hasMore: t.Boolean(), results: t.Array(SearchResultSchema) },
  { $id: "SearchAnswer", description: "Names of folders and bases first, then records by relevance." },
);
export type SearchAnswer = Static<typeof SearchAnswerSchema>;
type SearchResult = Static<typeof SearchResultSchema>;

/** The query's words: runs of letters and digits of any script, lower-cased, at most `SEARCH_BOUNDS.terms`. */
export function searchTerms(query: string): string[] {
  const words = query.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) throw badRequest("query needs at least one letter or digit.");
  if (words.length > SEARCH_BOUNDS.terms) throw badRequest(`query takes at most ${SEARCH_BOUNDS.terms} words; this one has ${words.length}.`);
  return words.map((word) => word.slice(0, SEARCH_BOUNDS.termLength));
}

/**
 * The FTS5 query: each word a prefix of a word of the space's text (its words carry the space's
 * tag, `spaceTag`), so it reads the space's own terms only. Words are quoted, so nothing in them is
 * syntax. The join to `records` keeps the caller's space whatever the index holds.
 */
const matchOf = (spaceId: string, terms: string[]) => terms.map((term) => `"${spaceTag(spaceId)}${term}"*`).join(" AND ");

/**
 * How many matches a search ranks by relevance. bm25 scores every match before the first page can
 * be answered; past this many, a search answers the newest matches first, reading only as many as
 * its page asks (FTS5 walks its matches in rowid order, newest last), so it costs what it returns.
 */
export const RANKED_MATCHES = 2000;

/** What keeps a match to the caller's view: active records of its space, in active bases it may see. */
const seenHit = () => [eq(records.spaceId, sql.placeholder("spaceId")), eq(records.status, "active"), eq(nodes.status, "active"), notAmong(bases.id, sql.placeholder("hiddenBases"))];
/** A record's base and node, joined by their keys after the record. */
const BASE_AND_NODE = sql`CROSS JOIN ${bases} ON ${bases.id} = ${records.baseId} CROSS JOIN ${nodes} ON ${nodes.id} = ${bases.nodeId}`;
const HIT_COLUMNS = { id: qualified(records.id), baseId: qualified(records.baseId), data: qualified(records.data), updatedAt: qualified(records.updatedAt) };

/**
 * Matching active records of active bases, most relevant first (bm25), with how many matches the
 * index holds (each row's last value): the match runs once, scoring every match (bm25 cannot be
 * read beside a window function, so the scored matches are a table of the statement's own, which
 * SQLite keeps since it is read twice), and the count tells whether there were few enough to rank.
 */
const rankedQuery = (ctx: AppContext) => {
  const scored = ctx.db.select({ hit: sql`${recordSearch.rowid}`.as("hit"), score: sql`bm25(${recordSearch})`.as("score") }).from(recordSearch).where(sql`${recordSearch} MATCH ${sql.placeholder("match")}`);
  const page = ctx.db
    .select({ ...HIT_COLUMNS, matched: sql`(SELECT count(*) FROM "scored")` })
    // The matches are the outer loop; CROSS JOIN keeps SQLite from reordering the joins.
    .from(sql`"scored" CROSS JOIN ${records} ON ${records}."rowid" = "scored"."hit" ${BASE_AND_NODE}`)
    .where(and(...seenHit()))
    .orderBy(sql`"scored"."score"`, qualified(records.id))
    .limit(sql.placeholder("limit"))
    .offset(sql.placeholder("offset"));
  // The reading side of the store builds no WITH; its parameters come first, as its text does.
  // MATERIALIZED: read twice (the page, the count), it would otherwise run the match twice.
  return {
    toSQL() {
      const [first, then] = [scored.toSQL(), page.toSQL()];
      return { sql: `WITH "scored" AS MATERIALIZED (${first.sql}) ${then.sql}`, params: [...first.params, ...then.params] };
    },
  };
};

/** Matching active records of active bases, newest first, read in the index's rowid order only as far as the page. */
const newestQuery = (ctx: AppContext) =>
  ctx.db
    .select(HIT_COLUMNS)
    // CROSS JOIN keeps the index the outer loop: with statistics, the planner took the few bases
    // first and ran the whole match once for each of them, sorting all of it (40 ms, not 4).
    .from(sql`${recordSearch} CROSS JOIN ${records} ON ${records}."rowid" = ${recordSearch.rowid} ${BASE_AND_NODE}`)
    .where(and(sql`${recordSearch} MATCH ${sql.placeholder("match")}`, ...seenHit()))
    .orderBy(sql`${recordSearch.rowid} DESC`)
    .limit(sql.placeholder("limit"))
    .offset(sql.placeholder("offset"));

/** The newest matches' rowids, newest first, at most `limit`: the match alone, no record read. */
const newestHitsQuery = (ctx: AppContext) =>
  ctx.db.select({ hit: recordSearch.rowid }).from(recordSearch).where(sql`${recordSearch} MATCH ${sql.placeholder("match")}`).orderBy(sql`${recordSearch.rowid} DESC`).limit(sql.placeholder("limit"));

/** The records of the given rowids (a JSON list) that the caller sees, each with its place in the list. */
const hitRecordsQuery = (ctx: AppContext) =>
  ctx.db
    .select({ ...HIT_COLUMNS, place: sql`"given"."key"` })
    .from(sql`json_each(${sql.placeholder("hits")}) AS "given" CROSS JOIN ${records} ON ${records}."rowid" = "given"."value" ${BASE_AND_NODE}`)
    .where(and(...seenHit()));

const QUERIES = { ranked: rankedQuery, newest: newestQuery, "newest hits": newestHitsQuery, "hit records": hitRecordsQuery } as const;
const compiled = (ctx: AppContext, name: keyof typeof QUERIES) => compiledRows(ctx.store, `search records ${name}`, () => QUERIES[name](ctx));

/** SQLite's plan for a search of the space's records, by relevance or newest first (for tests and operators). */
export const explainSearch = (ctx: AppContext, spaceId: string, query: string, order: "ranked" | "newest"): string[] =>
  queryPlan(ctx.store, (order === "ranked" ? rankedQuery : newestQuery)(ctx), { match: matchOf(spaceId, searchTerms(query)), spaceId, limit: 21, offset: 0, hiddenBases: "[]" });

type HitRow = unknown[];

/**
 * A page of the records matching `match`, the match run once when it can be:
 * - a match last seen with few matches (`ctx.rankedSearches`) is ranked at once, and the ranking's
 *   count confirms it (a match grown past `RANKED_MATCHES` is read newest first instead);
 * - otherwise the newest `RANKED_MATCHES + 1` matches are read from the index alone: past that
 *   many, the page is taken from them (the newest first, whatever their number), else the match is
 *   ranked and remembered as few.
 * The order answered depends only on how many matches the index holds, never on what was remembered.
 */
function matchingRecords(ctx: AppContext, match: string, values: { spaceId: string; hiddenBases: string; limit: number; offset: number }): HitRow[] {
  const known = ctx.rankedSearches;
  if (known.has(match)) {
    const ranked = compiled(ctx, "ranked")({ match, ...values });
    // An empty page cannot tell how many matched; the general way below decides.
    if (ranked.length > 0 && Number(ranked[0].at(-1)) <= RANKED_MATCHES) return ranked;
    known.delete(match);
  }
  const hits = compiled(ctx, "newest hits")({ match, limit: RANKED_MATCHES + 1 }).map((row) => row[0] as number);
  if (hits.length <= RANKED_MATCHES) {
    if (known.size >= RANKED_SEARCHES_KEPT) known.clear();
    known.add(match);
    return compiled(ctx, "ranked")({ match, ...values });
  }
  const wanted = values.offset + values.limit;
  // The page's share of the newest first, all of them if the caller may not see some.
  for (const given of [hits.slice(0, wanted), hits]) {
    const seen = compiled(ctx, "hit records")({ hits: JSON.stringify(given), spaceId: values.spaceId, hiddenBases: values.hiddenBases });
    if (seen.length >= wanted) return seen.sort((a, b) => (a.at(-1) as number) - (b.at(-1) as number)).slice(values.offset, wanted);
  }
  // The caller sees too few of the newest matches to fill the page: read on in the index's order.
  return compiled(ctx, "newest")({ match, ...values });
}

/** How many matches `ctx.rankedSearches` remembers as few before it starts again. */
const RANKED_SEARCHES_KEPT = 10_000;

const SNIPPET = 160;

/** The text around the first place a term starts a word, in the first searched field that has one. */
function snippetOf(values: string[], terms: string[]): string {
  for (const value of values) {
    const lower = value.toLowerCase();
    for (const term of terms) {
      const at = lower.search(new RegExp(`(?<![\\p{L}\\p{N}])${term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "u"));
      if (at < 0) continue;
      const start = Math.max(0, at - SNIPPET / 4);
      return `${start > 0 ? "…" : ""}${value.slice(start, start + SNIPPET)}${start + SNIPPET < value.length ? "…" : ""}`;
    }
  }
  return values[0]?.slice(0, SNIPPET) ?? "";
}

function recordResults(ctx: AppContext, spaceId: string, sight: Sight, terms: string[], limit: number, offset: number): SearchResult[] {
  const rows = matchingRecords(ctx, matchOf(spaceId, terms), { spaceId, limit, offset, hiddenBases: JSON.stringify([...sight.hiddenBases]) });
  return rows.map(([id, baseId, data, updatedAt]) => {
    const loaded = findBaseOrNull(ctx, spaceId, baseId as string);
    const values = JSON.parse(data as string) as Record<string, unknown>;
    const searched = (loaded?.fields ?? []).filter((field) => FIELD_KINDS[field.type].searched).flatMap((field) => (typeof values[field.slug] === "string" ? [values[field.slug] as string] : []));
    const primary = loaded ? primaryField(loaded.fields) : undefined;
    const title = primary && typeof values[primary.slug] === "string" && values[primary.slug] !== "" ? (values[primary.slug] as string) : (id as string);
    return {
      id: id as string,
      kind: "record" as const,
      title,
      body: snippetOf(searched, terms),
      eyebrow: loaded?.node.name ?? "",
      href: `/api/v1/records/${id}`,
      updatedAt: new Date(updatedAt as number).toISOString(),
    };
  });
}

/**
 * `GET /search`: the names of the space's active folders and bases that contain every word, then
 * its active records whose searched fields (the kinds whose `searched` is set) hold every word as the start of a
 * word, most relevant first; `offset` runs through both. Basalt keeps no files yet, so `files`
 * finds nothing.
 */
export function searchSpace(ctx: AppContext, spaceId: string, sight: Sight, input: { query: string; limit: number; offset: number; sources: SearchSource[] }): SearchAnswer {
  const terms = searchTerms(input.query);
  const { limit, offset } = input;
  const names: SearchResult[] = input.sources.includes("names")
    ? searchNodes(ctx, spaceId, sight, terms, SEARCH_BOUNDS.names).map((hit) => ({
        id: hit.id,
        kind: hit.type === "base" ? ("base" as const) : ("file" as const),
        nodeType: hit.type,
        title: hit.name,
        body: hit.path,
        eyebrow: hit.type[0].toUpperCase() + hit.type.slice(1),
        href: `/api/v1/nodes/${hit.id}`,
        updatedAt: hit.updatedAt,
      }))
    : [];
  const fromNames = names.slice(offset, offset + limit + 1);
  const wanted = limit + 1 - fromNames.length;
  const fromRecords = input.sources.includes("records") && wanted > 0 ? recordResults(ctx, spaceId, sight, terms, wanted, Math.max(0, offset - names.length)) : [];
  const results = [...fromNames, ...fromRecords];
  return { query: input.query, limit, offset, hasMore: results.length > limit, results: results.slice(0, limit) };
}
