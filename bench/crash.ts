/**
 * `bun run bench:crash` (issue 11, item 2): record creates at full speed with a webhook rule on a
 * local receiver; SIGKILL at a random moment; restart. Every create answered 201 must be in the
 * database, and its `record.created` event must reach the receiver after the restart. `CRASH_CYCLES`
 * cycles (default 20); `CRASH_SEED` replays a run. Writes bench/results/crash.md.
 */
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, benchHarness, REPO } from "./harness";

const { dir, run, waitFor } = benchHarness();
const CYCLES = Number(process.env.CRASH_CYCLES ?? 20);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
const WRITERS = 32;
const PORT = 17451;
const RECEIVER_PORT = 17452;
const binary = join(REPO, "dist/basalt");
const dataDir = join(dir, "data");

/** A small deterministic generator (mulberry32), so a seed replays the same kill moments. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
const next = random(SEED);

run([BUN, "run", "build"], REPO);
const cli = (...args: string[]) => run([binary, ...args, "--data-dir", dataDir]);
cli("users", "create", "--email", "crash@example.com", "--name", "Crash", "--password", "crash password");
cli("spaces", "create", "--name", "Crash", "--slug", "crash", "--owner", "crash@example.com");
const key = cli("keys", "create", "--email", "crash@example.com", "--name", "crash", "--level", "manage").trim();
const headers = { authorization: `Bearer ${key}`, "x-basalt-space": "crash", "content-type": "application/json" };

const receiver = Bun.spawn([BUN, join(REPO, "bench/receiver.ts"), String(RECEIVER_PORT)], { stdout: "ignore", stderr: "inherit" });
await waitFor(`http://127.0.0.1:${RECEIVER_PORT}/count`);

const start = async () => {
  const server = Bun.spawn([binary, "serve", "--port", String(PORT), "--data-dir", dataDir, "--webhook-allow", "127.0.0.1/32"], { stdout: "ignore", stderr: "ignore" });
  await waitFor(`http://127.0.0.1:${PORT}/api/health`);
  return server;
};
const post = (path: string, body: unknown) => fetch(`http://127.0.0.1:${PORT}${path}`, { method: "POST", headers, body: JSON.stringify(body) });

let server = await start();
await post("/api/v1/bases", { slug: "papers", name: "Papers", fields: [{ slug: "title", name: "Title", type: "text", required: true }] });
await post("/api/v1/webhooks", { name: "receiver", eventType: "record.created", actionKind: "webhook", config: { targetUrl: `http://127.0.0.1:${RECEIVER_PORT}/hook` } });

const acknowledged: string[] = [];
const rows: string[] = [];
let lost = 0;
let undelivered = 0;
for (let cycle = 1; cycle <= CYCLES; cycle++) {
  const killAfterMs = 100 + Math.floor(next() * 1400);
  let stop = false;
  let answered = 0;
  const before = acknowledged.length;
  const writer = async () => {
    while (!stop) {
      try {
        const response = await post("/api/v1/bases/papers/change-requests", { fields: { title: `cycle ${cycle}` } });
        if (response.status === 201) {
          acknowledged.push((await response.json()).id);
          answered++;
        }
      } catch {
        return; // the server died under this request: not acknowledged
      }
    }
  };
  const writers = Array.from({ length: WRITERS }, writer);
  await Bun.sleep(killAfterMs);
  server.kill("SIGKILL");
  await server.exited;
  stop = true;
  await Promise.all(writers);

  const db = new Database(join(dataDir, "basalt.db"), { readonly: true });
  const stored = new Set((db.query("SELECT id FROM records").all() as { id: string }[]).map((row) => row.id));
  db.close();
  const missing = acknowledged.filter((id) => !stored.has(id));
  lost += missing.length;

  server = await start();
  const deadline = performance.now() + 30_000;
  let notArrived: string[] = [];
  do {
    const arrivals = (await (await fetch(`http://127.0.0.1:${RECEIVER_PORT}/arrivals`)).json()) as Record<string, number>;
    notArrived = acknowledged.filter((id) => !arrivals[`/hook ${id}`]);
    if (notArrived.length === 0) break;
    await Bun.sleep(100);
  } while (performance.now() < deadline);
  undelivered += notArrived.length;
  rows.push(`| ${cycle} | ${killAfterMs} ms | ${answered} | ${acknowledged.length - before === answered ? acknowledged.length : "?"} | ${missing.length} | ${notArrived.length} |`);
  console.log(rows.at(-1));
}
server.kill("SIGTERM");
await server.exited;
receiver.kill();

const report = `# Crash safety (issue 11, item 2)

Run: ${new Date().toISOString()} · \`CRASH_SEED=${SEED} bun run bench:crash\` · ${WRITERS} writers creating records over HTTP as fast as the server answers, a webhook rule on \`record.created\` to a receiver in its own process, SIGKILL after a random delay, then a restart.

| cycle | killed after | creates answered 201 | acknowledged so far | of them missing after the kill | of them not delivered 30 s after the restart |
|---|---|---|---|---|---|
${rows.join("\n")}

**${acknowledged.length} creates acknowledged over ${CYCLES} cycles: ${lost} lost, ${undelivered} not delivered.**
`;
writeFileSync(join(REPO, "bench/results/crash.md"), report);
console.log(report);
if (lost > 0 || undelivered > 0) process.exit(1);
