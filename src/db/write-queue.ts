import type { Database } from "bun:sqlite";

interface Pending {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** How many writes one transaction may group; the rest wait for the next. */
const MAX_BATCH = 256;

/**
 * Group commit. Every write runs as a synchronous function inside an IMMEDIATE transaction; the
 * writes that arrive in the same turn of the event loop share one transaction and one COMMIT, each
 * in its own savepoint, so one failing rolls back only itself. A write's promise settles after the
 * COMMIT: nothing is acknowledged before it is durable.
 */
export class WriteQueue {
  private pending: Pending[] = [];
  private scheduled = false;
  private readonly rollbackListeners: (() => void)[] = [];

  constructor(private readonly sqlite: Database) {}

  /** In-memory caches filled inside a write that is then rolled back must forget it. */
  onRollback(listener: () => void): void {
    this.rollbackListeners.push(listener);
  }

  private rolledBack(): void {
    for (const listener of this.rollbackListeners) listener();
  }

  /** `run` must be synchronous: an await inside it would leave the transaction. */
  write<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending.splice(0, MAX_BATCH);
    if (this.pending.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.sqlite.run("BEGIN IMMEDIATE");
      for (const item of batch) {
        this.sqlite.run("SAVEPOINT request");
        try {
          const value = item.run();
          if (value instanceof Promise) throw new Error("A write must be synchronous.");
          this.sqlite.run("RELEASE request");
          outcomes.push({ ok: true, value });
        } catch (error) {
          this.sqlite.run("ROLLBACK TO request");
          this.sqlite.run("RELEASE request");
          this.rolledBack();
          outcomes.push({ ok: false, error });
        }
      }
      this.sqlite.run("COMMIT");
    } catch (error) {
      if (this.sqlite.inTransaction) this.sqlite.run("ROLLBACK");
      this.rolledBack();
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
