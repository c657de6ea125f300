/**
 * `bun run bench:remotes` (issue 39): remotes between two instances of the built binary on this
 * machine, the team's serving on core 0, the laptop's commands on core 1:
 *  - clone of a space of 100,000 records (BENCH_CLONED) over HTTP, against `basalt dump` + `basalt
 *    load` of the same space (the same rows copied, ids kept, without HTTP) in the same run;
 *  - pull of 1,000 changes merged on the team, one change request each, against reading the same
 *    commit pages and applying 1,000 bare UPDATEs in one transaction;
 *  - push of 1,000 local changes, one change request each, against the same 1,000 bodies posted in
 *    turn to a bare Bun server that parses each and inserts a row in one SQLite transaction.
 * Writes bench/results/remotes.md.
 */
import { Database } from "bun:sqlite";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { benchHarness, benchServer, REPO } from "./harness";

const harness = benchHarness();
const port = 7495;
const laptopPort = 7496;
const team = benchServer(harness, port);
const RECORDS = Number(process.env.BENCH_CLONED ?? 100_000);
const CHANGES = 1000;
const binary = join(REPO, "dist/basalt");
const laptopDir = join(harness.dir, "laptop");
const onCore1 = (args: string[], env: Record<string, string> = {}) => {
  const result = Bun.spawnSync(["taskset", "-c", "1", binary, ...args], { cwd: harness.dir, env: { ...process.env, ...env }, stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`basalt ${args.join(" ")}: ${result.stderr.toString()}`);
  return result.stdout.toString();
};
const seconds = (started: number) => (performance.now() - started) / 1000;

await team.start();
await team.api("POST", "/api/v1/bases", {
  slug: "books",
  name: "Books",
  fields: [
    { slug: "title", name: "Title", type: "text" },
    { slug: "author", name: "Author", type: "text" },
    { slug: "year", name: "Year", type: "number" },
    { slug: "read", name: "Read", type: "checkbox" },
  ],
});
for (let made = 0; made < RECORDS; made += 1000) {
  const records = Array.from({ length: Math.min(1000, RECORDS - made) }, (_, i) => ({ fields: { title: `Book ${made + i + 1}`, author: `Author ${(made + i) % 5000}`, year: 1900 + ((made + i) % 125), read: i % 2 === 0 } }));
  await team.api("POST", "/api/v1/bases/books/records/bulk-change-request", { records });
}
const key = team.headers.authorization.slice("Bearer ".length);
const teamUrl = `http://127.0.0.1:${port}`;

// The floor of a clone: the same space's rows copied with their ids, from a file, without HTTP.
const dumpFile = join(harness.dir, "bench.dump");
let started = performance.now();
harness.run([binary, "dump", "--space", "bench", "--out", dumpFile, "--data-dir", join(harness.dir, "data")]);
const floorDir = join(harness.dir, "floor");
onCore1(["users", "create", "--email", "bench@example.com", "--name", "Bench", "--password", "bench password", "--data-dir", floorDir]);
onCore1(["load", "--from", dumpFile, "--owner", "bench@example.com", "--data-dir", floorDir]);
const dumpLoadSeconds = seconds(started);
rmSync(floorDir, { recursive: true, force: true });

onCore1(["users", "create", "--email", "bench@example.com", "--name", "Bench", "--password", "bench password", "--data-dir", laptopDir]);
started = performance.now();
onCore1(["clone", teamUrl, "--space", "bench", "--as", "bench@example.com", "--data-dir", laptopDir], { BASALT_REMOTE_KEY: key });
const cloneSeconds = seconds(started);

// Both sides write while the link is cut: the team 1,000 changes (one change request each), and
// 10 titles the laptop changes too (true conflicts); the laptop 1,000 changes of other records and
// 10 of the same records' other field (merged), while the team's server is stopped.
const ids: string[] = [];
for (let cursor: string | null = null, first = true; first || (cursor && ids.length < 2 * CHANGES + 20); first = false) {
  const listed: { records: { id: string }[]; nextCursor: string | null } = await team.api("GET", `/api/v1/records?baseId=books&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
  ids.push(...listed.records.map((record) => record.id));
  cursor = listed.nextCursor;
}
const CONFLICTS = 10;
const contested = ids.slice(2 * CHANGES, 2 * CHANGES + CONFLICTS);
const state = await team.api("GET", "/api/v1/sync/state");
for (let i = 0; i < CHANGES; i++) await team.api("POST", `/api/v1/records/${ids[i]}/change-requests`, { operation: "update", fields: { author: `Team author ${i}` } });
for (const id of contested) await team.api("POST", `/api/v1/records/${id}/change-requests`, { operation: "update", fields: { title: "The team's title" } });
await team.stop();

const laptopKey = onCore1(["keys", "create", "--email", "bench@example.com", "--name", "laptop", "--level", "write", "--data-dir", laptopDir]).trim().split("\n")[0];
const laptop = Bun.spawn(["taskset", "-c", "1", binary, "serve", "--port", String(laptopPort), "--data-dir", laptopDir, "--sync-every", "off"], { stdout: "ignore", stderr: "inherit" });
await harness.waitFor(`http://127.0.0.1:${laptopPort}/api/health`);
const onLaptop = async (id: string, fields: Record<string, unknown>) => {
  const response = await fetch(`http://127.0.0.1:${laptopPort}/api/v1/records/${id}/change-requests`, {
    method: "POST",
    headers: { authorization: `Bearer ${laptopKey}`, "x-basalt-space": "bench", "content-type": "application/json" },
    body: JSON.stringify({ operation: "update", fields }),
  });
  if (!response.ok) throw new Error(`local change: ${response.status} ${await response.text()}`);
};
for (let i = 0; i < CHANGES; i++) await onLaptop(ids[CHANGES + i], { title: `Edited offline ${i}` });
for (const id of contested) await onLaptop(id, { title: "The laptop's title" });
for (let i = 0; i < CONFLICTS; i++) await onLaptop(ids[i], { year: 2000 + i });
laptop.kill("SIGTERM");
await laptop.exited;
const offline = Bun.spawnSync([binary, "pull", "--space", "bench", "--data-dir", laptopDir], { stderr: "pipe" });
const offlineSaid = offline.stderr.toString().trim();
if (offline.exitCode === 0 || !offlineSaid.includes("cannot be reached")) throw new Error(`a pull with the link cut: ${offline.exitCode} ${offlineSaid}`);
await team.start();

started = performance.now();
const pulledSaid = onCore1(["pull", "--space", "bench", "--data-dir", laptopDir]).trim();
const pullSeconds = seconds(started);

// Its floor: the same commit pages read, and bare UPDATEs of as many rows in one transaction.
started = performance.now();
const pulled: { recordId: string; payload: Record<string, unknown> }[] = [];
for (let after: number | null = state.head; after !== null; ) {
  const commits = await team.api("GET", `/api/v1/sync/commits?after=${after}&limit=1000`);
  pulled.push(...commits.commits);
  after = commits.next;
}
const readSeconds = seconds(started);
const scratch = new Database(join(harness.dir, "pull-floor.db"));
scratch.run("CREATE TABLE records (id TEXT PRIMARY KEY, data TEXT NOT NULL)");
scratch.transaction(() => {
  const insert = scratch.prepare("INSERT OR IGNORE INTO records VALUES (?, '{}')");
  for (const commit of pulled) insert.run(commit.recordId);
})();
started = performance.now();
scratch.transaction(() => {
  const update = scratch.prepare("UPDATE records SET data = ? WHERE id = ?");
  for (const commit of pulled) update.run(JSON.stringify(commit.payload), commit.recordId);
})();
const pullFloorSeconds = readSeconds + seconds(started);
scratch.close();

started = performance.now();
const pushed = onCore1(["push", "--space", "bench", "--data-dir", laptopDir]);
const pushSeconds = seconds(started);

// Both sides now hold the same records, but the 10 in conflict, each a change request in conflict on the laptop, which must decide.
const recordsOf = (path: string) => {
  const db = new Database(path, { readonly: true });
  const rows = db.query<{ id: string; data: string; status: string }, []>("SELECT id, data, status FROM records ORDER BY id").all();
  const conflicts = db.query<{ n: number }, []>("SELECT count(*) AS n FROM change_requests WHERE status = 'conflict'").get()!.n;
  db.close();
  const sorted = (data: string) => JSON.stringify(Object.entries(JSON.parse(data)).sort(([a], [b]) => a.localeCompare(b)));
  return { rows: new Map(rows.map((row) => [row.id, `${row.status} ${sorted(row.data)}`])), conflicts };
};
const there = recordsOf(team.dbPath);
const here = recordsOf(join(laptopDir, "basalt.db"));
const differing = [...there.rows.keys()].filter((id) => here.rows.get(id) !== there.rows.get(id));
const converged = there.rows.size === here.rows.size && differing.length === CONFLICTS && differing.every((id) => contested.includes(id)) && here.conflicts === CONFLICTS && there.conflicts === 0;
if (!converged) throw new Error(`not converged: ${there.rows.size} vs ${here.rows.size} records, ${differing.length} differ, ${here.conflicts} conflicts here, ${there.conflicts} there`);

// Its floor: the same 1,000 bodies posted in turn to a bare server that parses each and inserts a row.
const floorDb = new Database(join(harness.dir, "push-floor.db"));
floorDb.run("PRAGMA journal_mode = WAL");
floorDb.run("CREATE TABLE proposals (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
const insert = floorDb.prepare("INSERT INTO proposals VALUES (?, ?)");
const floor = Bun.serve({
  port: 0,
  async fetch(request) {
    const body = (await request.json()) as { changeRequestId: string };
    floorDb.transaction(() => insert.run(body.changeRequestId, JSON.stringify(body)))();
    return Response.json({ changeRequestId: body.changeRequestId, status: "merged" }, { status: 201 });
  },
});
started = performance.now();
for (let i = 0; i < CHANGES; i++) {
  const body = { changeRequestId: `crq_${String(i).padStart(16, "0")}`, origin: "ins_00000000000000000000", baseId: "books", operations: [{ kind: "record_update", recordId: ids[i], fields: { title: `Edited offline ${i}` }, base: { title: `Book ${i + 1}` } }] };
  await fetch(`http://127.0.0.1:${floor.port}/`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}
const pushFloorSeconds = seconds(started);
await floor.stop(true);
floorDb.close();
await team.stop();

const row = (what: string, took: number, floorTook: number, floorWhat: string) => `| ${what} | ${took.toFixed(2)} s | ${floorTook.toFixed(2)} s (${floorWhat}) | ${(took / floorTook).toFixed(1)}x |`;
const table = [
  "| what | Basalt | floor | Basalt / floor |",
  "|---|---|---|---|",
  row(`clone of ${RECORDS.toLocaleString("en")} records`, cloneSeconds, dumpLoadSeconds, "basalt dump + load"),
  row(`pull of ${(CHANGES + CONFLICTS).toLocaleString("en")} changes (${CONFLICTS} in conflict)`, pullSeconds, pullFloorSeconds, "pages read + bare UPDATEs"),
  row(`push of ${(CHANGES + CONFLICTS).toLocaleString("en")} changes`, pushSeconds, pushFloorSeconds, "bodies posted to a bare server"),
].join("\n");
const report = `# Remotes (bun run bench:remotes)

Measured ${new Date().toISOString().slice(0, 10)} on this machine (2 cores): the team's binary on core 0, the laptop's commands on core 1. Each command's time includes starting the binary (about 0.1 s).

${table}

With the team's server stopped, the laptop's pull said: ${offlineSaid}

The pull's own report: ${pulledSaid}

The push's own report: ${pushed.trim().split("\n").at(-1)}

Then both databases hold the same ${there.rows.size.toLocaleString("en")} records but the ${CONFLICTS} in conflict, each a change request in \`conflict\` on the laptop (${here.conflicts}; ${there.conflicts} on the team's).
`;
console.log(report);
writeFileSync(join(REPO, "bench/results/remotes.md"), report);
