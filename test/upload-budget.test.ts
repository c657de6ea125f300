import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { eventually, TestServer, workspace, type Workspace } from "./helpers";
import { JSON_BODIES_PER_ADDRESS } from "../src/context";

/**
 * Request bodies being read are counted before a byte of them is read: uploads within a budget of
 * bytes across the process and a few at once per user, JSON bodies within a budget of their own.
 * A slow client (announcing 60 MB, sending a few bytes) holds a place, and past the budget the next
 * is refused at once, however slowly the held ones trickle.
 */

const MB = 1024 * 1024;

interface SlowBody {
  socket: Socket;
  /** The answer's status, once one came. */
  status: () => number | null;
  answered: Promise<number>;
  /** The answer as it came, status line, headers and body. */
  text: () => string;
}

/** A request that announces `announced` bytes of body and sends only its first few. */
function slowBody(server: TestServer, method: string, path: string, headers: Record<string, string>, announced: number): SlowBody {
  const { port } = new URL(server.url);
  const socket = connect(Number(port), "127.0.0.1");
  let status: number | null = null;
  let received = "";
  const answered = new Promise<number>((resolve) => {
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      // Answered once its body came whole (every answer here has a length).
      const end = received.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(received.slice(0, end + 2));
      if (end >= 0 && length && status === null && received.length >= end + 4 + Number(length[1])) resolve((status = Number(received.slice(9, 12))));
    });
    socket.on("error", () => undefined);
  });
  const head = Object.entries({ host: `127.0.0.1:${port}`, "content-length": String(announced), ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n0123456789`);
  return { socket, status: () => status, answered, text: () => received };
}

describe("request bodies held at once", () => {
  let server: TestServer;
  let ada: Workspace;
  let bobKey: string;
  let carolKey: string;
  const open: SlowBody[] = [];
  const slow = (...args: Parameters<typeof slowBody> extends [TestServer, ...infer Rest] ? Rest : never) => {
    const body = slowBody(server, ...args);
    open.push(body);
    return body;
  };
  const bearer = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/gzip" });

  beforeAll(async () => {
    server = new TestServer();
    ada = await workspace(server);
    for (const [name, assign] of [
      ["Bob", (key: string) => (bobKey = key)],
      ["Carol", (key: string) => (carolKey = key)],
    ] as const) {
      const user = await server.user(name);
      await server.space(user.id, `${name}'s`);
      assign(await server.key(user.id, "changeRequest"));
    }
  });
  afterAll(async () => {
    for (const body of open) body.socket.destroy();
    await server.stop();
  });

  test("uploads past the budget or past a user's share are refused at once, with Retry-After; the others are being read", async () => {
    const budget = server.ctx.bodies.uploads;
    const plan = "/api/v1/install/archive/plan";
    // Ada's two (a read key is enough to plan) and Bob's two: 240 MB of the 256 MB budget.
    const held = [slow("POST", plan, bearer(ada.read), 60 * MB), slow("POST", plan, bearer(ada.read), 60 * MB)];
    await eventually(() => budget.inUse === 120 * MB);
    held.push(slow("POST", plan, bearer(bobKey), 60 * MB), slow("POST", plan, bearer(bobKey), 60 * MB));
    await eventually(() => budget.inUse === 240 * MB);

    // Ada's third: her share is taken, whatever is left of the budget.
    expect(await slow("POST", plan, bearer(ada.read), MB).answered).toBe(429);
    // Carol has no upload running, but 60 MB more would pass the budget.
    const busy = slow("POST", plan, bearer(carolKey), 60 * MB);
    expect(await busy.answered).toBe(503);
    expect(busy.text()).toMatch(/\r\nretry-after: 5\r\n/i);
    expect(JSON.parse(busy.text().split("\r\n\r\n")[1])).toMatchObject({ code: "SERVER_BUSY", error: expect.stringContaining("request bodies") });

    // Carol's normal upload (a file, streamed to disk) still goes through; so does a small archive of hers.
    const file = await server.call("POST", "/api/v1/assets?fileName=note.txt", { key: carolKey, headers: { "content-type": "text/plain" }, rawBody: "hello" });
    expect(file.status).toBe(201);
    const archive = await server.call("POST", plan, { key: carolKey, headers: { "content-type": "application/gzip" }, rawBody: "not an archive" });
    expect(archive.status).toBe(400);

    // The held ones are still being read; once their clients go, their place is free again.
    expect(held.map((body) => body.status())).toEqual([null, null, null, null]);
    for (const body of held) body.socket.destroy();
    await eventually(() => budget.inUse === 0);
    expect((await server.call("POST", "/api/v1/assets?fileName=again.txt", { key: ada.propose, headers: { "content-type": "text/plain" }, rawBody: "again" })).status).toBe(201);
  });

  test("a file streamed to disk counts toward its user's share, not the budget", async () => {
    const budget = server.ctx.bodies.uploads;
    const held = [slow("POST", "/api/v1/assets?fileName=a.bin", bearer(bobKey), 20 * MB), slow("POST", "/api/v1/assets?fileName=b.bin", bearer(bobKey), 20 * MB)];
    await eventually(() => held.every((body) => body.socket.bytesWritten > 0) && budget.inUse === 0);
    expect(await slow("POST", "/api/v1/assets?fileName=c.bin", bearer(bobKey), 20 * MB).answered).toBe(429);
    expect((await server.call("POST", "/api/v1/assets?fileName=d.txt", { key: carolKey, headers: { "content-type": "text/plain" }, rawBody: "d" })).status).toBe(201);
    for (const body of held) body.socket.destroy();
  });

  test("without a key no upload is read: 401 at once, nothing counted", async () => {
    const before = server.ctx.bodies.uploads.inUse;
    expect(await slow("POST", "/api/v1/install/archive/plan", { "content-type": "application/gzip" }, 60 * MB).answered).toBe(401);
    expect(await slow("POST", "/api/v1/assets", { "content-type": "text/plain" }, 20 * MB).answered).toBe(401);
    expect(server.ctx.bodies.uploads.inUse).toBe(before);
  });

  test("JSON bodies being read are held within their own budget; past it the next is refused at once", async () => {
    const budget = server.ctx.bodies.json;
    // The dump's rows may be as large as an import: four of 64 MB fill the 256 MB budget.
    const rows = "/api/v1/dump/import/tables";
    const headers = { authorization: `Bearer ${ada.manage}`, "content-type": "application/json" };
    const held = [0, 1, 2, 3].map(() => slow("POST", rows, headers, 64 * MB));
    await eventually(() => budget.inUse === 256 * MB);
    expect(await slow("POST", rows, headers, 64 * MB).answered).toBe(503);
    expect(await slow("POST", "/api/v1/bases/papers/change-requests", headers, 100).answered).toBe(503);
    for (const body of held) body.socket.destroy();
    await eventually(() => budget.inUse === 0);
    expect((await server.call("GET", "/api/v1/bases", { key: ada.read })).status).toBe(200);
  });

  test("one address, with or without a key, has at most JSON_BODIES_PER_ADDRESS JSON bodies being read: the next is refused at once, and the budget stays for others", async () => {
    const budget = server.ctx.bodies.json;
    const held = Array.from({ length: JSON_BODIES_PER_ADDRESS }, () => slow("POST", "/api/v1/auth/login", { "content-type": "application/json" }, 1000));
    await eventually(() => budget.inUse === JSON_BODIES_PER_ADDRESS * 1000);
    expect(await slow("POST", "/api/v1/auth/login", { "content-type": "application/json" }, 1000).answered).toBe(429);
    expect(budget.inUse).toBe(JSON_BODIES_PER_ADDRESS * 1000);
    for (const body of held) body.socket.destroy();
    await eventually(() => budget.inUse === 0);
    expect((await server.call("POST", "/api/v1/bases", { key: ada.write, body: { slug: "after", name: "After", fields: [{ slug: "title", name: "Title" }] } })).status).toBe(201);
  });
});
