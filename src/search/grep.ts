import type { Static } from "@sinclair/typebox";
import { and, asc, count, eq, gt } from "drizzle-orm";
import { t } from "elysia";
import { findBase, type LoadedBase, listBases } from "../content/bases";
import { FIELD_KINDS } from "../content/fields/registry";
import type { AppContext } from "../context";
import { badRequest, notFound } from "../shared/errors";
import type { Sight } from "../spaces/sight";
import { records } from "../tables/content";

/**
 * Busabase's grep (`POST /grep`): one regular expression over the space's record values (and its
 * docs and files, which Basalt holds none of to search: docs do not exist here, and files have no
 * text slot). It reads records a page at a time in id order and stops at `maxMatches` or at its
 * deadline, saying how far it got: its work is bounded by both, whatever the space holds.
 */

export const GREP_SOURCES = ["files", "docs", "records"] as const;
export const GREP_BOUNDS = { pattern: 500, maxMatches: 1000, contextLines: 10, deadlineMs: 2000, page: 500, lineChars: 10_000 } as const;

const Coverage = { scanned: t.Integer({ minimum: 0 }), errored: t.Array(t.String()), notReached: t.Integer({ minimum: 0 }) };
export const GrepAnswerSchema = t.Object(
  {
    matches: t.Array(
      t.Object({
        source: t.Literal("records"),
        baseId: t.String(),
        baseSlug: t.String(),
        recordId: t.String(),
        fieldSlug: t.String(),
        line: t.Integer({ minimum: 1 }),
        column: t.Integer({ minimum: 1 }),
        text: t.String(),
        before: t.Array(t.String()),
        after: t.Array(t.String()),
      }),
    ),
    coverage: t.Object({
      files: t.Object({ ...Coverage, missing: t.Array(t.String()), stale: t.Array(t.String()), unsearchable: t.Integer({ minimum: 0 }) }),
      docs: t.Object(Coverage),
      records: t.Object(Coverage),
    }),
    truncated: t.Boolean({ description: "maxMatches was reached." }),
  },
  { $id: "GrepAnswer" },
);
type GrepAnswer = Static<typeof GrepAnswerSchema>;
type Match = GrepAnswer["matches"][number];

export interface GrepQuery {
  pattern: string;
  flags?: string;
  sources?: (typeof GREP_SOURCES)[number][];
  scope?: { records?: { baseIds?: string[]; baseSlugs?: string[] } };
  maxMatches?: number;
  contextLines?: number;
}

/** A quantified group that holds a quantifier or alternatives (`(a+)+`, `(a|aa)*`): the shapes that backtrack without end. */
const NESTED_QUANTIFIER = /\((?:[^()\\]|\\.)*[*+?}|](?:[^()\\]|\\.)*\)[*+{]/;

/** The expression, refused when it cannot be compiled or could backtrack without end. */
function expressionOf(pattern: string, flags = ""): RegExp {
  if (pattern.length < 1 || pattern.length > GREP_BOUNDS.pattern) throw badRequest(`pattern takes 1 to ${GREP_BOUNDS.pattern} characters.`);
  if (NESTED_QUANTIFIER.test(pattern)) throw badRequest("pattern rejected: a repeated group that holds a quantifier or alternatives can cause catastrophic backtracking.");
  try {
    return new RegExp(pattern, flags.includes("i") ? "i" : "");
  } catch (error) {
    throw badRequest(`Invalid pattern: ${(error as Error).message}`);
  }
}

/** The bases grep reads: those `scope` names (by id or slug), else every active base of the space. */
function basesOf(ctx: AppContext, spaceId: string, sight: Sight, scope: GrepQuery["scope"]): LoadedBase[] {
  const refs = [...(scope?.records?.baseIds ?? []), ...(scope?.records?.baseSlugs ?? [])];
  const seen = (loaded: LoadedBase) => {
    if (sight.hiddenBases.has(loaded.base.id)) throw notFound("No such base in this space.");
    return loaded;
  };
  if (refs.length > 0) return refs.map((ref) => seen(findBase(ctx, spaceId, ref)));
  return listBases(ctx, spaceId, sight).map((base) => findBase(ctx, spaceId, base.id));
}

export function grep(ctx: AppContext, spaceId: string, sight: Sight, query: GrepQuery): GrepAnswer {
  const expression = expressionOf(query.pattern, query.flags);
  const maxMatches = query.maxMatches ?? 100;
  const context = query.contextLines ?? 0;
  const sources = new Set(query.sources ?? GREP_SOURCES);
  const deadline = performance.now() + GREP_BOUNDS.deadlineMs;
  const matches: Match[] = [];
  const coverage = { scanned: 0, errored: [] as string[], notReached: 0 };
  let truncated = false;
  if (sources.has("records")) {
    for (const loaded of basesOf(ctx, spaceId, sight, query.scope)) {
      const fields = loaded.fields.filter((field) => !FIELD_KINDS[field.type].unlinked && !FIELD_KINDS[field.type].column);
      let after = "";
      for (;;) {
        if (truncated || performance.now() > deadline) {
          coverage.notReached += ctx.db.select({ n: count() }).from(records).where(and(eq(records.baseId, loaded.base.id), eq(records.status, "active"), gt(records.id, after))).get()!.n;
          break;
        }
        const page = ctx.db
          .select({ id: records.id, data: records.data })
          .from(records)
          .where(and(eq(records.baseId, loaded.base.id), eq(records.status, "active"), gt(records.id, after)))
          .orderBy(asc(records.id))
          .limit(GREP_BOUNDS.page)
          .all();
        if (page.length === 0) break;
        for (const row of page) {
          after = row.id;
          coverage.scanned++;
          for (const field of fields) {
            const value = row.data[field.slug];
            const text = typeof value === "string" ? value : value === null || value === undefined ? "" : JSON.stringify(value);
            if (text === "") continue;
            const lines = text.split(/\r?\n/);
            lines.forEach((line, i) => {
              if (truncated) return;
              // A line is matched on its first characters only: what one match may cost stays bounded whatever the value's length.
              const found = expression.exec(line.length > GREP_BOUNDS.lineChars ? line.slice(0, GREP_BOUNDS.lineChars) : line);
              if (!found) return;
              matches.push({
                source: "records",
                baseId: loaded.base.id,
                baseSlug: loaded.node.slug,
                recordId: row.id,
                fieldSlug: field.slug,
                line: i + 1,
                column: found.index + 1,
                text: line,
                before: lines.slice(Math.max(0, i - context), i),
                after: lines.slice(i + 1, i + 1 + context),
              });
              truncated = matches.length >= maxMatches;
            });
          }
        }
      }
    }
  }
  return {
    matches,
    coverage: { files: { scanned: 0, missing: [], stale: [], unsearchable: 0, errored: [], notReached: 0 }, docs: { scanned: 0, errored: [], notReached: 0 }, records: coverage },
    truncated,
  };
}
