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

/** Where a write's handle keeps its scope: a symbol, so that nothing of the context it extends is shadowed. */
const SCOPE = Symbol("write scope");

type Handle = { readonly [SCOPE]: TxScope };

/**
 * Each context's write handles share one prototype (the context, with `db` and `afterCommit`
 * reading the handle's scope): a write then makes one object, where a getter and a closure of its
 * own cost every write five more (docs/performance.md, fourth round).
 */
const handlePrototypes = new WeakMap<Writer, object>();

function handlePrototype(ctx: Writer): object {
  let prototype = handlePrototypes.get(ctx);
  if (prototype) return prototype;
  const db = ctx.store.db;
  prototype = Object.create(ctx, {
    db: {
      get(this: Handle) {
        if (!this[SCOPE].open) throw new Error("This write has already finished: a write's work must not keep its handle past its return.");
        return db;
      },
    },
    afterCommit: {
      value(this: Handle, fn: () => void) {
        this[SCOPE].afterCommit(fn);
      },
    },
  }) as object;
  handlePrototypes.set(ctx, prototype);
  return prototype;
}

function txOf<C extends Writer>(ctx: C, scope: TxScope): TxOf<C> {
  const tx = Object.create(handlePrototype(ctx)) as TxOf<C> & { [SCOPE]: TxScope };
  tx[SCOPE] = scope;
  return tx;
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

