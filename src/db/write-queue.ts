import type { Database, Statement } from "bun:sqlite";

/** A value that is not a promise nor any other thenable: a write's work must finish before it returns. */
export type Settled<T> = T extends { then(...args: never): unknown } ? never : T;

/** What the work of one write sees of its transaction. */
export interface TxScope {
  /** False once the write has finished: its handles refuse further use (see `Tx.db`). */
  readonly open: boolean;
  /** Runs `fn` once the write is committed (never if it rolls back): for caches and wake-ups. */
  afterCommit(fn: () => void): void;
}

interface Pending {
  work: (scope: TxScope) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** One write's part of a batch: its commit hooks, and the nested writes that joined it. */
class Scope implements TxScope {
  open = true;
  readonly committed: (() => void)[] = [];
  readonly failed: ((error: unknown) => void)[] = [];

  afterCommit(fn: () => void): void {
    this.committed.push(fn);
  }
}

type Outcome = { ok: true; value: unknown; scope: Scope } | { ok: false; error: unknown; scope: Scope };

/** How many writes one transaction may group; the rest wait for the next. */
const MAX_BATCH = 256;

function refuseThenable(value: unknown): void {
  if (value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function") {
    throw new TypeError("A write must finish synchronously: its work returned a promise or a query builder that would run after COMMIT.");
  }
}

/** How stale what another connection committed may leave this process's caches of committed rows. */
const OTHERS_CHECK_MS = 100;

/** A batch that holds the writer (and the event loop) longer than this is reported: every other write waited for it. */
export const SLOW_BATCH_MS = 100;

/**
 * Group commit. Every write is a synchronous function run inside an IMMEDIATE transaction; the
 * writes that arrive in the same turn of the event loop share one transaction and one COMMIT,
 * each in its own savepoint, so one failing rolls back only itself. A write's promise settles
 * after the COMMIT: nothing is acknowledged before it is durable.
 *
 * A failure that aborts the whole transaction (disk full, I/O error) fails only the write that
 * hit it, with its real error; the other writes of the batch run again in a new transaction. A
 * failed COMMIT runs every write of the batch again on its own. A write started inside another
 * write's work joins it: it runs at once in the same transaction and settles with it.
 */
export class WriteQueue {
  private pending: Pending[] = [];
  private scheduled = false;
  private running: Scope | null = null;
  /** Caches whose contents a write of the running batch has changed (see `isStale`). */
  private stale = new Set<object>();
  private drained: (() => void)[] = [];
  /** Told of every batch that took longer than `SLOW_BATCH_MS` (serve logs it), with how long it waited for the database's write lock. */
  onSlowBatch: (ms: number, writes: number, lockWaitMs: number) => void = () => undefined;
  private lockWaitMs = 0;
  private others = { version: 0, readAt: Number.NEGATIVE_INFINITY };
  /** Each write's savepoint, compiled once: `run` of a text compiles it again every time, and every write opens and releases one. */
  private readonly savepoint: Statement;
  private readonly release: Statement;

  /**
   * `beforeCommit` runs in each transaction after its writes, before its COMMIT (the store brings
   * the search index up to date there); a failure fails the COMMIT. `afterCommit` runs after each
   * COMMIT, before any write settles or the next begins (the store removes the files the batch
   * left unnamed there); a failure of it is left for the sweep that retries it, never failing a
   * write already durable.
   */
  constructor(
    private readonly sqlite: Database,
    private readonly beforeCommit: () => void = () => undefined,
    private readonly afterCommit: () => void = () => undefined,
  ) {
    this.savepoint = sqlite.prepare("SAVEPOINT write");
    this.release = sqlite.prepare("RELEASE write");
  }

