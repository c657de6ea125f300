/**
 * `bun run bench`: builds the binary, starts it on a temporary data directory, drives each route
 * with wrk (50 connections) and the floor server doing the same essential work in the same run (in
 * turn, `BENCH_ROUNDS` times a route, the best of each side kept), and writes the table to bench/results/latest.md. Servers are pinned to core 0 and wrk to core 1.
 */
import { Database } from "bun:sqlite";
import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, benchHarness, REPO } from "./harness";

const { dir, run, waitFor, rssMb, wrk, DURATION } = benchHarness();
const binary = join(REPO, "dist/basalt");

run([BUN, "run", "build"], REPO);
const dataDir = join(dir, "data");
const cli = (...args: string[]) => run([binary, ...args, "--data-dir", dataDir]);
cli("users", "create", "--email", "bench@example.com", "--name", "Bench", "--password", "bench password");
cli("spaces", "create", "--name", "Bench", "--slug", "bench", "--owner", "bench@example.com");
const key = cli("keys", "create", "--email", "bench@example.com", "--name", "bench", "--level", "write").trim();

/** Rounds of each route, Basalt and the floor in turn (`BENCH_ROUNDS`): each side's best is kept. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// `BENCH_PORT` (and the next port, the floor's) when another run's servers still hold the defaults.
const port = Number(process.env.BENCH_PORT ?? 17431);
const server = Bun.spawn(["taskset", "-c", "0", binary, "serve", "--port", String(port), "--data-dir", dataDir], { stdout: "ignore", stderr: "inherit" });
const startupMs = await waitFor(`http://127.0.0.1:${port}/api/health`);
await Bun.sleep(1000);
const idleRss = rssMb(server.pid);

const floorPort = port + 1;
const floor = Bun.spawn(["taskset", "-c", "0", BUN, join(REPO, "bench/floor.ts"), join(dataDir, "basalt.db"), String(floorPort)], { stdout: "ignore", stderr: "inherit" });
await waitFor(`http://127.0.0.1:${floorPort}/health`);

const auth = { authorization: `Bearer ${key}` };
const inSpace = { ...auth, "x-basalt-space": "bench" };
const api = (method: string, path: string, body?: unknown) =>
  fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { ...inSpace, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) }).then((r) => r.json());
const FIELDS = [1, 2, 3, 4, 5].map((i) => ({ slug: `f${i}`, name: `Field ${i}`, type: i % 2 ? "text" : "number" }));
const recordFields = { f1: "a title", f2: 42, f3: "some text", f4: 7, f5: "more text" };
await api("POST", "/api/v1/bases", { slug: "papers", name: "Papers", fields: FIELDS });
const sample = await api("POST", "/api/v1/bases/papers/change-requests", { fields: recordFields });

// Listing: 201,000 records in one base, and the cursor of the page that follows the first 200,000.
const LISTED = Number(process.env.BENCH_LISTED ?? 200_000);
await api("POST", "/api/v1/bases", { slug: "listing", name: "Listing", fields: FIELDS });
for (let made = 0; made < LISTED + 1000; made += 1000) {
  await api("POST", "/api/v1/bases/listing/records/bulk-change-request", { records: Array.from({ length: 1000 }, (_, i) => ({ fields: { ...recordFields, f2: made + i } })) });
}
let deepCursor = "";
for (let seen = 0; seen < LISTED; seen += 100) {
  deepCursor = (await api("GET", `/api/v1/records?baseId=listing&limit=100${deepCursor ? `&cursor=${deepCursor}` : ""}`)).nextCursor;
}
const listing = (await api("GET", "/api/v1/bases/listing")) as { id: string; fields: { id: string; slug: string }[] };
const listingBase = listing.id;
// A view filtering and sorting by f2 gives it an index (docs/decisions.md): how long until it is filled.
const viewMadeAt = performance.now();
const view = await api("POST", "/api/v1/views/change-requests", {
  operation: "create",
  baseId: "listing",
  name: "Upper half",
  config: { filters: [{ fieldSlug: "f2", operator: "gte", value: LISTED / 2 }], sorts: [{ fieldSlug: "f2", direction: "desc" }] },
});
const watcher = new Database(join(dataDir, "basalt.db"), { readonly: true });
const indexState = watcher.query("SELECT index_state AS state FROM fields WHERE base_id = ? AND slug = 'f2'");
while ((indexState.get(view.baseId) as { state: string }).state !== "ready") await Bun.sleep(100);
const indexFilledSeconds = (performance.now() - viewMadeAt) / 1000;
watcher.close();

const routes = [
  { name: "GET /api/health", path: "/api/health", floorPath: "/health", headers: {} },
  { name: "GET /api/v1/auth (key)", path: "/api/v1/auth", floorPath: "/auth", headers: auth },
  { name: "GET /api/v1/nodes (key, space header)", path: "/api/v1/nodes", floorPath: "/nodes", headers: inSpace },
  { name: "GET /api/v1/records/{id}", path: `/api/v1/records/${sample.id}`, floorPath: `/records/${sample.id}`, headers: inSpace },
  { name: "GET /api/v1/records page 1 (limit 50)", path: "/api/v1/records?baseId=listing", floorPath: `/list?baseId=${listingBase}`, headers: inSpace },
  {
    name: `GET /api/v1/records after ${LISTED.toLocaleString("en")} records (limit 50)`,
    path: `/api/v1/records?baseId=listing&cursor=${deepCursor}`,
    floorPath: `/list?baseId=${listingBase}&cursor=${deepCursor}`,
    headers: inSpace,
  },
  // The lean shape (issue 22): the same page without each record's base and head commit, against the floor's full page.
  { name: "GET /api/v1/records page 1, lean (include=none)", path: "/api/v1/records?baseId=listing&include=none", floorPath: `/list?baseId=${listingBase}`, headers: inSpace },
  { name: "GET /api/v1/records through a view (f2 >= half, sort -f2)", path: `/api/v1/records?viewId=${view.id}`, floorPath: `/view?baseId=${listingBase}&fieldId=${listing.fields.find((field) => field.slug === "f2")!.id}&min=${LISTED / 2}`, headers: inSpace },
  { name: "POST /api/v1/bases/{id}/change-requests (create, 5 fields)", path: "/api/v1/bases/papers/change-requests", floorPath: "/records", headers: inSpace, body: { fields: recordFields } },
];

const rows: string[] = [];
const throughput: number[] = [];
try {
  for (const route of routes) {
    // Basalt and the floor in turn, ROUNDS times: others' load on the machine only ever lowers a rate, so each side's best round is kept.
    const rounds = Array.from({ length: ROUNDS }, () => ({
      basalt: wrk(`http://127.0.0.1:${port}${route.path}`, route.headers, route.body),
      bare: wrk(`http://127.0.0.1:${floorPort}${route.floorPath}`, route.headers, route.body),
    }));
    const basalt = rounds.map((round) => round.basalt).reduce((best, one) => (one.rps > best.rps ? one : best));
    const bare = rounds.map((round) => round.bare).reduce((best, one) => (one.rps > best.rps ? one : best));
    throughput.push(basalt.rps);
    const each = rounds.map((round) => `${((round.basalt.rps / round.bare.rps) * 100).toFixed(0)}%`).join(", ");
    rows.push(`| ${route.name} | ${basalt.rps.toFixed(0)} | ${basalt.p50} | ${basalt.p99} | ${bare.rps.toFixed(0)} | ${((basalt.rps / bare.rps) * 100).toFixed(0)}% | ${each} |`);
  }
} finally {
  server.kill("SIGTERM");
  floor.kill("SIGTERM");
  await Promise.all([server.exited, floor.exited]);
  rmSync(dir, { recursive: true, force: true });
}

const pageOne = routes.findIndex((route) => route.name.includes("page 1"));
const listingRatio = `${((throughput[pageOne + 1] / throughput[pageOne]) * 100).toFixed(0)}%`;

const report = `# Benchmark results

Run: ${new Date().toISOString()} · wrk -t1 -c50 -d${DURATION}s, ${ROUNDS} rounds a route, Basalt and the floor in turn, each side's best round kept · server on core 0, wrk on core 1 · ${navigator.hardwareConcurrency} cores

| what | value |
|---|---|
| binary size | ${(statSync(binary).size / 1024 / 1024).toFixed(1)} MiB |
| start to first 200 | ${startupMs.toFixed(0)} ms (spawn to the first answered \`/api/health\`) |
| idle RSS | ${idleRss.toFixed(1)} MB |

| route | req/s | p50 | p99 | floor req/s | vs floor | each round |
|---|---|---|---|---|---|---|
${rows.join("\n")}

A page after ${LISTED.toLocaleString("en")} records against page 1: ${listingRatio} of page 1's throughput.
A view filtering and sorting by a field of ${LISTED.toLocaleString("en")} records had its index filled ${indexFilledSeconds.toFixed(1)} s after it was saved; its page against page 1: ${((throughput[routes.findIndex((route) => route.name.includes("through a view"))] / throughput[pageOne]) * 100).toFixed(0)}% of page 1's throughput.

The floor (\`bench/floor.ts\`) is a bare \`Bun.serve\` + bun:sqlite server doing the same essential work:
health answers JSON; auth hashes the key and does one indexed select; nodes adds the membership and
the tree selects; a record read does the key, membership and record selects and writes the record
as a listing page writes each of its records (fields, head commit and author, base); a listing page is the
same keyset select on the same index with each record's head commit and author, written as the same
JSON; a page through the view walks the view's field in the same index of field values (\`field_values\`) from the top down to the
filter's bound and writes its rows as a listing page does; a create writes the same rows (the commit that stands for its change request and operation, the
record, auto number, three events, the merge log's row) with the same group commit: one transaction per event-loop turn.
`;
writeFileSync(join(REPO, "bench/results/latest.md"), report);
console.log(report);
