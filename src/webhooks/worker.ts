import { and, asc, eq, gt, lte, min, notInArray } from "drizzle-orm";
import type { AppContext } from "../context";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { events } from "../events/schema";
import { attemptDelivery, outgoingEvent, recordAttempt } from "./deliveries";
import type { RuleRow } from "./rules";
import { outboxCursor, webhookJobs, webhookRules } from "./schema";

type JobRow = typeof webhookJobs.$inferSelect;

/** Attempts in flight at once (under Bun's own cap of 256 fetches), and per rule. */
const MAX_IN_FLIGHT = 64;
const MAX_IN_FLIGHT_PER_RULE = 4;
/** Events read from the outbox per fan-out transaction. */
const FAN_OUT_BATCH = 500;
const CURSOR = "webhooks";

/** The retry delay after a failed attempt: the schedule's (±10 % jitter) or the target's `Retry-After`. */
export function retryDelayMs(schedule: number[], attempt: number, retryAfterMs: number | null, random = Math.random()): number | null {
  if (attempt > schedule.length) return null;
  if (retryAfterMs !== null) return retryAfterMs;
  return Math.round(schedule[attempt - 1] * 1000 * (0.9 + 0.2 * random));
}

/**
 * The delivery loop, in the server process. A commit that wrote events wakes it (no polling on the
 * request path): it reads the outbox after its cursor in `seq` order and turns each event into one
 * pending job per matching enabled rule, in the same transaction that moves the cursor. Due jobs
 * are sent by a bounded pool (64 at once, 4 per rule, so one slow or dead target never holds up
 * another rule); each attempt's outcome, its log record and the job's next due time are written
 * together. Jobs live in the database: after a crash or restart, whatever is due goes out at once.
 */
