import { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { uploadTexts } from "../src/assets/assets";
import { join } from "node:path";
import { BACKUPS_KEPT, dailyUpkeep, pruneExpired, runScheduledBackup, startJobs } from "../src/jobs/schedule";
import { BUN, createBase, REPO, TestServer } from "./helpers";

let server: TestServer;
beforeEach(() => (server = new TestServer()));
afterEach(() => server.stop());

test("scheduled backups are plain SQLite copies; the newest 7 are kept", async () => {
  await server.user("Ada");
  for (let i = 0; i < BACKUPS_KEPT + 2; i++) {
    runScheduledBackup(server.ctx);
    server.clock.advance(1000);
  }
  const files = readdirSync(join(server.dir, "backups")).sort();
  expect(files).toHaveLength(BACKUPS_KEPT);
  expect(files[0]).toBe("basalt-20261121T120002.db");
  const copy = new Database(join(server.dir, "backups", files.at(-1)!), { readonly: true });
  expect(copy.query("SELECT email FROM users").all()).toEqual([{ email: "ada@example.com" }]);
  copy.close();
});

test("what a backup killed midway left in backups/ is removed when the server starts and after each backup", async () => {
  await server.user("Ada");
  const dir = join(server.dir, "backups");
  // As a server killed during a scheduled backup leaves them: the temporary file and SQLite's journal of it.
  const leave = (stamp: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `.basalt-${stamp}.db.0123456789ab.partial`), "cut short");
    writeFileSync(join(dir, `.basalt-${stamp}.db.0123456789ab.partial-journal`), "cut short");
  };
  const partials = () => readdirSync(dir).filter((name) => name.includes(".partial"));
  leave("20261121T110000");
  startJobs(server.ctx).stop();
  expect(partials()).toEqual([]);
  expect(server.logs).toContain(`removed 2 file(s) an interrupted backup left in ${dir}`);
  leave("20261121T113000");
  runScheduledBackup(server.ctx);
  expect(partials()).toEqual([]);
  expect(readdirSync(dir)).toEqual(["basalt-20261121T120000.db"]);
});

test("a scheduled backup killed while it carries the files leaves no backup whose files are partly there; the next start removes what it left", async () => {
  const owner = await server.user("Ada");
  const space = await server.space(owner.id, "Files");
  const texts = Array.from({ length: 3000 }, (_, i) => ({ fileName: `f${i}.txt`, mimeType: "text/plain", text: `file ${i} `.repeat(50) }));
  await uploadTexts(server.ctx, space.id, owner.id, texts);
  const dir = join(server.dir, "backups");
  // Another process runs scheduled backups one after another on the same data directory, as `serve --backup-cron` does, and is killed once one is carrying its files.
  const child = Bun.spawn([BUN, "-e", `
    const { wire } = await import(${JSON.stringify(join(REPO, "src/cli/wiring.ts"))});
    const { openStore } = await import(${JSON.stringify(join(REPO, "src/db/client.ts"))});
    const { loadConfig } = await import(${JSON.stringify(join(REPO, "src/shared/config.ts"))});
    const { ManualClock } = await import(${JSON.stringify(join(REPO, "src/shared/clock.ts"))});
    const { runScheduledBackup } = await import(${JSON.stringify(join(REPO, "src/jobs/schedule.ts"))});
    const clock = new ManualClock(Date.parse("2026-11-21T13:00:00.000Z"));
    const { ctx } = wire(openStore(${JSON.stringify(server.dbPath)}), loadConfig({ "data-dir": ${JSON.stringify(server.dir)} }, {}), clock, { info() {}, error() {} });
    for (;;) { runScheduledBackup(ctx); clock.advance(1000); }
  `], { stdout: "ignore", stderr: "ignore" });
  const carrying = () => existsSync(dir) && readdirSync(dir).some((name) => name.includes(".files"));
  for (let waited = 0; !carrying() && waited < 30_000; waited++) await Bun.sleep(1);
  child.kill("SIGKILL");
  await child.exited;
  // Every backup there holds every file its database names, whole.
  const backups = readdirSync(dir).filter((name) => /^basalt-.*\.db$/.test(name));
  for (const name of backups) {
    const copy = new Database(join(dir, name), { readonly: true });
    const hashes = copy.query<{ hash: string }, []>("SELECT DISTINCT content_hash AS hash FROM assets").all().map((row) => row.hash);
    copy.close();
    expect(hashes.filter((hash) => !existsSync(join(dir, `${name}.files`, hash.slice(0, 2), hash)))).toEqual([]);
  }
  // What the cut backup left (its copy of the database, the folder its files were gathered in) goes when the server starts.
  expect(readdirSync(dir).filter((name) => name.includes(".partial")).length).toBeGreaterThan(0);
  startJobs(server.ctx).stop();
  expect(readdirSync(dir).filter((name) => name.includes(".partial"))).toEqual([]);
  expect(readdirSync(dir).sort()).toEqual(backups.flatMap((name) => [name, `${name}.files`]).sort());
  const next = runScheduledBackup(server.ctx);
  expect(readdirSync(join(`${next}.files`)).length).toBeGreaterThan(0);
});

test("--backup-cron runs the backup on its schedule", async () => {
  const ctx = { ...server.ctx, config: { ...server.ctx.config, backupCron: "* * * * * *" } };
  const jobs = startJobs(ctx);
  try {
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline && !readdirSync(server.dir).includes("backups")) await Bun.sleep(50);
    expect(readdirSync(join(server.dir, "backups")).length).toBeGreaterThan(0);
  } finally {
    jobs.stop();
  }
});

