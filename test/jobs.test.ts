import { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { BACKUPS_KEPT, pruneExpired, runScheduledBackup, startJobs } from "../src/jobs/schedule";
import { TestServer } from "./helpers";

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
