import type { AppContext } from "../context";
import type { Db } from "./client";
import type { Settled, TxScope, WriteQueue } from "./write-queue";

/** The database as requests read it: no insert, update or delete compiles on this handle. */
export type ReadDb = Pick<Db, "select" | "selectDistinct" | "$count">;

/**
 * A write in progress: the context, with a handle that can write and hooks on the commit. Only
 * `write` makes one, so a function that takes a `Tx` cannot be called outside a transaction.
 */
export interface Tx extends AppContext {
  readonly db: Db;
  /** Runs `fn` once this write is committed, never if it rolls back. */
  afterCommit(fn: () => void): void;
}

function txOf(ctx: AppContext, scope: TxScope): Tx {
  const db = ctx.store.db;
  return Object.create(ctx, {
    db: {
      get() {
        if (!scope.open) throw new Error("This write has already finished: a write's work must not keep its handle past its return.");
        return db;
      },
    },
    afterCommit: { value: (fn: () => void) => scope.afterCommit(fn) },
  }) as Tx;
}

/**
 * Runs `work` in a write transaction (grouped with others: see `WriteQueue`) and settles once it
 * is committed. `work` must be synchronous and return no promise or query builder: its type
 * refuses them and so does the queue at run time. Called inside another write, it joins it.
 */
export function write<T>(ctx: AppContext, work: (tx: Tx) => Settled<T>): Promise<T> {
  return ctx.store.writes.write((scope) => work(txOf(ctx, scope)) as Settled<T>);
}

/**
 * A write that a read causes (a key's last use, a session seen): queued like any other, but the
 * request does not wait for it, and a failure is logged.
 */
export function writeInBackground(ctx: AppContext, what: string, work: (tx: Tx) => void): void {
  write(ctx, work).catch((error) => ctx.log.error(`${what} failed: ${error instanceof Error ? error.message : String(error)}`));
}

/**
 * An in-memory cache of committed rows. A write that changes what it holds calls `invalidate`:
 * for the rest of that write's batch the cache is neither read nor filled (reads go to the
 * database, which shows the write), and it is emptied once the write commits. A write that rolls
 * back leaves the cache exactly as it was.
 */
export class CommittedCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(
    private readonly writes: WriteQueue,
    private readonly maxEntries: number,
  ) {}

  get(key: K): V | undefined {
    return this.writes.isStale(this) ? undefined : this.entries.get(key);
  }

  set(key: K, value: V): void {
    if (this.writes.isStale(this)) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, value);
  }

  invalidate(tx: Tx): void {
    this.writes.markStale(this);
    tx.afterCommit(() => this.entries.clear());
  }

  get size(): number {
    return this.entries.size;
  }
}
