import { addFunctions } from "./functions";
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import type { ReadStore } from "./client";
import { StatementCache } from "./caches";

/** One open snapshot: a read-only connection inside one read transaction, and whose it is. */
interface Pinned {
  store: ReadStore;
  spaceId: string;
  userId: string;
  usedAt: number;
  begunAt: number;
}

/**
 * Snapshots a clone reads page by page (docs/remotes.md): each is a read-only connection holding
 * one read transaction, so every page it serves shows the database as it was when it began, however
 * long the clone takes and whatever merges meanwhile. WAL keeps that moment readable; a snapshot
 * holds back checkpoints past it, so few are open at once (one a person and space: a new one
 * closes theirs), an idle one is closed, and none lives past `maxAgeMs`, so the log's growth is
 * bounded whoever asks.
 */
export class SnapshotReaders {
  private readonly open = new Map<string, Pinned>();

  constructor(
    private readonly path: string,
    /** The time now, in milliseconds (the context's clock). */
    private readonly now: () => number,
    readonly most = 4,
    readonly idleMs = 120_000,
    readonly maxAgeMs = 30 * 60_000,
  ) {}

  /** Opens a snapshot of the database as of now; null when `most` are open (after closing idle ones). */
  begin(spaceId: string, userId: string, firstRead: (store: ReadStore) => void): string | null {
    this.closeIdle();
    for (const [id, pinned] of this.open) if (pinned.spaceId === spaceId && pinned.userId === userId) this.end(id);
    if (this.open.size >= this.most) return null;
    const sqlite = new Database(this.path, { readonly: true, strict: true });
    sqlite.run("PRAGMA busy_timeout = 10000");
    addFunctions(sqlite);
    sqlite.run("BEGIN");
    const store: ReadStore = { sqlite, statements: new StatementCache() };
    // A read transaction takes its moment at its first read.
    firstRead(store);
    const id = `snp_${randomBytes(16).toString("hex")}`;
    const now = this.now();
    this.open.set(id, { store, spaceId, userId, usedAt: now, begunAt: now });
    return id;
  }

  /** The snapshot `id` of this space and user, or undefined. */
  find(id: string, spaceId: string, userId: string): ReadStore | undefined {
    this.closeIdle();
    const pinned = this.open.get(id);
    if (!pinned || pinned.spaceId !== spaceId || pinned.userId !== userId) return undefined;
    pinned.usedAt = this.now();
    return pinned.store;
  }

  end(id: string): boolean {
    const pinned = this.open.get(id);
    if (!pinned) return false;
    this.open.delete(id);
    pinned.store.sqlite.close();
    return true;
  }

  closeAll(): void {
    for (const id of [...this.open.keys()]) this.end(id);
  }

  private closeIdle(): void {
    const now = this.now();
    for (const [id, pinned] of this.open) if (now - pinned.usedAt > this.idleMs || now - pinned.begunAt > this.maxAgeMs) this.end(id);
  }
}
