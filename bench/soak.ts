/**
 * `bun run bench:soak` (issue 11, item 3): mixed load on the built binary at 50 connections for
 * `SOAK_MINUTES` (default 10): record reads and listing pages, direct creates, proposals with a
 * Change Request key that the same worker then approves and merges with a write key, Inbox pages,
 * and webhook deliveries of every `record.created` to a receiver in its own process. Reports errors,
 * the p99 of each minute (the last within 1.5x of the first), the server's RSS (growth under 20%
 * from the end of the first minute) and the WAL's size. Server on core 0, this client and the
 * receiver on core 1. Writes bench/results/soak.md.
 */
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, benchHarness, REPO } from "./harness";

const { dir, run, waitFor, rssMb } = benchHarness();
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const CONNECTIONS = 50;
const PORT = 17461;
const RECEIVER_PORT = 17462;
const binary = join(REPO, "dist/basalt");
const dataDir = join(dir, "data");
const url = `http://127.0.0.1:${PORT}`;

run([BUN, "run", "build"], REPO);
const cli = (...args: string[]) => run([binary, ...args, "--data-dir", dataDir]);
cli("users", "create", "--email", "soak@example.com", "--name", "Soak", "--password", "soak password");
cli("spaces", "create", "--name", "Soak", "--slug", "soak", "--owner", "soak@example.com");
const keyOf = (level: string) => cli("keys", "create", "--email", "soak@example.com", "--name", level, "--level", level).trim();
const keys = { write: keyOf("write"), propose: keyOf("changeRequest"), manage: keyOf("manage") };
const headers = (key: string) => ({ authorization: `Bearer ${key}`, "x-basalt-space": "soak", "content-type": "application/json" });

const receiver = Bun.spawn(["taskset", "-c", "1", BUN, join(REPO, "bench/receiver.ts"), String(RECEIVER_PORT)], { stdout: "ignore", stderr: "inherit" });
const server = Bun.spawn(["taskset", "-c", "0", binary, "serve", "--port", String(PORT), "--data-dir", dataDir, "--webhook-allow", "127.0.0.1/32"], { stdout: "ignore", stderr: "inherit" });
await waitFor(`http://127.0.0.1:${RECEIVER_PORT}/count`);
await waitFor(`${url}/api/health`);

