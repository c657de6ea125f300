import { Database } from "bun:sqlite";
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The data directory holds password hashes, key hashes and every record: only the user running
 * Basalt may read it. Directories are made 0700 and files 0600 (SQLite gives its WAL and shared
 * memory files the database file's mode).
 */
export function privateDir(path: string): void {
  if (existsSync(path) && !statSync(path).isDirectory()) throw new Error(`${path} is a file; a directory is needed there (--data-dir).`);
  mkdirSync(path, { recursive: true, mode: 0o700 });
}

export function makePrivate(...files: string[]): void {
  for (const file of files) if (existsSync(file)) chmodSync(file, 0o600);
}

/** The database file and the files SQLite keeps beside it. */
export const databaseFiles = (path: string): string[] => [path, `${path}-wal`, `${path}-shm`];

/**
 * `VACUUM INTO` from its own read connection: a consistent snapshot of the last committed state,
 * taken while a server may be writing (WAL lets both go on), written as a plain SQLite file that
 * only its owner can read.
 */
export function backupDatabase(source: string, out: string): void {
  if (!existsSync(source)) throw new Error(`There is no database at ${source}.`);
  if (existsSync(out)) throw new Error(`${out} already exists; choose a new file for the backup.`);
  if (!existsSync(dirname(out))) throw new Error(`There is no directory ${dirname(out)} to write the backup in.`);
  const db = new Database(source, { readonly: true });
  try {
    db.run("PRAGMA busy_timeout = 10000");
    db.run("VACUUM INTO ?", [out]);
  } finally {
    db.close();
  }
  makePrivate(out);
}

/**
 * Holds the data directory for one `serve`: an exclusive SQLite lock on `serve.lock`, kept until
 * `release` or until the process dies (the kernel drops the lock, so a server killed with SIGKILL
 * restarts at once). A second `serve` on the same directory is refused; the other commands do
 * not take the lock and keep working beside a server.
 */
/**
 * Puts a backup in place of the database: only when no server holds the data directory, and only
 * a file that passes `PRAGMA integrity_check`. The database it replaces is kept beside it byte for
 * byte (its file and its WAL, as `basalt.db.before-restore-<ms>` and `…-wal`), whatever state it is
 * in: a damaged database is the usual reason to restore, and SQLite cannot read one to copy it.
 * Answers where the replaced database was kept, or null when there was none.
 */
export function restoreDatabase(backup: string, dataDir: string, now: number): string | null {
  if (!existsSync(backup)) throw new Error(`There is no backup at ${backup}.`);
  const check = new Database(backup, { readonly: true });
  try {
    const { integrity_check } = check.query("PRAGMA integrity_check").get() as { integrity_check: string };
    if (integrity_check !== "ok") throw new Error(`${backup} fails SQLite's integrity check (${integrity_check}); it is not restored.`);
  } catch (error) {
    throw (error as { code?: string }).code === "SQLITE_NOTADB" ? new Error(`${backup} is not a SQLite database.`) : error;
  } finally {
    check.close();
  }
  const lock = lockDataDir(dataDir);
  try {
    const path = join(dataDir, "basalt.db");
    const kept = existsSync(path) ? `${path}.before-restore-${now}` : null;
    if (kept) {
      copyFileSync(path, kept);
      if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${kept}-wal`);
      makePrivate(kept, `${kept}-wal`);
    }
    for (const file of databaseFiles(path)) rmSync(file, { force: true });
    copyFileSync(backup, path);
    makePrivate(path);
    return kept;
  } finally {
    lock.release();
  }
}

export function lockDataDir(dataDir: string): { release(): void } {
  privateDir(dataDir);
  const path = join(dataDir, "serve.lock");
  const lock = new Database(path, { create: true });
  try {
    lock.run("PRAGMA locking_mode = EXCLUSIVE");
    lock.run("BEGIN EXCLUSIVE");
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code?.startsWith("SQLITE_BUSY")) throw new Error(`Another basalt serve is already using the data directory ${dataDir}.`);
    throw error;
  }
  makePrivate(path);
  return { release: () => lock.close() };
}
