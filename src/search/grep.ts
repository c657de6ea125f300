import type { Static } from "@sinclair/typebox";
import { and, asc, count, desc, eq, gt, inArray } from "drizzle-orm";
import { t } from "elysia";
import { textOfAsset } from "../assets/texts";
import { assetSight } from "../assets/assets";
import { assetMountsInSpace } from "../assets/store";
import { findBase, type LoadedBase, listBases } from "../content/bases";
import { FIELD_KINDS } from "../content/fields/registry";
import type { AppContext } from "../context";
import { badRequest, notInSpace } from "../shared/errors";
import { seenSlugs, type Sight } from "../spaces/sight";
import { Turns } from "../shared/turns";
import type { GrepBatch, GrepHit } from "./grep-worker";
import { assets } from "../tables/assets";
import { nodeDocuments, nodes, records } from "../tables/content";

/**
 * Busabase's grep (`POST /grep`): one regular expression over the space's files (each asset's text:
 * its text slot, else a text file's own bytes; a skill's, drive's or airapp's files are assets
 * mounted in it), its docs' markdown and its record values. Each source is read an item at a time
 * and grep stops at `maxMatches` or at its deadline, saying how far it got: its work is bounded by
 * both, whatever the space holds.
 */

export const GREP_SOURCES = ["files", "docs", "records"] as const;
export const GREP_BOUNDS = { pattern: 500, maxMatches: 1000, contextLines: 10, deadlineMs: 2000, page: 500, lineChars: 10_000 } as const;

