/**
 * `bun bench/statements.ts`: every SQL statement one direct create runs (the request of `bun run
 * bench`: one record of five fields, merged at once), with its count and CPU microseconds a create,
 * timed (the thread's CPU time) around bun:sqlite's own calls. Triggers run inside the statement that fires them.
 * `BENCH_CREATES` creates (default 5,000), 50 at a time so they group-commit as under wrk.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database, Statement } from "bun:sqlite";

process.env.NODE_ENV ??= "production";
type Timed = { count: number; us: number };
/** The main thread's CPU microseconds: other load on the machine adds less to it than to the wall clock. */
const cpuNow = () => {
  const { user, system } = process.threadCpuUsage();
  return user + system;
};
const timings = new Map<string, Timed>();
let timing = false;
/** What reading the clock twice costs, taken off each statement's time. */
let overhead = 0;
{
  const start = cpuNow();
  for (let i = 0; i < 100_000; i++) cpuNow();
  overhead = (cpuNow() - start) / 100_000;
}
const textOf = new WeakMap<object, string>();
for (const method of ["prepare", "query"] as const) {
  const original = Database.prototype[method] as (this: Database, sql: string, ...rest: unknown[]) => Statement;
  (Database.prototype as unknown as Record<string, unknown>)[method] = function (this: Database, text: string, ...rest: unknown[]) {
    const statement = original.call(this, text, ...rest) as unknown as Record<string, (...args: unknown[]) => unknown>;
    if (textOf.has(statement)) return statement as unknown as Statement;
    textOf.set(statement, text);
    for (const name of ["run", "get", "all", "values"]) {
      const own = statement[name];
      statement[name] = (...args: unknown[]) => timed(text, () => own.apply(statement, args));
    }
    return statement as unknown as Statement;
  };
}
const timed = (text: string, run: () => unknown) => {
  if (!timing) return run();
  const start = cpuNow();
  try {
    return run();
  } finally {
    const spent = timings.get(text) ?? { count: 0, us: 0 };
    spent.count++;
    spent.us += cpuNow() - start - overhead;
    timings.set(text, spent);
  }
};
const originalRun = Database.prototype.run as (this: Database, ...args: unknown[]) => unknown;
(Database.prototype as unknown as Record<string, unknown>).run = function (this: Database, ...args: unknown[]) {
  return timed(String(args[0]), () => originalRun.apply(this, args));
};

const { WriteQueue } = await import("../src/db/write-queue");
// The batches' transactions, whole (their statements and the writes' JavaScript between them).
let inTransactions = 0;
const queue = WriteQueue.prototype as unknown as { runTransaction: (...args: unknown[]) => void };
const runTransaction = queue.runTransaction;
queue.runTransaction = function (this: unknown, ...args: unknown[]) {
  if (!timing) return runTransaction.apply(this, args);
  const start = cpuNow();
  try {
    return runTransaction.apply(this, args);
  } finally {
    inTransactions += cpuNow() - start;
  }
};
const { benchCreates } = await import("./in-process");

const CREATES = Number(process.env.BENCH_CREATES ?? 5000);
const dir = mkdtempSync(join(tmpdir(), "basalt-statements-"));
// `BENCH_FLOOR=1`: the floor's create (bench/floor.ts) on the same data instead, statement by statement.
const { close, createOne } = await benchCreates(dir);
const create = async () => {
  const responses = await Promise.all(Array.from({ length: 50 }, createOne));
  for (const response of responses) if (response.status !== 201) throw new Error(`${response.status} ${await response.text()}`);
};
for (let i = 0; i < 20; i++) await create();
timing = true;
const cpu = process.cpuUsage();
const mainThread = cpuNow();
for (let done = 0; done < CREATES; done += 50) await create();
const spent = process.cpuUsage(cpu);
const spentOnMain = cpuNow() - mainThread;
timing = false;
await close();
rmSync(dir, { recursive: true, force: true });

const rows = [...timings].sort((a, b) => b[1].us - a[1].us);
const total = rows.reduce((sum, [, t]) => sum + t.us, 0);
const perCreate = (us: number) => (us / CREATES).toFixed(1);
console.log(
  `CPU ${perCreate(spent.user + spent.system)} µs a create (main thread ${perCreate(spentOnMain)}; the rest is other threads: the JIT's and the collector's); ` +
    `in the batches' transactions ${perCreate(inTransactions)}, of which SQL ${perCreate(total)} µs (a few statements run outside them)\n`,
);
console.log("| µs a create | runs a create | statement |\n|---|---|---|");
for (const [text, t] of rows) console.log(`| ${(t.us / CREATES).toFixed(2)} | ${(t.count / CREATES).toFixed(2)} | ${text.replace(/\s+/g, " ").slice(0, 220)} |`);
