import type { Database } from "bun:sqlite";
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * The stored files of a data directory: one per content hash, under its first two hex digits, and
 * `tmp/` for what is being written. Bytes nothing names any more are removed by the store itself:
 * the triggers of migrations/0027 note the hash of every asset row deleted (one by one, or with
 * its space) or given other bytes, and after the COMMIT of that write each noted hash that no
 * asset names, and that no upload of this process is about to name, is removed. What a crash
 * leaves (a noted hash not yet removed, a temporary file, a file no row names) is swept when
 * `serve` starts and by the daily upkeep (docs/reliability.md).
 */
export const filesDir = (dataDir: string) => join(dataDir, "files");
export const contentPath = (dataDir: string, hash: string) => join(filesDir(dataDir), hash.slice(0, 2), hash);
export const tmpDir = (dataDir: string) => join(filesDir(dataDir), "tmp");

/** Hashes whose bytes this process has stored for a row not yet committed, with how many are waiting. */
const landing = new Map<string, number>();

/** Keeps `hash` from being removed until the write that names it has settled; answers the release. */
export function holdLanding(hash: string): () => void {
  landing.set(hash, (landing.get(hash) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (landing.get(hash) ?? 1) - 1;
    if (left > 0) landing.set(hash, left);
    else landing.delete(hash);
  };
}

/** Removes each of `hashes`' files that no asset names and no upload of this process is about to; answers how many went. */
export function removeUnnamed(sqlite: Database, dataDir: string, hashes: Iterable<string>): number {
  const named = sqlite.query<unknown, [string]>(`SELECT 1 FROM "assets" WHERE "content_hash" = ?1 LIMIT 1`);
  let removed = 0;
  for (const hash of hashes) {
    if (landing.has(hash) || named.get(hash)) continue;
    rmSync(contentPath(dataDir, hash), { force: true });
    removed++;
  }
  return removed;
}

/**
 * Removes the noted files no asset names (migrations/0027's `unnamed_content`), and forgets the
 * notes. Run after a COMMIT, outside any transaction, before the next write: what it reads is
 * committed. Answers how many files went.
 */
export function removeUnnamedContent(sqlite: Database, dataDir: string): number {
  const noted = sqlite.query<{ hash: string }, []>(`SELECT "hash" FROM "unnamed_content"`).all().map((row) => row.hash);
  if (noted.length === 0) return 0;
  const removed = removeUnnamed(sqlite, dataDir, noted);
  sqlite.query(`DELETE FROM "unnamed_content" WHERE "hash" IN (SELECT "value" FROM json_each(?1))`).run(JSON.stringify(noted));
  return removed;
}

/** `removeUnnamedContent` after each COMMIT of a store, once its schema has the notes table: a database not migrated yet notes nothing. */
export function unnamedContentRemover(sqlite: Database, dataDir: string): () => void {
  let noting = false;
  return () => {
    noting ||= sqlite.query(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'unnamed_content'`).get() != null;
    if (noting) removeUnnamedContent(sqlite, dataDir);
  };
}

/** Files left behind for longer than this (by a crash, or a command killed midway) are swept. */
export const LEFT_BEHIND_MS = 60 * 60 * 1000;

/**
 * What a crash can leave: temporary files older than `LEFT_BEHIND_MS`, stored files no asset names
 * that are as old (a write's files whose rows never committed), and the notes not yet acted on.
 * Run when `serve` starts and by the daily upkeep. Answers how many files went.
 */
export function sweepContent(sqlite: Database, dataDir: string, now: number): number {
  let removed = sqlite.query(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'unnamed_content'`).get() ? removeUnnamedContent(sqlite, dataDir) : 0;
  const old = (path: string) => {
    try {
      return now - statSync(path).mtimeMs > LEFT_BEHIND_MS;
    } catch {
      return false;
    }
  };
  const list = (dir: string) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  for (const name of list(tmpDir(dataDir))) {
    const path = join(tmpDir(dataDir), name);
    if (old(path)) (rmSync(path, { recursive: true, force: true }), removed++);
  }
  for (const prefix of list(filesDir(dataDir))) {
    if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
    const stale = list(join(filesDir(dataDir), prefix)).filter((hash) => /^[0-9a-f]{64}$/.test(hash) && old(join(filesDir(dataDir), prefix, hash)));
    removed += removeUnnamed(sqlite, dataDir, stale);
  }
  return removed;
}
