import type { EventStreamPort, StreamHolder } from "../context";
import { eventBody, type LiveEvent } from "../shared/event-types";
/**
 * The live event stream (`GET /api/v1/events/stream`): each event, once its transaction commits,
 * goes to the subscribers of its space as a Server-Sent Event whose id is its outbox `seq`. The
 * last events are kept in memory, so a client that reconnects with `Last-Event-ID` gets what it
 * missed; one that missed more than they hold (or reconnects after a restart) is told to reload.
 * Events come from this process's commits: a command-line write made while the server runs reaches
 * webhooks (through the outbox) but not the stream.
 */


/** How many streams one credential, one account and the whole server may hold (`Limits`). */
interface StreamCaps {
  streamsPerKey: number;
  streamsPerUser: number;
  streams: number;
}

/** A subscriber: where its frames go (answering false once it cannot take more), and whether its credential still reads the space. */
export interface Subscriber {
  spaceId: string;
  holder?: StreamHolder;
  send(frame: Uint8Array): boolean;
  stillAllowed(): boolean;
  /**
   * An event as it may see it: null when it may not (a member kept out of a private node does not
   * see its events), the event itself, or one narrowed for it (which gets a frame of its own); all
   * as they are when absent. `tree` is the tree's stamp now (`treeStamp`): a subscriber whose
   * sight was worked out under another works it out again first.
   */
  view?(event: LiveEvent, tree: string): LiveEvent | null;
  close(): void;
}

/** An event kept for reconnecting clients, with its frame's bytes once a subscriber needed them (made once for all; a commit with no one listening only keeps the event). */
interface Kept {
  event: LiveEvent;
  frame?: Uint8Array;
}

/** How many of the last events the memory keeps for reconnecting clients. */
const KEPT_EVENTS = 5000;
/** A comment frame this often keeps idle connections open (Bun closes a socket idle for 10 s) and finds those gone. */
export const HEARTBEAT_MS = 8000;
/** Frames that may wait for one subscriber before it is dropped. */
const MAX_QUEUED = 1000;

const eventFrame = (event: LiveEvent) => `id: ${event.seq}\nevent: ${event.type}\ndata: ${eventBody(event)}\n\n`;

const encoder = new TextEncoder();
/** What the kept frames may hold in all: events of large records must not hold memory after their listeners leave. */
const KEPT_BYTES = 64 * 1024 * 1024;
const PING = encoder.encode(": ping\n\n");

export class EventHub implements EventStreamPort {
  private readonly kept: Kept[] = [];
  /** Events up to this seq are no longer kept: a client that last saw one before it must reload. */
  private floor: number | null = null;
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  /** Events committed since the last flush, by space: the commits of one batch reach a subscriber as one write. */
  private readonly pending = new Map<string, Kept[]>();
  private flushDue = false;
  /** Those waiting for the next event of a space (`next`, the MCP tool's long poll). */
  private readonly waiting = new Map<string, Set<() => void>>();
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  /** Open streams by credential and by account. */
  private readonly held = new Map<string, number>();
  private total = 0;
  private recheckDue = false;
  /** Bytes of the frames kept, bounded by `KEPT_BYTES`. */
  private keptBytes = 0;

  /**
   * `lastSeq` answers the outbox's last seq, read once: events before this process started are not
   * kept. `treeStamp` answers a stamp that changes whenever a space's tree or grants may have
   * (`db/tree-stamp.ts`), read once for each batch of events sent.
   */
  constructor(
    private readonly lastSeq: () => number,
    private readonly caps: StreamCaps,
    private readonly treeStamp: () => string = () => "",
  ) {}

  /**
   * Why `holder` may not open one more stream, or null: past its credential's, its account's or
   * the server's share. Every stream holds a connection, so an idle client could otherwise take
   * every file descriptor the process has, and then no one would be answered.
   */
  refusal(holder: StreamHolder): { limit: keyof StreamCaps; max: number } | null {
    if ((this.held.get(`k ${holder.credential}`) ?? 0) >= this.caps.streamsPerKey) return { limit: "streamsPerKey", max: this.caps.streamsPerKey };
    if ((this.held.get(`u ${holder.user}`) ?? 0) >= this.caps.streamsPerUser) return { limit: "streamsPerUser", max: this.caps.streamsPerUser };
    if (this.total >= this.caps.streams) return { limit: "streams", max: this.caps.streams };
    return null;
  }

