import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EventHub } from "../src/events/stream";
import { DEFAULT_LIMITS } from "../src/shared/limits";
import { createBase, freshWorkspace, TestServer, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
let eve: { key: string; spaceId: string };

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace({ deliveries: false }));
  await createBase(server, ws.write);
  const user = await server.user("Eve");
  const space = await server.space(user.id, "Elsewhere");
  eve = { key: await server.key(user.id, "write"), spaceId: space.id };
  await createBase(server, eve.key);
});
afterAll(() => server.stop());

interface Frame {
  id?: string;
  event?: string;
  data?: any;
}

/** An open stream: its frames as they arrive (comments left out). */
async function subscribe(key: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(`${server.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${key}`, ...headers }, signal: controller.signal });
  expect([response.status, response.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const frames: Frame[] = [];
  let ended = false;
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return void (ended = true);
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: Frame = {};
        for (const line of block.split("\n")) {
          const [field, ...rest] = line.split(": ");
          const value = rest.join(": ");
          if (field === "id") frame.id = value;
          else if (field === "event") frame.event = value;
          else if (field === "data") frame.data = JSON.parse(value);
        }
        if (frame.event) frames.push(frame);
      }
    }
  })();
  /** Waits (at most a second) until a frame matches. */
  const next = async (match: (frame: Frame) => boolean): Promise<Frame> => {
    for (const began = performance.now(); performance.now() - began < 1000; await Bun.sleep(5)) {
      const found = frames.find(match);
      if (found) return found;
    }
    throw new Error(`no matching frame within a second; got ${JSON.stringify(frames.map((frame) => frame.event))}`);
  };
  return { frames, next, ended: () => ended, close: () => (controller.abort(), pump) };
}

const createRecord = (key: string, title: string) => server.call("POST", "/api/v1/bases/papers/change-requests", { key, body: { fields: { title } } }).then((reply) => reply.body.id as string);

describe("GET /api/v1/events/stream", () => {
  test("a reader of the space receives each event within a second, as the outbox holds it; never another space's", async () => {
    const stream = await subscribe(ws.read);
    await createRecord(eve.key, "Eve's");
    const id = await createRecord(ws.write, "Ada's");
    const created = await stream.next((frame) => frame.event === "record.created");
    expect(created.data).toMatchObject({ type: "record.created", spaceId: ws.space.id, data: { record: { id, fields: { title: "Ada's" } } } });
    const outbox = server.ctx.store.sqlite.query("SELECT seq, id, data FROM events WHERE id = ?1").get(created.data.id) as { seq: number; data: string };
    expect([created.id, created.data.data]).toEqual([String(outbox.seq), JSON.parse(outbox.data)]);
    await stream.next((frame) => frame.event === "change_request.merged");
    expect(stream.frames.every((frame) => frame.data.spaceId === ws.space.id)).toBe(true);
    // The stream is not a request in flight (imports give way to those): the count falls to none while it is open.
    for (const began = performance.now(); server.ctx.requests.inFlight > 0 && performance.now() - began < 1000; ) await Bun.sleep(5);
    expect(server.ctx.requests.inFlight).toBe(0);
    await stream.close();
  });

  test("Last-Event-ID resumes after the last event seen; one older than what is kept is told to reload", async () => {
    const first = await subscribe(ws.read);
    await createRecord(ws.write, "one");
    const seen = await first.next((frame) => frame.event === "record.created" && frame.data.data.record.fields.title === "one");
    await first.close();
    const two = await createRecord(ws.write, "two");
    await createRecord(eve.key, "not yours");
    const three = await createRecord(ws.write, "three");
    const resumed = await subscribe(ws.read, { "last-event-id": seen.id! });
    await resumed.next((frame) => frame.event === "record.created" && frame.data.data.record.id === three);
    const replayed = resumed.frames.filter((frame) => frame.event === "record.created").map((frame) => frame.data.data.record.id);
    expect(replayed).toEqual([two, three]);
    expect(resumed.frames.map((frame) => Number(frame.id))).toEqual([...resumed.frames.map((frame) => Number(frame.id))].sort((a, b) => a - b));
    await resumed.close();
    expect((await server.call("GET", "/api/v1/events/stream", { key: ws.read, headers: { "last-event-id": "yesterday" } })).status).toBe(400);
  });

  test("a client whose last event came before this process kept events (a restart) is told to read the state again", () => {
    // The outbox was at seq 10 when this process first looked.
    const hub = new EventHub(() => 10, DEFAULT_LIMITS);
    const frames: string[] = [];
    const subscriber = { spaceId: "spc_A", send: (frame: Uint8Array) => (frames.push(new TextDecoder().decode(frame)), true), stillAllowed: () => true, close() {} };
    hub.subscribe(subscriber, 3);
    expect(frames[0]).toStartWith("event: reset\n");
    expect(JSON.parse(frames[0].split("data: ")[1]).reason).toContain("read the current state again");
    hub.subscribe({ ...subscriber }, 10);
    expect(frames).toHaveLength(1);
    hub.closeAll();
  });

  test("no credential is a 401; a revoked key's stream ends within a second, without waiting for a heartbeat", async () => {
    const anonymous = await server.call("GET", "/api/v1/events/stream");
    expect([anonymous.status, anonymous.body.code]).toEqual([401, "UNAUTHORIZED"]);
    const key = await server.key(ws.owner.id, "read");
    const stream = await subscribe(key);
    const open = server.ctx.eventStream.size;
    const session = await server.signIn("ada@example.com");
    const keyId = (await server.call("GET", "/api/v1/api-keys", { session })).body.find((listed: { prefix: string }) => key.startsWith(listed.prefix))?.id;
    expect((await server.call("DELETE", `/api/v1/api-keys/${keyId}`, { session })).status).toBe(200);
    for (const began = performance.now(); !stream.ended() && performance.now() - began < 1000; ) await Bun.sleep(5);
    expect(stream.ended()).toBe(true);
    expect(server.ctx.eventStream.size).toBeLessThan(open);
  });

  test("a member removed from the space stops reading its stream within a second", async () => {
    const bob = await server.user(`Bob${Date.now()}`);
    const session = await server.signIn("ada@example.com");
    expect((await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { session, body: { email: bob.email, role: "viewer" } })).status).toBeLessThan(300);
    const stream = await subscribe(await server.key(bob.id, "read"));
    expect((await server.call("DELETE", `/api/v1/spaces/${ws.space.id}/members/${bob.id}`, { session })).status).toBe(200);
    for (const began = performance.now(); !stream.ended() && performance.now() - began < 1000; ) await Bun.sleep(5);
    expect(stream.ended()).toBe(true);
  });
});

