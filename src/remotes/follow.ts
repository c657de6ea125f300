import { eq, isNull, lte, or } from "drizzle-orm";
import type { AppContext } from "../context";
import { write } from "../db/tx";
import { iso } from "../shared/clock";
import { remotes } from "../tables/changes";
import { push } from "./remotes";

/**
 * `serve` follows its remotes (docs/remotes.md, "When sync runs"): every `everyMs` each remote is
 * pulled and pushed (a push pulls first), as `basalt push` does. A remote that cannot be reached,
 * or refuses, is tried again after twice the wait each time, up to `MOST_BACKOFF` times the
 * interval: a laptop offline for a day makes a few dozen attempts, not 1,440. Each remote's next
 * attempt is `remotes.next_sync_at`, so `basalt status` and the Remotes screen say when it is.
 *
 * `tick()` does what is due by the context's clock: the timer calls it, and tests call it after
 * moving a `ManualClock`. One tick at a time; remotes one after another.
 */

/** The wait grows to at most this many intervals while a remote does not answer (1 min: 32 min). */
const MOST_BACKOFF = 32;
/** How often the timer looks for what is due: the interval, or 5 s when that is longer. */
const LOOK_MS = 5000;

export class Follower {
  private timer: ReturnType<typeof setInterval> | null = null;
  private ticking: Promise<void> | null = null;
  /** Failed attempts in a row, by remote; gone once it answers (and with a restart, which tries at once). */
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly ctx: AppContext,
    readonly everyMs: number,
  ) {}

  start(): this {
    this.timer ??= setInterval(() => void this.tick(), Math.min(this.everyMs, LOOK_MS));
    void this.tick();
    return this;
  }

  /** Stops the timer and waits for the sync in flight to end. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
  }

  /** Pulls and pushes each remote whose time has come; answers once they are done. */
  tick(): Promise<void> {
    this.ticking ??= this.syncDue().finally(() => (this.ticking = null));
    return this.ticking;
  }

  private async syncDue(): Promise<void> {
    const now = this.ctx.clock.now();
    const due = this.ctx.db
      .select({ id: remotes.id, spaceId: remotes.spaceId, name: remotes.name })
      .from(remotes)
      .where(or(isNull(remotes.nextSyncAt), lte(remotes.nextSyncAt, iso(now))))
      .all();
    for (const remote of due) {
      let waitMs = this.everyMs;
      try {
        await push(this.ctx, remote.spaceId, remote.id);
        this.failures.delete(remote.id);
      } catch (error) {
        const failed = (this.failures.get(remote.id) ?? 0) + 1;
        this.failures.set(remote.id, failed);
        waitMs = this.everyMs * Math.min(2 ** failed, MOST_BACKOFF);
        this.ctx.log.error(`follow: ${remote.name} of space ${remote.spaceId} did not sync (${error instanceof Error ? error.message : String(error)}); next try in ${Math.round(waitMs / 1000)} s`);
      }
      const next = iso(this.ctx.clock.now() + waitMs);
      // The remote may have been removed meanwhile: then nothing is updated.
      await write(this.ctx, (tx) => void tx.db.update(remotes).set({ nextSyncAt: next }).where(eq(remotes.id, remote.id)).run());
    }
  }
}
