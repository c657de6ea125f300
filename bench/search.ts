/**
 * Search (issue 22), over HTTP on the built binary: a base of 200,000 records with three text
 * fields, a rare word in 0.1% of them, a common one in 10%:
 * - `GET /search` for the rare word, the common word, and a prefix, against a record read;
 * - creates into that base with the search index kept by its triggers, then the same creates
 *   with the triggers dropped (the server restarted on the same file): what keeping search costs.
 * - the same search in a space of 15 records before and after the large base is loaded into
 *   another space: a search costs what its own space holds.
 * Writes bench/results/search.md. BENCH_SEARCHED sets the base's size.
 */
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { benchHarness, benchServer, comparedRow as row, REPO } from "./harness";

const harness = benchHarness();
const port = 7472;
const server = benchServer(harness, port);
const url = (path: string) => `http://127.0.0.1:${port}${path}`;
const SIZE = Number(process.env.BENCH_SEARCHED ?? 200_000);
// A second, small space of the same account: its search must cost what it holds, whatever the other holds (issue 35, item 4).
harness.run([join(REPO, "dist/basalt"), "spaces", "create", "--name", "Small", "--slug", "small", "--owner", "bench@example.com", "--data-dir", join(harness.dir, "data")]);
const small = { ...server.headers, "x-basalt-space": "small" };
await server.start();

const WORDS = "river stone paper garden window silver morning letter harbor candle meadow forest signal bridge thunder lantern orchard valley copper shadow".split(" ");
const words = (n: number, count: number) => Array.from({ length: count }, (_, k) => WORDS[(n * 7 + k * 13 + k * k) % WORDS.length]).join(" ");
const values = (n: number) => ({
  title: `${words(n, 4)}${n % 1000 === 0 ? " zebrafish" : ""}`,
  abstract: `${words(n + 1, 30)}${n % 10 === 0 ? " photosynthesis" : ""} record ${n}`,
  notes: words(n + 2, 8),
});
await server.api("POST", "/api/v1/bases", {
  slug: "docs",
  name: "Docs",
  fields: [
    { slug: "title", name: "Title", type: "text" },
    { slug: "abstract", name: "Abstract", type: "longtext" },
    { slug: "notes", name: "Notes", type: "text" },
  ],
});
const inSmall = (method: string, path: string, body?: unknown) =>
  fetch(url(path), { method, headers: { ...small, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) }).then((response) => response.json());
await inSmall("POST", "/api/v1/bases", { slug: "notes", name: "Notes", fields: [{ slug: "title", name: "Title", type: "text" }, { slug: "abstract", name: "Abstract", type: "longtext" }] });
await inSmall("POST", "/api/v1/bases/notes/records/bulk-change-request", { records: Array.from({ length: 15 }, (_, i) => ({ title: words(i, 4), abstract: words(i + 1, 30) })) });
const smallSearch = () => harness.wrk(url(`/api/v1/search?query=river&sources=records&limit=20`), small);
const smallAlone = smallSearch();
const started = performance.now();
for (let made = 0; made < SIZE; made += 1000) {
  await server.api("POST", "/api/v1/bases/docs/records/bulk-change-request", { records: Array.from({ length: 1000 }, (_, i) => values(made + i)) });
}
const loadSeconds = (performance.now() - started) / 1000;
const rareHits = (await server.api("GET", "/api/v1/search?query=zebrafish&sources=records&limit=100")).results.length;
const [first] = (await server.api("GET", "/api/v1/records?baseId=docs&limit=1")).records;

const smallBeside = smallSearch();
const search = (query: string) => harness.wrk(url(`/api/v1/search?query=${encodeURIComponent(query)}&sources=records&limit=20`), server.headers);
const recordRead = harness.wrk(url(`/api/v1/records/${first.id}`), server.headers);
const rare = search("zebrafish");
const common = search("photosynthesis");
const prefix = search("zebra");
const createScript = `wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
local words = {${WORDS.map((word) => `"${word}"`).join(",")}}
local function some(n)
  local out = {}
  for i = 1, n do out[i] = words[math.random(#words)] end
  return table.concat(out, " ")
end
request = function()
  return wrk.format(nil, nil, nil, string.format('{"fields":{"title":"%s","abstract":"%s","notes":"%s"}}', some(4), some(30), some(8)))
end`;
// Each create row follows an unmeasured run of the same creates, so both rows measure a server
// whose code has warmed up, on a base already grown by that run.
const creates = () => {
  harness.wrk(url("/api/v1/bases/docs/change-requests"), server.headers, { lua: createScript });
  return harness.wrk(url("/api/v1/bases/docs/change-requests"), server.headers, { lua: createScript });
};
const createWithSearch = creates();
await server.stop();

const db = new Database(server.dbPath);
for (const trigger of ["records_search_insert", "records_search_update", "records_search_delete"]) db.run(`DROP TRIGGER ${trigger}`);
db.close();
await server.start();
const createWithout = creates();
await server.stop();

const table = [
  "# bench:search — full-text search (issue 22)",
  "",
  `${SIZE.toLocaleString("en")} records of three text fields (42 words each), loaded in ${loadSeconds.toFixed(0)} s; "zebrafish" in 0.1% of them (${rareHits} hits on the first page of 100), "photosynthesis" in 10%. wrk, 50 connections, ${harness.DURATION} s a row; the server on core 0, wrk on core 1.`,
  "",
  "| Route | req/s | p50 | p99 | against its reference |",
  "|---|---:|---:|---:|---|",
  row("GET /records/{id} (reference)", recordRead, recordRead, "p50"),
  row("search, a word in 0.1% of records", rare, recordRead, "p50"),
  row("search, a prefix (zebra) of that word", prefix, recordRead, "p50"),
  row(`search, a word in 10% of records (scores ${(SIZE / 10).toLocaleString("en")})`, common, recordRead, "p50"),
  row("search in a space of 15 records, no other records anywhere (reference)", smallAlone, smallAlone, "p50"),
  row(`the same search, with ${SIZE.toLocaleString("en")} records (every one holding the word) in another space`, smallBeside, smallAlone, "p50"),
  row("create without the search triggers (reference)", createWithout, createWithout, "rps"),
  row("create with search kept in the same transaction", createWithSearch, createWithout, "rps"),
  "",
  "Targets: search for a word in 0.1% of 200,000 records at a p50 under 20 ms; a small space's search within 1.5x of its p50 with nothing elsewhere; creates with search kept at least 85% of creates without it.",
];
writeFileSync(join(REPO, "bench/results/search.md"), `${table.join("\n")}\n`);
console.log(table.join("\n"));