const call = async (key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(url + path, { method, headers: headers(key), body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
};
await call(keys.manage, "POST", "/api/v1/bases", {
  slug: "papers",
  name: "Papers",
  fields: [
    { slug: "title", name: "Title", type: "text", required: true },
    { slug: "year", name: "Year", type: "number" },
    { slug: "venue", name: "Venue", type: "text" },
  ],
});
await call(keys.manage, "POST", "/api/v1/webhooks", { name: "receiver", eventType: "record.created", actionKind: "webhook", config: { targetUrl: `http://127.0.0.1:${RECEIVER_PORT}/hook` } });
const seeds = await Promise.all(Array.from({ length: 100 }, (_, i) => call(keys.write, "POST", "/api/v1/bases/papers/change-requests", { fields: { title: `seed ${i}`, year: 2000 + (i % 20), venue: `v${i % 7}` } })));
const recordIds = seeds.map((reply) => reply.body.id as string);

const started = performance.now();
const minuteOf = () => Math.floor((performance.now() - started) / 60_000);
const latencies: number[][] = Array.from({ length: MINUTES }, () => []);
const errors: string[] = [];
let created = 0;
let merged = 0;

/** One request, timed and checked: anything but the expected status is an error. */
async function timed(key: string, method: string, path: string, expected: number, body?: unknown) {
  const t0 = performance.now();
  const reply = await call(key, method, path, body);
  const minute = minuteOf();
  if (minute < MINUTES) latencies[minute].push(performance.now() - t0);
  if (reply.status !== expected) errors.push(`${method} ${path} ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)}`);
  return reply;
}

async function worker(n: number): Promise<void> {
  let i = n;
  while (minuteOf() < MINUTES) {
    const pick = i++ % 20;
    const id = recordIds[(i * 7919) % recordIds.length];
    if (pick < 7) await timed(keys.write, "GET", `/api/v1/records/${id}`, 200);
    else if (pick < 10) await timed(keys.write, "GET", `/api/v1/records?baseId=papers&limit=20&sort=-year&filters[0][fieldSlug]=venue&filters[0][operator]=eq&filters[0][value]=v${i % 7}`, 200);
    else if (pick < 14) {
      const reply = await timed(keys.write, "POST", "/api/v1/bases/papers/change-requests", 201, { fields: { title: `load ${n}-${i}`, year: 1990 + (i % 30), venue: `v${i % 7}` } });
      if (reply.status === 201) {
        created++;
        if (recordIds.length < 5000) recordIds.push(reply.body.id);
      }
    } else if (pick < 17) {
      const proposal = await timed(keys.propose, "POST", `/api/v1/records/${id}/change-requests`, 201, { operation: "update", fields: { venue: `p${i % 5}` } });
      if (proposal.status !== 201) continue;
      await timed(keys.write, "POST", `/api/v1/change-requests/${proposal.body.id}/reviews`, 200, { verdict: "approved" });
      // Another worker may have changed the record meanwhile: a 409 conflict is the contract's answer, not an error.
      const merge = await call(keys.write, "POST", `/api/v1/change-requests/${proposal.body.id}/merge`);
      if (merge.status === 200) merged++;
      else if (merge.status !== 409) errors.push(`merge ${merge.status}`);
    } else await timed(keys.write, "GET", "/api/v1/change-requests?limit=20", 200);
  }
}

const samples: { minute: number; rss: number; wal: number }[] = [];
const sampler = setInterval(() => {
  let wal = 0;
  try {
    wal = statSync(join(dataDir, "basalt.db-wal")).size;
  } catch {}
  samples.push({ minute: (performance.now() - started) / 60_000, rss: rssMb(server.pid), wal: wal / 1024 / 1024 });
}, 5_000);
await Promise.all(Array.from({ length: CONNECTIONS }, (_, n) => worker(n)));
clearInterval(sampler);
// Every create's event, and the seeds', must arrive; how long the backlog takes once the load stops.
const owed = created + recordIds.slice(0, 100).length;
const receivedCount = async () => (await (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/count`)).json()) as number;
const atEnd = await receivedCount();
const drainStarted = performance.now();
let delivered = atEnd;
while (delivered < owed && performance.now() - drainStarted < 300_000) {
  await Bun.sleep(500);
  delivered = await receivedCount();
}
const drainSeconds = (performance.now() - drainStarted) / 1000;
server.kill("SIGTERM");
await server.exited;
receiver.kill();

const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.99)] ?? 0;
const rows = latencies.map((values, minute) => `| ${minute + 1} | ${values.length} | ${(values.length / 60).toFixed(0)} | ${p99(values).toFixed(1)} ms |`);
const afterFirst = samples.find((sample) => sample.minute >= 1)?.rss ?? samples[0].rss;
const lastRss = samples.at(-1)!.rss;
const maxWal = Math.max(...samples.map((sample) => sample.wal));
const drift = p99(latencies.at(-1)!) / p99(latencies[0]);
const report = `# Mixed load for ${MINUTES} minutes (issue 11, item 3)

Run: ${new Date().toISOString()} · \`SOAK_MINUTES=${MINUTES} bun run bench:soak\` · ${CONNECTIONS} connections · server on core 0, client and receiver on core 1

Per 20 requests of each connection: 7 record reads, 3 filtered and sorted listing pages, 4 direct creates, 3 proposals (Change Request key) each approved and merged by a write key, 1 Inbox page (the review and merge count as requests of the proposal's turn).

| minute | requests | per second | p99 |
|---|---|---|---|
${rows.join("\n")}

- Errors: **${errors.length}**${errors.length ? ` (first: ${errors.slice(0, 3).join("; ")})` : ""}.
- p99 of the last minute / the first: **${drift.toFixed(2)}x** (target ≤ 1.5x).
- Server RSS: ${samples[0].rss.toFixed(0)} MB at the start, ${afterFirst.toFixed(0)} MB after the first minute, ${lastRss.toFixed(0)} MB at the end: **${(((lastRss - afterFirst) / afterFirst) * 100).toFixed(0)}%** growth (target < 20%).
- WAL: at most **${maxWal.toFixed(1)} MB** (sampled every 5 s).
- Creates: ${created} answered 201; merges: ${merged}. Webhook deliveries (one \`record.created\` per create and per seed record, ${owed} owed): ${atEnd} had arrived when the load stopped; ${delivered} ${delivered >= owed ? "all" : "only"} arrived ${drainSeconds.toFixed(0)} s later.
`;
writeFileSync(join(REPO, "bench/results/soak.md"), report);
console.log(report);
