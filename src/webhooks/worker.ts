import { and, asc, eq, gt, lte, min, sql } from "drizzle-orm";
import { BackgroundTask } from "../shared/background-task";
import type { AppContext, Tx } from "../context";
import { insertRow, preparedFor, preparedWrite } from "../db/client";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { events } from "../tables/events";
import { tooManyRequests } from "../shared/errors";
import { type OutgoingEvent, ruleWants } from "../shared/event-types";
import { ATTEMPT_TIMEOUT_MS, type AttemptResult, attemptDelivery, outgoingEvent, recordAttempt } from "./deliveries";
import type { RuleRow } from "./rules";
import { outboxCursor, webhookJobs, webhookRules } from "../tables/webhooks";

type JobRow = typeof webhookJobs.$inferSelect;

/**
 * Attempts in flight at once (under Bun's own cap of 256 fetches), shared between spaces: a space
 * holds at most its share, the pool divided among the spaces with work plus one share kept free for
 * the next space whose work arrives, so a space whose targets hang (each attempt holding its slot up
 * to 10 s) never takes the slots another space needs now. Within a space, a rule whose last attempt
 * was answered may use 16 slots; one that has not been answered yet (since the server started) or
 * whose last attempt got no answer only 2, so a target that never answers holds 2 of its space's
 * share, not 16 for the first 10 s.
 */
const MAX_IN_FLIGHT = 128;
const MIN_SPACE_SHARE = 4;
const MAX_IN_FLIGHT_ANSWERING = 16;
const MAX_IN_FLIGHT_UNPROVEN = 2;
/** A person's attempts (test-fire, redeliver) that may wait for a slot in one space; past it, 429. */
const MAX_WAITING_PER_SPACE = 32;
/** How long a job whose outcome could not be written waits before the loop looks at it again. */
const UNRECORDED_PAUSE_MS = 1000;
/** Events read from the outbox per fan-out transaction. */
const FAN_OUT_BATCH = 500;
const CURSOR = "webhooks";

const enabledRules = preparedFor((db) =>
  db
    .select()
    .from(webhookRules)
    .where(and(eq(webhookRules.spaceId, sql.placeholder("spaceId")), eq(webhookRules.enabled, true)))
    .prepare(),
);

const ruleById = preparedFor((db) => db.select().from(webhookRules).where(eq(webhookRules.id, sql.placeholder("id"))).prepare());

/**
 * One rule's due jobs, soonest first, past those in flight: read by the rule's own index, so its
 * cost is what it answers (plus the rule's attempts in flight, at most 16), never the due jobs of
 * the space's other rules. Read by space, a rule whose target never answers made every read walk
 * its whole backlog (1 ms at 2,000 jobs, hundreds of reads a second: 30% of the server's core).
 */
export const dueJobsOfRule = preparedFor((db) =>
  db
    .select()
    .from(webhookJobs)
    .where(
      and(
        eq(webhookJobs.ruleId, sql.placeholder("ruleId")),
        lte(webhookJobs.dueAt, sql.placeholder("now")),
        sql`${webhookJobs.id} NOT IN (SELECT value FROM json_each(${sql.placeholder("busy")}))`,
      ),
    )
    .orderBy(asc(webhookJobs.dueAt))
    .limit(sql.placeholder("limit"))
    .prepare(),
);

/** The rules with pending jobs and their spaces, read once when the loop starts (afterwards, the loop knows). */
const rulesWithJobs = preparedFor((db) => db.selectDistinct({ spaceId: webhookJobs.spaceId, ruleId: webhookJobs.ruleId }).from(webhookJobs).prepare());

/** The next time a job falls due after now, in the whole pool and for one rule. */
const nextDue = preparedFor((db) => db.select({ at: min(webhookJobs.dueAt) }).from(webhookJobs).where(gt(webhookJobs.dueAt, sql.placeholder("now"))).prepare());
const nextDueOfRule = preparedFor((db) =>
  db
    .select({ at: min(webhookJobs.dueAt) })
    .from(webhookJobs)
    .where(and(eq(webhookJobs.ruleId, sql.placeholder("ruleId")), gt(webhookJobs.dueAt, sql.placeholder("now"))))
    .prepare(),
);

