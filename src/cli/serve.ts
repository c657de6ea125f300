import { Cron } from "croner";
import { createApp } from "../http/app";
import { issueSetupToken } from "../spaces/setup";
import { systemClock } from "../shared/clock";
import { ConfigError, databasePath, loadConfig } from "../shared/config";
import { consoleLogger } from "../context";
import { closeStore, migrate, openStore, optimizeStatistics, startCheckpointer } from "../db/client";
import { lockDataDir } from "../db/files";
import { listenOptions } from "../http/plumbing";
import { startJobs } from "../jobs/schedule";
import { sweepContent } from "../db/content-files";
import { LIMIT_SETTINGS } from "../shared/limits";
import { failInterruptedImports } from "../transfer/import-jobs";
import { removeCutClones } from "../remotes/cut-clones";
import { Follower } from "../remotes/follow";
import { VERSION } from "../shared/version";
import { CliError, parseFlags } from "./common";
import { wire } from "./wiring";
import { fillDemo } from "../transfer/demo";
import { listSpacesWithOwners } from "../spaces/spaces";
import { findUserByEmail } from "../auth/users";
import type { AppContext } from "../context";

/** `--demo` on an instance that has spaces: the first, while it holds nothing, becomes the demo workspace. */
async function fillFirstSpace(ctx: AppContext): Promise<void> {
  const [first] = listSpacesWithOwners(ctx);
  const owner = first?.owners ? findUserByEmail(ctx, first.owners.split(", ")[0]) : undefined;
  if (first && owner && (await fillDemo(ctx, first.id, owner.id))) console.log(`The space "${first.name}" is now the demo workspace.`);
}

export async function serveCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, {
    port: { type: "string" },
    host: { type: "string" },
    "public-url": { type: "string" },
    "max-body": { type: "string" },
    "max-import": { type: "string" },
    "max-file": { type: "string" },
    "webhook-allow": { type: "string" },
    "backup-cron": { type: "string" },
    "sync-every": { type: "string" },
    demo: { type: "boolean" },
    ...Object.fromEntries(Object.values(LIMIT_SETTINGS).map((setting) => [setting.flag, { type: "string" as const }])),
  });
  let config;
  try {
    config = loadConfig(flags);
    if (config.backupCron) new Cron(config.backupCron).stop();
  } catch (error) {
    throw new CliError(error instanceof ConfigError ? error.message : `The backup schedule "${flags["backup-cron"] ?? process.env.BASALT_BACKUP_CRON}" is not a cron expression.`);
  }
  const lock = lockDataDir(config.dataDir);
  const store = openStore(databasePath(config.dataDir));
  const applied = migrate(store);
  // What a crash left: noted files not yet removed, temporary files and unnamed files over an hour old.
  sweepContent(store.sqlite, config.dataDir, Date.now());
  // SQLite's advice for a long-lived connection: analyze what has changed enough since the last run.
  optimizeStatistics(store.sqlite, "PRAGMA optimize = 0x10002");
  const checkpoints = startCheckpointer(store, databasePath(config.dataDir), consoleLogger);
  const { ctx, deliveries, fieldUpkeep } = wire(store, config, systemClock, consoleLogger);
  await failInterruptedImports(ctx);
  const cut = await removeCutClones(ctx);
  if (cut > 0) console.log(`Removed what ${cut} clone(s) cut midway left (their spaces and staged files).`);
  store.writes.onSlowBatch = (ms, writes, lockWaitMs) =>
    consoleLogger.info(`slow write: the writer was held ${ms.toFixed(0)} ms by ${writes} write(s), ${lockWaitMs.toFixed(0)} ms of it waiting for the database's write lock (a checkpoint)`);
  const app = createApp(ctx);
  try {
    app.listen(listenOptions(config.port, config.host));
  } catch (error) {
    checkpoints.stop();
    await closeStore(store);
    lock.release();
    const inUse = (error as { code?: string }).code === "EADDRINUSE";
    throw new CliError(inUse ? `Port ${config.port} on ${config.host} is already in use.` : `Cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`);
  }
  const jobs = startJobs(ctx);
  const follower = config.syncEveryMs === null ? null : new Follower(ctx, config.syncEveryMs).start();
  deliveries.start(ctx);
  fieldUpkeep.start(ctx);
  console.log(`Basalt ${VERSION} listening on ${config.publicUrl} (data in ${config.dataDir}${applied ? `, ${applied} migration(s) applied` : ""})`);
  if (config.demo) await fillFirstSpace(ctx);
  const setupToken = issueSetupToken(ctx);
  if (setupToken) console.log(`No user exists yet. Create the first account at ${config.publicUrl}/admin/setup?token=${setupToken}`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`Received ${signal}: finishing requests in flight, then stopping.`);
    jobs.stop();
    await follower?.stop();
    // Open event streams never end on their own: closed first, so the server's stop does not wait for them.
    ctx.eventStream.closeAll();
    await app.server?.stop(false);
    await deliveries.stop();
    await fieldUpkeep.stop();
    checkpoints.stop();
    await closeStore(store);
    lock.release();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}
