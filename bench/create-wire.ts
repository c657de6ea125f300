/**
 * `bun bench/create-wire.ts <checkout> [<checkout> …]`: the create of `bun run bench` on the wire,
 * the code of several checkouts side by side (e.g. a copy of `main` made with `git archive` and
 * this worktree) and the floor (`bench/floor.ts`, on the first checkout's data). Each server runs
 * from source in production mode on a fresh data directory of its own with the same user, space,
 * key and base, on core 0; wrk (50 connections, `BENCH_SECONDS`, default 2) on core 1; the servers
 * take turns, `BENCH_ROUNDS` times (default 4), in the order reversed every other round. Besides
 * each run's rate it reads each server's CPU time a create (`/proc/<pid>/task/*\/schedstat`, every
 * thread: the collector's and the JIT's share the core), which the machine's other load moves far
 * less than the rate. Run it under the bench lock.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { answering, BUN, cpuNs } from "./harness";

const checkouts = process.argv.slice(2).map((path) => resolve(path));
if (checkouts.length === 0) throw new Error("usage: bun bench/create-wire.ts <checkout> [<checkout> …]");
const SECONDS = process.env.BENCH_SECONDS ?? "2";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const env = { ...process.env, NODE_ENV: "production" };
const dir = mkdtempSync(join(tmpdir(), "basalt-create-wire-"));

const run = (command: string[]) => {
  const result = Bun.spawnSync(command, { stderr: "pipe", env });
  if (result.exitCode !== 0) throw new Error(`${command.join(" ")}: ${result.stderr}`);
  return result.stdout.toString();
};
const script = join(dir, "create.lua");
const body = JSON.stringify({ fields: { f1: "a title", f2: 42, f3: "some text", f4: 7, f5: "more text" } });
writeFileSync(script, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["content-type"] = "application/json"\n`);
const FIELDS = [1, 2, 3, 4, 5].map((i) => ({ slug: `f${i}`, name: `Field ${i}`, type: i % 2 ? "text" : "number" }));

type Server = { name: string; url: string; headers: Record<string, string>; process: ReturnType<typeof Bun.spawn> };
const servers: Server[] = [];
let port = 18500;
try {
  for (const [i, checkout] of checkouts.entries()) {
    const data = join(dir, `data-${i}`);
    const cli = (...args: string[]) => run([BUN, join(checkout, "src/main.ts"), ...args, "--data-dir", data]);
    cli("users", "create", "--email", "bench@example.com", "--name", "Bench", "--password", "bench password");
    cli("spaces", "create", "--name", "Bench", "--slug", "bench", "--owner", "bench@example.com");
    const key = cli("keys", "create", "--email", "bench@example.com", "--name", "bench", "--level", "write").trim();
    const headers = { authorization: `Bearer ${key}`, "x-basalt-space": "bench" };
    const own = port++;
    const server = Bun.spawn(["taskset", "-c", "0", BUN, join(checkout, "src/main.ts"), "serve", "--port", String(own), "--data-dir", data], { stdout: "ignore", stderr: "inherit", env });
    await answering(`http://127.0.0.1:${own}/api/health`);
    const made = await fetch(`http://127.0.0.1:${own}/api/v1/bases`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ slug: "papers", name: "Papers", fields: FIELDS }) });
    if (!made.ok) throw new Error(await made.text());
    servers.push({ name: `${i}: ${checkout}`, url: `http://127.0.0.1:${own}/api/v1/bases/papers/change-requests`, headers, process: server });
    if (i === 0) {
      const floorPort = port++;
      const floor = Bun.spawn(["taskset", "-c", "0", BUN, join(checkout, "bench/floor.ts"), join(data, "basalt.db"), String(floorPort)], { stdout: "ignore", stderr: "inherit" });
      await answering(`http://127.0.0.1:${floorPort}/health`);
      servers.push({ name: "floor", url: `http://127.0.0.1:${floorPort}/records`, headers, process: floor });
    }
  }
  const results = new Map<string, { rps: number; us: number }[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
      const flags = Object.entries(server.headers).flatMap(([name, value]) => ["-H", `${name}: ${value}`]);
      const before = cpuNs(server.process.pid);
      const out = run(["taskset", "-c", "1", "wrk", "-t1", "-c50", `-d${SECONDS}s`, "-s", script, ...flags, server.url]);
      const spent = cpuNs(server.process.pid) - before;
      if (/Non-2xx/.test(out)) throw new Error(`${server.name} answered errors: ${out}`);
      const requests = Number(/(\d+) requests in/.exec(out)![1]);
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]);
      results.set(server.name, [...(results.get(server.name) ?? []), { rps, us: spent / 1000 / requests }]);
    }
  }
  console.log("| server | creates/s, each round | CPU µs a create, each round |\n|---|---|---|");
  for (const [name, rounds] of results) console.log(`| ${name} | ${rounds.map((one) => one.rps.toFixed(0)).join(", ")} | ${rounds.map((one) => one.us.toFixed(0)).join(", ")} |`);
} finally {
  for (const server of servers) server.process.kill("SIGTERM");
  await Promise.all(servers.map((server) => server.process.exited));
  rmSync(dir, { recursive: true, force: true });
}
