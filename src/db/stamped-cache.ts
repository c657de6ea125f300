import type { Database } from "bun:sqlite";

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
  private stamp = "";

  constructor(
    private readonly sqlite: Database,
    private readonly maxEntries: number,
  ) {}

  /** Whether the cache may be read and filled now (until the caller's code yields); emptied first when the database has changed. */
  open(): boolean {
    if (this.sqlite.inTransaction) return false;
    const { stamp } = this.sqlite.query<{ stamp: string }, []>(`SELECT total_changes() || ':' || "data_version" AS "stamp" FROM pragma_data_version()`).get()!;
    if (stamp !== this.stamp) {
      this.entries.clear();
      this.stamp = stamp;
    }
    return true;
  }

  /** After `open()` answered true. */
  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** After `open()` answered true. */
  set(key: K, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, value);
  }
}
