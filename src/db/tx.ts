import type { Db, Store } from "./client";
import type { Settled, TxScope } from "./write-queue";

/**
 * Whoever writes: the store is all a write needs of its caller's context. The store imports no
 * domain: the app names its own write type (`Tx` in src/context.ts) from `TxOf`.
 */
export interface Writer {
  readonly store: Store;
}

/**
 * A write in progress: the caller's context, with a handle that can write and hooks on the commit.
 * Only `write` makes one, so a function that takes one cannot be called outside a transaction.
 */
export type TxOf<C extends Writer> = C & {
  readonly db: Db;
  /** Runs `fn` once this write is committed, never if it rolls back. */
  afterCommit(fn: () => void): void;
};

function txOf<C extends Writer>(ctx: C, scope: TxScope): TxOf<C> {
  const db = ctx.store.db;
  return Object.create(ctx, {
    db: {
      get() {
        if (!scope.open) throw new Error("This write has already finished: a write's work must not keep its handle past its return.");
        return db;
      },
    },
    afterCommit: { value: (fn: () => void) => scope.afterCommit(fn) },
  }) as TxOf<C>;
}

/**
 * Runs `work` in a write transaction (grouped with others: see `WriteQueue`) and settles once it
 * is committed. `work` must be synchronous and return no promise or query builder: its type
 * refuses them and so does the queue at run time. Called inside another write, it joins it.
 */
export function write<C extends Writer, T>(ctx: C, work: (tx: TxOf<C>) => Settled<T>): Promise<T> {
  return ctx.store.writes.write((scope) => work(txOf(ctx, scope)) as Settled<T>);
}

/**
 * A write that a read causes (a key's last use, a session seen): queued like any other, but the
 * request does not wait for it, and a failure is logged.
 */
export function writeInBackground<C extends Writer & { log: { error(line: string): void } }>(ctx: C, what: string, work: (tx: TxOf<C>) => void): void {
  write(ctx, work).catch((error) => ctx.log.error(`${what} failed: ${error instanceof Error ? error.message : String(error)}`));
}

