/**
 * `bun bench/triggers.ts <folder>`: what each trigger on `records` adds to an insert (a create's
 * record row), on a copy of the database `bun bench/handle.ts` left in `<folder>` (`BENCH_DATA`).
 * Records of the base "papers" are inserted 50 to a transaction, as the floor writes them, with
 * every trigger, then with one trigger dropped at a time, then with none; the thread's CPU
 * microseconds an insert, least of `BENCH_ROUNDS` rounds (default 5).
 */
import { Database } from "bun:sqlite";
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const folder = process.argv[2];
if (!folder) throw new Error("usage: bun bench/triggers.ts <folder of bench/handle.ts's data>");
const source = join(folder, "basalt.db");
const copy = join(folder, "triggers.db");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const INSERTS = 5000;
const cpu = () => {
  const { user, system } = process.threadCpuUsage();
  return user + system;
};

function trial(drop: string[]): number {
  const checkpoint = new Database(source);
  checkpoint.run("PRAGMA wal_checkpoint(TRUNCATE)");
  checkpoint.close();
  copyFileSync(source, copy);
  const db = new Database(copy);
  for (const pragma of ["journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON", "cache_size = -32000"]) db.run(`PRAGMA ${pragma}`);
  for (const name of drop) db.run(`DROP TRIGGER ${name}`);
  const base = db.query("SELECT b.id, b.space_id FROM bases b JOIN nodes n ON n.id = b.node_id WHERE n.slug = 'papers'").get() as { id: string; space_id: string };
  const user = (db.query("SELECT id FROM users LIMIT 1").get() as { id: string }).id;
  const insert = db.query("INSERT INTO records (id, space_id, base_id, status, data, auto_number, head_commit_id, created_by, updated_by, created_at, updated_at) VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?)");
  const data = JSON.stringify({ f1: "a title", f2: 42, f3: "some text", f4: 7, f5: "more text" });
  let spent = 0;
  for (let made = 0; made < INSERTS; ) {
    db.run("BEGIN IMMEDIATE");
    const start = cpu();
    for (let i = 0; i < 50; i++, made++) insert.run(`rec_trigger${made.toString().padStart(8, "0")}`, base.space_id, base.id, data, 1e9 + made, "cmt_trigger", user, user, Date.now(), Date.now());
    spent += cpu() - start;
    db.run("COMMIT");
  }
  db.close();
  rmSync(copy, { force: true });
  for (const suffix of ["-wal", "-shm"]) rmSync(copy + suffix, { force: true });
  return spent / INSERTS;
}

const triggers = (new Database(source, { readonly: true }).query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'records' AND sql LIKE '%AFTER INSERT%'").all() as { name: string }[]).map((row) => row.name);
const trials: [string, string[]][] = [["every trigger", []], ...triggers.map((name): [string, string[]] => [`without ${name}`, [name]]), ["without any", triggers]];
const least = new Map<string, number>();
for (let round = 0; round < ROUNDS; round++) for (const [name, drop] of trials) least.set(name, Math.min(least.get(name) ?? Number.POSITIVE_INFINITY, trial(drop)));
const all = least.get("every trigger")!;
console.log("| insert | CPU µs | the trigger's share |\n|---|---|---|");
for (const [name, us] of least) console.log(`| ${name} | ${us.toFixed(1)} | ${name === "every trigger" ? "" : (all - us).toFixed(1)} |`);
