import type { Clock } from "./clock";
import type { Config } from "./config";
import type { ReadDb, Store } from "./db/client";
import { CommittedCache, type TxOf } from "./db/tx";
import { KeyCache } from "./auth/key-cache";
import { RateLimiter } from "./http/rate-limit";
import type { Membership } from "./spaces/schema";
import type { LoadedBase } from "./content/schema";
import { SecretBox } from "./webhooks/secrets";
import { TargetGuard } from "./webhooks/ssrf";
import { EventHub } from "./events/stream";

export interface Logger {
  info(line: string): void;
  error(line: string): void;
}

/**
 * Request lines are gathered and written once per event-loop turn: one write for many requests
 * under load instead of one system call each. Errors go out at once.
 */
function bufferedStdout(): Logger {
  let pending: string[] = [];
  const flush = () => {
    const lines = pending;
    pending = [];
    process.stdout.write(`${lines.join("\n")}\n`);
  };
  return {
    info(line) {
      if (pending.push(line) === 1) setImmediate(flush);
    },
    error: (line) => process.stderr.write(`${line}\n`),
  };
}

export const consoleLogger: Logger = bufferedStdout();

/**
 * A write in progress (`write` in src/db/tx.ts makes one): the context, with a handle that can
 * write and hooks on the commit. A function that takes a `Tx` cannot be called outside a transaction.
 */
export type Tx = TxOf<AppContext>;

/** What every domain function may use: the database, the time, the settings and shared caches. */
export interface AppContext {
  /** Tells one app instance's plugins from another's (Elysia de-duplicates plugins by name and seed). */
  instanceId: string;
  store: Store;
  /** For reads; writes go through `write`, whose `tx.db` can write. */
  db: ReadDb;
  clock: Clock;
  config: Config;
  log: Logger;
  keyCache: KeyCache;
  /** userId → that user's spaces and roles; see `listMemberships`. */
  memberships: CommittedCache<string, { list: Membership[]; readAt: number }>;
  /** "<space id> <base ref>" → base, node and fields; see `findBase`. */
  bases: CommittedCache<string, LoadedBase>;
  /** Seals and opens webhook secrets. */
  secretBox: SecretBox;
  /** The SSRF guard every webhook target goes through. */
  webhookTargets: TargetGuard;
  /**
   * The delivery loop's doors (no-ops until `serve` starts one): `wake`, which every commit that wrote
   * events calls; `inTurn`, which makes a person's attempt (test-fire, redeliver) when a slot of its
   * space's share of the pool is free.
   */
  deliveries: { wake(): void; inTurn<T>(spaceId: string, attempt: () => Promise<T>): Promise<T> };
  /** What listings asked of fields' indexes (`content/indexes.ts`): when each unindexed field was asked for, when each index was last noted as used. */
  indexDemand: { asked: Map<string, number[]>; touched: Map<string, number> };
  /**
   * The field upkeep (indexes to fill, deleted fields to clear; no-ops until one is started):
   * `wake` it, or wait (at most `ms`) until fields being indexed are ready.
   */
  fieldUpkeep: { wake(): void; whenIndexed(fieldIds: string[], ms: number): Promise<void> };
  limits: {
    loginFailures: RateLimiter;
    /** Failed logins per account from any address: past a few, its checks are paced (never locked). */
    accountFailures: RateLimiter;
    deviceCodes: RateLimiter;
    deviceLookups: RateLimiter;
  };
  /** SHA-256 of the one-time setup token while no user exists. */
  setupTokenHash: string | null;
  /** How many requests are being answered now (`plumbing`): long work in a request gives way while others wait. */
  requests: { inFlight: number };
  /** The live stream's subscribers and the last events, for `GET /events/stream`. */
  eventStream: EventHub;
}

export function createContext(store: Store, config: Config, clock: Clock, log: Logger): AppContext {
  const minute = 60_000;
  const eventStream = new EventHub(() => (store.sqlite.query<{ seq: number }, []>(`SELECT "seq" FROM "sqlite_sequence" WHERE "name" = 'events'`).get()?.seq ?? 0), config.limits);
  const ctx: AppContext = {
    instanceId: crypto.randomUUID(),
    store,
    db: store.db,
    clock,
    config,
    log,
    keyCache: new KeyCache(() => eventStream.recheck()),
    memberships: new CommittedCache(store.writes, 10_000),
    bases: new CommittedCache(store.writes, 1_000),
    secretBox: new SecretBox(config),
    webhookTargets: new TargetGuard(config.webhookAllow),
    deliveries: { wake: () => undefined, inTurn: (_spaceId, attempt) => attempt() },
    fieldUpkeep: { wake: () => undefined, whenIndexed: () => Promise.resolve() },
    indexDemand: { asked: new Map(), touched: new Map() },
    limits: {
      loginFailures: new RateLimiter(clock, 5, minute),
      accountFailures: new RateLimiter(clock, Number.POSITIVE_INFINITY, minute),
      deviceCodes: new RateLimiter(clock, 10, minute),
      deviceLookups: new RateLimiter(clock, 10, minute),
    },
    setupTokenHash: null,
    requests: { inFlight: 0 },
    eventStream,
  };
  return ctx;
}
