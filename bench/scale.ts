/**
 * `bun run bench:scale` (issue 12): one base at scale, against the built binary.
 *  A. bytes per record: 2,000 direct 5-field creates over HTTP, the file measured after a checkpoint;
 *  B. a base of 200,000 records: page 1, a page sorted by a number field, a page filtered by `eq` on
 *     a text field, and later pages of each, with wrk (50 connections, server on core 0);
 *  C. record creates over HTTP into a base with five indexed fields and into one whose fields get no index;
 *  D. record creates with the base's five field indexes and without them, in process (the indexes
 *     cost only in the write, so this is the ratio HTTP can only dilute).
 * Writes bench/results/scale.md.
 */
import { Database } from "bun:sqlite";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApiKey } from "../src/auth/api-keys";
import { createUser } from "../src/auth/users";
import { sourceAttribution } from "../src/changes/propose";
import { proposeNodeChanges, proposeRecords } from "../src/changes/proposals";
import { ManualClock } from "../src/shared/clock";
import { loadConfig } from "../src/shared/config";
import { wire } from "../src/cli/wiring";
import { authenticate } from "../src/auth/actor";
import { closeStore, migrate, openStore } from "../src/db/client";
import { write } from "../src/db/tx";
import { resolveSpace } from "../src/spaces/resolve";
import { createSpace } from "../src/spaces/spaces";
import { benchHarness, benchServer, LISTING_FIELDS, milliseconds, REPO } from "./harness";

const harness = benchHarness();
const { dir, wrk, DURATION } = harness;
const RECORDS = Number(process.env.BENCH_LISTED ?? 200_000);
const PORT = 17441;
const { dbPath, headers, start, stop, api } = benchServer(harness, PORT);

