import { writeSync } from "node:fs";
import type { Clock } from "./shared/clock";
import type { Config } from "./shared/config";
import type { LiveEvent } from "./shared/event-types";
import type { ReadDb, Store } from "./db/client";
import { CommittedCache, roughBytes, StampedCache } from "./db/caches";
import { SnapshotReaders } from "./db/snapshots";
import type { TxOf } from "./db/tx";
import { RateLimiter } from "./shared/rate-limit";
import { BodyBudget } from "./shared/body-budget";
import type { CachedKey } from "./tables/auth";
import type { Membership } from "./tables/spaces";
import type { LoadedBase, SpaceTree, views } from "./tables/content";

export interface Logger {
  info(line: string): void;
  error(line: string): void;
}

/** How long a request line may wait to be written with the lines that follow it. */
const LOG_FLUSH_MS = 25;

/**
 * Request lines are gathered and written every `LOG_FLUSH_MS` (or every 1,000 lines), never one
 * write per line: a write through process.stdout costs 2-3 us, which was a third of what a health
 * check costs the server (docs/performance.md, 2026-11-29). An error goes out at once, after the
 * lines before it; what is pending when the process exits is written then.
 */
function bufferedStdout(): Logger {
  let pending: string[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending.length === 0) return;
    const lines = pending;
    pending = [];
    process.stdout.write(`${lines.join("\n")}\n`);
  };
  process.on("exit", () => {
    if (pending.length > 0) writeSync(1, `${pending.splice(0).join("\n")}\n`);
  });
  return {
    info(line) {
      if (pending.push(line) >= 1000) flush();
      else if (timer === null) timer = setTimeout(flush, LOG_FLUSH_MS).unref();
    },
    error(line) {
      flush();
      process.stderr.write(`${line}\n`);
    },
  };
}

export const consoleLogger: Logger = bufferedStdout();

/**
 * The services a domain reaches through the context, each named by what it does for its callers
 * (ports): the `serve` command and the other commands wire the concrete ones once
 * (`src/cli/wiring.ts`), and nothing assigns into the context afterwards.
 */

/** Keys checked lately, by the SHA-256 of their value (`auth/key-cache.ts`). */
export interface KeyCachePort {
  get(hash: string): CachedKey | undefined;
  set(hash: string, entry: CachedKey): void;
  forgetKey(keyId: string): void;
  forgetUser(userId: string): void;
}

/** Seals secrets kept at rest and opens them (`webhooks/secrets.ts`). */
export interface SecretBoxPort {
  seal(secret: string): string;
  open(sealed: string): string;
  /** An HMAC-SHA256 of `text` under the instance's key (base64url): what a link signed by this server carries. */
  sign(text: string): string;
}

/** A webhook target checked against the operator's allow-list, with the address a delivery connects to. */
export interface ResolvedTarget {
  url: URL;
  address: string;
}

/** Where a webhook may post (`webhooks/ssrf.ts`): throws for a target the operator does not allow. */
export interface TargetGuardPort {
  resolve(target: string): Promise<ResolvedTarget>;
}

/** Who holds a live stream: its credential (a key's id, a session's hash) and its account. */
export interface StreamHolder {
  credential: string;
  user: string;
}

/** The live stream's hub (`events/stream.ts`): what commits publish, what takes access away, and what readers open or wait on. */
export interface EventStreamPort {
  publish(event: LiveEvent): void;
  recheck(): void;
  refusal(holder: StreamHolder): { limit: "streamsPerKey" | "streamsPerUser" | "streams"; max: number } | null;
  open(spaceId: string, lastEventId: number | null, stillAllowed: () => boolean, holder?: StreamHolder, view?: (event: LiveEvent, tree: string) => LiveEvent | null): ReadableStream<Uint8Array>;
  latest(): number;
  since(spaceId: string, after: number): LiveEvent[] | null;
  next(spaceId: string, ms: number): Promise<void>;
  closeAll(): void;
  /** How many streams are open. */
  readonly size: number;
}

/** The delivery loop (`webhooks/worker.ts`): `wake`, which every commit that wrote events calls; `inTurn`, which makes a person's attempt (test-fire, redeliver) when a slot of its space's share of the pool is free. */
export interface DeliveriesPort {
  wake(): void;
  inTurn<T>(spaceId: string, attempt: () => Promise<T>): Promise<T>;
}

/** The field upkeep (`content/field-upkeep.ts`: indexes to fill, deleted fields to clear): `wake` it, or wait (at most `ms`) until fields being indexed are ready. */
export interface FieldUpkeepPort {
  wake(): void;
  whenIndexed(fieldIds: string[], ms: number): Promise<void>;
}

