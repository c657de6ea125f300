import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, constants, existsSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

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

/**
 * Every file a command creates is private from its first byte (SQLite's journals and locks
 * included), whatever the umask it was started with: called once, before any file is opened.
 */
export const privateFilesFromNowOn = (): void => void process.umask(0o077);

/** Whether anything, a dangling link included, is at `path` (`existsSync` follows links). */
export function occupied(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** An empty file only its owner can read, made beside `out` and never through a link. */
function privateTempBeside(out: string): string {
  const temp = join(dirname(out), `.${basename(out)}.${randomBytes(6).toString("hex")}.partial`);
  closeSync(openSync(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600));
  return temp;
}

/** A temporary file of `privateTempBeside`, or the journal SQLite keeps beside one while `VACUUM INTO` fills it. */
const isPartial = (name: string): boolean => name.startsWith(".") && (name.endsWith(".partial") || name.endsWith(".partial-journal"));

/**
 * Removes what writes killed midway left in `dir` (their temporary files and SQLite's journals of
 * them) whose name starts with `prefix`; answers how many. Only for a directory no write is filling
 * now: the backups folder of a server, which runs one backup at a time.
 */
export function removePartials(dir: string, prefix = "."): number {
  if (!existsSync(dir)) return 0;
  const left = readdirSync(dir).filter((name) => name.startsWith(prefix) && isPartial(name));
  // A backup's files are gathered in a folder of such a name (`backupFiles`).
  for (const name of left) rmSync(join(dir, name), { force: true, recursive: true });
  return left.length;
}

/**
 * Refuses a target that is taken (by a file or a link, even a dangling one) or has no directory to
 * go in; first removes what an earlier write to the same name, killed midway, left beside it.
 */
function requireFreeTarget(out: string): void {
  removePartials(dirname(out), `.${basename(out)}.`);
  if (occupied(out)) throw new Error(`${out} already exists; choose a new file.`);
  if (!existsSync(dirname(out))) throw new Error(`There is no directory ${dirname(out)} to write ${basename(out)} in.`);
}

/** Links a filled temporary file in at `out`: the link fails, rather than writing through it, if anything took the name meanwhile. */
function linkInto(temp: string, out: string): void {
  try {
    linkSync(temp, out);
  } catch (error) {
    if ((error as { code?: string }).code === "EEXIST") throw new Error(`${out} already exists; choose a new file.`);
    throw error;
  }
}

/**
 * Writes a file at `out` by filling a private temporary file beside it and then linking it in:
 * `out` appears whole and 0600, and if anything (a file, a link) took its place meanwhile, the link
 * fails rather than writing through it.
 */
function publishPrivately(out: string, fill: (temp: string) => void): void {
  requireFreeTarget(out);
  const temp = privateTempBeside(out);
  try {
    fill(temp);
    chmodSync(temp, 0o600);
    linkInto(temp, out);
  } finally {
    rmSync(temp, { force: true });
    rmSync(`${temp}-journal`, { force: true });
  }
}

/**
 * `publishPrivately` for a file written over time (an export, a dump): `fill` writes to the open
 * temporary file, and `out` appears only when it is whole, so a command killed midway leaves no
 * truncated file under the name (what it left beside `out` goes when the next write to it starts).
 */
export async function writePrivately(out: string, fill: (fd: number) => Promise<void>): Promise<void> {
  requireFreeTarget(out);
  const temp = privateTempBeside(out);
  try {
    const fd = openSync(temp, constants.O_WRONLY | constants.O_NOFOLLOW);
    try {
      await fill(fd);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkInto(temp, out);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** A byte-for-byte copy whose destination is private from its first byte and is never a link. */
function copyPrivately(from: string, out: string): void {
  publishPrivately(out, (temp) => {
    const source = openSync(from, "r");
    const target = openSync(temp, constants.O_WRONLY | constants.O_NOFOLLOW);
    try {
      const chunk = Buffer.allocUnsafe(1 << 20);
      for (let read: number; (read = readSync(source, chunk, 0, chunk.length, null)) > 0; ) writeSync(target, chunk, 0, read);
    } finally {
      closeSync(source);
      closeSync(target);
    }
  });
}

/** The database file and the files SQLite keeps beside it. */
export const databaseFiles = (path: string): string[] => [path, `${path}-wal`, `${path}-shm`];

/**
 * `VACUUM INTO` from its own read connection: a consistent snapshot of the last committed state,
 * taken while a server may be writing (WAL lets both go on), written as a plain SQLite file that
 * only its owner can read.
 */
export function backupDatabase(source: string, out: string, beforePublish?: (copy: string) => void): void {
  if (!existsSync(source)) throw new Error(`There is no database at ${source}.`);
  publishPrivately(out, (temp) => {
    const db = new Database(source, { readonly: true });
    try {
      db.run("PRAGMA busy_timeout = 10000");
      // VACUUM INTO fills an empty file that already exists, so the private one made for it.
      db.run("VACUUM INTO ?", [temp]);
    } finally {
      db.close();
    }
    // What goes with the copy (its files) is whole before `out` appears: a backup killed midway leaves no database whose files are partly there.
    beforePublish?.(temp);
  });
}

/** How far each AUTOINCREMENT sequence of a database has reached (none when it has no such table). */
function sequences(path: string): { name: string; seq: number }[] {
  const db = new Database(path);
  try {
    return db.query("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_sequence'").get() ? (db.query("SELECT name, seq FROM sqlite_sequence").all() as { name: string; seq: number }[]) : [];
  } catch {
    return [];
  } finally {
    db.close();
  }
}

/**
 * A restored database hands out no number its replaced one already did: each AUTOINCREMENT
 * sequence goes on past the larger of the two, leaving one unused. The live stream's event ids are
 * the outbox's sequence and a server starting keeps no event at or before it, so every client that
 * saw an event before the restore is told to read the state again (`reset`), never shown new
 * events under ids it already saw.
 */
function continueSequences(path: string, handedOut: { name: string; seq: number }[]): void {
  if (handedOut.length === 0) return;
  const db = new Database(path);
  try {
    if (!db.query("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_sequence'").get()) return;
    db.transaction(() => {
      for (const { name, seq } of handedOut) {
        const updated = db.query("UPDATE sqlite_sequence SET seq = max(seq, ?2) WHERE name = ?1").run(name, seq + 1).changes;
        if (updated === 0 && db.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1").get(name)) db.query("INSERT INTO sqlite_sequence (name, seq) VALUES (?1, ?2)").run(name, seq + 1);
      }
    })();
  } finally {
    db.close();
  }
}

/**
 * Puts a backup in place of the database: only when no server holds the data directory, and only
 * a file that passes `PRAGMA integrity_check`. The database it replaces is kept beside it byte for
 * byte (its file and its WAL, as `basalt.db.before-restore-<ms>` and `…-wal`), whatever state it is
 * in: a damaged database is the usual reason to restore, and SQLite cannot read one to copy it.
 * `whileHeld` runs on the restored database before the lock is released.
 * Answers where the replaced database was kept, or null when there was none.
 */
export async function restoreDatabase(backup: string, dataDir: string, now: number, whileHeld?: () => Promise<void>): Promise<string | null> {
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
      copyPrivately(path, kept);
      if (existsSync(`${path}-wal`)) copyPrivately(`${path}-wal`, `${kept}-wal`);
    }
    const handedOut = kept ? sequences(path) : [];
    for (const file of databaseFiles(path)) rmSync(file, { force: true });
    copyPrivately(backup, path);
    continueSequences(path, handedOut);
    // Still under the lock, so no server starts on the restored database before this is done.
    await whileHeld?.();
    return kept;
  } finally {
    lock.release();
  }
}

/**
 * Holds the data directory for one `serve`: an exclusive SQLite lock on `serve.lock`, kept until
 * `release` or until the process dies (the kernel drops the lock, so a server killed with SIGKILL
 * restarts at once). A second `serve` on the same directory is refused; the other commands do
 * not take the lock and keep working beside a server.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  privateDir(dataDir);
  const lock = exclusiveLock(join(dataDir, "serve.lock"));
  if (!lock) throw new Error(`Another basalt serve is already using the data directory ${dataDir}.`);
  return lock;
}

/**
 * An exclusive SQLite lock on the file at `path` (made if absent), held until `release` or until the
 * process dies, when the kernel drops it; null when another connection, of this process or another,
 * holds it.
 */
export function exclusiveLock(path: string): { release(): void } | null {
  const lock = new Database(path, { create: true });
  try {
    lock.run("PRAGMA locking_mode = EXCLUSIVE");
    // Nothing is written under the lock: no journal file beside it.
    lock.run("PRAGMA journal_mode = MEMORY");
    lock.run("BEGIN EXCLUSIVE");
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code?.startsWith("SQLITE_BUSY")) return null;
    throw error;
  }
  makePrivate(path);
  return { release: () => lock.close() };
}
