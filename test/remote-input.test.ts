import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { addRemote } from "../src/remotes/remotes";
import { createBase, eventually, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/**
 * What another instance sends is bounded (docs/security.md, "Remote input"): a local server
 * follows a fake remote, a raw TCP server that answers Basalt's sync routes as a test tells it to,
 * whole, too large, cut in the middle, or never.
 */
let server: TestServer;
let ws: Workspace;
let fake: Server;
let fakeUrl: string;
/** What the fake answers `GET /sync/commits` with; every other route answers as a Basalt would. */
let commitsAnswer: (socket: Socket, limit: number) => void;
const asked: number[] = [];
const open = new Set<Socket>();

const REMOTE = { instanceId: "ins_0123456789abcdef0123", spaceId: "spc_REMOTE00000000000" };
const whole = (socket: Socket, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  socket.end(`HTTP/1.1 ${status} OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
};
const page = (commits: unknown[]) => ({ commits, head: commits.length, next: null });
const commit = (seq: number, fields: Record<string, unknown>) => ({ id: `cmt_REMOTE${String(seq).padStart(10, "0")}`, seq, changeRequestId: `crq_REMOTE${String(seq).padStart(10, "0")}`, parentCommitId: null, message: "", origin: REMOTE.instanceId, createdAt: "2026-11-21T11:00:00.000Z", ...fields });

beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  asked.length = 0;
  commitsAnswer = (socket) => whole(socket, 200, page([]));
  fake = createServer((socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => undefined);
    let head = "";
    socket.on("data", (chunk) => {
      head += chunk.toString();
      if (!head.includes("\r\n\r\n")) return;
      const path = head.split(" ")[1];
      if (path.startsWith("/api/v1/sync/state")) whole(socket, 200, { ...REMOTE, head: 1, behind: 1 });
      else if (path.startsWith("/api/v1/sync/commits")) {
        const limit = Number(new URL(path, "http://x").searchParams.get("limit"));
        asked.push(limit);
        commitsAnswer(socket, limit);
      } else whole(socket, 404, { code: "NOT_FOUND", error: "Not found." });
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;
  await addRemote(server.ctx, ws.space.id, { name: "origin", url: fakeUrl, key: "bsk_remote", remoteSpace: REMOTE.spaceId, fromSeq: 0 });
});
afterEach(async () => {
  for (const socket of open) socket.destroy();
  fake.close();
  await server.stop();
});

const pullNow = () => server.call("POST", "/api/v1/remotes/origin/pull", { key: ws.write, space: ws.space.id });

describe("what another instance sends is bounded", () => {
  test("a page larger than a client reads at once is asked again shorter, then refused unread", async () => {
    commitsAnswer = (socket) => {
      // 40 MB that never parse, sent as fast as the socket takes them.
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n");
      const chunk = Buffer.alloc(1024 * 1024, 32);
      let sent = 0;
      const more = () => {
        while (sent < 40 && !socket.destroyed) {
          sent++;
          if (!socket.write(chunk)) return void socket.once("drain", more);
        }
        socket.end();
      };
      more();
    };
    const reply = await pullNow();
    expect(reply.status).toBe(502);
    expect(reply.body).toMatchObject({ code: "REMOTE_REFUSED", data: { remoteCode: "ANSWER_TOO_LARGE" } });
    expect(reply.body.error).toContain(`more than ${32 * 1024 * 1024} bytes`);
    expect(asked).toEqual([1000, 100, 10, 1]);
    expect((await server.call("GET", "/api/v1/remotes", { key: ws.read, space: ws.space.id })).body[0].lastError).toContain("more than");
  });

  test("a connection cut in the middle of an answer is 503 REMOTE_UNREACHABLE with a sentence, not a socket's code", async () => {
    commitsAnswer = (socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"commits":[');
      setImmediate(() => socket.destroy());
    };
    const reply = await pullNow();
    expect(reply.status).toBe(503);
    expect(reply.body.code).toBe("REMOTE_UNREACHABLE");
    expect(reply.body.error).toStartWith(`${fakeUrl} cut the connection in the middle of its answer`);
  });

  test("a pull whose caller has gone stops talking to the remote", async () => {
    commitsAnswer = (socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"commits":[');
    const caller = new AbortController();
    const pulling = fetch(`${server.url}/api/v1/remotes/origin/pull`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "x-basalt-space": ws.space.id }, signal: caller.signal }).catch(() => null);
    await eventually(() => asked.length === 1 && open.size > 0);
    caller.abort();
    await pulling;
    // The remote's connection is closed by the server within moments, not after its 60 s.
    await eventually(() => open.size === 0, 5000);
  });

  test("a pulled commit names a local person only when the remote's person has their e-mail; a pulled doc keeps the doc limit", async () => {
    const notes = (await createBase(server, ws.write, "notes", [{ slug: "title", name: "Title", type: "text" }])) as { id: string } | undefined;
    const baseId = notes?.id ?? (await server.call("GET", "/api/v1/bases/notes", { key: ws.read })).body.id;
    const owner = ws.owner.id;
    commitsAnswer = (socket) =>
      whole(socket, 200, page([
        // Claims the owner's id, as someone else.
        commit(1, { recordId: "rec_REMOTE0000000001", baseId, nodeId: null, targetType: "base", operation: "record_create", payload: { title: "by mallory" }, author: owner, authorUser: { id: owner, name: "Mallory", email: "mallory@example.org" } }),
        // The owner's e-mail: the owner indeed.
        commit(2, { recordId: "rec_REMOTE0000000002", baseId, nodeId: null, targetType: "base", operation: "record_create", payload: { title: "by ada" }, author: "usr_THEIRADA0000000000", authorUser: { id: "usr_THEIRADA0000000000", name: "Ada", email: "ada@example.com" } }),
        // A doc past the 300 KB a doc may hold here.
        commit(3, { recordId: null, baseId: null, nodeId: null, targetType: "node", operation: "node_create", payload: { nodeType: "doc", slug: "huge", name: "Huge", document: "x".repeat(400_000) }, author: owner, authorUser: null }),
      ]));
    const reply = await pullNow();
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ applied: 2, notFollowed: 1 });
    expect(reply.body.warnings.join("\n")).toContain("at most 300000 bytes");
    const authorOf = (recordId: string) => (server.ctx.store.sqlite.query("SELECT author_id AS author FROM commits WHERE record_id = ?").get(recordId) as { author: string }).author;
    expect(authorOf("rec_REMOTE0000000001")).not.toBe(owner);
    expect(authorOf("rec_REMOTE0000000001")).toMatch(/^usr_/);
    expect(server.ctx.store.sqlite.query("SELECT count(*) AS n FROM users WHERE id = ?").get(authorOf("rec_REMOTE0000000001"))).toEqual({ n: 0 });
    expect(authorOf("rec_REMOTE0000000002")).toBe(owner);
    expect((await server.call("GET", "/api/v1/nodes", { key: ws.read, space: ws.space.id })).body.map((node: { slug: string }) => node.slug)).not.toContain("huge");
  });

  test("a pushed record id that another space holds is answered as one that exists nowhere", async () => {
    const victim = await server.user("Vic");
    const victimSpace = await server.space(victim.id, "Victim", "victim");
    const victimKey = await server.key(victim.id, "write");
    await createBase(server, victimKey, "secrets", [{ slug: "title", name: "Title", type: "text" }]);
    const made = await server.call("POST", "/api/v1/bases/secrets/change-requests", { key: victimKey, space: victimSpace.id, body: { fields: { title: "theirs" } } });
    const theirs = made.body.id ?? made.body.operations?.[0]?.recordId;
    await createBase(server, ws.write, "mine", [{ slug: "title", name: "Title", type: "text" }]);
    const pushed = (recordId: string, n: number) =>
      server.call("POST", "/api/v1/sync/proposals", { key: ws.write, space: ws.space.id, body: { changeRequestId: `crq_PUSHED000000000${n}`, origin: "ins_aaaaaaaaaaaaaaaaaaaa", baseId: "mine", operations: [{ kind: "record_create", recordId, fields: { title: "x" } }] } });
    const elsewhere = await pushed(theirs, 1);
    const nowhere = await pushed("rec_NOWHERE000000000", 2);
    expect([elsewhere.status, Object.keys(elsewhere.body).sort(), elsewhere.body.status]).toEqual([nowhere.status, Object.keys(nowhere.body).sort(), nowhere.body.status]);
    // The victim's record is as it was.
    expect((await server.call("GET", `/api/v1/records/${theirs}`, { key: victimKey, space: victimSpace.id })).body.fields).toEqual({ title: "theirs" });
  });
});
