import type { KeyCachePort } from "../context";
import type { CachedKey } from "../tables/auth";

const MAX_ENTRIES = 10_000;

/**
 * Key hash → key and owner, so verifying a key costs a SHA-256 and a map lookup. Only positive
 * answers are kept; every change to a key or its owner drops the affected entries before it
 * returns, so the very next request sees it. Expiry is checked on every use, not cached.
 */
export class KeyCache implements KeyCachePort {
  private readonly entries = new Map<string, CachedKey>();

  /** `onForget` runs after a key or its owner changed (deleted, banned, lowered): what reads on with it, such as open streams, checks again. */
  constructor(private readonly onForget: () => void = () => undefined) {}

  get(hash: string): CachedKey | undefined {
    return this.entries.get(hash);
  }

  set(hash: string, entry: CachedKey): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(hash, entry);
  }

  forgetKey(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.key.id === keyId) this.entries.delete(hash);
    this.onForget();
  }

  forgetUser(userId: string): void {
    for (const [hash, entry] of this.entries) if (entry.user.id === userId) this.entries.delete(hash);
    this.onForget();
  }
}
