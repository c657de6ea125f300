import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { databasePath, defaultDataDir } from "../config";
import { closeStore, migrate, openStore } from "../db/client";
import { CliError, parseFlags, required } from "./common";

export async function migrateCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, {});
  const store = openStore(databasePath(flags["data-dir"] ?? defaultDataDir()));
  try {
    const applied = migrate(store);
    console.log(applied === 0 ? "The database is up to date." : `Applied ${applied} migration${applied === 1 ? "" : "s"}.`);
  } finally {
    closeStore(store);
  }
}

/**
 * `VACUUM INTO` from its own read connection: a consistent snapshot of the last committed state,
 * taken while a server may be writing (WAL lets both go on), written as a plain SQLite file.
 */
export function backupDatabase(source: string, out: string): void {
  if (!existsSync(source)) throw new CliError(`There is no database at ${source}.`);
  if (existsSync(out)) throw new CliError(`${out} already exists; choose a new file for the backup.`);
  const db = new Database(source, { readonly: true });
  try {
    db.run("PRAGMA busy_timeout = 10000");
    db.run("VACUUM INTO ?", [out]);
  } finally {
    db.close();
  }
}

export async function backupCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, { out: { type: "string" } });
  const out = resolve(required(flags, "out"));
  backupDatabase(databasePath(flags["data-dir"] ?? defaultDataDir()), out);
  console.log(`Wrote a backup to ${out}.`);
}
