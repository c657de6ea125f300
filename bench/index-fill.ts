/**
 * `bun run bench:index-fill` (issue 35, item 18): an index asked for under load. A base of
 * `BENCH_RECORDS` (200,000) records whose number field has no index; then 50 connections ask the
 * same sorted listing (`sort=-n`, 20 records) for `BENCH_SECONDS` (60). Listings asked for often
 * enough get the field indexed, filled in the background; this reports the listings answered each
 * second, the rate before the index was ready, and how long until the rate reached half of the
 * last ten seconds' (the indexed rate). The built binary on core 0, this client on core 1.
 * Writes bench/results/index-fill.md.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { benchHarness, benchServer, REPO } from "./harness";

const harness = benchHarness();
const port = 7493;
const server = benchServer(harness, port);
const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const CONNECTIONS = 50;
await server.start();
await server.api("POST", "/api/v1/bases", { slug: "docs", name: "Docs", fields: [{ slug: "title", name: "Title", type: "text" }, { slug: "n", name: "N", type: "number" }] });
for (let made = 0; made < RECORDS; made += 1000) {
  await server.api("POST", "/api/v1/bases/docs/records/bulk-change-request", { records: Array.from({ length: 1000 }, (_, i) => ({ title: `doc ${made + i}`, n: ((made + i) * 7919) % 100_003 })) });
}

const url = `http://127.0.0.1:${port}/api/v1/records?baseId=docs&sort=-n&limit=20`;
const perSecond: number[] = Array.from({ length: SECONDS }, () => 0);
const began = performance.now();
let errors = 0;
await Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    while (performance.now() - began < SECONDS * 1000) {
      const reply = await fetch(url, { headers: server.headers });
      await reply.arrayBuffer();
      if (!reply.ok) errors++;
      const second = Math.floor((performance.now() - began) / 1000);
      if (second < SECONDS) perSecond[second]++;
    }
  }),
);
await server.stop();

const last = perSecond.slice(-10);
const indexedRate = last.reduce((sum, n) => sum + n, 0) / last.length;
const reached = perSecond.findIndex((n) => n >= indexedRate / 2);
const before = perSecond.slice(0, Math.max(1, reached)).sort((a, b) => a - b);
const beforeRate = before[Math.floor(before.length / 2)];
const table = [
  "# bench:index-fill — an index asked for under load (issue 35, item 18)",
  "",
  `${RECORDS.toLocaleString("en")} records; ${CONNECTIONS} connections asking \`sort=-n&limit=20\` of a field with no index, for ${SECONDS} s; the built binary on core 0, the client on core 1. ${errors} errors.`,
  "",
  "| What | Measured |",
  "|---|---:|",
  `| listings a second before the index was ready (median of the first ${before.length} s) | ${beforeRate} |`,
  `| seconds until the rate reached half of the indexed rate | ${reached < 0 ? "never" : reached} |`,
  `| listings a second, indexed (mean of the last 10 s) | ${indexedRate.toFixed(0)} |`,
  "",
  `Each second: ${perSecond.join(", ")}`,
  "",
].join("\n");
console.log(table);
writeFileSync(join(REPO, "bench/results/index-fill.md"), table);
process.exit(0);
