import type { Clock } from "./clock";
import { tooManyRequests } from "./errors";

/**
 * A fixed-window counter per key, in memory: enough for one process guarding the places where
 * guessing is possible (logins, device codes). Old windows are swept as new ones open.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly clock: Clock,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  private current(key: string) {
    const now = this.clock.now();
    const window = this.windows.get(key);
    if (window && now - window.start < this.windowMs) return window;
    if (this.windows.size > 10_000) this.sweep(now);
    const fresh = { start: now, count: 0 };
    this.windows.set(key, fresh);
    return fresh;
  }

  private sweep(now: number) {
    for (const [key, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(key);
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
      const window = this.windows.get(key);
      if (window && window.count > 0) window.count--;
    }
  }
}
