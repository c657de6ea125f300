/**
 * `bun run bench:webhooks`: the delivery loop under load, with the binary on core 0, and the load,
 * the receiver (`bench/receiver.ts`, its own process) and wrk on core 1. Measures (issue 9):
 * - latency from a create's 201 to the receiver getting its POST, at a paced 500 creates/s;
 * - deliveries per second for a backlog, and a read route's throughput while they go out;
 * - another rule's latency while one rule's target never answers;
 * - one space's latency while another space's 100 rules aim at a target that never answers and it
 *   test-fires 300 times at once (issue 20: the pool is shared fairly between spaces).
 * Writes its table to bench/results/webhooks.md. Needs `wrk` and `taskset`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const REPO = join(import.meta.dir, "..");
/** `BENCH_BINARY` measures another build (the code before a change, alternating with this one). */
const binary = process.env.BENCH_BINARY ?? join(REPO, "dist/basalt");
const dir = mkdtempSync(join(tmpdir(), "basalt-bench-hooks-"));
const dataDir = join(dir, "data");

function run(command: string[]): string {
  const result = Bun.spawnSync(command, { cwd: dir, stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${command.join(" ")} failed: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

// The receiver runs in its own process (bench/receiver.ts), with its own dead path that never answers.
const receiverPort = 17442;
const receiverProcess = Bun.spawn(["taskset", "-c", "1", process.execPath, join(import.meta.dir, "receiver.ts"), String(receiverPort)], { stdout: "ignore", stderr: "inherit" });
const receiverUrl = `http://127.0.0.1:${receiverPort}`;
const receiverCall = async <T>(method: string, path: string): Promise<T> => (await fetch(`${receiverUrl}${path}`, { method })).json().catch(() => undefined) as Promise<T>;
const delivered = () => receiverCall<number>("GET", "/count");
/** Wall-clock milliseconds, comparable with the receiver's. */
const now = () => performance.timeOrigin + performance.now();
for (let i = 0; i < 200; i++) {
  if (await fetch(`${receiverUrl}/count`).then((r) => r.ok, () => false)) break;
  await Bun.sleep(25);
}

const cli = (...args: string[]) => run([binary, ...args, "--data-dir", dataDir]).trim();
cli("users", "create", "--email", "bench@example.com", "--name", "Bench", "--password", "bench password");
cli("spaces", "create", "--name", "Bench", "--slug", "bench", "--owner", "bench@example.com");
const key = cli("keys", "create", "--email", "bench@example.com", "--name", "bench", "--level", "manage");
cli("users", "create", "--email", "other@example.com", "--name", "Other", "--password", "other password");
cli("spaces", "create", "--name", "Other", "--slug", "other", "--owner", "other@example.com");
const otherKey = cli("keys", "create", "--email", "other@example.com", "--name", "other", "--level", "manage");
const port = 17441;
const server = Bun.spawn(["taskset", "-c", "0", binary, "serve", "--port", String(port), "--data-dir", dataDir], {
  env: { ...process.env, BASALT_WEBHOOK_ALLOW: "127.0.0.1/32" },
  stdout: "ignore",
  stderr: "inherit",
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 200; i++) {
  if (await fetch(`${base}/api/health`).then((r) => r.ok, () => false)) break;
  await Bun.sleep(25);
}
const caller = (apiKey: string) => {
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  return (method: string, path: string, body?: unknown) => fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
};
const api = caller(key);
const otherApi = caller(otherKey);
const rule = (name: string, target: string, call = api) => call("POST", "/api/v1/webhooks", { name, eventType: "record.created", actionKind: "webhook", config: { targetUrl: target } });

const papers = { slug: "papers", name: "Papers", fields: [1, 2, 3, 4, 5].map((i) => ({ slug: `f${i}`, name: `F${i}`, type: "text" })) };
await api("POST", "/api/v1/bases", papers);
const fields = { f1: "a", f2: "b", f3: "c", f4: "d", f5: "e" };

/** Paced creates for `seconds`; answers the latency from each 201 to its arrival at `path` (and each create's own, in `requests`). */
async function pacedLatency(perSecond: number, seconds: number, path: string, requests: number[] = []): Promise<number[]> {
  const answered = new Map<string, number>();
  const pending: Promise<void>[] = [];
  const started = performance.now();
  const arrived = async () => new Map(Object.entries(await receiverCall<Record<string, number>>("GET", "/arrivals")));
  for (let sent = 0; sent < perSecond * seconds; sent++) {
    const due = started + (sent * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    const sentAt = now();
    pending.push(
      api("POST", "/api/v1/bases/papers/change-requests", { fields })
        .then((r) => r.json())
        .then((record: { id: string }) => {
          answered.set(record.id, now());
          requests.push(now() - sentAt);
        }),
    );
  }
  await Promise.all(pending);
  const deadline = performance.now() + 10_000;
  let arrivals = await arrived();
  while (performance.now() < deadline && [...answered.keys()].some((id) => !arrivals.has(`${path} ${id}`))) {
    await Bun.sleep(100);
    arrivals = await arrived();
  }
  const latencies = [...answered].map(([id, at]) => (arrivals.get(`${path} ${id}`) ?? Infinity) - at);
  if (process.env.BENCH_TRACE) console.log(latencies.map((l, i) => (l > 20 ? `${i}:${l.toFixed(0)}` : "")).filter(Boolean).join(" "));
  return latencies;
}

/** wrk on a read route, run without blocking this process. */
async function wrkReads(seconds: number, recordId: string): Promise<number> {
  const child = Bun.spawn(["wrk", "-t1", "-c50", `-d${seconds}s`, "-H", `authorization: Bearer ${key}`, `${base}/api/v1/records/${recordId}`], { stdout: "pipe" });
  const out = await new Response(child.stdout).text();
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
}

const rows: string[] = [];
try {
  const live = await rule("live", `${receiverUrl}/live`);
  expect201(live);
  // A fresh process compiles its handlers and code paths on first use: warm them before measuring.
  await pacedLatency(200, 2, "/live");
  const latency = await pacedLatency(500, 5, "/live");
  await api("DELETE", `/api/v1/webhooks/${((await live.json()) as { id: string }).id}`);
  rows.push(`| create → receiver, paced 500 creates/s for 5 s | p50 ${percentile(latency, 50).toFixed(1)} ms, p99 ${percentile(latency, 99).toFixed(1)} ms, ${latency.filter((l) => l === Infinity).length} lost | p50 < 5 ms, p99 < 50 ms |`);

  const sample = (await (await api("POST", "/api/v1/bases/papers/change-requests", { fields })).json()) as { id: string };
  const idleReads = await wrkReads(4, sample.id);
  // A backlog made while the receiver holds its answers (the pool fills, the rest waits in the
  // database), then released: only the delivery loop works while it is measured.
  const backlog = 20_000;
  await receiverCall("POST", "/hold");
  const ruleId = ((await (await rule("backlog", `${receiverUrl}/backlog`)).json()) as { id: string }).id;
  for (let made = 0; made < backlog; made += 1000) {
    await api("POST", "/api/v1/bases/papers/records/bulk-change-request", { records: Array.from({ length: 1000 }, () => ({ fields })) });
  }
  await Bun.sleep(500);
  const before = await delivered();
  await receiverCall("POST", "/release");
  const startedAt = performance.now();
  const busyReads = wrkReads(3, sample.id);
  while ((await delivered()) - before < backlog && performance.now() - startedAt < 120_000) await Bun.sleep(5);
  const rate = ((await delivered()) - before) / ((performance.now() - startedAt) / 1000);
  rows.push(`| deliveries of a ${backlog.toLocaleString("en")}-event backlog | ${rate.toFixed(0)}/s | ≥ 2,000/s |`);
  rows.push(`| GET /api/v1/records/{id} while they go out | ${(await busyReads).toFixed(0)} req/s against ${idleReads.toFixed(0)} idle (${((1 - (await busyReads) / idleReads) * 100).toFixed(0)}% lost) | < 25% lost |`);
  await api("DELETE", `/api/v1/webhooks/${ruleId}`);

  expect201(await rule("dead", `${receiverUrl}/dead`));
  expect201(await rule("beside", `${receiverUrl}/beside`));
  const beside = await pacedLatency(100, 5, "/beside");
  rows.push(`| another rule's latency while one target never answers, 100 creates/s | p50 ${percentile(beside, 50).toFixed(1)} ms, p99 ${percentile(beside, 99).toFixed(1)} ms | p99 < 50 ms |`);

  // Another space's 100 rules aim at the dead path; it creates 10 records a second (1,000 attempts
  // that hang for 10 s each) and test-fires 300 times at once, while this space creates 500 a second.
  await otherApi("POST", "/api/v1/bases", papers);
  const otherRules: string[] = [];
  for (let i = 0; i < 100; i++) otherRules.push(((await (await rule(`dead ${i}`, `${receiverUrl}/dead`, otherApi)).json()) as { id: string }).id);
  const otherLoad = setInterval(() => void otherApi("POST", "/api/v1/bases/papers/change-requests", { fields }), 100);
  await Bun.sleep(2000);
  const testFires = Array.from({ length: 300 }, () => otherApi("POST", `/api/v1/webhooks/${otherRules[0]}/test-fire`).then((r) => r.status));
  expect201(await rule("fair", `${receiverUrl}/fair`));
  const creates: number[] = [];
  const fair = await pacedLatency(500, 5, "/fair", creates);
  clearInterval(otherLoad);
  const fired = await Promise.all(testFires);
  rows.push(
    `| this space at 500 creates/s while another's 100 rules aim at a target that never answers (and it test-fires 300 times at once: ${fired.filter((s) => s === 429).length} answered 429) | create → receiver p50 ${percentile(fair, 50).toFixed(1)} ms, p99 ${percentile(fair, 99).toFixed(1)} ms, ${fair.filter((l) => l === Infinity).length} lost; the create itself p99 ${percentile(creates, 99).toFixed(1)} ms | p99 < 50 ms |`,
  );
} finally {
  server.kill("SIGKILL");
  await server.exited;
  receiverProcess.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}

function expect201(response: Response) {
  if (response.status !== 201) throw new Error(`rule creation failed: ${response.status}`);
}

const report = `
## Webhooks (\`bun run bench:webhooks\`, ${new Date().toISOString()})

Server on core 0; the receiver (its own process), the load and wrk on core 1; loopback.

| what | measured | target |
|---|---|---|
${rows.join("\n")}
`;
writeFileSync(join(REPO, "bench/results/webhooks.md"), report.trimStart());
console.log(report);
