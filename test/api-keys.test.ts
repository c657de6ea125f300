import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { generateKeyValue, isWellFormedKey } from "../src/auth/key-format";
import { type Session, TestServer } from "./helpers";

let server: TestServer;
let session: Session;
let userId: string;

beforeEach(async () => {
  server = new TestServer();
  userId = (await server.user("Ada")).id;
  session = await server.signIn("ada@example.com");
});
afterEach(() => server.stop());

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** The contract's checksum, computed independently of the implementation. */
function expectedChecksum(first40: string): string {
  let crc = 0xffffffff;
  for (const byte of new TextEncoder().encode(first40)) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  let value = (crc ^ 0xffffffff) >>> 0;
  let out = "";
  for (; value > 0; value = Math.floor(value / 62)) out = BASE62[value % 62] + out;
  return out.padStart(6, "0");
}

const create = (body: Record<string, unknown>) => server.call("POST", "/api/v1/api-keys", { session, body });

describe("key format", () => {
  test("bsk_ + 36 base62 + the CRC32 of the first 40 characters in 6 base62 digits", async () => {
    const reply = await create({ name: "laptop agent", level: "changeRequest" });
    expect(reply.status).toBe(201);
    const value: string = reply.body.apiKey;
    expect(value).toMatch(/^bsk_[0-9A-Za-z]{42}$/);
    expect(value.slice(40)).toBe(expectedChecksum(value.slice(0, 40)));
    expect(reply.body.key.prefix).toBe(value.slice(0, 12));
    for (let i = 0; i < 200; i++) expect(isWellFormedKey(generateKeyValue())).toBe(true);
  });

  test("a value with a broken checksum or shape is a 401, before any lookup", async () => {
    const { body } = await create({ name: "k", level: "read" });
    const value: string = body.apiKey;
    const flipped = value.slice(0, 20) + (value[20] === "a" ? "b" : "a") + value.slice(21);
    for (const bad of [flipped, value.slice(0, -1), "bsk_short", "Bearer", value.replace("bsk_", "bsx_")]) {
      const reply = await server.call("GET", "/api/v1/auth", { key: bad });
      expect(reply.status).toBe(401);
      expect(reply.headers.get("www-authenticate")).toBe("Bearer");
      expect(reply.body.code).toBe("UNAUTHORIZED");
    }
  });

  test("an unknown well-formed key and a missing credential are 401", async () => {
    expect((await server.call("GET", "/api/v1/auth", { key: generateKeyValue() })).status).toBe(401);
    expect((await server.call("GET", "/api/v1/auth")).status).toBe(401);
  });

  test("the key works as Bearer and as x-api-key", async () => {
    const { body } = await create({ name: "k", level: "read" });
    expect((await server.call("GET", "/api/v1/users/me", { key: body.apiKey })).status).toBe(200);
    expect((await server.call("GET", "/api/v1/users/me", { headers: { "x-api-key": body.apiKey } })).status).toBe(200);
  });
});