  write<T>(work: (scope: TxScope) => Settled<T>): Promise<T> {
    if (this.running) return this.join(this.running, work) as Promise<T>;
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /**
   * The database's `data_version`, read at most every `OTHERS_CHECK_MS`: it moves when another
   * connection commits (a command run on the same data directory while this process serves), so
   * caches of committed rows start again after another writer's change, within that delay.
   */
  othersVersion(): number {
    const now = performance.now();
    if (now - this.others.readAt > OTHERS_CHECK_MS) this.others = { version: this.sqlite.query<{ data_version: number }, []>("PRAGMA data_version").get()!.data_version, readAt: now };
    return this.others.version;
  }

  /** True while a batch is running in which a write marked `cache` as changed. */
  isStale(cache: object): boolean {
    return this.stale.has(cache);
  }

  /** Marks `cache` as changed by the running batch: it is not read until the batch ends. */
  markStale(cache: object): void {
    if (this.running) this.stale.add(cache);
  }

  /** Resolves once every write queued so far has settled. */
  drain(): Promise<void> {
    if (!this.scheduled && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private join(outer: Scope, work: (scope: TxScope) => unknown): Promise<unknown> {
    const value = work(outer);
    refuseThenable(value);
    const joined = new Promise((resolve, reject) => {
      outer.committed.push(() => resolve(value));
      outer.failed.push(reject);
    });
    // The outer write reports its own failure; a joined write nobody awaits must not also surface as unhandled.
    joined.catch(() => undefined);
    return joined;
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending.splice(0, MAX_BATCH);
    if (this.pending.length > 0) this.schedule();
    try {
      this.runBatch(batch);
    } finally {
      this.stale.clear();
    }
    if (!this.scheduled) for (const resolve of this.drained.splice(0)) resolve();
  }

  private runBatch(batch: Pending[]): void {
    const started = performance.now();
    try {
      this.lockWaitMs = 0;
      this.runTransaction(batch);
    } finally {
      const ms = performance.now() - started;
      if (ms > SLOW_BATCH_MS) this.onSlowBatch(ms, batch.length, this.lockWaitMs);
    }
  }

  private runTransaction(batch: Pending[]): void {
    const outcomes: Outcome[] = [];
    const begun = performance.now();
    try {
      this.sqlite.run("BEGIN IMMEDIATE");
    } catch (error) {
      for (const item of batch) this.settle(item, { ok: false, error, scope: new Scope() });
      return;
    } finally {
      this.lockWaitMs += performance.now() - begun;
    }
    for (let i = 0; i < batch.length; i++) {
      const outcome = this.runOne(batch[i]);
      if (!outcome.ok && !this.sqlite.inTransaction) {
        // SQLite rolled the whole transaction back: only this write is to blame.
        this.settle(batch[i], outcome);
        outcomes.forEach((earlier, j) => !earlier.ok && this.settle(batch[j], earlier));
        this.runTransaction([...batch.slice(0, i).filter((_, j) => outcomes[j].ok), ...batch.slice(i + 1)]);
        return;
      }
      outcomes.push(outcome);
    }
    try {
      this.beforeCommit();
      this.sqlite.run("COMMIT");
    } catch (error) {
      if (this.sqlite.inTransaction) this.sqlite.run("ROLLBACK");
      if (batch.length === 1) this.settle(batch[0], { ok: false, error, scope: outcomes[0].scope });
      else for (const item of batch) this.runTransaction([item]);
      return;
    }
    try {
      this.afterCommit();
    } catch {
      // What it did not do stays noted in the database: the next sweep does it.
    }
    batch.forEach((item, i) => this.settle(item, outcomes[i]));
  }

  private runOne(item: Pending): Outcome {
    const scope = new Scope();
    this.running = scope;
    this.savepoint.run();
    try {
      const value = item.work(scope);
      refuseThenable(value);
      this.release.run();
      return { ok: true, value, scope };
    } catch (error) {
      if (this.sqlite.inTransaction) {
        this.sqlite.run("ROLLBACK TO write");
        this.sqlite.run("RELEASE write");
      }
      return { ok: false, error, scope };
    } finally {
      scope.open = false;
      this.running = null;
    }
  }

  private settle(item: Pending, outcome: Outcome): void {
    if (outcome.ok) {
      for (const fn of outcome.scope.committed) fn();
      item.resolve(outcome.value);
    } else {
      for (const fn of outcome.scope.failed) fn(outcome.error);
      item.reject(outcome.error);
    }
  }
}
