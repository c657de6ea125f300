/**
 * `bun run bench:sweep` (issue 11, item 6): the limits of one machine for one base. The built binary
 * serves a base that grows step by step (BENCH_SWEEP, default 100k, 200k, 400k records, made
 * with bulk change requests over HTTP); at each size, wrk with 4 connections measures a page of 50
 * (newest first, an `eq` filter, a number sort far into the base) and a direct create, and the
 * database file and the server's resident memory are read. The sweep stops early once a p99 passes
 * 50 ms. Writes bench/results/sweep.md.
 */
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { benchHarness, benchServer, LISTING_FIELDS, milliseconds, REPO } from "./harness";

const harness = benchHarness();
const { rssMb, wrk, DURATION } = harness;
const SIZES = (process.env.BENCH_SWEEP ?? "100000,200000,400000").split(",").map(Number);
const CONNECTIONS = 4;
const LIMIT_MS = 50;
const PORT = 17451;
const { dbPath, headers, pid, start, stop, api } = benchServer(harness, PORT);

await start();
await api("POST", "/api/v1/bases", { slug: "sweep", name: "Sweep", fields: LISTING_FIELDS });

const rows: string[] = [];
let made = 0;
let largest = 0;
let limitReached = "";
for (const size of SIZES) {
  const started = performance.now();
  const from = made;
  for (; made < size; made += 1000) {
    const records = Array.from({ length: 1000 }, (_, i) => {
      const n = made + i;
      return { title: `title ${n % 1000}`, year: (n * 7919) % 1_000_003, venue: `venue ${n % 13}`, pages: n % 400, notes: "some text" };
    });
    await api("POST", "/api/v1/bases/sweep/records/bulk-change-request", { records });
  }
  const buildRate = (made - from) / ((performance.now() - started) / 1000);
  // A restart runs PRAGMA optimize, as a server does at start and every hour.
  await stop();
  await start();
  let cursor = "";
  for (let seen = 0; seen < size / 2; seen += 100) cursor = (await api("GET", `/api/v1/records?baseId=sweep&limit=100&sort=year${cursor ? `&cursor=${cursor}` : ""}`)).nextCursor;
  const url = (query: string) => `http://127.0.0.1:${PORT}/api/v1/records?baseId=sweep&${query}`;
  const measured = [
    wrk(url(""), headers, undefined, CONNECTIONS),
    wrk(url("filters[0][fieldSlug]=title&filters[0][operator]=eq&filters[0][value]=title%207"), headers, undefined, CONNECTIONS),
    wrk(url(`sort=year&cursor=${cursor}`), headers, undefined, CONNECTIONS),
    wrk(`http://127.0.0.1:${PORT}/api/v1/bases/sweep/change-requests`, headers, { fields: { title: "new", year: 1, venue: "v", pages: 1, notes: "n" } }, CONNECTIONS),
  ];
  const rss = rssMb(pid());
  const { total } = await api("GET", "/api/v1/records/count?baseId=sweep");
  largest = total;
  const bytes = statSync(dbPath).size;
  rows.push(
    `| ${total.toLocaleString("en")} | ${(bytes / 1024 / 1024).toFixed(0)} MB | ${rss.toFixed(0)} MB | ${measured.map((m) => `${m.p50} / ${m.p99}`).join(" | ")} | ${measured[3].rps.toFixed(0)} | ${buildRate.toFixed(0)} |`,
  );
  console.log(rows.at(-1));
  const over = measured.findIndex((m) => milliseconds(m.p99) > LIMIT_MS);
  if (over >= 0) {
    limitReached = `At ${total.toLocaleString("en")} records, ${["page 1", "the eq page", "the deep sorted page", "the create"][over]} passed ${LIMIT_MS} ms p99; the sweep stopped there.`;
    break;
  }
}
await stop();

const report = `# The limits of one machine for one base (issue 11)

Run: ${new Date().toISOString()} · \`bun run bench:sweep\` · wrk -t1 -c${CONNECTIONS} -d${DURATION}s · server on core 0, wrk on core 1 · ${navigator.hardwareConcurrency} cores

Each size adds records to the same base (five fields: two numbers, three texts) with bulk change
requests of 1,000 over HTTP; the server is restarted (PRAGMA optimize), then measured. Latencies are
p50 / p99 with ${CONNECTIONS} connections; the count of records includes the direct creates each step
measured, and the file the change requests, operations and commits of every record.

| records in the base | database file | server RSS | page 1 (newest first) | \`eq\` on a text field (1 in 1,000) | sorted by a number, half-way | direct create | creates/s | bulk creates/s while growing |
|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}

${limitReached || `No p99 passed ${LIMIT_MS} ms up to ${largest.toLocaleString("en")} records.`}
`;
writeFileSync(join(REPO, "bench/results/sweep.md"), report);
console.log(report);
