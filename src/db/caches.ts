import type { Database } from "bun:sqlite";
import type { WriteQueue } from "./write-queue";

/**
 * The store's caches, and the rule for choosing one. Each lives on the store (`store.statements`)
 * or on the context (`createContext`), so two stores in one process (the tests' servers) never
 * share one, and no module keeps a cache of its own. (A `WeakMap` keyed by an immutable value, such
 * as the formula plan of a loaded list of fields, is a memo of that value, not a cache of the
 * database.)
 *
 * - **Compiled statements: `StatementCache`.** One per store. Keyed by what builds the SQL (a
 *   builder function, a table, a listing's shape): compiling costs tens of microseconds, more than
 *   running an indexed select.
 * - **Rows that a few known writes change: `CommittedCache`** (bases with their fields,
 *   memberships). Each write that changes what it holds calls `invalidate(tx)`; for the rest of
 *   that write's batch reads go to the database, and the cache is emptied at COMMIT. Choose it when
 *   the writes that change the rows are few and known: it costs nothing to read.
 * - **What reads derive from rows that any write may change: `StampedCache`** (a page's linked
 *   values, the links of a record, a dump's people, filtered counts of records, a space's tree as a
 *   sight sees it, a view's row). No write knows
 *   it: it empties itself when the database changed anywhere, in this process or another. Choose it when the writers are many or
 *   unknown; each use costs two small reads (`total_changes()` and `PRAGMA data_version`, 3.6 us).
 */

/** The store's compiled statements: built once per key; keys of clients' query shapes (strings) are bounded. */
export class StatementCache {
  private readonly built = new Map<unknown, unknown>();
  private readonly shapes = new Map<string, unknown>();

  constructor(private readonly maxShapes = 256) {}

  /** The statement kept under `key`, if any (no allocation: this runs on every query). */
  find<T>(key: unknown): T | undefined {
    return (typeof key === "string" ? this.shapes.get(key) : this.built.get(key)) as T | undefined;
  }

  /** Keeps a statement just built under `key`; answers it. */
  keep<T>(key: unknown, statement: T): T {
    if (typeof key !== "string") this.built.set(key, statement);
    else {
      if (this.shapes.size >= this.maxShapes) this.shapes.clear();
      this.shapes.set(key, statement);
    }
    return statement;
  }
}

/**
 * An in-memory cache of committed rows. A write that changes what it holds calls `invalidate`:
 * for the rest of that write's batch the cache is neither read nor filled (reads go to the
 * database, which shows the write), and it is emptied once the write commits. A write that rolls
 * back leaves the cache exactly as it was. A commit of another connection (a command such as
 * `basalt pull` run on the data directory while it is served) empties it within 100 ms.
 */
export class CommittedCache<K, V> {
  private readonly entries = new Map<K, V>();
  /** The `data_version` the entries were read under; null until first used. */
  private othersVersion: number | null = null;

  constructor(
    private readonly writes: WriteQueue,
    private readonly maxEntries: number,
  ) {}

  get(key: K): V | undefined {
    return this.writes.isStale(this) || this.changedElsewhere() ? undefined : this.entries.get(key);
  }

  set(key: K, value: V): void {
    if (this.writes.isStale(this) || this.changedElsewhere()) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, value);
  }

  /** Whether another connection committed since the entries were read (they are then dropped, and the next read fills them again). */
  private changedElsewhere(): boolean {
    const version = this.writes.othersVersion();
    if (version === this.othersVersion) return false;
    const first = this.othersVersion === null;
    this.entries.clear();
    this.othersVersion = version;
    return !first;
  }

  invalidate(tx: { afterCommit(fn: () => void): void }): void {
    this.writes.markStale(this);
    tx.afterCommit(() => this.entries.clear());
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * A cache of values read from the database (and derived from what was read), good until the
 * database changes anywhere. Its stamp is the connection's count of rows it has changed
 * (`total_changes()`, triggers included) and the database's `data_version` (which moves when
 * another connection commits): when either differs from the stamp it was filled under, it starts
 * empty again. So no write needs to know what it holds: a value is never older than the last
 * change to the database, in this process or another. It is neither read nor filled inside a
 * transaction, whose reads may see changes that roll back.
 */
export class StampedCache<K, V> {
  private readonly entries = new Map<K, V>();
  /** The stamp the entries were read under: the connection's changes and the database's `data_version`. */
  private changes = -1;
  private version = -1;
  /** What `weigh` said of the entries kept. */
  private bytes = 0;

  /** Bounded by count and, when `weigh` tells a value's rough size in bytes, by `maxBytes` (a value larger than it is never kept). */
  constructor(
    private readonly sqlite: Database,
    private readonly maxEntries: number,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
    private readonly weigh: (value: V) => number = () => 0,
  ) {}

  /** Whether the cache may be read and filled now (until the caller's code yields); emptied first when the database has changed. */
  open(): boolean {
    if (this.sqlite.inTransaction) return false;
    // Two plain statements, not one joining the pragma as a table: 3.6 against 4.4 us, and this runs on every use.
    const { changes } = this.sqlite.query<{ changes: number }, []>("SELECT total_changes() AS changes").get()!;
    const { data_version: version } = this.sqlite.query<{ data_version: number }, []>("PRAGMA data_version").get()!;
    if (changes !== this.changes || version !== this.version) {
      this.clear();
      this.changes = changes;
      this.version = version;
    }
    return true;
  }

  /** After `open()` answered true. */
  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** After `open()` answered true. */
  set(key: K, value: V): void {
    const weight = this.weigh(value);
    if (weight > this.maxBytes) return;
    if (this.entries.size >= this.maxEntries || this.bytes + weight > this.maxBytes) this.clear();
    this.entries.set(key, value);
    this.bytes += weight;
  }

  /** How many values are kept, and their weight. */
  get held(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  private clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

/** A value's rough size in memory, in bytes (two a character of text, eight a number or other scalar): what a cache of values is bounded by. */
export function roughBytes(value: unknown): number {
  if (typeof value === "string") return 16 + value.length * 2;
  if (value === null || typeof value !== "object") return 8;
  let total = 16;
  if (Array.isArray(value)) for (const item of value) total += roughBytes(item);
  else for (const [key, item] of Object.entries(value)) total += key.length * 2 + roughBytes(item);
  return total;
}