describe("open streams are bounded per key, per account and per server", () => {
  test("past each share, 429 LIMIT_REACHED naming it; the server answers everyone else, and a closed stream frees its place", async () => {
    const capped = new TestServer({ deliveries: false, flags: { "max-streams-per-key": "2", "max-streams-per-user": "3", "max-streams": "4" } });
    try {
      const ada = await capped.user("Ada", { admin: true });
      await capped.space(ada.id, "Lab");
      const [first, second] = [await capped.key(ada.id, "read"), await capped.key(ada.id, "read")];
      const open = (key: string) => fetch(`${capped.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${key}` } });
      const held: Response[] = [await open(first), await open(first)];
      const refusedKey = await open(first);
      expect([refusedKey.status, (await refusedKey.json()).data]).toEqual([429, { reason: "LIMIT_REACHED", limit: "streamsPerKey", max: 2 }]);
      held.push(await open(second));
      const refusedUser = await open(second);
      expect([refusedUser.status, (await refusedUser.json()).data]).toEqual([429, { reason: "LIMIT_REACHED", limit: "streamsPerUser", max: 3 }]);
      const grace = await capped.user("Grace");
      await capped.space(grace.id, "Other");
      const graceKey = await capped.key(grace.id, "read");
      held.push(await open(graceKey));
      const refusedServer = await open(graceKey);
      expect([refusedServer.status, (await refusedServer.json()).data]).toEqual([429, { reason: "LIMIT_REACHED", limit: "streams", max: 4 }]);
      expect(held.map((response) => response.status)).toEqual([200, 200, 200, 200]);
      expect((await capped.call("GET", "/api/v1/spaces", { key: graceKey })).status).toBe(200);
      await held[0].body!.cancel();
      for (const began = performance.now(); capped.ctx.eventStream.size > 3 && performance.now() - began < 1000; ) await Bun.sleep(5);
      const again = await open(graceKey);
      expect(again.status).toBe(200);
      await again.body!.cancel();
      for (const response of held.slice(1)) await response.body!.cancel();
    } finally {
      await capped.stop();
    }
  });
});
