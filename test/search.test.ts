import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { optimizeStatistics } from "../src/db/client";
import { explainSearch } from "../src/search/search";
import { write } from "../src/db/tx";
import { createBase, fillBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
const ids: Record<string, string> = {};

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write, "papers", [
    { slug: "title", name: "Title", type: "text" },
    { slug: "abstract", name: "Abstract", type: "longtext" },
    { slug: "year", name: "Year", type: "number" },
  ]);
  const rows: [string, string, Record<string, unknown>][] = [
    ["attention", "Attention is all you need", { abstract: "The Transformer, based solely on attention mechanisms." }],
    ["bert", "BERT", { abstract: "Pre-training of deep bidirectional transformers for language understanding." }],
    ["tokyo", "東京の研究", { abstract: "Über die Sprache: café résumé." }],
    ["numbers", "Counting", { year: 2017 }],
  ];
  for (const [name, title, extra] of rows) {
    const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title, ...extra } } });
    ids[name] = reply.body.id;
  }
});
afterAll(() => server.stop());

const search = async (query: string, key = ws.read) => server.call("GET", `/api/v1/search?${query}`, { key });
const found = async (query: string, key = ws.read) => (await search(query, key)).body.results.map((hit: { id: string }) => hit.id);

describe("search across a space", () => {
  test("words match the start of words in text fields, ranked by relevance, in Busabase's shape", async () => {
    const reply = await search("query=transform&limit=10");
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ query: "transform", limit: 10, offset: 0, hasMore: false });
    expect(reply.body.results.map((hit: { id: string }) => hit.id).sort()).toEqual([ids.attention, ids.bert].sort());
    const [first] = (await search("query=attention")).body.results;
    expect(first).toEqual({
      id: ids.attention,
      kind: "record",
      title: "Attention is all you need",
      body: "Attention is all you need",
      eyebrow: "papers",
      href: `/api/v1/records/${ids.attention}`,
      updatedAt: expect.any(String),
    });
    expect(await found("query=deep%20language")).toEqual([ids.bert]);
    expect(await found("query=deep%20nothing")).toEqual([]);
    expect(await found("query=2017")).toEqual([]);
  });

  test("any script's letters, with or without accents", async () => {
    expect(await found("query=東京の研究")).toEqual([ids.tokyo]);
    expect(await found("query=uber%20cafe")).toEqual([ids.tokyo]);
    expect(await found("query=RÉSUMÉ")).toEqual([ids.tokyo]);
  });

  test("the index follows updates, archives and restores in the same write", async () => {
    await server.call("POST", `/api/v1/records/${ids.numbers}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: "Counting sheep" } } });
    expect(await found("query=sheep")).toEqual([ids.numbers]);
    const archive = await server.call("POST", `/api/v1/records/${ids.numbers}/change-requests`, { key: ws.write, body: { operation: "delete" } });
    await server.call("POST", `/api/v1/change-requests/${archive.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    await server.call("POST", `/api/v1/change-requests/${archive.body.id}/merge`, { key: ws.write });
    expect(await found("query=sheep")).toEqual([]);
    const restore = await server.call("POST", `/api/v1/records/${ids.numbers}/change-requests`, { key: ws.write, body: { operation: "restore" } });
    await server.call("POST", `/api/v1/change-requests/${restore.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    await server.call("POST", `/api/v1/change-requests/${restore.body.id}/merge`, { key: ws.write });
    expect(await found("query=sheep")).toEqual([ids.numbers]);
  });

  test("the index takes a transaction's entries at its COMMIT: a write rolled back to its savepoint leaves none", async () => {
    const sqlite = server.ctx.store.sqlite;
    const setTitle = (tx: { store: { sqlite: typeof sqlite } }, id: string, title: string) =>
      tx.store.sqlite.run(`UPDATE "records" SET "data" = json_set("data", '$.title', ?1) WHERE "id" = ?2`, [title, id]);
    const titles = Object.fromEntries(Object.entries(ids).map(([name, id]) => [name, (sqlite.query(`SELECT json_extract("data", '$.title') AS t FROM "records" WHERE "id" = ?1`).get(id) as { t: string }).t]));
    // Three writes of one batch: the second rolls back; the third changes a record twice.
    const writes = [
      write(server.ctx, (tx) => setTitle(tx, ids.attention, "Wombat")),
      write(server.ctx, (tx) => {
        setTitle(tx, ids.bert, "Kangaroo");
        throw new Error("rolled back");
      }),
      write(server.ctx, (tx) => {
        setTitle(tx, ids.tokyo, "Koala");
        setTitle(tx, ids.tokyo, "Platypus");
      }),
    ];
    expect((await Promise.allSettled(writes)).map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await found("query=wombat")).toEqual([ids.attention]);
    expect(await found("query=need")).toEqual([]);
    expect(await found("query=kangaroo")).toEqual([]);
    expect(await found("query=bert")).toEqual([ids.bert]);
    expect(await found("query=koala")).toEqual([]);
    expect(await found("query=platypus")).toEqual([ids.tokyo]);
    expect(sqlite.query(`SELECT count(*) AS n FROM "record_search_staged"`).get()).toEqual({ n: 0 });
    await write(server.ctx, (tx) => {
      for (const [name, title] of Object.entries(titles)) setTitle(tx, ids[name], title);
    });
    expect(await found("query=need")).toEqual([ids.attention]);
    expect(await found("query=platypus")).toEqual([]);
  });

  test("names of folders and bases come first; offset and hasMore page through both", async () => {
    await createBase(server, ws.write, "attention-notes", [{ slug: "title", name: "Title", type: "text" }]);
    const all = (await search("query=attention")).body.results;
    expect(all.map((hit: { kind: string }) => hit.kind)).toEqual(["base", "record"]);
    expect(all[0]).toMatchObject({ title: "attention-notes", eyebrow: "Base", body: "attention-notes" });
    const first = (await search("query=attention&limit=1")).body;
    expect(first).toMatchObject({ hasMore: true, results: [{ kind: "base" }] });
    const second = (await search("query=attention&limit=1&offset=1")).body;
    expect(second).toMatchObject({ hasMore: false, results: [{ id: ids.attention }] });
    expect((await search("query=attention&sources[0]=records")).body.results.map((hit: { kind: string }) => hit.kind)).toEqual(["record"]);
    expect((await search("query=attention&sources=names")).body.results.map((hit: { kind: string }) => hit.kind)).toEqual(["base"]);
  });

  test("results are of Busabase's kinds only: a base's name is a base, any other node's a file, its type said apart", async () => {
    await server.call("POST", "/api/v1/file-trees", { key: ws.write, body: { type: "skill", slug: "attention-skill", name: "Attention skill" } });
    await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "folder", slug: "attention-folder", name: "Attention folder" }] } });
    const names = (await search("query=attention&sources=names")).body.results;
    expect(names.map((hit: { kind: string; nodeType: string }) => [hit.kind, hit.nodeType]).sort()).toEqual([["base", "base"], ["file", "folder"], ["file", "skill"]]);
    for (const hit of (await search("query=attention")).body.results) expect(["record", "change_request", "base", "file"]).toContain(hit.kind);
  });

  test("another space's records, and records of an archived base, never appear", async () => {
    const eve = await server.user("Eve");
    await server.space(eve.id, "Elsewhere");
    const eveKey = await server.key(eve.id, "manage");
    await createBase(server, eveKey, "mine", [{ slug: "title", name: "Title", type: "text" }]);
    await server.call("POST", "/api/v1/bases/mine/change-requests", { key: eveKey, body: { fields: { title: "attention from eve" } } });
    expect(await found("query=attention&sources=records", eveKey)).toHaveLength(1);
    expect(await found("query=eve&sources=records")).toEqual([]);
    await createBase(server, ws.write, "old", [{ slug: "title", name: "Title", type: "text" }]);
    await server.call("POST", "/api/v1/bases/old/change-requests", { key: ws.write, body: { fields: { title: "forgotten zeppelin" } } });
    expect(await found("query=zeppelin")).toHaveLength(1);
    const archive = await server.call("POST", "/api/v1/bases/old/lifecycle/change-requests", { key: ws.write, body: { operation: "archive" } });
    await server.call("POST", `/api/v1/change-requests/${archive.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    await server.call("POST", `/api/v1/change-requests/${archive.body.id}/merge`, { key: ws.write });
    expect(await found("query=zeppelin")).toEqual([]);
  });

  test("bad queries are clear 400s; quotes and operators in a query are only words", async () => {
    for (const query of ["", "query=", "query=%20%21%21", "query=a&limit=101", "query=a&offset=-1", "query=a&sources=files,videos"]) {
      const reply = await search(query);
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe("BAD_REQUEST");
    }
    expect((await search('query=%22attention%22%20OR%20NEAR(x)%20*')).status).toBe(200);
    expect((await search("query=attention&sources=files")).body.results).toEqual([]);
  });

  test("after PRAGMA optimize on a young database, the planner still takes the search index for large", () => {
    const sqlite = server.ctx.store.sqlite;
    optimizeStatistics(sqlite, "PRAGMA optimize = 0x10002");
    const stats = sqlite.query("SELECT tbl, stat FROM sqlite_stat1 WHERE tbl IN ('record_search_data', 'record_search_docsize', 'record_search_idx') ORDER BY tbl").all() as { tbl: string; stat: string }[];
    expect(stats.map(({ tbl }) => tbl)).toEqual(["record_search_data", "record_search_docsize", "record_search_idx"]);
    for (const { stat } of stats) expect(Number(stat.split(" ")[0])).toBeGreaterThanOrEqual(1_000_000);
  });
});

describe("a search with many matches", () => {
  test("past 2,000 matches the newest come first, read a page at a time (no sort of every match); fewer are ranked", async () => {
    const { server: big, ws: own } = await freshWorkspace({ deliveries: false });
    try {
      await createBase(big, own.write, "notes", [{ slug: "title", name: "Title", type: "text" }]);
      await fillBase(big, own.write, "notes", 3000, (i) => ({ title: `common word ${i}${i % 500 === 0 ? " rare" : ""}` }));
      const newest = (await big.call("GET", "/api/v1/records?baseId=notes&limit=3", { key: own.read })).body.records.map((record: { id: string }) => record.id);
      const many = await big.call("GET", "/api/v1/search?query=common&sources=records&limit=3", { key: own.read });
      expect(many.body.results.map((hit: { id: string }) => hit.id)).toEqual(newest);
      expect(many.body.hasMore).toBe(true);
      // With the statistics a running server keeps, the index stays the outer loop and the newest are read in its order.
      optimizeStatistics(big.ctx.store.sqlite, "PRAGMA optimize = 0x10002");
      const newestPlan = explainSearch(big.ctx, own.space.id, "common", "newest");
      expect(newestPlan[0]).toStartWith("SCAN record_search VIRTUAL TABLE");
      expect(newestPlan.join(" | ")).not.toContain("TEMP B-TREE");
      // Ranked, the match runs once: its scored matches are kept for the page and for their count.
      const rankedPlan = explainSearch(big.ctx, own.space.id, "rare", "ranked");
      expect(rankedPlan.slice(0, 2)).toEqual(["MATERIALIZE scored", expect.stringMatching(/^SCAN record_search VIRTUAL TABLE/)]);
      expect(rankedPlan.filter((step) => step.startsWith("SCAN record_search"))).toHaveLength(1);
      const few = await big.call("GET", "/api/v1/search?query=rare&sources=records&limit=10", { key: own.read });
      expect(few.body.results).toHaveLength(6);
      // Asked again (now ranked at once), the same answer.
      expect((await big.call("GET", "/api/v1/search?query=rare&sources=records&limit=10", { key: own.read })).body).toEqual(few.body);
      expect((await big.call("GET", "/api/v1/search?query=common&sources=records&limit=3", { key: own.read })).body).toEqual(many.body);

      // A word ranked while it had few matches is answered newest first once it has more than 2,000.
      await fillBase(big, own.write, "notes", 1900, (i) => ({ title: `growing ${i}` }));
      const growing = await big.call("GET", "/api/v1/search?query=growing&sources=records&limit=5&offset=2", { key: own.read });
      expect(growing.body.results).toHaveLength(5);
      expect(big.ctx.rankedSearches.size).toBeGreaterThan(0);
      await fillBase(big, own.write, "notes", 200, (i) => ({ title: `growing late ${i}` }));
      const newestGrowing = (await big.call("GET", "/api/v1/records?baseId=notes&limit=7", { key: own.read })).body.records.map((record: { id: string }) => record.id);
      const grown = await big.call("GET", "/api/v1/search?query=growing&sources=records&limit=5&offset=2", { key: own.read });
      expect(grown.body.results.map((hit: { id: string }) => hit.id)).toEqual(newestGrowing.slice(2));
    } finally {
      await big.stop();
    }
  }, 60_000);
});

describe("grep (Busabase's POST /grep)", () => {
  test("one expression over record values, line by line, with context; bounded by maxMatches; a pattern that could backtrack without end is refused", async () => {
    const { server: own, ws: mine } = await freshWorkspace({ deliveries: false });
    try {
      await createBase(own, mine.write, "notes", [
        { slug: "title", name: "Title", type: "text" },
        { slug: "body", name: "Body", type: "longtext" },
      ]);
      await fillBase(own, mine.write, "notes", 3, (i) => ({ title: `note ${i}`, body: `first line\nTODO: fix ${i}\nlast line` }));
      const grep = (body: Record<string, unknown>) => own.call("POST", "/api/v1/grep", { key: mine.read, body });
      const found = await grep({ pattern: "todo: fix (\\d)", flags: "i", contextLines: 1 });
      expect(found.status).toBe(200);
      expect(found.body.matches).toHaveLength(3);
      expect(found.body.matches[0]).toMatchObject({ source: "records", baseSlug: "notes", fieldSlug: "body", line: 2, column: 1, text: "TODO: fix 0", before: ["first line"], after: ["last line"] });
      expect(found.body).toMatchObject({ truncated: false, coverage: { records: { scanned: 3, notReached: 0 }, docs: { scanned: 0 }, files: { scanned: 0 } } });
      const capped = await grep({ pattern: "line", maxMatches: 2, sources: ["records"] });
      expect([capped.body.matches.length, capped.body.truncated]).toEqual([2, true]);
      expect((await grep({ pattern: "TODO", scope: { records: { baseSlugs: ["notes"] } } })).body.matches).toHaveLength(3);
      expect((await grep({ pattern: "TODO", sources: ["docs"] })).body.matches).toEqual([]);
      for (const pattern of ["(a+)+$", "(a|aa)*b", "([a-z]*)*x"]) {
        const refused = await grep({ pattern });
        expect([refused.status, refused.body.error]).toEqual([400, expect.stringContaining("catastrophic backtracking")]);
      }
      const invalid = await grep({ pattern: "(unclosed" });
      expect([invalid.status, invalid.body.error]).toEqual([400, expect.stringContaining("Invalid pattern")]);
    } finally {
      own.stop();
    }
  });

  test("an expression that backtracks on a value holds nothing but its own thread, and only until grep's deadline", async () => {
    const { server: own, ws: mine } = await freshWorkspace({ deliveries: false });
    try {
      await createBase(own, mine.write, "notes", [{ slug: "body", name: "Body", type: "longtext" }]);
      await fillBase(own, mine.write, "notes", 1, () => ({ body: "a".repeat(1000) }));
      // No nested group, so not refused up front; matched on the server's thread it ran for minutes, and held every request.
      let grepAnswered = false;
      const grepping = own.call("POST", "/api/v1/grep", { key: mine.read, body: { pattern: "a*a*a*a*c" } }).finally(() => (grepAnswered = true));
      const other = await own.call("GET", "/api/v1/bases/notes", { key: mine.read });
      expect([other.status, grepAnswered]).toEqual([200, false]);
      const stopped = await grepping;
      expect(stopped.status).toBe(200);
      expect(stopped.body).toMatchObject({ matches: [], truncated: false, coverage: { records: { scanned: 0, notReached: 1 } } });
      // The next grep is matched as before.
      expect((await own.call("POST", "/api/v1/grep", { key: mine.read, body: { pattern: "a{3}" } })).body.matches).toHaveLength(1);
    } finally {
      own.stop();
    }
  });

  test("files (a drive's, a skill's, text assets and asset texts) and docs are searched too, with line, column and context", async () => {
    const { server: own, ws: mine } = await freshWorkspace({ deliveries: false });
    try {
      const grep = (body: Record<string, unknown>) => own.call("POST", "/api/v1/grep", { key: mine.read, body });
      const upload = async (name: string, body: string, type: string) => (await own.call("POST", `/api/v1/assets?fileName=${name}`, { key: mine.write, rawBody: body, headers: { "content-type": type } })).body;
      const drive = (await own.call("POST", "/api/v1/file-trees", { key: mine.write, body: { type: "drive", slug: "notes", name: "Notes", files: [{ path: "notes/a.md", content: "intro\nthe needle is here\nend" }] } })).body.node;
      await own.call("POST", "/api/v1/file-trees", { key: mine.write, body: { type: "skill", slug: "helper", name: "Helper", files: [{ path: "SKILL.md", content: "# Helper\nno needle" }] } });
      const doc = (await own.call("POST", "/api/v1/docs", { key: mine.write, body: { slug: "guide", name: "Guide", body: "# Guide\n\nfind the needle\n" } })).body.node;
      const text = await upload("loose.txt", "a needle in a text file", "text/plain");
      const scan = await upload("scan.png", "\x89PNG\r\n\x1a\n0000", "image/png");
      const blank = await upload("blank.png", "\x89PNG\r\n\x1a\n1111", "image/png");
      await own.call("PUT", `/api/v1/assets/${scan.id}/text`, { key: mine.write, body: { text: "scanned\nneedle on a scan" } });
      await own.call("PUT", `/api/v1/assets/${blank.id}/text`, { key: mine.write, body: { none: true } });
      const unread = await upload("photo.png", "\x89PNG\r\n\x1a\n2222", "image/png");

      const found = await grep({ pattern: "needle", contextLines: 1 });
      expect(found.status).toBe(200);
      const driveFile = (await own.call("GET", `/api/v1/file-trees/${drive.id}/files`, { key: mine.read })).body.find((file: { path: string }) => file.path === "notes/a.md");
      expect(found.body.matches).toContainEqual({ source: "files", assetId: driveFile.assetId, fileName: "a.md", drivePath: "notes/a.md", line: 2, column: 5, text: "the needle is here", before: ["intro"], after: ["end"] });
      expect(found.body.matches).toContainEqual({ source: "files", assetId: text.id, fileName: "loose.txt", drivePath: "", line: 1, column: 3, text: "a needle in a text file", before: [], after: [] });
      expect(found.body.matches).toContainEqual(expect.objectContaining({ source: "files", assetId: scan.id, line: 2, text: "needle on a scan" }));
      expect(found.body.matches).toContainEqual(expect.objectContaining({ source: "files", drivePath: "SKILL.md", text: "no needle" }));
      expect(found.body.matches).toContainEqual({ source: "docs", nodeId: doc.id, slug: "guide", name: "Guide", line: 3, column: 10, text: "find the needle", before: [""], after: [""] });
      expect(found.body.coverage.files).toMatchObject({ missing: [unread.id], unsearchable: 1, notReached: 0 });
      expect(found.body.coverage.files.scanned).toBeGreaterThanOrEqual(4);
      expect(found.body.coverage.docs).toMatchObject({ scanned: 1, notReached: 0 });

      // Busabase's `assets grep`: files only, narrowed to a drive's folder.
      const inDrive = await grep({ pattern: "needle", sources: ["files"], scope: { files: { drivePath: "notes/" } } });
      expect(inDrive.body.matches.map((match: { drivePath: string }) => match.drivePath)).toEqual(["notes/a.md"]);
      expect((await grep({ pattern: "needle", sources: ["docs"], scope: { docs: { nodeIds: [doc.id] } } })).body.matches).toHaveLength(1);
      expect((await grep({ pattern: "needle", sources: ["files"], scope: { files: { mimeTypes: ["text/plain"] } } })).body.matches.map((match: { assetId: string }) => match.assetId)).toEqual([text.id]);
    } finally {
      own.stop();
    }
  });
});