/** The services `createContext` is given. */
export interface Services {
  keyCache: KeyCachePort;
  secretBox: SecretBoxPort;
  webhookTargets: TargetGuardPort;
  eventStream: EventStreamPort;
  deliveries: DeliveriesPort;
  fieldUpkeep: FieldUpkeepPort;
}

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
  keyCache: KeyCachePort;
  /** userId → that user's spaces and roles; see `listMemberships`. */
  memberships: CommittedCache<string, { list: Membership[]; readAt: number }>;
  /** "<space id> <base ref>" → base, node and fields; see `findBase`. */
  bases: CommittedCache<string, LoadedBase>;
  /**
   * What reads keep of linked data (`content/relations/`): records' relation and lookup values by
   * record, and the text of `GET /records/{id}/links` answers. Measured at 200,000 records
   * (docs/performance.md, "Linked data"): reading a page's links and the linked records they name
   * is most of what a page with lookups costs beyond a plain page.
   */
  linked: { values: StampedCache<string, Readonly<Record<string, unknown>>>; linksJson: StampedCache<string, string> };
  /** Filtered counts of records by their statement and values (`countRecords`): a numbered page asks the same count for each page. */
  counts: StampedCache<string, number>;
  /** A space's tree as one sight sees it, by its nodes' parents, and its public shares (`content/nodes.ts`): every `GET /nodes` and tree read would read and decode the whole tree again. */
  trees: StampedCache<string, SpaceTree>;
  /** Views' rows by "<space id> <view id>" (`findView`): every page through a view reads its view. */
  views: StampedCache<string, typeof views.$inferSelect>;
  /** Searches' matches last seen few enough to rank (`search/search.ts`): a hint of which way to run the match first, never of what it answers. */
  rankedSearches: Set<string>;
  /** A space's people as a dump names them (`transfer/dump-api.ts`): each page of `users` would otherwise read the whole space again. */
  /** The snapshots clones are reading (`GET /sync/snapshots/...`). */
  snapshots: SnapshotReaders;
  /** Seals and opens webhook secrets. */
  secretBox: SecretBoxPort;
  /** The SSRF guard every webhook target goes through. */
  webhookTargets: TargetGuardPort;
  /** The delivery loop (idle until `serve` starts it). */
  deliveries: DeliveriesPort;
  /** What listings asked of fields' indexes (`content/indexes.ts`): when each unindexed field was asked for, when each index was last noted as used. */
  indexDemand: { asked: Map<string, number[]>; touched: Map<string, number> };
  /** The field upkeep (idle until `serve` starts it). */
  fieldUpkeep: FieldUpkeepPort;
  limits: {
    loginFailures: RateLimiter;
    /** Failed logins per account from any address: past a few, its checks are paced (never locked). */
    accountFailures: RateLimiter;
    /** Account → when its next password check may run, while it is paced. */
    nextCheckAt: Map<string, number>;
    deviceCodes: RateLimiter;
    deviceLookups: RateLimiter;
    /** Submissions without a key tried per client address, refused ones included. */
    formVisitors: RateLimiter;
    /** Submissions without a key a form took (per form): never counts another address's refused tries. */
    formSubmissions: RateLimiter;
    /** Passwords tried on public shares per client address, right or wrong. */
    sharePasswords: RateLimiter;
    /** Wrong passwords per shared node, from any address. */
    shareFailures: RateLimiter;
    /** Invitation links looked up or accepted, per client address. */
    invitationTokens: RateLimiter;
  };
  /** SHA-256 of the one-time setup token while no user exists. */
  setupTokenHash: string | null;
  /** How many requests are being answered now (`plumbing`): long work in a request gives way while others wait. */
  requests: { inFlight: number };
  /**
   * Request bodies being read (`plumbing`, `access`): JSON bodies, read before the caller is known,
   * and uploads (files, imports, archives), counted per caller once it is; docs/security.md.
   */
  bodies: { json: BodyBudget; uploads: BodyBudget };
  /** The live stream's subscribers and the last events, for `GET /events/stream`. */
  eventStream: EventStreamPort;
}

/** Uploads one caller may send at once: a few files in parallel, never a socket per megabyte. */
export const UPLOADS_PER_CALLER = 2;
/**
 * JSON bodies one address may have being read at once. They are read before the caller is known,
 * so the address (the socket's, an IPv6 /64 as one) is what bounds one client: without it, a few
 * hundred slow bodies from one client would spend the budget and refuse everyone's writes.
 */
export const JSON_BODIES_PER_ADDRESS = 64;
/** Bytes of bodies of each kind held at once: 256 MB, or two of the largest import when more. */
export const bodyBudgetBytes = (config: Config) => Math.max(256 * 1024 * 1024, 2 * config.maxImportBytes);

/** The context of one process: its values, and the services wired for it. */
export function createContext(store: Store, config: Config, clock: Clock, log: Logger, services: Services): AppContext {
  const minute = 60_000;
  const MB = 1024 * 1024;
  return {
    ...services,
    instanceId: crypto.randomUUID(),
    store,
    db: store.db,
    clock,
    config,
    log,
    memberships: new CommittedCache(store.writes, 10_000),
    bases: new CommittedCache(store.writes, 1_000),
    linked: { values: new StampedCache<string, Readonly<Record<string, unknown>>>(store.sqlite, 50_000, 64 * MB, roughBytes), linksJson: new StampedCache(store.sqlite, 200, 16 * MB, (json) => json.length * 2) },
    counts: new StampedCache<string, number>(store.sqlite, 1_000),
    trees: new StampedCache(store.sqlite, 200, 32 * MB, (tree) => roughBytes([...tree.byParent.values()])),
    views: new StampedCache(store.sqlite, 1_000),
    rankedSearches: new Set(),
    snapshots: new SnapshotReaders(store.sqlite.filename, () => clock.now()),
    indexDemand: { asked: new Map(), touched: new Map() },
    limits: {
      loginFailures: new RateLimiter(clock, 5, minute),
      accountFailures: new RateLimiter(clock, Number.POSITIVE_INFINITY, minute),
      nextCheckAt: new Map(),
      deviceCodes: new RateLimiter(clock, 10, minute),
      deviceLookups: new RateLimiter(clock, 10, minute),
      formVisitors: new RateLimiter(clock, 30, minute),
      formSubmissions: new RateLimiter(clock, 120, minute),
      sharePasswords: new RateLimiter(clock, 10, minute),
      shareFailures: new RateLimiter(clock, 60, minute),
      invitationTokens: new RateLimiter(clock, 20, minute),
    },
    setupTokenHash: null,
    requests: { inFlight: 0 },
    bodies: { json: new BodyBudget(bodyBudgetBytes(config), JSON_BODIES_PER_ADDRESS), uploads: new BodyBudget(bodyBudgetBytes(config), UPLOADS_PER_CALLER) },
  };
}
