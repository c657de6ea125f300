/** What the benchmarks share: a scratch directory, commands, waiting for a server, RSS, and wrk. */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const REPO = join(import.meta.dir, "..");
export const BUN = process.execPath;

export interface WrkResult {
  rps: number;
  p50: string;
  p99: string;
}

export function benchHarness() {
  const DURATION = process.env.BENCH_SECONDS ?? "5";
  const dir = mkdtempSync(join(tmpdir(), "basalt-bench-"));

  function run(command: string[], cwd = dir): string {
    const result = Bun.spawnSync(command, { cwd, stderr: "pipe" });
    if (result.exitCode !== 0) throw new Error(`${command.join(" ")} failed: ${result.stderr.toString()}`);
    return result.stdout.toString();
  }

  async function waitFor(url: string, timeoutMs = 10_000): Promise<number> {
    const start = performance.now();
    while (performance.now() - start < timeoutMs) {
      try {
        if ((await fetch(url)).ok) return performance.now() - start;
      } catch {}
      await Bun.sleep(2);
    }
    throw new Error(`${url} did not answer`);
  }

  function rssMb(pid: number): number {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
  }

  /** A wrk script that sends `body` as JSON with each request. */
  function postScript(body: unknown): string {
    const path = join(dir, `post-${Math.random().toString(36).slice(2)}.lua`);
    writeFileSync(path, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(JSON.stringify(body))}\nwrk.headers["content-type"] = "application/json"\n`);
    return path;
  }

  /** A wrk script of its own (Lua), e.g. one that varies each request's body. */
  function luaScript(text: string): string {
    const path = join(dir, `script-${Math.random().toString(36).slice(2)}.lua`);
    writeFileSync(path, text);
    return path;
  }

  /** The wrk command: on core 1 with 50 connections, or `connections` (the servers run on core 0); `body` is sent as JSON, or `{ lua }` runs that script. */
  function wrkCommand(url: string, headers: Record<string, string>, body?: unknown, connections = 50): string[] {
    const flags = Object.entries(headers).flatMap(([name, value]) => ["-H", `${name}: ${value}`]);
    const lua = typeof body === "object" && body !== null && "lua" in body ? String(body.lua) : undefined;
    if (lua !== undefined) flags.push("-s", luaScript(lua));
    else if (body !== undefined) flags.push("-s", postScript(body));
    return ["taskset", "-c", "1", "wrk", "-t1", `-c${connections}`, `-d${DURATION}s`, "--latency", ...flags, url];
  }

  function wrkResult(out: string): WrkResult {
    const pick = (pattern: RegExp) => pattern.exec(out)?.[1] ?? "?";
    return { rps: Number(pick(/Requests\/sec:\s+([\d.]+)/)), p50: pick(/\s50%\s+(\S+)/), p99: pick(/\s99%\s+(\S+)/) };
  }

  /** wrk, waited for (see `wrkCommand`). */
  const wrk = (...args: Parameters<typeof wrkCommand>): WrkResult => wrkResult(run(wrkCommand(...args)));

  /** wrk while the benchmark goes on with other work (its event loop free), e.g. to load a server meanwhile. */
  async function wrkMeanwhile(...args: Parameters<typeof wrkCommand>): Promise<WrkResult> {
    const child = Bun.spawn(wrkCommand(...args), { cwd: dir, stdout: "pipe", stderr: "pipe" });
    const out = await new Response(child.stdout).text();
    if ((await child.exited) !== 0) throw new Error(`wrk failed: ${await new Response(child.stderr).text()}`);
    return wrkResult(out);
  }

  return { DURATION, dir, run, waitFor, rssMb, wrk, wrkMeanwhile };
}

/** The fields of the listing benchmarks' bases: two numbers and three texts, each indexed. */
export const LISTING_FIELDS = [
  { slug: "title", name: "Title", type: "text" },
  { slug: "year", name: "Year", type: "number" },
  { slug: "venue", name: "Venue", type: "text" },
  { slug: "pages", name: "Pages", type: "number" },
  { slug: "notes", name: "Notes", type: "text" },
];

/** A table row of a wrk result against its reference: by the ratio of their p50s, or of their rates. */
export function comparedRow(name: string, result: WrkResult, against: WrkResult, measure: "p50" | "rps"): string {
  const ratio = measure === "p50" ? milliseconds(result.p50) / milliseconds(against.p50) : result.rps / against.rps;
  return `| ${name} | ${result.rps.toFixed(0)} | ${result.p50} | ${result.p99} | ${measure === "p50" ? `${ratio.toFixed(2)}x the p50` : `${(ratio * 100).toFixed(0)}% of the rate`} |`;
}

/** wrk's latency text ("45.87ms", "1.03s", "950.00us") in milliseconds. */
export const milliseconds = (text: string) => (text.endsWith("ms") ? Number.parseFloat(text) : text.endsWith("us") ? Number.parseFloat(text) / 1000 : Number.parseFloat(text) * 1000);

/**
 * The built binary on a fresh data directory with a user, a space "bench" and a write key: start
 * and stop it (on core 0) as often as a benchmark needs, and call its API with that key.
 */
export function benchServer(harness: ReturnType<typeof benchHarness>, port: number) {
  const binary = join(REPO, "dist/basalt");
  const dataDir = join(harness.dir, "data");
  const cli = (...args: string[]) => harness.run([binary, ...args, "--data-dir", dataDir]);
  harness.run([BUN, "run", "build"], REPO);
  cli("users", "create", "--email", "bench@example.com", "--name", "Bench", "--password", "bench password");
  cli("spaces", "create", "--name", "Bench", "--slug", "bench", "--owner", "bench@example.com");
  const key = cli("keys", "create", "--email", "bench@example.com", "--name", "bench", "--level", "write").trim();
  const headers = { authorization: `Bearer ${key}`, "x-basalt-space": "bench" };
  let server: ReturnType<typeof Bun.spawn> | null = null;
  /** Each "slow write" the server logged (a batch that held the writer over 100 ms): its milliseconds, and those spent waiting for the lock. */
  const slowWrites: { ms: number; lockWaitMs: number }[] = [];
  const readLog = async (stdout: ReadableStream<Uint8Array>) => {
    let rest = "";
    const decoder = new TextDecoder();
    for await (const chunk of stdout) {
      const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        const held = /slow write: the writer was held (\d+) ms by \d+ write\(s\), (\d+) ms/.exec(line);
        if (held) slowWrites.push({ ms: Number(held[1]), lockWaitMs: Number(held[2]) });
      }
    }
  };
  return {
    dbPath: join(dataDir, "basalt.db"),
    headers,
    pid: () => server!.pid,
    /** The slow writes logged since the last call. */
    takeSlowWrites: () => slowWrites.splice(0),
    async start(): Promise<void> {
      server = Bun.spawn(["taskset", "-c", "0", binary, "serve", "--port", String(port), "--data-dir", dataDir], { stdout: "pipe", stderr: "inherit", env: { ...process.env } });
      void readLog(server.stdout as ReadableStream<Uint8Array>);
      await harness.waitFor(`http://127.0.0.1:${port}/api/health`);
    },
    async stop(): Promise<void> {
      server?.kill("SIGTERM");
      await server?.exited;
      server = null;
    },
    async api(method: string, path: string, body?: unknown) {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { ...headers, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return response.json();
    },
  };
}

/** A process's CPU time so far, in nanoseconds: every thread's time on a CPU (a thread that ended meanwhile is left out). */
export function cpuNs(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {}
  }
  return total;
}

/** Waits until `url` answers 2xx (a server starting). */
export async function answering(url: string): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await Bun.sleep(20);
  }
  throw new Error(`${url} did not answer`);
}