const Where = {
  line: t.Integer({ minimum: 1 }),
  column: t.Integer({ minimum: 1 }),
  text: t.String(),
  before: t.Array(t.String()),
  after: t.Array(t.String()),
};
const Coverage = { scanned: t.Integer({ minimum: 0 }), errored: t.Array(t.String()), notReached: t.Integer({ minimum: 0 }) };
export const GrepAnswerSchema = t.Object(
  {
    matches: t.Array(
      t.Union([
        t.Object({ source: t.Literal("files"), assetId: t.String(), fileName: t.String(), drivePath: t.String({ description: "Where a skill, drive or airapp mounts the file; empty for a file mounted nowhere." }), ...Where }),
        t.Object({ source: t.Literal("docs"), nodeId: t.String(), slug: t.String(), name: t.String(), ...Where }),
        t.Object({ source: t.Literal("records"), baseId: t.String(), baseSlug: t.String(), recordId: t.String(), fieldSlug: t.String(), ...Where }),
      ]),
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
/** Where a match was found: what a match says besides its line, column and context. */
type Found = DistributiveOmit<Match, keyof typeof Where>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface GrepQuery {
  pattern: string;
  flags?: string;
  sources?: (typeof GREP_SOURCES)[number][];
  scope?: {
    files?: { assetIds?: string[]; drivePath?: string; mimeTypes?: string[] };
    docs?: { nodeIds?: string[] };
    records?: { baseIds?: string[]; baseSlugs?: string[] };
  };
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
  // As the access check reads a base named in a request: a slug a hidden base shares names the one
  // the caller sees, and a hidden one is not found, in the words of one that does not exist.
  const seen = (ref: string) => {
    const named = { base: ref };
    seenSlugs(ctx, spaceId, sight, named);
    const loaded = findBase(ctx, spaceId, named.base);
    if (sight.hiddenBases.has(loaded.base.id)) throw notInSpace("base", ref);
    return loaded;
  };
  if (refs.length > 0) return refs.map(seen);
  return listBases(ctx, spaceId, sight).map((base) => findBase(ctx, spaceId, base.id));
}

/** Where the matching runs: an entry point of the executable of its own, found by its path from `src/`; from source, beside this file. */
const WORKER = Bun.main.startsWith("/$bunfs/") ? "./search/grep-worker.ts" : new URL("./grep-worker.ts", import.meta.url).href;
/** Texts sent to the worker at once, in characters: one round trip a batch, and what a batch stopped at the deadline leaves unread. */
const BATCH_CHARS = 1024 * 1024;
/** Greps matching at once in the process, each on a thread of its own for at most its deadline; a few more wait, past them 429. */
const matching = new Turns(2, 8);

/**
 * One grep's progress: its expression, the matches so far and whether they reached `maxMatches`
 * or time ran out. The texts are matched in batches on a worker thread (`grep-worker.ts`), which
 * is terminated at the deadline: an expression that backtracks holds that thread only, and only
 * until then, whatever the pattern (the shapes refused up front are the obvious ones only).
 */
class Scan {
  readonly matches: Match[] = [];
  truncated = false;
  private timedOut = false;
  /** Items of each source that were read but not matched, their batch stopped at the deadline. */
  readonly unmatched: Record<Found["source"], number> = { files: 0, docs: 0, records: 0 };
  private readonly deadline = performance.now() + GREP_BOUNDS.deadlineMs;
  private pending: { text: string; where: Found }[] = [];
  private pendingChars = 0;
  private worker: Worker | null = null;
  constructor(
    private readonly expression: RegExp,
    private readonly maxMatches: number,
    private readonly context: number,
  ) {}

  /** Whether to stop before the next item: `maxMatches` was reached or the deadline passed. */
  get over(): boolean {
    return this.truncated || this.timedOut || performance.now() > this.deadline;
  }

  /** Matches the expression against each line of `text`, noting each match as found at `where` (a batch at a time). */
  async lines(text: string, where: Found): Promise<void> {
    if (text === "") return;
    this.pending.push({ text, where });
    this.pendingChars += text.length;
    if (this.pendingChars >= BATCH_CHARS) await this.flush();
  }

  /** Matches the texts waiting, on the worker, within what is left of the deadline. */
  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    if (batch.length === 0) return;
    const hits = this.truncated || this.timedOut ? null : await this.onWorker({ pattern: this.expression.source, flags: this.expression.flags, texts: batch.map((item) => item.text), most: this.maxMatches - this.matches.length, lineChars: GREP_BOUNDS.lineChars });
    if (hits === null) {
      for (const { where } of batch) this.unmatched[where.source]++;
      return;
    }
    const split = new Map<number, string[]>();
    for (const hit of hits) {
      const { text, where } = batch[hit.item];
      const lines = split.get(hit.item) ?? text.split(/\r?\n/);
      split.set(hit.item, lines);
      this.matches.push({ ...where, line: hit.line + 1, column: hit.column + 1, text: lines[hit.line], before: lines.slice(Math.max(0, hit.line - this.context), hit.line), after: lines.slice(hit.line + 1, hit.line + 1 + this.context) } as Match);
    }
    this.truncated = this.matches.length >= this.maxMatches;
  }

  /** The hits of a batch, or null when the deadline came first (the worker is then terminated). */
  private onWorker(batch: GrepBatch): Promise<GrepHit[] | null> {
    const left = this.deadline - performance.now();
    if (left <= 0) {
      this.timedOut = true;
      return Promise.resolve(null);
    }
    const worker = (this.worker ??= new Worker(WORKER));
    return new Promise<GrepHit[] | null>((resolve) => {
      const stop = () => {
        this.timedOut = true;
        this.close();
        resolve(null);
      };
      const timer = setTimeout(stop, left);
      worker.onmessage = ({ data }: MessageEvent<GrepHit[]>) => {
        clearTimeout(timer);
        resolve(data);
      };
      worker.onerror = () => {
        clearTimeout(timer);
        stop();
      };
      worker.postMessage(batch);
    });
  }

  close(): void {
    this.worker?.terminate();
    this.worker = null;
  }
}

/**
 * The files grep reads, newest first: the space's uploaded assets the caller sees (`assetSight`),
 * narrowed by `scope`, each with its name and where a skill, drive or airapp mounts it (its first
 * mount by path the caller sees; none for an attachment or an asset mounted nowhere).
 */
function filesOf(ctx: AppContext, spaceId: string, sight: Sight, scope: NonNullable<GrepQuery["scope"]>["files"]) {
  const { shown } = assetSight(ctx, spaceId, sight);
  const mounts = new Map<string, { fileName: string; drivePath: string }>();
  for (const mount of assetMountsInSpace(ctx, spaceId).sort((a, b) => a.path.localeCompare(b.path))) {
    if (!sight.hiddenNodes.has(mount.nodeId) && !mounts.has(mount.assetId)) mounts.set(mount.assetId, { fileName: mount.path.split("/").pop() || mount.nodeName, drivePath: mount.path });
  }
  const conditions = [eq(assets.spaceId, spaceId), eq(assets.status, "ready")];
  if (scope?.assetIds) conditions.push(inArray(assets.id, scope.assetIds));
  if (scope?.mimeTypes) conditions.push(inArray(assets.mimeType, scope.mimeTypes));
  const drivePath = scope?.drivePath;
  return ctx.db
    .select()
    .from(assets)
    .where(and(...conditions))
    .orderBy(desc(assets.id))
    .all()
    .filter((row) => shown(row.id) && (drivePath === undefined || (mounts.get(row.id)?.drivePath.startsWith(drivePath) ?? false)))
    .map((row) => ({ row, mount: mounts.get(row.id) ?? { fileName: row.fileName, drivePath: "" } }));
}

async function grepFiles(ctx: AppContext, spaceId: string, sight: Sight, query: GrepQuery, scan: Scan): Promise<GrepAnswer["coverage"]["files"]> {
  const coverage = { scanned: 0, missing: [] as string[], stale: [] as string[], unsearchable: 0, errored: [] as string[], notReached: 0 };
  for (const { row, mount } of filesOf(ctx, spaceId, sight, query.scope?.files)) {
    if (scan.over) {
      coverage.notReached++;
      continue;
    }
    try {
      const { status, text } = await textOfAsset(ctx, row);
      if (status === "none") coverage.unsearchable++;
      else if (text === null) coverage.missing.push(row.id);
      else {
        coverage.scanned++;
        await scan.lines(text, { source: "files", assetId: row.id, fileName: mount.fileName, drivePath: mount.drivePath });
      }
    } catch {
      coverage.errored.push(row.id);
    }
  }
  return coverage;
}

async function grepDocs(ctx: AppContext, spaceId: string, sight: Sight, query: GrepQuery, scan: Scan): Promise<GrepAnswer["coverage"]["docs"]> {
  const coverage = { scanned: 0, errored: [] as string[], notReached: 0 };
  const conditions = [eq(nodes.spaceId, spaceId), eq(nodes.type, "doc"), eq(nodes.status, "active")];
  const nodeIds = query.scope?.docs?.nodeIds;
  if (nodeIds) conditions.push(inArray(nodes.id, nodeIds));
  const docs = ctx.db
    .select({ id: nodes.id, slug: nodes.slug, name: nodes.name, body: nodeDocuments.body })
    .from(nodes)
    .leftJoin(nodeDocuments, eq(nodeDocuments.nodeId, nodes.id))
    .where(and(...conditions))
    .orderBy(asc(nodes.id))
    .all()
    .filter((doc) => !sight.hiddenNodes.has(doc.id));
  for (const doc of docs) {
    if (scan.over) {
      coverage.notReached++;
      continue;
    }
    coverage.scanned++;
    await scan.lines(doc.body ?? "", { source: "docs", nodeId: doc.id, slug: doc.slug, name: doc.name });
  }
  return coverage;
}

async function grepRecords(ctx: AppContext, spaceId: string, sight: Sight, query: GrepQuery, scan: Scan): Promise<GrepAnswer["coverage"]["records"]> {
  const coverage = { scanned: 0, errored: [] as string[], notReached: 0 };
  for (const loaded of basesOf(ctx, spaceId, sight, query.scope)) {
    const fields = loaded.fields.filter((field) => !FIELD_KINDS[field.type].unlinked && !FIELD_KINDS[field.type].column);
    let after = "";
    for (;;) {
      if (scan.over) {
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
          await scan.lines(text, { source: "records", baseId: loaded.base.id, baseSlug: loaded.node.slug, recordId: row.id, fieldSlug: field.slug });
        }
      }
    }
  }
  return coverage;
}

export async function grep(ctx: AppContext, spaceId: string, sight: Sight, query: GrepQuery): Promise<GrepAnswer> {
  const expression = expressionOf(query.pattern, query.flags);
  return matching.run(async () => {
    const scan = new Scan(expression, query.maxMatches ?? 100, query.contextLines ?? 0);
    try {
      const sources = new Set(query.sources ?? GREP_SOURCES);
      const none = { scanned: 0, errored: [], notReached: 0 };
      const files = sources.has("files") ? await grepFiles(ctx, spaceId, sight, query, scan) : { ...none, missing: [], stale: [], unsearchable: 0 };
      const docs = sources.has("docs") ? await grepDocs(ctx, spaceId, sight, query, scan) : none;
      const recordsCoverage = sources.has("records") ? await grepRecords(ctx, spaceId, sight, query, scan) : none;
      await scan.flush();
      const coverage = { files, docs, records: recordsCoverage };
      // What was read but not matched before the deadline was not reached, as what was never read.
      for (const source of GREP_SOURCES) {
        coverage[source].scanned -= scan.unmatched[source];
        coverage[source].notReached += scan.unmatched[source];
      }
      return { matches: scan.matches, coverage, truncated: scan.truncated };
    } finally {
      scan.close();
    }
  });
}
