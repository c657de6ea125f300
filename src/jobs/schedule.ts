import { Cron } from "croner";
import { lt, sql } from "drizzle-orm";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pruneDeviceRequests } from "../auth/device";
import { sessions } from "../auth/schema";
import { SESSION_IDLE_MS } from "../auth/sessions";
import { DAY_MS, iso } from "../clock";
import { databasePath } from "../config";
import type { AppContext } from "../context";
import { backupDatabase, privateDir } from "../db/files";
import { write } from "../db/tx";
import { webhookDeliveries } from "../webhooks/schema";

/** Scheduled backups kept in `<data dir>/backups`; older ones are removed. */
export const BACKUPS_KEPT = 7;

export function runScheduledBackup(ctx: AppContext): string {
  const dir = join(ctx.config.dataDir, "backups");
  privateDir(dir);
  const out = join(dir, `basalt-${iso(ctx.clock.now()).replace(/[-:]/g, "").replace(/\..*$/, "")}.db`);
  backupDatabase(databasePath(ctx.config.dataDir), out);
  const old = readdirSync(dir).filter((name) => /^basalt-\d{8}T\d{6}\.db$/.test(name)).sort().slice(0, -BACKUPS_KEPT);
  for (const name of old) rmSync(join(dir, name));
  return out;
}

/** Hourly: expired device requests and sessions idle past their lifetime. */
export function pruneExpired(ctx: AppContext): Promise<void> {
  return write(ctx, (tx) => {
    pruneDeviceRequests(tx);
    tx.db.delete(sessions).where(lt(sessions.lastSeenAt, iso(tx.clock.now() - SESSION_IDLE_MS))).run();
  });
}

/** Daily: delivery records older than 30 days, and `PRAGMA optimize` so the planner's statistics follow the data. */
export function dailyUpkeep(ctx: AppContext): Promise<number> {
  const cutoff = iso(ctx.clock.now() - DELIVERY_LOG_DAYS * DAY_MS);
  return write(ctx, (tx) => {
    const pruned = tx.db.delete(webhookDeliveries).where(lt(webhookDeliveries.createdAt, cutoff)).returning({ id: webhookDeliveries.id }).all().length;
    tx.db.run(sql`PRAGMA optimize`);
    return pruned;
  });
}

export const DELIVERY_LOG_DAYS = 30;

/** The server's background schedules, all of them; `stop()` ends them all. */
export function startJobs(ctx: AppContext): { stop(): void } {
  const guarded = (name: string, run: () => unknown) => async () => {
    try {
      await run();
    } catch (error) {
      ctx.log.error(`job ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const jobs = [
    new Cron("0 17 * * * *", { protect: true }, guarded("prune-expired", () => pruneExpired(ctx))),
    new Cron("0 41 3 * * *", { protect: true }, guarded("daily-upkeep", () => dailyUpkeep(ctx))),
  ];
  if (ctx.config.backupCron) {
    jobs.push(
      new Cron(ctx.config.backupCron, { protect: true }, guarded("backup", () => ctx.log.info(`backup written to ${runScheduledBackup(ctx)}`))),
    );
  }
  return { stop: () => jobs.forEach((job) => job.stop()) };
}
