/**
 * `bun bench/wire.ts [name=program ...]`: what a short route costs the server on the wire, read as
 * the server's CPU time a request rather than requests a second (which the machine's other load
 * moves far more). Each server runs on core 0 on its own copy of the same data, wrk on core 1; the
 * servers take turns, one wrk run of `WIRE_SECONDS` (default 1) each, for `WIRE_ROUNDS` rounds
 * (default 8), and each run reads the server's CPU time from `/proc/<pid>/task/<tid>/schedstat`
 * (all its threads). A program is a Basalt entry (`src/main.ts` of any tree) or a built binary;
 * with none, this tree's `src/main.ts`. The floor (`bench/floor.ts`) always runs beside them.
 * `WIRE_ROUTES=health,auth` runs only those routes; `WIRE_ORIGIN=1` sends an Origin header;
 * `WIRE_DATA=<folder>` keeps the seeded data there (with its key and record in `seed.json`) and
 * reuses it in later runs, e.g. for a profile of one server (`bun --cpu-prof-md`).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { answering, BUN, cpuNs, REPO } from "./harness";

process.env.NODE_ENV ??= "production";
const ROUNDS = Number(process.env.WIRE_ROUNDS ?? 8);
const SECONDS = Number(process.env.WIRE_SECONDS ?? 1);
const ONLY = process.env.WIRE_ROUTES?.split(",");
const dir = mkdtempSync(join(tmpdir(), "basalt-wire-"));

/** The data of `bun run bench`'s short routes: a user, a space "bench", a write key, a base "papers" with one record. */
async function seeded(): Promise<{ apiKey: string; record: string }> {
  const kept = process.env.WIRE_DATA;
  if (kept && existsSync(join(kept, "seed.json"))) {
    cpSync(kept, join(dir, "seed"), { recursive: true });
    return JSON.parse(readFileSync(join(kept, "seed.json"), "utf8"));
  }
  const { inProcessApp, benchKey } = await import("./in-process");
  const data = join(dir, "seed");
  const { ctx, app, close } = await inProcessApp(data);
  const apiKey = await benchKey(ctx);
  const headers = { authorization: `Bearer ${apiKey}`, "x-basalt-space": "bench", "content-type": "application/json" };
  const api = async (method: string, path: string, body: unknown) => (await app.handle(new Request(`http://localhost${path}`, { method, headers, body: JSON.stringify(body) }))).json();
  await api("POST", "/api/v1/bases", { slug: "papers", name: "Papers", fields: [1, 2, 3, 4, 5].map((i) => ({ slug: `f${i}`, name: `Field ${i}`, type: i % 2 ? "text" : "number" })) });
  const record = await api("POST", "/api/v1/bases/papers/change-requests", { fields: { f1: "a title", f2: 42, f3: "some text", f4: 7, f5: "more text" } });
  await close();
  const seed = { apiKey, record: record.id };
  if (kept) {
    writeFileSync(join(data, "seed.json"), JSON.stringify(seed));
    cpSync(data, kept, { recursive: true });
  }
  return seed;
}

type Server = { name: string; pid: number; base: string; floor: boolean; stop: () => void };

async function started(name: string, program: string | null, port: number): Promise<Server> {
  const data = join(dir, name);
  cpSync(join(dir, "seed"), data, { recursive: true });
  const command = program === null ? [BUN, join(REPO, "bench/floor.ts"), join(data, "basalt.db"), String(port)] : [...(program.endsWith(".ts") ? [BUN, program] : [program]), "serve", "--port", String(port), "--data-dir", data];
  const child = Bun.spawn(["taskset", "-c", "0", ...command], { stdout: "ignore", stderr: "inherit" });
  const base = `http://127.0.0.1:${port}`;
  await answering(`${base}${program === null ? "/health" : "/api/health"}`);
  return { name, pid: child.pid, base, floor: program === null, stop: () => child.kill() };
}

