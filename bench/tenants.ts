/**
 * One space's schema must not slow another's (issue 20, item 9), over HTTP on the built binary:
 * - creates into space A's base (five indexed fields) with 0 fields elsewhere, then after space B
 *   made 5,000 fields (25 bases of 200, in node change requests of 10 bases each);
 * - how long the writer is held while fields are created and deleted: a probe writes one record
 *   every 5 ms throughout and reports its slowest answer. Includes a field added to, and one
 *   deleted from, a base of 50,000 records (filled and cleared in the background).
 * Writes bench/results/tenants.md.
 */
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { benchHarness, benchServer, LISTING_FIELDS, milliseconds, REPO } from "./harness";

const harness = benchHarness();
const port = 7461;
const server = benchServer(harness, port);
const base = `http://127.0.0.1:${port}`;
harness.run([join(REPO, "dist/basalt"), "spaces", "create", "--name", "Other", "--slug", "other", "--owner", "bench@example.com", "--data-dir", join(harness.dir, "data")]);
await server.start();
const inOther = (path: string, body: unknown) =>
  fetch(`${base}${path}`, { method: "POST", headers: { ...server.headers, "x-basalt-space": "other", "content-type": "application/json" }, body: JSON.stringify(body) }).then(async (response) => {
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  });

const createScript = `wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
request = function()
  return wrk.format(nil, nil, nil, string.format('{"fields":{"title":"t %d","year":%d,"venue":"v%d","pages":%d,"notes":"n"}}', math.random(1e9), math.random(3000), math.random(500), math.random(1000)))
end`;
// Each round writes into a new, empty base of A, so that rounds differ only in what other bases hold (not in A's size).
let rounds = 0;
const creates = async () => {
  const slug = `mine-${++rounds}`;
  await server.api("POST", "/api/v1/bases", { slug, name: slug, fields: LISTING_FIELDS });
  return harness.wrk(`${base}/api/v1/bases/${slug}/change-requests`, server.headers, { lua: createScript });
};

/** Writes one record in A every 5 ms while `work` runs; answers the slowest write's milliseconds. */
async function probeDuring(work: () => Promise<unknown>): Promise<{ slowestMs: number; probes: number; workMs: number; slowWrites: { ms: number; lockWaitMs: number }[] }> {
  let done = false;
  let slowestMs = 0;
  let probes = 0;
  const probe = (async () => {
    while (!done) {
      const started = performance.now();
      await server.api("POST", "/api/v1/bases/probe/change-requests", { fields: { title: "probe" } });
      slowestMs = Math.max(slowestMs, performance.now() - started);
      probes++;
      await Bun.sleep(5);
    }
  })();
  const started = performance.now();
  server.takeSlowWrites();
  await work();
  const workMs = performance.now() - started;
  done = true;
  await probe;
  return { slowestMs, probes, workMs, slowWrites: server.takeSlowWrites() };
}

await server.api("POST", "/api/v1/bases", { slug: "probe", name: "Probe", fields: LISTING_FIELDS });
// Fields are indexed when queries ask (docs/decisions.md): a view filtering by all five, saved while the base is empty, indexes them.
await server.api("POST", "/api/v1/views/change-requests", { operation: "create", baseId: "probe", name: "all", config: { filters: LISTING_FIELDS.map((field) => ({ fieldSlug: field.slug, operator: "isNotEmpty" })) } });
const before = [await creates(), await creates()];
const fieldsOf = () => Array.from({ length: 200 }, (_, f) => ({ slug: `f${f}`, name: `F${f}`, type: f % 2 ? "number" : "text" }));
// A server that has run a while has compiled the route's validators: one small request warms it.
await inOther("/api/v1/nodes/change-requests", { operations: [{ kind: "create", nodeType: "base", slug: "warm", name: "Warm", fields: fieldsOf().slice(0, 1) }], autoMerge: true });
const schema = await probeDuring(async () => {
  for (let first = 0; first < 25; first += 10) {
    const operations = Array.from({ length: Math.min(10, 25 - first) }, (_, i) => ({ kind: "create", nodeType: "base", slug: `b${first + i}`, name: `B${first + i}`, fields: fieldsOf() }));
    await inOther("/api/v1/nodes/change-requests", { operations, autoMerge: true });
  }
});
const after = [await creates(), await creates()];

