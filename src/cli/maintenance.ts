import { resolve } from "node:path";
import { databasePath, defaultDataDir } from "../config";
import { closeStore, migrate, openStore } from "../db/client";
import { backupDatabase } from "../db/files";
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

export async function backupCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, { out: { type: "string" } });
  const out = resolve(required(flags, "out"));
  backupDatabase(databasePath(flags["data-dir"] ?? defaultDataDir()), out);
  console.log(`Wrote a backup to ${out}.`);
}