/** One wrk run against `url`: requests answered and the server's CPU µs a request. */
function measured(server: Server, url: string, headers: Record<string, string>): { rps: number; cpuUs: number } {
  const flags = Object.entries(headers).flatMap(([header, value]) => ["-H", `${header}: ${value}`]);
  const before = cpuNs(server.pid);
  const run = Bun.spawnSync(["taskset", "-c", "1", "wrk", "-t1", "-c50", `-d${SECONDS}s`, ...flags, url], { stderr: "pipe" });
  const spent = cpuNs(server.pid) - before;
  const out = run.stdout.toString();
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN);
  if (/Non-2xx/.test(out) || !requests) throw new Error(`${url}: ${out}${run.stderr}`);
  return { rps: requests / SECONDS, cpuUs: spent / 1000 / requests };
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];

const { apiKey, record } = await seeded();
const programs = process.argv.slice(2).map((arg) => {
  const at = arg.indexOf("=");
  return at < 0 ? { name: arg.replace(/\W+/g, "-"), program: arg } : { name: arg.slice(0, at), program: arg.slice(at + 1) };
});
if (programs.length === 0) programs.push({ name: "basalt", program: join(REPO, "src/main.ts") });
const servers: Server[] = [];
let port = 17_600 + Math.floor(Math.random() * 300);
for (const { name, program } of programs) servers.push(await started(name, program, port++));
servers.push(await started("floor", null, port++));

const origin: Record<string, string> = process.env.WIRE_ORIGIN ? { origin: "http://localhost:3000" } : {};
const auth = { ...origin, authorization: `Bearer ${apiKey}` };
const inSpace = { ...auth, "x-basalt-space": "bench" };
const routes = [
  { name: "health", path: "/api/health", floorPath: "/health", headers: origin },
  { name: "auth", path: "/api/v1/auth", floorPath: "/auth", headers: auth },
  { name: "nodes", path: "/api/v1/nodes", floorPath: "/nodes", headers: inSpace },
  { name: "record", path: `/api/v1/records/${record}`, floorPath: `/records/${record}`, headers: inSpace },
].filter((route) => !ONLY || ONLY.includes(route.name));

try {
  for (const server of servers) for (const route of routes) measured(server, `${server.base}${server.floor ? route.floorPath : route.path}`, route.headers); // warm-up
  console.log(`| route | ${servers.map((server) => `${server.name} CPU µs (req/s)`).join(" | ")} | ${servers.slice(0, -1).map((server) => `${server.name} of the floor`).join(" | ")} |`);
  console.log(`|---|${servers.map(() => "---|").join("")}${servers.slice(0, -1).map(() => "---|").join("")}`);
  for (const route of routes) {
    const runs = servers.map(() => [] as { rps: number; cpuUs: number }[]);
    for (let round = 0; round < ROUNDS; round++) {
      // Each round in another order, so no server always follows the same one.
      for (let turn = 0; turn < servers.length; turn++) {
        const index = (turn + round) % servers.length;
        const server = servers[index];
        runs[index].push(measured(server, `${server.base}${server.floor ? route.floorPath : route.path}`, route.headers));
      }
    }
    const floorRuns = runs.at(-1)!;
    const cells = runs.map((each) => `${median(each.map((run) => run.cpuUs)).toFixed(1)} (${median(each.map((run) => run.rps)).toFixed(0)})`);
    // The ratio of the medians, and in brackets the median of each round's ratio (a round's servers ran within seconds of each other).
    const floorMedian = median(floorRuns.map((run) => run.cpuUs));
    const ratios = runs
      .slice(0, -1)
      .map((each) => `${((floorMedian / median(each.map((run) => run.cpuUs))) * 100).toFixed(0)}% (${(median(each.map((run, round) => floorRuns[round].cpuUs / run.cpuUs)) * 100).toFixed(0)}%)`);
    console.log(`| ${route.name} | ${cells.join(" | ")} | ${ratios.join(" | ")} |`);
  }
} finally {
  for (const server of servers) server.stop();
  rmSync(dir, { recursive: true, force: true });
}