test("the hourly prune removes expired device requests and idle sessions", async () => {
  await server.user("Ada");
  await server.signIn("ada@example.com");
  await server.call("POST", "/api/v1/device/code", { body: {} });
  const count = (table: string) => (server.ctx.store.sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  await pruneExpired(server.ctx);
  expect([count("device_requests"), count("sessions")]).toEqual([1, 1]);
  server.clock.advance(8 * 86_400_000);
  await pruneExpired(server.ctx);
  expect([count("device_requests"), count("sessions")]).toEqual([0, 0]);
});

test("the hourly prune removes dump import sessions begun more than an hour ago, with what they hold", async () => {
  const owner = await server.user("Ada");
  const space = await server.space(owner.id, "Empty");
  const key = await server.key(owner.id, "manage");
  const begun = (await server.call("POST", "/api/v1/dump/import/begin", { key, space: space.slug })).body.sessionId as string;
  await server.call("POST", "/api/v1/dump/import/tables", { key, space: space.slug, body: { sessionId: begun, table: "attachmentBlobs", rows: [{ storageKey: "0".repeat(64), base64: Buffer.alloc(4096).toString("base64") }] } });
  const sessions = () => readdirSync(join(server.dir, "dump-imports"));
  await pruneExpired(server.ctx);
  expect(sessions()).toEqual([begun]);
  server.clock.advance(61 * 60_000);
  await pruneExpired(server.ctx);
  expect(sessions()).toEqual([]);
  const gone = await server.call("POST", "/api/v1/dump/import/commit", { key, space: space.slug, body: { sessionId: begun } });
  expect(gone.status).toBe(404);
});

test("the daily upkeep prunes delivery records older than 30 days", async () => {
  const owner = await server.user("Ada");
  const space = await server.space(owner.id, "Hooks");
  const insert = (id: string, createdAt: string) =>
    server.ctx.store.sqlite.run(
      "INSERT INTO webhook_deliveries (id, rule_id, event_id, event_type, attempt, trigger, status, detail, duration_ms, request_url, created_at) VALUES (?, 'whk_1', 'evt_1', 'record.created', 1, 'test', 'success', '', 1, 'http://x', ?)",
      [id, createdAt],
    );
  server.ctx.store.sqlite.run(
    "INSERT INTO webhook_rules (id, space_id, name, event_type, action_kind, target_url, headers, enabled, created_by, created_at, updated_at) VALUES ('whk_1', ?, 'r', '*', 'webhook', 'http://x', '{}', 1, ?, 't', 't')",
    [space.id, owner.id],
  );
  insert("whd_old", new Date(server.clock.now() - 31 * 86_400_000).toISOString());
  insert("whd_new", new Date(server.clock.now() - 29 * 86_400_000).toISOString());
  expect(await dailyUpkeep(server.ctx)).toBe(1);
  expect(server.ctx.store.sqlite.query("SELECT id FROM webhook_deliveries").all()).toEqual([{ id: "whd_new" }]);
});

test("one stored row the upkeep cannot read (a view config no client could write) stops only its own step, for no other space", async () => {
  const owner = await server.user("Ada");
  const space = await server.space(owner.id, "Hooks");
  const sqlite = server.ctx.store.sqlite;
  sqlite.run(
    "INSERT INTO webhook_rules (id, space_id, name, event_type, action_kind, target_url, headers, enabled, created_by, created_at, updated_at) VALUES ('whk_1', ?, 'r', '*', 'webhook', 'http://x', '{}', 1, ?, 't', 't')",
    [space.id, owner.id],
  );
  sqlite.run(
    "INSERT INTO webhook_deliveries (id, rule_id, event_id, event_type, attempt, trigger, status, detail, duration_ms, request_url, created_at) VALUES ('whd_old', 'whk_1', 'evt_1', 'record.created', 1, 'test', 'success', '', 1, 'http://x', ?)",
    [new Date(server.clock.now() - 31 * 86_400_000).toISOString()],
  );
  const base = await createBase(server, await server.key(owner.id, "manage"), "notes", [{ slug: "title", name: "Title", type: "text" }]);
  for (const [id, config] of [["viw_1", '{"filters": "not a list"}'], ["viw_2", "not json"], ["viw_3", '{"filters": [7, "x", {"fieldSlug": "title"}]}']]) {
    sqlite.run("INSERT INTO views (id, space_id, base_id, slug, name, description, type, config, status, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, 'v', '', 'table', ?, 'active', ?, 't', 't')", [id, space.id, base.id, id, config, owner.id]);
  }
  expect(await dailyUpkeep(server.ctx)).toBe(1);
  expect(sqlite.query("SELECT id FROM webhook_deliveries WHERE id = 'whd_old'").all()).toEqual([]);
});

test("the daily upkeep merges the search index's segments, a bounded step a write; searches find the same records", async () => {
  const owner = await server.user("Ada");
  await server.space(owner.id, "Lab");
  const key = await server.key(owner.id, "write");
  await createBase(server, key, "notes", [{ slug: "title", name: "Title", type: "text" }]);
  for (let i = 0; i < 200; i++) await server.call("POST", "/api/v1/bases/notes/change-requests", { key, body: { fields: { title: `river ${i}` } } });
  const segments = () => (server.ctx.store.sqlite.query("SELECT count(*) AS n FROM record_search_idx").get() as { n: number }).n;
  const found = async () => (await server.call("GET", "/api/v1/search?query=river&sources=records&limit=100", { key })).body.results.length;
  const before = { segments: segments(), found: await found() };
  expect(before.segments).toBeGreaterThan(1);
  await dailyUpkeep(server.ctx);
  expect({ segments: segments(), found: await found() }).toEqual({ segments: 1, found: before.found });
});