// A base of 50,000 records in B: a field added to it is filled, and one deleted is cleared, in the background.
await inOther("/api/v1/bases", { slug: "big", name: "Big", fields: LISTING_FIELDS });
for (let made = 0; made < 50_000; made += 1000) {
  const records = Array.from({ length: 1000 }, (_, i) => ({ title: `t ${made + i}`, year: (made + i) % 3000, venue: `v${i % 500}`, pages: i, notes: "n" }));
  await inOther("/api/v1/bases/big/records/bulk-change-request", { records, autoMerge: true });
}
const db = new Database(server.dbPath, { readonly: true });
const pending = (sql: string) => (db.query(sql).get() as { n: number }).n;
const untilNone = async (sql: string) => {
  while (pending(sql) > 0) await Bun.sleep(20);
};
const added = await probeDuring(async () => {
  await inOther("/api/v1/bases/big/fields", { slug: "extra", name: "Extra", type: "number" });
  await inOther("/api/v1/views/change-requests", { operation: "create", baseId: "big", name: "extra", config: { sorts: [{ fieldSlug: "extra", direction: "asc" }] } });
  await untilNone("SELECT count(*) AS n FROM fields WHERE index_state = 'building'");
});
const dropped = await probeDuring(async () => {
  const big = await (await fetch(`${base}/api/v1/bases/big`, { headers: { ...server.headers, "x-basalt-space": "other" } })).json();
  const venue = big.fields.find((f: { slug: string }) => f.slug === "venue");
  await inOther("/api/v1/bases/big/fields/change-requests", { operation: "delete", fieldId: venue.id, autoMerge: true });
  await untilNone("SELECT count(*) AS n FROM dropped_fields");
});
db.close();
await server.stop();

const held = (phase: { slowWrites: { ms: number; lockWaitMs: number }[] }) =>
  phase.slowWrites.map((slow) => `${slow.ms} ms (${slow.lockWaitMs} ms of it waiting for the lock)`).join(", ") || "—";
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rps0 = Math.max(...before.map((r) => r.rps));
const rps1 = Math.max(...after.map((r) => r.rps));
const report = `# One space's schema and another's writes (issue 20, item 9)

Built binary, server on core 0, wrk on core 1 (50 connections, ${harness.DURATION} s a round), creates of
five indexed fields into a new base of space A each round. "Probe": one create in A every 5 ms during the work, its slowest answer.

| | creates/s (best of 2) | p50 | p99 |
|---|---|---|---|
| 0 fields in other bases | ${rps0.toFixed(0)} | ${before.map((r) => r.p50).join(", ")} | ${before.map((r) => r.p99).join(", ")} |
| 5,000 fields in space B | ${rps1.toFixed(0)} | ${after.map((r) => r.p50).join(", ")} | ${after.map((r) => r.p99).join(", ")} |

With 5,000 foreign fields: **${(rps1 / rps0).toFixed(2)}x** the creates/s (target: within 1.1x); p99 ${(median(after.map((r) => milliseconds(r.p99))) / median(before.map((r) => milliseconds(r.p99)))).toFixed(2)}x.

"Writer held": each write batch the server logged as slow (over 100 ms) during the work, and how much of it was spent waiting for SQLite's write lock (held by a checkpoint); "—" when none was.

| work | took | probe writes | slowest probe | writer held |
|---|---|---|---|---|
| 5,000 fields in 25 bases (three node change requests, after one small one warmed the route) | ${schema.workMs.toFixed(0)} ms | ${schema.probes} | ${schema.slowestMs.toFixed(1)} ms | ${held(schema)} |
| a field added to a base of 50,000 records, until filled | ${added.workMs.toFixed(0)} ms | ${added.probes} | ${added.slowestMs.toFixed(1)} ms | ${held(added)} |
| a field deleted from it, until its values are cleared | ${dropped.workMs.toFixed(0)} ms | ${dropped.probes} | ${dropped.slowestMs.toFixed(1)} ms | ${held(dropped)} |
`;
writeFileSync(join(REPO, "bench/results/tenants.md"), report);
console.log(report);