const outboxAfter = preparedFor((db) =>
  db
    .select({ seq: events.seq, spaceId: events.spaceId, baseId: events.baseId, type: events.type })
    .from(events)
    .where(gt(events.seq, sql.placeholder("cursor")))
    .orderBy(asc(events.seq))
    .limit(FAN_OUT_BATCH)
    .prepare(),
);
const dropEvents = preparedWrite((db) => db.delete(events).where(sql`${events.seq} IN (SELECT value FROM json_each(${sql.placeholder("seqs")}))`).prepare());
const moveCursor = preparedWrite((db) =>
  db
    .insert(outboxCursor)
    .values({ name: CURSOR, seq: sql.placeholder("seq") } as never)
    .onConflictDoUpdate({ target: outboxCursor.name, set: { seq: sql`excluded.seq` } })
    .prepare(),
);

const dropJob = preparedWrite((db) => db.delete(webhookJobs).where(eq(webhookJobs.id, sql.placeholder("id"))).prepare());
const rescheduleJob = preparedWrite((db) =>
  db
    .update(webhookJobs)
    .set({ attempt: sql`${sql.placeholder("attempt")}`, dueAt: sql`${sql.placeholder("dueAt")}` })
    .where(eq(webhookJobs.id, sql.placeholder("id")))
    .prepare(),
);

/** The retry delay after a failed attempt: the schedule's (±10 % jitter) or the target's `Retry-After`. */
export function retryDelayMs(schedule: number[], attempt: number, retryAfterMs: number | null, random = Math.random()): number | null {
  if (attempt > schedule.length) return null;
  if (retryAfterMs !== null) return retryAfterMs;
  return Math.round(schedule[attempt - 1] * 1000 * (0.9 + 0.2 * random));
}

/**
 * The delivery loop, in the server process. A commit that wrote events wakes it (no polling on the
 * request path): it reads the outbox after its cursor in `seq` order and turns each event into one
 * pending job per matching enabled rule, written in the same transaction that moves the cursor, and
 * sent at once. Due jobs are sent by a bounded pool shared fairly between spaces (see
 * `MAX_IN_FLIGHT`), whose spaces take turns for the slots that free up; a person's test-fire or
 * redeliver waits for a slot in the same pool. Each attempt's outcome, its log record and the job's
 * next due time are written together. Jobs live in the database: after a crash or restart, whatever
 * is due goes out at once.
 */
export class DeliveryLoop {
  private readonly inFlight = new Map<string, { done: Promise<void> }>();
  private readonly perRule = new Map<string, number>();
  private readonly perSpace = new Map<string, number>();
  /** Rules whose last attempt got an answer (any status): only they may use more than 2 slots. */
  private readonly answering = new Set<string>();
  /**
   * Spaces whose rules may have jobs: per rule, the earliest time one may be due (0: look now;
   * infinity: only when an attempt of it ends), and per space the earliest of its rules'. Read
   * from the database once.
   */
  private dueBySpace: Map<string, SpaceDue> | null = null;
  /** Per space, a person's attempts waiting for a slot, first come first served. */
  private readonly waiting = new Map<string, (() => Promise<unknown>)[]>();
  /** Numbers a person's attempts in flight (jobs go by their ids). */
  private personAttempts = 0;
  /** Which space goes first at the next pump: they take turns. */
  private turn = 0;
  /** How far the outbox has been read (the loop is the only reader: `serve` holds the data directory). */
  private cursor: number | null = null;
  /** Set by every commit that wrote events: the next run reads the outbox. */
  private outboxDirty = true;
  private readonly task = new BackgroundTask(() => this.run());
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly outcomes: { outcome: Outcome; resolve: () => void; reject: (error: unknown) => void }[] = [];

  /** The context it works in, from `start` on: until then (and after `stop`) commits' wakes do nothing and a person's attempt is made at once. */
  private ctx!: AppContext;
  private started = false;

  /** Starts the loop in `ctx`, whose `deliveries` is this loop (the `serve` command wires both). */
  start(ctx: AppContext): this {
    this.ctx = ctx;
    this.started = true;
    this.runSoon();
    return this;
  }

  /** What a commit that wrote events calls: the next run reads the outbox. */
  readonly wake = (): void => {
    this.outboxDirty = true;
    this.runSoon();
  };

  /** Runs the loop soon: after a commit that wrote events, an attempt that ended, or the timer of the next retry. */
  private runSoon(): void {
    if (this.started && !this.stopped) this.task.wake();
  }

