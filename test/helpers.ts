import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/http/app";
import { FieldUpkeep } from "../src/content/field-upkeep";
import { createApiKey } from "../src/auth/api-keys";
import type { Expiration, Level } from "../src/shared/levels";
import { insertUser, userRowWithHash } from "../src/auth/users";
import { ManualClock } from "../src/shared/clock";
import { loadConfig, type ServeFlags } from "../src/shared/config";
import type { AppContext } from "../src/context";
import { wire } from "../src/cli/wiring";
import { closeStore, migrate, openStore } from "../src/db/client";
import { write } from "../src/db/tx";
import { listenOptions } from "../src/http/plumbing";
import { DeliveryLoop } from "../src/webhooks/worker";
import { createSpace } from "../src/spaces/spaces";
import { Contract } from "./contract";

export const REPO = join(import.meta.dir, "..");
export const BUN = process.execPath;

/** The document every server of this process serves alike, read once. */
let contract: Promise<Contract> | undefined;
const contractOf = (url: string) => (contract ??= fetch(`${url}/api/v1/openapi.json`).then(async (response) => new Contract(await response.json())));

/** Each password's argon2id hash, made once: a user made by `TestServer.user` signs in with it as with any. */
const passwordHashes = new Map<string, Promise<string>>();

/** A response's text; an event stream (which never ends) is read for 200 ms, then closed. */
export async function textOf(response: Response, aborter: AbortController): Promise<string> {
  if (!response.headers.get("content-type")?.startsWith("text/event-stream")) return response.text();
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const stop = setTimeout(() => aborter.abort(), 200);
  try {
    for (let part = await reader.read(); !part.done; part = await reader.read()) text += part.value;
  } catch {}
  clearTimeout(stop);
  return text;
}

/**
 * The ports the system hands out by itself, to servers on port 0 and to outgoing connections
 * (Linux's ip_local_port_range; its default elsewhere).
 */
const SYSTEM_PORTS = (() => {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    return { low, high };
  } catch {
    return { low: 32768, high: 60999 };
  }
})();

/**
 * A port nothing listens on now, for a server a test starts itself as a program and may start
 * again after killing it. It is taken outside the ports the system hands out by itself, so that no
 * server or connection of the test files running in parallel takes it meanwhile.
 */
export async function freePort(): Promise<number> {
  const [from, to] = SYSTEM_PORTS.low > 20_000 ? [10_000, SYSTEM_PORTS.low] : [SYSTEM_PORTS.high + 1, 65_536];
  for (let tries = 0; tries < 1000; tries++) {
    const port = from + Math.floor(Math.random() * (to - from));
    try {
      const probe = Bun.serve({ port, hostname: "127.0.0.1", fetch: () => new Response() });
      await probe.stop(true);
      return port;
    } catch {}
  }
  throw new Error(`no free port between ${from} and ${to}`);
}

/** A new folder inside the run's temporary folder (test/setup.ts), which the run removes however it ends. */
export const tempDir = (name = "basalt-test-") => mkdtempSync(join(tmpdir(), name));

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface Caller {
  key?: string;
  session?: Session;
  space?: string;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string | Uint8Array;
}

export interface Session {
  cookie: string;
  csrfToken: string;
  userId: string;
}

/** A real server on a real port over a real SQLite file, with a clock the test can move. */
export class TestServer {
  readonly logs: string[] = [];
  readonly clock = new ManualClock(Date.parse("2026-11-21T12:00:00.000Z"));
  readonly dir = tempDir();
  readonly ctx: AppContext;
  readonly url: string;
  private readonly app: ReturnType<typeof createApp>;

  readonly deliveries: DeliveryLoop | null;
  /** Fills new fields' indexes and clears deleted fields, in the background as `serve` does; `settled()` waits for it. */
  readonly fieldUpkeep: FieldUpkeep;