/** The database's size with its WAL folded in, and what each table and index holds (dbstat). */
function measure(): { bytes: number; tables: Map<string, number> } {
  const db = new Database(dbPath);
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  const tables = new Map((db.query("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name").all() as { name: string; bytes: number }[]).map((row) => [row.name, row.bytes]));
  const free = (db.query("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count * (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
  db.close();
  return { bytes: statSync(dbPath).size - free, tables };
}

// ---- A. bytes per record ----
const PAPER_FIELDS = [
  { slug: "title", name: "Title", type: "text", required: true },
  { slug: "year", name: "Year", type: "number" },
  { slug: "status", name: "Status", type: "select", options: { choices: [{ name: "draft" }, { name: "published" }] } },
  { slug: "url", name: "URL", type: "url" },
  { slug: "notes", name: "Notes", type: "longtext" },
];
const BYTES_RECORDS = 2000;
await start();
/** Fields are indexed when queries ask (docs/decisions.md): a view filtering by all five, saved while the base is empty, indexes them at once. */
const indexAll = (baseId: string) =>
  api("POST", "/api/v1/views/change-requests", { operation: "create", baseId, name: "all", config: { filters: LISTING_FIELDS.map((field) => ({ fieldSlug: field.slug, operator: "isNotEmpty" })) } });

await api("POST", "/api/v1/bases", { slug: "papers", name: "Papers", fields: PAPER_FIELDS });
await stop();
const before = measure();
await start();
for (let i = 0; i < BYTES_RECORDS; i += 50) {
  await Promise.all(
    Array.from({ length: 50 }, (_, j) =>
      api("POST", "/api/v1/bases/papers/change-requests", {
        fields: { title: `Paper number ${i + j}`, year: 1990 + ((i + j) % 30), status: "draft", url: `https://example.com/papers/${i + j}`, notes: "A short note about this paper." },
      }),
    ),
  );
}
await Bun.sleep(1000); // the delivery loop fans the events out (and prunes those no rule wants)
await stop();
const after = measure();
const perRecord = (after.bytes - before.bytes) / BYTES_RECORDS;
const breakdown = [...after.tables]
  .map(([name, bytes]) => [name, (bytes - (before.tables.get(name) ?? 0)) / BYTES_RECORDS] as const)
  .filter(([, bytes]) => bytes >= 1)
  .sort((a, b) => b[1] - a[1]);

// ---- B. a base of 200,000 records ----
await start();
await api("POST", "/api/v1/bases", { slug: "listing", name: "Listing", fields: LISTING_FIELDS });
await indexAll("listing");
for (let made = 0; made < RECORDS; made += 1000) {
  const records = Array.from({ length: 1000 }, (_, i) => {
    const n = made + i;
    return { title: `title ${n % 1000}`, year: (n * 7919) % RECORDS, venue: `venue ${n % 13}`, pages: n % 400, notes: "some text" };
  });
  await api("POST", "/api/v1/bases/listing/records/bulk-change-request", { records });
}
// A restart runs PRAGMA optimize, as a server does at start and every hour.
await stop();
await start();
const walk = async (query: string, pages: number) => {
  let cursor = "";
  for (let i = 0; i < pages; i++) cursor = (await api("GET", `/api/v1/records?baseId=listing&limit=100&${query}${cursor ? `&cursor=${cursor}` : ""}`)).nextCursor;
  return cursor;
};
const half = RECORDS / 2 / 100;
const sortedDeep = await walk("sort=year", half);
const eqSecond = await walk("filters[0][fieldSlug]=title&filters[0][operator]=eq&filters[0][value]=title%207", 1);
const EQ = "filters[0][fieldSlug]=title&filters[0][operator]=eq&filters[0][value]=title%207";
const listings = [
  { name: "page 1 (newest first, limit 50)", query: "" },
  { name: "sorted by a number field, page 1", query: "sort=year" },
  { name: `sorted by a number field, after ${(RECORDS / 2).toLocaleString("en")} records`, query: `sort=year&cursor=${sortedDeep}` },
  { name: "eq on a text field (200 matches), page 1", query: EQ },
  { name: "eq on a text field, page 2", query: `${EQ}&cursor=${eqSecond}` },
  { name: "eq on a text field (15,385 matches), page 1", query: "filters[0][fieldSlug]=venue&filters[0][operator]=eq&filters[0][value]=venue%203" },
  { name: "gt on a number field, sorted by it, page 1", query: "sort=year&filters[0][fieldSlug]=year&filters[0][operator]=gt&filters[0][value]=150000" },
  { name: "contains on a text field (scans), page 1", query: "filters[0][fieldSlug]=notes&filters[0][operator]=contains&filters[0][value]=some" },
  { name: "contains matching nothing (scans the base)", query: "filters[0][fieldSlug]=notes&filters[0][operator]=contains&filters[0][value]=absent" },
];
const listingRows: string[] = [];
let base = 0;
for (const listing of listings) {
  const result = wrk(`http://127.0.0.1:${PORT}/api/v1/records?baseId=listing&${listing.query}`, headers);
  base ||= milliseconds(result.p50);
  listingRows.push(`| ${listing.name} | ${result.rps.toFixed(0)} | ${result.p50} | ${result.p99} | ${(milliseconds(result.p50) / base).toFixed(2)}x |`);
}
await stop();
const listingFile = statSync(dbPath).size;
await start();

// ---- C. creates over HTTP into a base whose five fields are indexed, and into one whose are not ----
// The second base has the same slugs and values as json fields, which get no index: the same
// request, body and write path but for the five index inserts. Each request's values differ, in
// two ways: spread at random over each field's range (every entry lands on another page of its
// index), and in the order they arrive (counters, dates, slowly changing categories).
const createsScript = (values: string) => `wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"fields":{"title":"title %s","year":%d,"venue":"venue %d","pages":%d,"notes":"some text"}}', ${values})
  return wrk.format(nil, nil, nil, body)
end
`;
const VALUE_ORDERS = [
  { name: "spread at random", slug: "random", values: "(n * 7919) % 1000, (n * 7919) % 200000, n % 13, n % 400" },
  { name: "in arrival order", slug: "ordered", values: `string.format("%08d", n), 1990 + math.floor(n / 2000), n % 13, math.floor(n / 100) % 400` },
];
const httpRates = VALUE_ORDERS.map(() => ({ indexed: [] as number[], bare: [] as number[] }));
for (const [i, order] of VALUE_ORDERS.entries()) {
  const indexed = `indexed-${order.slug}`;
  const bare = `unindexed-${order.slug}`;
  await api("POST", "/api/v1/bases", { slug: indexed, name: indexed, fields: LISTING_FIELDS });
  await indexAll(indexed);
  await api("POST", "/api/v1/bases", { slug: bare, name: bare, fields: LISTING_FIELDS.map((field) => ({ ...field, type: "json" })) });
  const creates = (slug: string) => wrk(`http://127.0.0.1:${PORT}/api/v1/bases/${slug}/change-requests`, headers, { lua: createsScript(order.values) }).rps;
  creates(indexed); // warm-up: compiles the write path
  for (let pair = 0; pair < 4; pair++) {
    for (const slug of pair % 2 === 0 ? [indexed, bare] : [bare, indexed]) (slug === indexed ? httpRates[i].indexed : httpRates[i].bare).push(creates(slug));
  }
}
await stop();

// ---- D. creates with and without the field indexes, in process ----
async function createRate(): Promise<{ indexed: number[]; bare: number[] }> {
  const path = join(dir, "inprocess.db");
  const store = openStore(path);
  migrate(store);
  const { ctx, fieldUpkeep } = wire(store, loadConfig({ "data-dir": dir }, {}), new ManualClock(Date.now()), { info() {}, error() {} });
  const user = await createUser(ctx, { email: "c@example.com", name: "C", password: "bench password" });
  await write(ctx, (tx) => createSpace(tx, user.id, { name: "C", slug: "c" }));
  const { apiKey } = await write(ctx, (tx) => createApiKey(tx, user.id, { name: "c", level: "write" }));
  const actor = authenticate(ctx, { apiKey, sessionToken: null });
  const proposer = { scope: resolveSpace(ctx, actor, "c"), actor, attribution: sourceAttribution(actor, undefined) };
  await proposeNodeChanges(ctx, proposer, [{ kind: "create", nodeType: "base", slug: "c", name: "C", fields: LISTING_FIELDS as never }], { autoMerge: true });
  const round = async () => {
    const started = performance.now();
    let n = 0;
    for (let batch = 0; batch < 100; batch++) {
      await Promise.all(Array.from({ length: 50 }, () => proposeRecords(ctx, proposer, "c", [{ fields: { title: `t ${n}`, year: n++, venue: "v", pages: n % 400, notes: "x" } }], { autoMerge: true })));
    }
    return n / ((performance.now() - started) / 1000);
  };
  // The base's fields with their values in field_values (filled by the upkeep), or with none.
  const upkeep = fieldUpkeep.start(ctx);
  const indexed = async () => {
    store.sqlite.run("UPDATE fields SET index_state = 'building' WHERE type IN ('text', 'number')");
    upkeep.wake();
    await upkeep.settled();
    rates.indexed.push(await round());
  };
  const bare = async () => {
    store.sqlite.run("UPDATE fields SET index_state = 'none'");
    store.sqlite.run("DELETE FROM field_values");
    await write(ctx, (tx) => tx.bases.invalidate(tx));
    rates.bare.push(await round());
  };
  const rates = { indexed: [] as number[], bare: [] as number[] };
  // A first round compiles the write path (JIT) and is not counted; then each pair swaps its order.
  await round();
  for (let i = 0; i < 4; i++) {
    if (i % 2 === 0) {
      await indexed();
      await bare();
    } else {
      await bare();
      await indexed();
    }
  }
  await upkeep.stop();
  await closeStore(store);
  return rates;
}
const rates = await createRate();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const report = `# One base at scale (issue 12)

Run: ${new Date().toISOString()} · \`bun run bench:scale\` · wrk -t1 -c50 -d${DURATION}s · server on core 0, wrk on core 1

## Bytes per record

${BYTES_RECORDS.toLocaleString("en")} direct creates of a 5-field record over HTTP (title, year, status, url, notes), no webhook rule; the file after a checkpoint, free pages left out: **${perRecord.toFixed(0)} bytes per record** (target ≤ 1,536; it was ~4,600 before issue 12).

| table or index | bytes per record |
|---|---|
${breakdown.map(([name, bytes]) => `| ${name} | ${bytes.toFixed(0)} |`).join("\n")}

## A base of ${RECORDS.toLocaleString("en")} records

Fields title (1,000 distinct values), year (distinct numbers), venue, pages, notes; ${(listingFile / 1024 / 1024).toFixed(0)} MB on disk with the first base.

| listing (limit 50 unless a cursor follows a page of 100) | req/s | p50 | p99 | p50 / page 1 |
|---|---|---|---|---|
${listingRows.join("\n")}

## Creates with five field indexes, over HTTP

\`POST /bases/{slug}/change-requests\` (merged at once), 50 connections, each request with other values; a base whose five fields (two numbers, three texts) are indexed against one with the same slugs and values as json fields, which get no index. After a warm-up run, pairs whose order alternates (creates/s; median ratio, target ≥ 90%):

| values | indexed | unindexed | indexed / unindexed |
|---|---|---|---|
${VALUE_ORDERS.map((order, i) => `| ${order.name} | ${httpRates[i].indexed.map((r) => r.toFixed(0)).join(", ")} | ${httpRates[i].bare.map((r) => r.toFixed(0)).join(", ")} | **${((median(httpRates[i].indexed) / median(httpRates[i].bare)) * 100).toFixed(0)}%** |`).join("\n")}

## Creates with five field indexes, in process

Proposals merged at once through the write path (50 at a time, group commit), 5,000 per round, after one round not counted (it compiles the write path), in pairs whose order alternates: with the base's five field indexes ${rates.indexed.map((r) => r.toFixed(0)).join(", ")} creates/s; the same rounds without them ${rates.bare.map((r) => r.toFixed(0)).join(", ")} creates/s: **${((median(rates.indexed) / median(rates.bare)) * 100).toFixed(0)}%** (median; target ≥ 90%).
`;
writeFileSync(join(REPO, "bench/results/scale.md"), report);
console.log(report);