export class DeliveryLoop {
  private readonly inFlight = new Map<string, { ruleId: string; done: Promise<void> }>();
  private readonly perRule = new Map<string, number>();
  private scheduled = false;
  private running = false;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly ctx: AppContext) {}

  start(): this {
    this.ctx.deliveries.wake = () => this.wake();
    this.wake();
    return this;
  }

  /** Called after every commit that wrote events, and when a timer for the next retry fires. */
  wake(): void {
    if (this.stopped || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  /** Stops taking work; attempts in flight finish (each within its 10 s limit) and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.ctx.deliveries.wake = () => undefined;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([...this.inFlight.values()].map((flight) => flight.done));
  }

  private async run(): Promise<void> {
    if (this.running) return void this.wake();
    this.running = true;
    try {
      while (!this.stopped && (await this.fanOut()) === FAN_OUT_BATCH);
      if (!this.stopped) this.pump();
    } catch (error) {
      this.ctx.log.error(`webhook delivery loop: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.running = false;
    }
  }

  /** Turns the next events of the outbox into jobs; answers how many events it read. */
  private fanOut(): Promise<number> {
    return write(this.ctx, (tx) => {
      const cursor = tx.db.select({ seq: outboxCursor.seq }).from(outboxCursor).where(eq(outboxCursor.name, CURSOR)).get()?.seq ?? 0;
      const batch = tx.db
        .select({ seq: events.seq, spaceId: events.spaceId, baseId: events.baseId, type: events.type })
        .from(events)
        .where(gt(events.seq, cursor))
        .orderBy(asc(events.seq))
        .limit(FAN_OUT_BATCH)
        .all();
      if (batch.length === 0) return 0;
      const rulesBySpace = new Map<string, RuleRow[]>();
      const due = tx.clock.now();
      for (const event of batch) {
        let rules = rulesBySpace.get(event.spaceId);
        if (!rules) rulesBySpace.set(event.spaceId, (rules = tx.db.select().from(webhookRules).where(and(eq(webhookRules.spaceId, event.spaceId), eq(webhookRules.enabled, true))).all()));
        for (const rule of rules) {
          if (rule.eventType !== "*" && rule.eventType !== event.type) continue;
          if (rule.baseId !== null && rule.baseId !== event.baseId) continue;
          tx.db.insert(webhookJobs).values({ id: newId("job"), ruleId: rule.id, eventSeq: event.seq, attempt: 1, dueAt: due }).run();
        }
      }
      const last = batch[batch.length - 1].seq;
      tx.db.insert(outboxCursor).values({ name: CURSOR, seq: last }).onConflictDoUpdate({ target: outboxCursor.name, set: { seq: last } }).run();
      return batch.length;
    });
  }

  /** Starts every due job the pool has room for, then sets a timer for the next one due. */
  private pump(): void {
    if (this.stopped) return;
    const room = MAX_IN_FLIGHT - this.inFlight.size;
    const now = this.ctx.clock.now();
    if (room > 0) {
      const busy = [...this.inFlight.keys()];
      const full = [...this.perRule].filter(([, n]) => n >= MAX_IN_FLIGHT_PER_RULE).map(([ruleId]) => ruleId);
      const due = this.ctx.db
        .select()
        .from(webhookJobs)
        .where(and(lte(webhookJobs.dueAt, now), busy.length ? notInArray(webhookJobs.id, busy) : undefined, full.length ? notInArray(webhookJobs.ruleId, full) : undefined))
        .orderBy(asc(webhookJobs.dueAt))
        .limit(room * 2)
        .all();
      for (const job of due) {
        if (this.inFlight.size >= MAX_IN_FLIGHT) break;
        if ((this.perRule.get(job.ruleId) ?? 0) >= MAX_IN_FLIGHT_PER_RULE) continue;
        this.launch(job);
      }
    }
    this.scheduleNext(now);
  }

  private scheduleNext(now: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const busy = [...this.inFlight.keys()];
    const next = this.ctx.db
      .select({ at: min(webhookJobs.dueAt) })
      .from(webhookJobs)
      .where(busy.length ? notInArray(webhookJobs.id, busy) : undefined)
      .get()?.at;
    if (next === null || next === undefined) return;
    this.timer = setTimeout(() => this.wake(), Math.min(Math.max(next - now, 0), 60_000));
    this.timer.unref?.();
  }

  private launch(job: JobRow): void {
    this.perRule.set(job.ruleId, (this.perRule.get(job.ruleId) ?? 0) + 1);
    const done = this.deliver(job)
      .catch((error) => this.ctx.log.error(`webhook delivery ${job.id}: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        this.inFlight.delete(job.id);
        const left = (this.perRule.get(job.ruleId) ?? 1) - 1;
        if (left > 0) this.perRule.set(job.ruleId, left);
        else this.perRule.delete(job.ruleId);
        this.wake();
      });
    this.inFlight.set(job.id, { ruleId: job.ruleId, done });
  }

  private async deliver(job: JobRow): Promise<void> {
    const rule = this.ctx.db.select().from(webhookRules).where(eq(webhookRules.id, job.ruleId)).get();
    const event = outgoingEvent(this.ctx, job.eventSeq);
    if (!rule || !rule.enabled || !event) {
      // A rule disabled (or an event pruned) after the fan-out: nothing is owed any more.
      await write(this.ctx, (tx) => void tx.db.delete(webhookJobs).where(eq(webhookJobs.id, job.id)).run());
      return;
    }
    const result = await attemptDelivery(this.ctx, rule, event);
    await write(this.ctx, (tx) => {
      const delay = result.ok || result.httpStatus === 410 ? null : retryDelayMs(tx.config.webhookRetrySchedule, job.attempt, result.retryAfterMs);
      const nextAttemptAt = delay === null ? null : tx.clock.now() + delay;
      const view = recordAttempt(tx, rule, event, result, { attempt: job.attempt, trigger: "event", nextAttemptAt });
      const stillEnabled = tx.db.select({ enabled: webhookRules.enabled }).from(webhookRules).where(eq(webhookRules.id, rule.id)).get()?.enabled;
      if (nextAttemptAt === null || !stillEnabled) tx.db.delete(webhookJobs).where(eq(webhookJobs.id, job.id)).run();
      else tx.db.update(webhookJobs).set({ attempt: job.attempt + 1, dueAt: nextAttemptAt }).where(eq(webhookJobs.id, job.id)).run();
      return view;
    });
  }
}
