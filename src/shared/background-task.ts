/**
 * A task that runs in the background soon after each wake, one run at a time. A wake that comes
 * while a run is under way makes it run once more when done, so no wake is ever lost between the
 * task's last look for work and its end (the delivery loop, the field upkeep).
 */
export class BackgroundTask {
  private scheduled = false;
  private running = false;
  private again = false;
  private stopped = false;
  private readonly waiters: (() => void)[] = [];

  /** `run` handles its own errors: one that escapes is logged by nobody. */
  constructor(private readonly run: () => Promise<void>) {}

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.runOnce();
    });
  }

  /** Resolves once no run is under way or due. */
  idle(): Promise<void> {
    if (!this.running && !this.scheduled) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Takes no more wakes; resolves when the run under way (if any) ends. */
  stop(): Promise<void> {
    this.stopped = true;
    this.again = false;
    return this.idle();
  }

  private async runOnce(): Promise<void> {
    this.running = true;
    try {
      await this.run();
    } finally {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
      if (!this.scheduled) for (const resolve of this.waiters.splice(0)) resolve();
    }
  }
}