  private count(holder: StreamHolder | undefined, by: 1 | -1): void {
    this.total += by;
    if (!holder) return;
    for (const key of [`k ${holder.credential}`, `u ${holder.user}`]) {
      const n = (this.held.get(key) ?? 0) + by;
      if (n > 0) this.held.set(key, n);
      else this.held.delete(key);
    }
  }

  /**
   * Checks every stream's credential now, and wakes every long poll to check its own: a key
   * deleted, a member removed or a session ended stops reading at once, not at the next heartbeat.
   * Called after the commit that took access away; the checks of one turn are made once.
   */
  recheck(): void {
    if (this.recheckDue) return;
    this.recheckDue = true;
    setTimeout(() => {
      this.recheckDue = false;
      for (const set of [...this.subscribers.values()]) for (const subscriber of [...set]) if (!subscriber.stillAllowed()) this.unsubscribe(subscriber);
      const waiting = [...this.waiting.values()];
      this.waiting.clear();
      for (const set of waiting) for (const wake of set) wake();
    }, 0);
  }

  private startingFloor(): number {
    this.floor ??= this.lastSeq();
    return this.floor;
  }

  /** Sends a committed event to its space's subscribers and keeps it for reconnections. */
  publish(event: LiveEvent): void {
    // The first event this process publishes is the first it keeps.
    this.floor ??= event.seq - 1;
    const kept: Kept = { event };
    this.kept.push(kept);
    if (this.kept.length > KEPT_EVENTS) this.drop();
    const waiters = this.waiting.get(event.spaceId);
    if (waiters) {
      this.waiting.delete(event.spaceId);
      for (const wake of waiters) wake();
    }
    if (!this.subscribers.has(event.spaceId)) return;
    const waiting = this.pending.get(event.spaceId);
    if (waiting) waiting.push(kept);
    else this.pending.set(event.spaceId, [kept]);
    if (!this.flushDue) {
      this.flushDue = true;
      queueMicrotask(() => this.flush());
    }
  }

  /**
   * Sends each space's pending events to its subscribers as one chunk, made once: a write to a
   * stream costs the same for one frame as for twenty, and a batch of commits publishes together
   * (measured: 200 subscribers of 500 events a second, one write per event each, kept a core busy).
   */
  /** The kept event's frame, made once for all its subscribers. */
  private frameOf(kept: Kept): Uint8Array {
    if (kept.frame) return kept.frame;
    kept.frame = encoder.encode(eventFrame(kept.event));
    this.keptBytes += kept.frame.byteLength;
    while (this.keptBytes > KEPT_BYTES && this.kept.length > 1) this.drop();
    return kept.frame;
  }

  /** The frame of a kept event a subscriber sees: the shared one, one of its own for an event narrowed for it, or null. */
  private frameFor(subscriber: Subscriber, kept: Kept, tree: string, shared?: Uint8Array): Uint8Array | null {
    const shown = subscriber.view ? subscriber.view(kept.event, tree) : kept.event;
    if (shown === null) return null;
    return shown === kept.event ? (shared ?? this.frameOf(kept)) : encoder.encode(eventFrame(shown));
  }

  /** Forgets the oldest kept event: a client that last saw one before it is told to reload. */
  private drop(): void {
    const oldest = this.kept.shift()!;
    this.floor = oldest.event.seq;
    if (oldest.frame) this.keptBytes -= oldest.frame.byteLength;
  }

  private flush(): void {
    this.flushDue = false;
    if (this.pending.size === 0) return;
    const tree = this.treeStamp();
    for (const [spaceId, events] of this.pending) {
      const frames = events.map((kept) => this.frameOf(kept));
      const chunk = frames.length === 1 ? frames[0] : Buffer.concat(frames);
      for (const subscriber of this.subscribers.get(spaceId) ?? []) {
        const seen = subscriber.view ? events.flatMap((kept, i) => this.frameFor(subscriber, kept, tree, frames[i]) ?? []) : null;
        if (seen?.length === 0) continue;
        if (!subscriber.send(seen === null ? chunk : Buffer.concat(seen))) this.unsubscribe(subscriber);
      }
    }
    this.pending.clear();
  }

