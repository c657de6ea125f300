import type { Clock } from "./clock";
import { tooManyRequests } from "./errors";

/** The longest key kept as given; a longer one is kept as its SHA-256, so no key costs more than this. */
export const MAX_KEY_CHARS = 128;
/** The most windows a limiter keeps (about 100 bytes each past the key: a few MB at most). */
export const MAX_KEYS = 20_000;

/**
 * A fixed-window counter per key, in memory: enough for one process guarding the places where
 * guessing is possible (logins, device codes). Its callers key it only on what they have checked
 * (an address, an id of the right shape that names a row), and it is bounded whatever they give
 * it: at most `maxKeys` windows of at most `MAX_KEY_CHARS` characters each. Past `maxKeys`, ended
 * windows are swept, then the oldest are let go (their counts start again), never a refusal of a
 * key no one has used yet: a flood of new keys can neither grow the process nor close the door.
 */
export class RateLimiter {
  /** In the order their windows opened (a window that opens again moves to the end). */
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly clock: Clock,
    readonly limit: number,
    readonly windowMs: number,
    readonly maxKeys = MAX_KEYS,
  ) {}

  /** How many windows are kept. */
  get size(): number {
    return this.windows.size;
  }

  private current(given: string) {
    const key = keptKey(given);
    const now = this.clock.now();
    const window = this.windows.get(key);
    if (window && now - window.start < this.windowMs) return window;
    if (window) this.windows.delete(key);
    else if (this.windows.size >= this.maxKeys) this.makeRoom(now);
    const fresh = { start: now, count: 0 };
    this.windows.set(key, fresh);
    return fresh;
  }

  /** Sweeps ended windows; when every one is still open, lets the oldest tenth go. */
  private makeRoom(now: number) {
    for (const [key, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(key);
    if (this.windows.size < this.maxKeys) return;
    let over = this.windows.size - this.maxKeys + Math.ceil(this.maxKeys / 10);
    for (const key of this.windows.keys()) {
      if (over-- <= 0) break;
      this.windows.delete(key);
    }
  }

  /** Throws 429 with `Retry-After` while any of `keys` is at its limit, without counting. */
  check(...keys: string[]): void {
    for (const key of keys) {
      const window = this.current(key);
      if (window.count >= this.limit) {
        throw tooManyRequests(Math.max(1, Math.ceil((window.start + this.windowMs - this.clock.now()) / 1000)));
      }
    }
  }

  /** Uses of `key` in its current window. */
  count(key: string): number {
    return this.current(key).count;
  }

  record(...keys: string[]): void {
    for (const key of keys) this.current(key).count++;
  }

  /**
   * Counts one use of every key, or throws 429 and counts none. Taken before a costly check (a
   * password hash), so requests sent in parallel cannot all be checked before any is counted.
   */
  take(...keys: string[]): void {
    this.check(...keys);
    this.record(...keys);
  }

  /** Gives back a use taken by `take` that turned out not to count (a login that succeeded). */
  release(...keys: string[]): void {
    for (const key of keys) {
      const window = this.windows.get(keptKey(key));
      if (window && window.count > 0) window.count--;
    }
  }
}

const keptKey = (key: string): string => (key.length <= MAX_KEY_CHARS ? key : `#${new Bun.CryptoHasher("sha256").update(key).digest("base64")}`);
