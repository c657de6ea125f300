import { resolve } from "node:path";
import { databasePath, defaultDataDir } from "../config";
import { closeStore, migrate, openStore } from "../db/client";
import { backupDatabase, restoreDatabase } from "../db/files";
import { parseFlags, required } from "./common";

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
  const kept = restoreDatabase(from, resolve(flags["data-dir"] ?? defaultDataDir()), Date.now());
  console.log(`Restored ${from}${kept ? `; the database it replaced is kept as ${kept}` : ""}. Start the server to use it.`);
}

export async function backupCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, { out: { type: "string" } });
  const out = resolve(required(flags, "out"));
  backupDatabase(databasePath(flags["data-dir"] ?? defaultDataDir()), out);
  console.log(`Wrote a backup to ${out}.`);
}