describe("key management", () => {
  test("creation answers the value once; reads never show it", async () => {
    const reply = await create({ name: "laptop agent", level: "write", expiration: "90d" });
    expect(reply.body.key).toMatchObject({ name: "laptop agent", level: "write", status: "active", lastUsedAt: null });
    expect(Date.parse(reply.body.key.expiresAt) - Date.parse(reply.body.key.createdAt)).toBe(90 * 86_400_000);
    const value: string = reply.body.apiKey;
    const list = await server.call("GET", "/api/v1/api-keys", { session });
    const one = await server.call("GET", `/api/v1/api-keys/${reply.body.key.id}`, { session });
    const auth = await server.call("GET", "/api/v1/auth", { key: value });
    for (const read of [list, one, auth]) {
      expect(read.status).toBe(200);
      expect(read.text).not.toContain(value);
      expect(read.text).not.toContain(value.slice(12));
    }
    expect(Object.keys(one.body).sort()).toEqual(["createdAt", "expiresAt", "id", "lastUsedAt", "level", "name", "prefix", "status"]);
  });

  test("the database file holds only the hash", async () => {
    const { body } = await create({ name: "k", level: "manage", expiration: "never" });
    server.ctx.store.sqlite.run("PRAGMA wal_checkpoint(TRUNCATE)");
    const bytes = readFileSync(server.dbPath).toString("latin1");
    expect(bytes).not.toContain(body.apiKey);
    expect(bytes).not.toContain(body.apiKey.slice(12));
    const stored = new Database(server.dbPath, { readonly: true }).query("SELECT hash FROM api_keys").get() as { hash: string };
    expect(stored.hash).toBe(new Bun.CryptoHasher("sha256").update(body.apiKey).digest("hex"));
  });

  test("expirations: default 30d, never, 7d, 30d, 90d, 1y, nothing longer", async () => {
    const days = async (expiration?: string) => {
      const { body } = await create({ name: "k", level: "read", ...(expiration ? { expiration } : {}) });
      return body.key.expiresAt === null ? null : (Date.parse(body.key.expiresAt) - Date.parse(body.key.createdAt)) / 86_400_000;
    };
    expect(await days()).toBe(30);
    expect(await days("never")).toBeNull();
    expect(await days("7d")).toBe(7);
    expect(await days("1y")).toBe(365);
    for (const expiration of ["2y", "365d", 30, null]) expect((await create({ name: "k", level: "read", expiration })).status).toBe(400);
    expect((await create({ name: "k", level: "admin" })).status).toBe(400);
  });

  test("an expired key answers 401 and lists as expired", async () => {
    const { body } = await create({ name: "k", level: "read", expiration: "7d" });
    expect((await server.call("GET", "/api/v1/auth", { key: body.apiKey })).status).toBe(200);
    server.clock.advance(7 * 86_400_000);
    const reply = await server.call("GET", "/api/v1/auth", { key: body.apiKey });
    expect(reply.status).toBe(401);
    expect(reply.headers.get("www-authenticate")).toBe("Bearer");
    const fresh = await server.signIn("ada@example.com");
    expect((await server.call("GET", `/api/v1/api-keys/${body.key.id}`, { session: fresh })).body.status).toBe("expired");
  });

  test("a key with a wrong checksum is refused as malformed, also after the real key was used", async () => {
    const { body } = await create({ name: "k", level: "read", expiration: "7d" });
    const last = body.apiKey.at(-1);
    const tampered = body.apiKey.slice(0, -1) + (last === "0" ? "1" : "0");
    for (let i = 0; i < 2; i++) {
      expect((await server.call("GET", "/api/v1/auth", { key: body.apiKey })).status).toBe(200);
      const refused = await server.call("GET", "/api/v1/auth", { key: tampered });
      expect([refused.status, refused.body.error]).toEqual([401, "The API key is malformed."]);
    }
  });

  test("listing is newest first and only the caller's keys", async () => {
    const first = (await create({ name: "first", level: "read" })).body.key.id;
    const second = (await create({ name: "second", level: "read" })).body.key.id;
    await server.user("Bob");
    const bob = await server.signIn("bob@example.com");
    await server.call("POST", "/api/v1/api-keys", { session: bob, body: { name: "bob's", level: "read" } });
    const list = await server.call("GET", "/api/v1/api-keys", { session });
    expect(list.body.map((k: { id: string }) => k.id)).toEqual([second, first]);
    expect((await server.call("GET", `/api/v1/api-keys/${first}`, { session: bob })).status).toBe(404);
    expect((await server.call("DELETE", `/api/v1/api-keys/${first}`, { session: bob })).status).toBe(404);
  });

  test("lowering is free, raising needs confirm, and applies to the very next request", async () => {
    const { body } = await create({ name: "agent", level: "write" });
    const id = body.key.id;
    const lowered = await server.call("PATCH", `/api/v1/api-keys/${id}`, { session, body: { level: "read", name: "reader" } });
    expect(lowered.body).toMatchObject({ level: "read", name: "reader" });
    expect((await server.call("GET", "/api/v1/auth", { key: body.apiKey })).body.credential.level).toBe("read");

    const unconfirmed = await server.call("PATCH", `/api/v1/api-keys/${id}`, { session, body: { level: "manage" } });
    expect(unconfirmed.status).toBe(409);
    expect(unconfirmed.body).toMatchObject({ code: "CONFLICT", reason: "CONFIRMATION_REQUIRED", data: { reason: "CONFIRMATION_REQUIRED", from: "read", to: "manage" } });
    expect((await server.call("GET", `/api/v1/api-keys/${id}`, { session })).body.level).toBe("read");

    const raised = await server.call("PATCH", `/api/v1/api-keys/${id}`, { session, body: { level: "manage", confirm: true } });
    expect(raised.body.level).toBe("manage");
    expect(raised.body.expiresAt).toBe(body.key.expiresAt);
    expect((await server.call("GET", "/api/v1/auth", { key: body.apiKey })).body.credential.level).toBe("manage");
  });

  test("delete is immediate and final", async () => {
    const { body } = await create({ name: "k", level: "read" });
    expect((await server.call("GET", "/api/v1/auth", { key: body.apiKey })).status).toBe(200);
    expect((await server.call("DELETE", `/api/v1/api-keys/${body.key.id}`, { session })).body).toEqual({ success: true });
    expect((await server.call("GET", "/api/v1/auth", { key: body.apiKey })).status).toBe(401);
    expect((await server.call("GET", `/api/v1/api-keys/${body.key.id}`, { session })).status).toBe(404);
  });

  test("key management needs a session: a key gets 403 SESSION_REQUIRED", async () => {
    const key = await server.key(userId, "manage");
    for (const [method, path] of [["GET", "/api/v1/api-keys"], ["POST", "/api/v1/api-keys"]]) {
      const reply = await server.call(method, path, { key, body: method === "POST" ? { name: "x", level: "read" } : undefined });
      expect(reply.status).toBe(403);
      expect(reply.body.reason).toBe("SESSION_REQUIRED");
    }
  });

  test("lastUsedAt is set on first use and moves at most once a minute", async () => {
    const { body } = await create({ name: "k", level: "read" });
    const lastUsed = async () => {
      const fresh = await server.signIn("ada@example.com");
      return (await server.call("GET", `/api/v1/api-keys/${body.key.id}`, { session: fresh })).body.lastUsedAt;
    };
    // The use is recorded by a queued write that the request does not wait for.
    const writes = async () => {
      await server.ctx.store.writes.drain();
      return (server.ctx.store.sqlite.query("SELECT last_used_at AS t FROM api_keys WHERE id = ?").get(body.key.id) as { t: string | null }).t;
    };
    await server.call("GET", "/api/v1/auth", { key: body.apiKey });
    await writes();
    const first = await lastUsed();
    expect(first).toBe(new Date(server.clock.now()).toISOString());
    server.clock.advance(30_000);
    await server.call("GET", "/api/v1/auth", { key: body.apiKey });
    expect(await writes()).toBe(first);
    server.clock.advance(31_000);
    await server.call("GET", "/api/v1/auth", { key: body.apiKey });
    expect(await writes()).toBe(new Date(server.clock.now()).toISOString());
  });
});