  /** `deliveries: false` leaves the outbox unread, for tests of the events themselves (the loop deletes those no rule wants). */
  constructor(options: { maxBody?: string; webhookAllow?: string; retrySchedule?: string; deliveries?: boolean; flags?: ServeFlags; env?: Record<string, string> } = {}) {
    const store = openStore(join(this.dir, "basalt.db"));
    migrate(store);
    const config = loadConfig(
      { "data-dir": this.dir, "max-body": options.maxBody, "public-url": "http://basalt.test", "webhook-allow": options.webhookAllow, ...options.flags },
      { BASALT_WEBHOOK_RETRY_SCHEDULE: options.retrySchedule, ...options.env },
    );
    const wired = wire(store, config, this.clock, { info: (line) => this.logs.push(line), error: (line) => this.logs.push(line) });
    this.ctx = wired.ctx;
    this.app = createApp(this.ctx).listen(listenOptions(0, "127.0.0.1"));
    this.url = `http://127.0.0.1:${this.app.server!.port}`;
    this.deliveries = options.deliveries === false ? null : wired.deliveries.start(this.ctx);
    this.fieldUpkeep = wired.fieldUpkeep.start(this.ctx);
  }

  get dbPath(): string {
    return join(this.dir, "basalt.db");
  }

  async call<T = any>(method: string, path: string, caller: Caller = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...caller.headers };
    if (caller.key !== undefined) headers.authorization = `Bearer ${caller.key}`;
    if (caller.session) {
      headers.cookie = caller.session.cookie;
      if (method !== "GET") headers["x-csrf-token"] ??= caller.session.csrfToken;
    }
    if (caller.space) headers["x-basalt-space"] = caller.space;
    let body: BodyInit | undefined = caller.rawBody as BodyInit | undefined;
    if (caller.body !== undefined) {
      body = JSON.stringify(caller.body);
      headers["content-type"] ??= "application/json";
    }
    const aborter = new AbortController();
    const response = await fetch(this.url + path, { method, headers, body, redirect: "manual", signal: aborter.signal });
    const text = await textOf(response, aborter);
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    (await contractOf(this.url)).check(method, path, response.status, parsed, response.headers.get("content-type"));
    return { status: response.status, body: parsed as T, headers: response.headers, text };
  }

  /** A user made directly, with its password hashed once per test file (argon2 takes a few hundred ms a hash on 2 cores). */
  async user(name: string, options: { admin?: boolean; password?: string } = {}) {
    const password = options.password ?? "correct horse";
    if (!passwordHashes.has(password)) passwordHashes.set(password, Bun.password.hash(password, { algorithm: "argon2id" }));
    const passwordHash = await passwordHashes.get(password)!;
    const row = userRowWithHash(this.ctx, { email: `${name.toLowerCase()}@example.com`, name, password, admin: options.admin }, passwordHash);
    return write(this.ctx, (tx) => insertUser(tx, row));
  }

  async signIn(email: string, password = "correct horse"): Promise<Session> {
    const reply = await this.call("POST", "/api/v1/auth/login", { body: { email, password } });
    if (reply.status !== 200) throw new Error(`login failed: ${reply.status} ${reply.text}`);
    const cookie = reply.headers.get("set-cookie")!.split(";")[0];
    return { cookie, csrfToken: reply.body.csrfToken, userId: reply.body.user.id };
  }

  async key(userId: string, level: Level, expiration: Expiration = "30d"): Promise<string> {
    return (await write(this.ctx, (tx) => createApiKey(tx, userId, { name: `${level} key`, level, expiration }))).apiKey;
  }

  space(ownerId: string, name: string, slug?: string) {
    return write(this.ctx, (tx) => createSpace(tx, ownerId, { name, slug }));
  }

  async stop(): Promise<void> {
    this.ctx.eventStream.closeAll();
    this.ctx.snapshots.closeAll();
    this.app.server?.stop(true);
    await this.deliveries?.stop();
    await this.fieldUpkeep.stop();
    await closeStore(this.ctx.store);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Waits (up to 2 s, or `limitMs`) for something that happens just after a response is sent, such as its log line. */
export async function eventually(check: () => boolean, limitMs = 2000): Promise<void> {
  for (let waited = 0; !check(); waited += 5) {
    if (waited > limitMs) throw new Error(`condition not met within ${limitMs} ms`);
    await Bun.sleep(5);
  }
}

/** A space with its owner and a key at each level, for the content tests. */
export async function workspace(server: TestServer) {
  const owner = await server.user("Ada");
  const space = await server.space(owner.id, "Research");
  return {
    owner,
    space,
    read: await server.key(owner.id, "read"),
    propose: await server.key(owner.id, "changeRequest"),
    write: await server.key(owner.id, "write"),
    manage: await server.key(owner.id, "manage"),
  };
}

export type Workspace = Awaited<ReturnType<typeof workspace>>;

/** A new server and workspace for each test of the content files. */
export async function freshWorkspace(options?: ConstructorParameters<typeof TestServer>[0]): Promise<{ server: TestServer; ws: Workspace }> {
  const server = new TestServer(options);
  return { server, ws: await workspace(server) };
}

export const PAPER_FIELDS = [
  { slug: "title", name: "Title", type: "text", required: true },
  { slug: "year", name: "Year", type: "number" },
  { slug: "status", name: "Status", type: "select", options: { choices: [{ name: "draft" }, { name: "published" }] } },
];

/** Creates a base directly (a write key merges at once) and answers it. */
export async function createBase(server: TestServer, key: string, slug = "papers", fields: unknown[] = PAPER_FIELDS, extra: Record<string, unknown> = {}) {
  const reply = await server.call("POST", "/api/v1/bases", { key, body: { slug, name: slug, fields, ...extra } });
  if (reply.status !== 201) throw new Error(`base creation failed: ${reply.status} ${reply.text}`);
  return reply.body;
}

/** Approves a change request waiting for review and merges it, both as `key`'s holder; answers the merge. */
export async function approveAndMerge(server: TestServer, key: string, id: string): Promise<Reply> {
  await server.call("POST", `/api/v1/change-requests/${id}/reviews`, { key, body: { verdict: "approved" } });
  return server.call("POST", `/api/v1/change-requests/${id}/merge`, { key });
}

/** Deletes a field of `base`: the deletion always waits for review, so it is proposed, approved and merged; answers the proposal when it is refused, else the merge. */
export async function deleteField(server: TestServer, key: string, base: string, fieldId: string): Promise<Reply> {
  const proposed = await server.call("POST", `/api/v1/bases/${base}/fields/change-requests`, { key, body: { operation: "delete", fieldId } });
  return proposed.status === 201 ? approveAndMerge(server, key, proposed.body.id) : proposed;
}

/** Creates `count` records in `base` through the bulk route, 1,000 a request; `fields(i)` makes the i-th record's values. */
export async function fillBase(server: TestServer, key: string, base: string, count: number, fields: (i: number) => Record<string, unknown>): Promise<void> {
  for (let made = 0; made < count; made += 1000) {
    const records = Array.from({ length: Math.min(1000, count - made) }, (_, i) => fields(made + i));
    const reply = await server.call("POST", `/api/v1/bases/${base}/records/bulk-change-request`, { key, body: { records } });
    if (reply.status !== 201) throw new Error(`bulk create failed: ${reply.status} ${reply.text}`);
  }
}

/** A new server and workspace that already holds the papers base. */
export async function freshPapersWorkspace(): Promise<{ server: TestServer; ws: Workspace }> {
  const fresh = await freshWorkspace();
  await createBase(fresh.server, fresh.ws.write);
  return fresh;
}

/** A request sent from another loopback address (127.0.0.0/8 is all this machine's), as a second visitor would: what per-address limits tell apart. */
export async function fromAddress(address: string, url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: any }> {
  const { request } = await import("node:http");
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = request({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: init.method ?? "GET", headers: init.headers, localAddress: address }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {}
        resolve({ status: response.statusCode ?? 0, body });
      });
    });
    sent.on("error", reject);
    sent.end(init.body);
  });
}