  /** Stops taking work; attempts in flight finish (each within its 10 s limit) and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.task.stop();
    for (const queue of this.waiting.values()) for (const attempt of queue.splice(0)) void attempt();
    await Promise.all([...this.inFlight.values()].map((flight) => flight.done));
  }

  /** A person's attempt, made at once if its space's share has a free slot, else when one frees up. */
  inTurn<T>(spaceId: string, attempt: () => Promise<T>): Promise<T> {
    if (!this.started || this.stopped) return attempt();
    const made = Promise.withResolvers<T>();
    const start = () => attempt().then(made.resolve, made.reject);
    const queue = this.waiting.get(spaceId);
    if (!queue && this.roomIn(spaceId, this.share(this.readySpaces(this.ctx.clock.now()))) > 0) this.occupyForPerson(spaceId, start);
    else if ((queue?.length ?? 0) >= MAX_WAITING_PER_SPACE) throw tooManyRequests(ATTEMPT_TIMEOUT_MS / 1000);
    else {
      if (queue) queue.push(start);
      else this.waiting.set(spaceId, [start]);
      this.runSoon();
    }
    return made.promise;
  }

  /**
   * Fans out what the outbox has, then pumps, until the outbox is read: a pump after each fan-out,
   * not once the outbox is empty, as under steady creates commits keep it from ever being empty
   * for long, and the jobs waiting for a slot (their rule or space at its limit at fan-out) waited
   * for that pump (19 pumps a second at 500 creates/s, jobs waiting up to 600 ms).
   */
  private async run(): Promise<void> {
    try {
      do {
        if (this.outboxDirty) {
          this.outboxDirty = false;
          if ((await this.fanOut()) === FAN_OUT_BATCH) this.outboxDirty = true;
        }
        if (!this.stopped) this.pump();
      } while (!this.stopped && this.outboxDirty);
    } catch (error) {
      this.ctx.log.error(`webhook delivery loop: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * Turns the next events of the outbox into jobs; answers how many events it read. The jobs are
   * sent at once, without waiting for their rows to commit: the queue commits them before any
   * outcome of theirs, and if the process dies first, the cursor has not moved either, so the events
   * are fanned out again after the restart (a delivery is at least once; `webhook-id` tells repeats).
   */
  private async fanOut(): Promise<number> {
    this.cursor ??= this.ctx.db.select({ seq: outboxCursor.seq }).from(outboxCursor).where(eq(outboxCursor.name, CURSOR)).get()?.seq ?? 0;
    const batch = outboxAfter(this.ctx).all({ cursor: this.cursor });
    if (batch.length === 0) return 0;
    const last = batch[batch.length - 1].seq;
    const rulesBySpace = new Map<string, RuleRow[]>();
    const due = this.ctx.clock.now();
    const jobs: JobRow[] = [];
    for (const event of batch) {
      let rules = rulesBySpace.get(event.spaceId);
      if (!rules) rulesBySpace.set(event.spaceId, (rules = enabledRules(this.ctx).all({ spaceId: event.spaceId })));
      for (const rule of rules) {
        if (!ruleWants(rule.eventType, event.type)) continue;
        if (rule.baseId !== null && rule.baseId !== event.baseId) continue;
        jobs.push({ id: newId("job"), ruleId: rule.id, spaceId: rule.spaceId, eventSeq: event.seq, attempt: 1, dueAt: due });
      }
    }
    this.cursor = last;
    // An event no rule wants is done with once read: only those with jobs are kept (for redelivery, until the daily upkeep).
    const wanted = new Set(jobs.map((job) => job.eventSeq));
    const unwanted = batch.filter((event) => !wanted.has(event.seq)).map((event) => event.seq);
    const stored = write(this.ctx, (tx) => {
      for (const job of jobs) insertRow(tx, webhookJobs, job);
      if (unwanted.length > 0) dropEvents(tx).run({ seqs: JSON.stringify(unwanted) });
      moveCursor(tx).run({ seq: last });
    });
    for (const job of jobs) this.lookAgain(job.spaceId, job.ruleId);
    const share = this.share(this.readySpaces(due));
    for (const job of jobs) if (this.hasRoomFor(job, share)) this.launch(job);
    await stored.catch((error) => {
      // Not stored: read the outbox again from the cursor the database has.
      this.cursor = null;
      this.outboxDirty = true;
      throw error;
    });
    return batch.length;
  }

  /** Starts what the pool has room for, the spaces with work taking turns, then sets a timer for the next job due. */
  private pump(): void {
    if (this.stopped) return;
    const now = this.ctx.clock.now();
    const ready = this.readySpaces(now);
    if (ready.length > 0 && this.inFlight.size < MAX_IN_FLIGHT) {
      const share = this.share(ready);
      const busy = JSON.stringify([...this.inFlight.keys()]);
      const first = this.turn++ % ready.length;
      for (let i = 0; i < ready.length && this.inFlight.size < MAX_IN_FLIGHT; i++) this.fill(ready[(first + i) % ready.length], { share, busy, now });
    }
    this.scheduleNext(now);
  }

  /**
   * One space's turn: its people's waiting attempts first, then its rules' due jobs, the rules
   * taking turns, up to its share (`busy`: the jobs in flight, as JSON). A rule at its limit is
   * not read: an attempt of it that ends looks again.
   */
  private fill(spaceId: string, { share, busy, now }: { share: number; busy: string; now: number }): void {
    const queue = this.waiting.get(spaceId);
    if (queue) {
      while (queue.length > 0 && this.roomIn(spaceId, share) > 0) this.occupyForPerson(spaceId, queue.shift()!);
      if (queue.length === 0) this.waiting.delete(spaceId);
    }
    const space = this.dueSpaces().get(spaceId);
    if (!space || space.at > now) return;
    for (const [ruleId, at] of [...space.rules]) {
      const spaceRoom = this.roomIn(spaceId, share);
      if (spaceRoom <= 0) break;
      if (at > now) continue;
      const room = Math.min(spaceRoom, this.limitOf(ruleId) - (this.perRule.get(ruleId) ?? 0));
      if (room <= 0) {
        space.rules.set(ruleId, Number.POSITIVE_INFINITY);
        continue;
      }
      const due = dueJobsOfRule(this.ctx).all({ ruleId, now, busy, limit: room });
      for (const job of due) this.launch(job);
      // Its turn is over: it goes after the space's other rules.
      space.rules.delete(ruleId);
      if (due.length === room) space.rules.set(ruleId, 0);
      else {
        const next = nextDueOfRule(this.ctx).get({ ruleId, now })?.at ?? null;
        if (next !== null || this.perRule.has(ruleId)) space.rules.set(ruleId, next ?? Number.POSITIVE_INFINITY);
      }
    }
    space.at = Math.min(...space.rules.values());
    if (space.rules.size === 0 && !this.perSpace.has(spaceId)) this.dueBySpace!.delete(spaceId);
  }

  private dueSpaces(): Map<string, SpaceDue> {
    if (!this.dueBySpace) {
      this.dueBySpace = new Map();
      for (const { spaceId, ruleId } of rulesWithJobs(this.ctx).all()) this.lookAgain(spaceId, ruleId);
    }
    return this.dueBySpace;
  }

  /** Marks a rule's jobs to be read at the next pump. */
  private lookAgain(spaceId: string, ruleId: string): void {
    const spaces = this.dueSpaces();
    const space = spaces.get(spaceId);
    if (space) {
      space.rules.set(ruleId, 0);
      space.at = 0;
    } else spaces.set(spaceId, { at: 0, rules: new Map([[ruleId, 0]]) });
  }

  private readySpaces(now: number): string[] {
    const ready = new Set(this.waiting.keys());
    for (const [spaceId, { at }] of this.dueSpaces()) if (at <= now) ready.add(spaceId);
    return [...ready];
  }

  /** Slots one space may hold now: the pool over the spaces with work (`ready`, or with attempts in flight), plus one share kept free. */
  private share(ready: string[]): number {
    const active = new Set([...ready, ...this.perSpace.keys()]).size;
    return Math.max(MIN_SPACE_SHARE, Math.floor(MAX_IN_FLIGHT / (active + 1)));
  }

  private roomIn(spaceId: string, share: number): number {
    return this.stopped ? 0 : Math.min(MAX_IN_FLIGHT - this.inFlight.size, share - (this.perSpace.get(spaceId) ?? 0));
  }

  private limitOf(ruleId: string): number {
    return this.answering.has(ruleId) ? MAX_IN_FLIGHT_ANSWERING : MAX_IN_FLIGHT_UNPROVEN;
  }

  private hasRoomFor(job: JobRow, share: number): boolean {
    return this.roomIn(job.spaceId, share) > 0 && (this.perRule.get(job.ruleId) ?? 0) < this.limitOf(job.ruleId);
  }

  private scheduleNext(now: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const next = nextDue(this.ctx).get({ now })?.at;
    if (next === null || next === undefined) return;
    this.timer = setTimeout(() => this.wake(), Math.min(Math.max(next - now, 0), 60_000));
    this.timer.unref?.();
  }

  /** A job stays in flight (not picked again) until its outcome is committed. */
  private launch(job: JobRow): void {
    const recorded = this.attempt(job)
      .then((outcome) => this.record(outcome))
      .then(
        () => true,
        (error) => {
          this.ctx.log.error(`webhook delivery ${job.id}: ${error instanceof Error ? error.message : String(error)}`);
          return false;
        },
      );
    this.occupy(job.id, job.spaceId, job.ruleId, recorded);
  }

  private occupyForPerson(spaceId: string, start: () => Promise<unknown>): void {
    this.occupy(`person ${++this.personAttempts}`, spaceId, null, start().then(() => true));
  }

  /** Holds a slot of the space (and rule) until `attempt` settles; then its space looks for work again. */
  private occupy(id: string, spaceId: string, ruleId: string | null, attempt: Promise<boolean>): void {
    const count = (map: Map<string, number>, key: string, by: number) => {
      const n = (map.get(key) ?? 0) + by;
      if (n > 0) map.set(key, n);
      else map.delete(key);
    };
    count(this.perSpace, spaceId, 1);
    if (ruleId) count(this.perRule, ruleId, 1);
    const done = attempt.then((recorded) => {
      this.inFlight.delete(id);
      count(this.perSpace, spaceId, -1);
      if (ruleId) {
        count(this.perRule, ruleId, -1);
        this.lookAgain(spaceId, ruleId);
      }
      // An outcome that could not be written (a full disk) leaves its job due: picked again at once,
      // it would be sent again and again as fast as the target answers.
      if (recorded) this.runSoon();
      else setTimeout(() => this.wake(), UNRECORDED_PAUSE_MS).unref?.();
    });
    this.inFlight.set(id, { done });
  }

  private async attempt(job: JobRow): Promise<Outcome> {
    const rule = ruleById(this.ctx).get({ id: job.ruleId });
    const event = outgoingEvent(this.ctx, job.eventSeq);
    // A rule deleted or disabled (or an event pruned) since the fan-out: nothing is owed any more.
    if (!rule || !rule.enabled || !event) return { job };
    const result = await attemptDelivery(this.ctx, rule, event);
    if (result.httpStatus === null) this.answering.delete(rule.id);
    else this.answering.add(rule.id);
    return { job, rule, event, result };
  }

  /**
   * Outcomes are written together: those that end within a millisecond of each other share one
   * write, so a busy loop does not pay a transaction per attempt.
   */
  private record(outcome: Outcome): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.outcomes.push({ outcome, resolve, reject }) === 1) setTimeout(() => this.writeOutcomes(), 1);
    });
  }

  private writeOutcomes(): void {
    const batch = this.outcomes.splice(0);
    write(this.ctx, (tx) => {
      for (const { outcome } of batch) writeOutcome(tx, outcome);
    }).then(
      () => batch.forEach((item) => item.resolve()),
      (error) => batch.forEach((item) => item.reject(error)),
    );
  }
}

interface SpaceDue {
  at: number;
  rules: Map<string, number>;
}

interface Outcome {
  job: JobRow;
  rule?: RuleRow;
  event?: OutgoingEvent;
  result?: AttemptResult;
}

/** An attempt's log record and rule status, and its job rescheduled or removed. */
function writeOutcome(tx: Tx, { job, rule, event, result }: Outcome): void {
  if (!rule || !event || !result) return void dropJob(tx).run({ id: job.id });
  const delay = result.ok || result.httpStatus === 410 ? null : retryDelayMs(tx.config.webhookRetrySchedule, job.attempt, result.retryAfterMs);
  const nextAttemptAt = delay === null ? null : tx.clock.now() + delay;
  recordAttempt(tx, rule, event, result, { attempt: job.attempt, trigger: "event", nextAttemptAt });
  if (nextAttemptAt === null || !ruleById(tx).get({ id: rule.id })?.enabled) dropJob(tx).run({ id: job.id });
  else rescheduleJob(tx).run({ id: job.id, attempt: job.attempt + 1, dueAt: nextAttemptAt });
}
