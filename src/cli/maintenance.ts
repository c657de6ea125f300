import { basename, resolve } from "node:path";
import { databasePath, defaultDataDir } from "../shared/config";
import { closeStore, migrate, openStore } from "../db/client";
import { backupFiles, backupFilesDir, restoreFiles } from "../assets/storage";
import { backupDatabase, restoreDatabase } from "../db/files";
import { announceRestore } from "../events/restored";
import { openContext, parseFlags, required } from "./common";

export async function migrateCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, {});
  const store = openStore(databasePath(flags["data-dir"] ?? defaultDataDir()));
  try {
    const applied = migrate(store);
    console.log(applied === 0 ? "The database is up to date." : `Applied ${applied} migration${applied === 1 ? "" : "s"}.`);
  } finally {
    await closeStore(store);
  }
}

/** Replaces the database with a backup; the database it replaces is first kept as a backup itself. */
export async function restoreCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, { from: { type: "string" } });
  const from = resolve(required(flags, "from"));
  const dataDir = resolve(flags["data-dir"] ?? defaultDataDir());
  const kept = await restoreDatabase(from, dataDir, Date.now(), async () => {
    const ctx = openContext(dataDir);
    try {
      await announceRestore(ctx, basename(from));
    } finally {
      await closeStore(ctx.store);
    }
  });
  const files = restoreFiles(from, dataDir);
  console.log(`Restored ${from}${files.copied > 0 ? ` and ${files.copied} file(s) from ${backupFilesDir(from)}` : ""}${kept ? `; the database it replaced is kept as ${kept}` : ""}. Start the server to use it.`);
  if (files.missing.length > 0) console.error(`basalt: ${files.missing.length} file(s) the backup's records name are neither in ${backupFilesDir(from)} nor in the data directory; they will answer 404.`);
}

export async function backupCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, { out: { type: "string" } });
  const out = resolve(required(flags, "out"));
  const dataDir = flags["data-dir"] ?? defaultDataDir();
  let files = { copied: 0, missing: [] as string[] };
  backupDatabase(databasePath(dataDir), out, (copy) => (files = backupFiles(dataDir, out, copy)));
  console.log(`Wrote a backup to ${out}${files.copied > 0 ? ` and its ${files.copied} file(s) to ${backupFilesDir(out)}` : ""}.`);
  if (files.missing.length > 0) console.error(`basalt: ${files.missing.length} file(s) the records name are missing from the data directory; the backup does not hold them.`);
}
