import { removeUnusedAssets } from "../assets/assets";
import { backupFiles, backupFilesDir } from "../assets/storage";
import { dropUnusedIndexes } from "../content/indexes";
import { Cron } from "croner";
import { and, eq, lt, lte, notExists, sql } from "drizzle-orm";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pruneDeviceRequests } from "../auth/device";
import { sessions } from "../tables/auth";
import { SESSION_IDLE_MS } from "../auth/sessions";
import { DAY_MS, iso } from "../shared/clock";
import { databasePath } from "../shared/config";
import type { AppContext, Tx } from "../context";
import { optimizeStatistics } from "../db/client";
import { sweepContent } from "../db/content-files";
import { backupDatabase, privateDir, removePartials } from "../db/files";
import { mergeSearchIndex } from "../db/search-index";
import { write } from "../db/tx";
import { events } from "../tables/events";
import { pruneImportSessions } from "../transfer/dump-api";
import { outboxCursor, webhookDeliveries, webhookJobs } from "../tables/webhooks";

/** Scheduled backups kept in `<data dir>/backups`; older ones are removed. */
export const BACKUPS_KEPT = 7;

const backupsDir = (ctx: AppContext) => join(ctx.config.dataDir, "backups");

/**
 * What a scheduled backup killed midway left in `backups/` (its temporary file, hundreds of MB,
 * SQLite's journal of it, the folder its files were gathered in, or that folder renamed before its
 * database appeared): each backup has a name of its own, so the next one would never
 * clear it. The server runs one scheduled backup at a time, so at its start and after each backup
 * every such file is stale.
 */
function removeBackupPartials(ctx: AppContext): number {
  const dir = backupsDir(ctx);
  if (!existsSync(dir)) return 0;
  // A backup's files folder whose database never appeared: killed between the two.
  const orphans = readdirSync(dir).filter((name) => /^basalt-\d{8}T\d{6}\.db\.files$/.test(name) && !existsSync(join(dir, name.slice(0, -".files".length))));
  for (const name of orphans) rmSync(join(dir, name), { recursive: true, force: true });
  return removePartials(dir, ".basalt-") + orphans.length;
}

export function runScheduledBackup(ctx: AppContext): string {
  const dir = backupsDir(ctx);
  privateDir(dir);
  const out = join(dir, `basalt-${iso(ctx.clock.now()).replace(/[-:]/g, "").replace(/\..*$/, "")}.db`);
  try {
    backupDatabase(databasePath(ctx.config.dataDir), out, (copy) => backupFiles(ctx.config.dataDir, out, copy));
  } finally {
    removeBackupPartials(ctx);
  }
  const old = readdirSync(dir).filter((name) => /^basalt-\d{8}T\d{6}\.db$/.test(name)).sort().slice(0, -BACKUPS_KEPT);
  for (const name of old) {
    rmSync(join(dir, name));
    rmSync(backupFilesDir(join(dir, name)), { recursive: true, force: true });
  }
  return out;
}

/**
 * Hourly: expired device requests, sessions idle past their lifetime and dump import sessions
 * begun more than an hour ago; and `PRAGMA optimize`,
 * which re-analyzes a table once it has grown or shrunk tenfold, so the planner's choice between a
 * field's index and the creation-order index follows the data.
 */
export function pruneExpired(ctx: AppContext): Promise<void> {
  pruneImportSessions(ctx);
  return write(ctx, (tx) => {
    pruneDeviceRequests(tx);
    tx.db.delete(sessions).where(lt(sessions.lastSeenAt, iso(tx.clock.now() - SESSION_IDLE_MS))).run();
    optimizeStatistics(tx.store.sqlite);
  });
}

/**
 * Daily: delivery records older than 30 days, the events they could redeliver (those already read
 * by the delivery loop and with no job left), indexes nothing has used for 30 days (`content/indexes.ts`), assets and files nothing names
 * (`assets/assets.ts`), files a crash left behind (`db/content-files.ts`), and `PRAGMA optimize`. Each step is a write of its own, and one that fails
 * (a stored row it cannot read) is logged while the others still run: one space's bad row must not
 * stop the upkeep of every space. Answers how many delivery records were pruned.
 */
export async function dailyUpkeep(ctx: AppContext): Promise<number> {
  const cutoff = iso(ctx.clock.now() - DELIVERY_LOG_DAYS * DAY_MS);
  let pruned = 0;
  const steps: [string, (tx: Tx) => unknown][] = [
    ["delivery log", (tx) => (pruned = tx.db.delete(webhookDeliveries).where(lt(webhookDeliveries.createdAt, cutoff)).returning({ id: webhookDeliveries.id }).all().length)],
    [
      "delivered events",
      (tx) =>
        tx.db
          .delete(events)
          .where(
            and(
              lt(events.createdAt, cutoff),
              lte(events.seq, sql`coalesce((SELECT ${outboxCursor.seq} FROM ${outboxCursor}), 0)`),
              notExists(tx.db.select({ one: sql`1` }).from(webhookJobs).where(eq(webhookJobs.eventSeq, events.seq))),
            ),
          )
          .run(),
    ],
    ["unused indexes", dropUnusedIndexes],
    ["unused files", removeUnusedAssets],
    // Files are dated by the file system's clock; the sweep runs after the COMMIT, before the next write.
    ["files left behind", (tx) => tx.afterCommit(() => sweepContent(tx.store.sqlite, tx.config.dataDir, Date.now()))],
    ["statistics", (tx) => optimizeStatistics(tx.store.sqlite)],
  ];
  for (const [name, step] of steps) {
    try {
      await write(ctx, (tx) => void step(tx));
    } catch (error) {
      ctx.log.error(`daily upkeep: ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  try {
    // The search index's segments merged a bounded step a write, so no write holds the writer long.
    for (let step = 0; step < SEARCH_MERGE_STEPS && (await write(ctx, (tx) => mergeSearchIndex(tx.store.sqlite))); step++) await new Promise((resolve) => setImmediate(resolve));
  } catch (error) {
    ctx.log.error(`daily upkeep: search index merge failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return pruned;
}

export const DELIVERY_LOG_DAYS = 30;
/** At most this many steps of merging the search index a day (about 500 pages each). */
const SEARCH_MERGE_STEPS = 200;

/** The server's background schedules, all of them; `stop()` ends them all. */
export function startJobs(ctx: AppContext): { stop(): void } {
  const guarded = (name: string, run: () => unknown) => async () => {
    try {
      await run();
    } catch (error) {
      ctx.log.error(`job ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const removed = removeBackupPartials(ctx);
  if (removed > 0) ctx.log.info(`removed ${removed} file(s) an interrupted backup left in ${backupsDir(ctx)}`);
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
