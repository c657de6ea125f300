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

/**
 * Matching active records of active bases, most relevant first (bm25), or newest first: the index
 * finds the matches, the joins drop what the caller may not see.
 */
const hitsQuery = (ctx: AppContext, order: "ranked" | "newest") =>
  ctx.db
    .select({ id: qualified(records.id), baseId: qualified(records.baseId), data: qualified(records.data), updatedAt: qualified(records.updatedAt) })
    // CROSS JOIN keeps the index the outer loop: with statistics, the planner took the few bases
    // first and ran the whole match once for each of them, sorting all of it (40 ms, not 4).
    .from(sql`${recordSearch} CROSS JOIN ${records} ON ${records}."rowid" = ${recordSearch.rowid} CROSS JOIN ${bases} ON ${bases.id} = ${records.baseId} CROSS JOIN ${nodes} ON ${nodes.id} = ${bases.nodeId}`)
    .where(and(sql`${recordSearch} MATCH ${sql.placeholder("match")}`, eq(records.spaceId, sql.placeholder("spaceId")), eq(records.status, "active"), eq(nodes.status, "active"), notAmong(bases.id, sql.placeholder("hiddenBases"))))
    .orderBy(...(order === "ranked" ? [sql`bm25(${recordSearch})`, qualified(records.id)] : [sql`${recordSearch.rowid} DESC`]))
    .limit(sql.placeholder("limit"))
    .offset(sql.placeholder("offset"));

const recordHits = (ctx: AppContext, order: "ranked" | "newest") => compiledRows(ctx.store, `search records ${order}`, () => hitsQuery(ctx, order));

/** SQLite's plan for a search of the space's records, by relevance or newest first (for tests and operators). */
export const explainSearch = (ctx: AppContext, spaceId: string, query: string, order: "ranked" | "newest"): string[] =>
  queryPlan(ctx.store, hitsQuery(ctx, order), { match: matchOf(spaceId, searchTerms(query)), spaceId, limit: 21, offset: 0, hiddenBases: "[]" });

/** Whether the index holds more than `RANKED_MATCHES` matches of the query (counting stops there). */
const manyMatches = (ctx: AppContext, match: string) => {
  const counted = compiledRows(ctx.store, "search matches", () =>
    ctx.db.select({ n: sql`count(*)` }).from(sql`(SELECT ${recordSearch.rowid} FROM ${recordSearch} WHERE ${recordSearch} MATCH ${sql.placeholder("match")} LIMIT ${sql.placeholder("limit")})`),
  )({ match, limit: RANKED_MATCHES + 1 });
  return Number(counted[0]?.[0] ?? 0) > RANKED_MATCHES;
};

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
  const match = matchOf(spaceId, terms);
  const rows = recordHits(ctx, manyMatches(ctx, match) ? "newest" : "ranked")({ match, spaceId, limit, offset, hiddenBases: JSON.stringify([...sight.hiddenBases]) });
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
