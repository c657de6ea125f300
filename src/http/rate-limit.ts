import type { Clock } from "../clock";
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

  /** Throws 429 with `Retry-After` while `key` is at its limit, without counting. */
  check(key: string): void {
    const window = this.current(key);
    if (window.count >= this.limit) {
      throw tooManyRequests(Math.max(1, Math.ceil((window.start + this.windowMs - this.clock.now()) / 1000)));
    }
  }

  record(key: string): void {
    this.current(key).count++;
  }

  /** Counts one use and throws 429 when it goes over the limit. */
  take(key: string): void {
    this.check(key);
    this.record(key);
  }
}