  /**
   * Adds a subscriber; with `lastEventId`, first sends it the kept events of its space after that
   * one, or a `reset` event when some it missed are no longer kept. Answers how to remove it.
   */
  subscribe(subscriber: Subscriber, lastEventId: number | null): () => void {
    const floor = this.startingFloor();
    // Events already pending go to those who were listening; the newcomer gets them from `kept`.
    this.flush();
    if (lastEventId !== null) {
      if (lastEventId < floor) subscriber.send(encoder.encode(`event: reset\ndata: ${JSON.stringify({ reason: "Events after your last one are no longer kept: read the current state again.", lastEventId: floor })}\n\n`));
      const tree = this.treeStamp();
      for (const kept of this.kept) {
        if (kept.event.seq <= lastEventId || kept.event.spaceId !== subscriber.spaceId) continue;
        const frame = this.frameFor(subscriber, kept, tree);
        if (frame) subscriber.send(frame);
      }
    }
    let set = this.subscribers.get(subscriber.spaceId);
    if (!set) this.subscribers.set(subscriber.spaceId, (set = new Set()));
    set.add(subscriber);
    this.count(subscriber.holder, 1);
    this.heartbeat ??= setInterval(() => this.beat(), HEARTBEAT_MS);
    return () => this.unsubscribe(subscriber);
  }

  /**
   * A subscriber's stream of frames: a first comment (so the answer's headers go out at once), then
   * its events. A client that stops reading is dropped once `MAX_QUEUED` frames wait for it, so a
   * slow reader costs bounded memory; it reconnects with `Last-Event-ID`.
   */
  open(spaceId: string, lastEventId: number | null, stillAllowed: () => boolean, holder?: StreamHolder, view?: (event: LiveEvent, tree: string) => LiveEvent | null): ReadableStream<Uint8Array> {
    let unsubscribe = () => undefined as void;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        controller.enqueue(encoder.encode(": connected\nretry: 2000\n\n"));
        unsubscribe = this.subscribe(
          {
            spaceId,
            holder,
            stillAllowed,
            view,
            send(frame) {
              if ((controller.desiredSize ?? 0) < -MAX_QUEUED) return false;
              try {
                controller.enqueue(frame);
                return true;
              } catch {
                return false;
              }
            },
            close() {
              try {
                controller.close();
              } catch {}
            },
          },
          lastEventId,
        );
      },
      cancel: () => unsubscribe(),
    });
  }

  /** The last event's seq this process has seen (events before it are not kept). */
  latest(): number {
    return this.kept.at(-1)?.event.seq ?? this.startingFloor();
  }

  /** The space's kept events after `after`, or null when some of those are no longer kept. */
  since(spaceId: string, after: number): LiveEvent[] | null {
    if (after < this.startingFloor()) return null;
    return this.kept.filter((kept) => kept.event.seq > after && kept.event.spaceId === spaceId).map((kept) => kept.event);
  }

  /** Resolves at the space's next event, or after `ms`. */
  next(spaceId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiting.get(spaceId);
      if (!set) this.waiting.set(spaceId, (set = new Set()));
      const wake = () => {
        clearTimeout(timer);
        set!.delete(wake);
        resolve();
      };
      const timer = setTimeout(() => {
        set!.delete(wake);
        if (set!.size === 0 && this.waiting.get(spaceId) === set) this.waiting.delete(spaceId);
        resolve();
      }, ms);
      set.add(wake);
    });
  }

  /** How many subscribers there are now (for tests and the bench). */
  get size(): number {
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  private unsubscribe(subscriber: Subscriber): void {
    const set = this.subscribers.get(subscriber.spaceId);
    if (!set?.delete(subscriber)) return;
    if (set.size === 0) this.subscribers.delete(subscriber.spaceId);
    this.count(subscriber.holder, -1);
    subscriber.close();
    if (this.subscribers.size === 0) {
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = null;
      // No one listens: the frames are made again for whoever comes back.
      for (const kept of this.kept) kept.frame = undefined;
      this.keptBytes = 0;
    }
  }

  /** Closes every stream (the server is stopping). */
  closeAll(): void {
    for (const set of [...this.subscribers.values()]) for (const subscriber of [...set]) this.unsubscribe(subscriber);
  }

  /** Keeps connections open, and ends the streams of credentials revoked (or members removed) since they began; runs every `HEARTBEAT_MS`. */
  beat(): void {
    for (const set of [...this.subscribers.values()]) {
      for (const subscriber of [...set]) if (!subscriber.stillAllowed() || !subscriber.send(PING)) this.unsubscribe(subscriber);
    }
  }
}
