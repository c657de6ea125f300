import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { type Session, TestServer } from "./helpers";

let server: TestServer;
let ada: { id: string; email: string };
let session: Session;

beforeEach(async () => {
  server = new TestServer();
  ada = await server.user("Ada");
  session = await server.signIn(ada.email);
});
afterEach(() => server.stop());

describe("spaces", () => {
  test("create, list, read, rename; the creator is owner", async () => {
    const created = await server.call("POST", "/api/v1/spaces", { session, body: { name: "Research Notes" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "Research Notes", slug: "research-notes", role: "owner" });
    expect(created.body.id).toMatch(/^spc_/);
    const id = created.body.id;
    expect((await server.call("GET", "/api/v1/spaces", { session })).body).toEqual([created.body]);
    expect((await server.call("GET", `/api/v1/spaces/${id}`, { session })).body).toEqual(created.body);
    expect((await server.call("GET", "/api/v1/spaces/research-notes", { session })).body.id).toBe(id);
    const renamed = await server.call("PATCH", `/api/v1/spaces/${id}`, { session, body: { name: "Lab", slug: "lab" } });
    expect(renamed.body).toMatchObject({ id, name: "Lab", slug: "lab", role: "owner" });
  });

  test("slugs are validated and unique", async () => {
    await server.call("POST", "/api/v1/spaces", { session, body: { name: "A", slug: "alpha" } });
    const duplicate = await server.call("POST", "/api/v1/spaces", { session, body: { name: "B", slug: "alpha" } });
    expect(duplicate.status).toBe(409);
    expect((await server.call("POST", "/api/v1/spaces", { session, body: { name: "C", slug: "Not Valid" } })).status).toBe(400);
    expect((await server.call("GET", "/api/v1/spaces", { session })).body).toHaveLength(1);
  });

  test("every new space gets a root folder node", async () => {
    const { body } = await server.call("POST", "/api/v1/spaces", { session, body: { name: "Research" } });
    const root = server.ctx.store.sqlite.query("SELECT type, parent_id AS parentId FROM nodes WHERE space_id = ?").all(body.id);
    expect(root).toEqual([{ type: "folder", parentId: null }]);
    expect((await server.call("GET", "/api/v1/nodes", { session, space: body.id })).body).toEqual([]);
  });

  test("creating a space needs a session or a manage key", async () => {
    const write = await server.call("POST", "/api/v1/spaces", { key: await server.key(ada.id, "write"), body: { name: "X" } });
    expect(write.status).toBe(403);
    expect((await server.call("POST", "/api/v1/spaces", { key: await server.key(ada.id, "manage"), body: { name: "X" } })).status).toBe(201);
  });

  test("delete needs the slug as confirmation, an owner, and takes the content along", async () => {
    const { body } = await server.call("POST", "/api/v1/spaces", { session, body: { name: "Doomed" } });
    const unconfirmed = await server.call("DELETE", `/api/v1/spaces/${body.id}`, { session, body: { confirm: "wrong" } });
    expect(unconfirmed.status).toBe(400);
    const bob = await server.user("Bob");
    await server.call("POST", `/api/v1/spaces/${body.id}/members`, { session, body: { email: bob.email, role: "admin" } });
    const byAdmin = await server.call("DELETE", `/api/v1/spaces/${body.id}`, { key: await server.key(bob.id, "manage"), body: { confirm: "doomed" } });
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.reason).toBe("OWNER_REQUIRED");
    const deleted = await server.call("DELETE", `/api/v1/spaces/${body.id}`, { session, body: { confirm: "doomed" } });
    expect(deleted.body).toEqual({ success: true });
    expect((await server.call("GET", "/api/v1/spaces", { session })).body).toEqual([]);
    expect(server.ctx.store.sqlite.query("SELECT count(*) AS n FROM nodes").get()).toEqual({ n: 0 });
  });
});

describe("members", () => {
  test("add, list, change role, remove; the last owner is protected", async () => {
    const space = await server.space(ada.id, "Team");
    const bob = await server.user("Bob");
    const added = await server.call("POST", `/api/v1/spaces/${space.id}/members`, { session, body: { email: "BOB@example.com", role: "editor" } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ userId: bob.id, name: "Bob", email: bob.email, role: "editor" });
    expect((await server.call("POST", `/api/v1/spaces/${space.id}/members`, { session, body: { email: bob.email, role: "viewer" } })).status).toBe(409);
    expect((await server.call("POST", `/api/v1/spaces/${space.id}/members`, { session, body: { email: "nobody@example.com", role: "viewer" } })).status).toBe(404);
    expect((await server.call("POST", `/api/v1/spaces/${space.id}/members`, { session, body: { email: bob.email, role: "boss" } })).status).toBe(400);

    const list = await server.call("GET", `/api/v1/spaces/${space.id}/members`, { session });
    expect(list.body.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([[ada.email, "owner"], [bob.email, "editor"]]);

    const demoteLast = await server.call("PATCH", `/api/v1/spaces/${space.id}/members/${ada.id}`, { session, body: { role: "admin" } });
    expect(demoteLast.status).toBe(409);
    const removeLast = await server.call("DELETE", `/api/v1/spaces/${space.id}/members/${ada.id}`, { session });
    expect(removeLast.status).toBe(409);

    expect((await server.call("PATCH", `/api/v1/spaces/${space.id}/members/${bob.id}`, { session, body: { role: "owner" } })).body.role).toBe("owner");
    expect((await server.call("PATCH", `/api/v1/spaces/${space.id}/members/${ada.id}`, { session, body: { role: "viewer" } })).body.role).toBe("viewer");
    const asViewer = await server.call("DELETE", `/api/v1/spaces/${space.id}/members/${bob.id}`, { session });
    expect(asViewer.status).toBe(403);
    expect(asViewer.body.data).toEqual({ required: "manage", effective: "read" });
  });

  test("a role change or removal applies to the very next request", async () => {
    const space = await server.space(ada.id, "Team");
    const bob = await server.user("Bob");
    await server.call("POST", `/api/v1/spaces/${space.id}/members`, { session, body: { email: bob.email, role: "editor" } });
    const key = await server.key(bob.id, "manage");
    expect((await server.call("GET", "/api/v1/auth", { key, space: space.id })).body.effectiveLevel).toBe("write");
    await server.call("PATCH", `/api/v1/spaces/${space.id}/members/${bob.id}`, { session, body: { role: "viewer" } });
    expect((await server.call("GET", "/api/v1/auth", { key, space: space.id })).body.effectiveLevel).toBe("read");
    await server.call("DELETE", `/api/v1/spaces/${space.id}/members/${bob.id}`, { session });
    expect((await server.call("GET", "/api/v1/nodes", { key, space: space.id })).status).toBe(403);
  });

  test("a space added by another process is found at once when named", async () => {
    const key = await server.key(ada.id, "read");
    await server.space(ada.id, "First");
    expect((await server.call("GET", "/api/v1/auth", { key })).body.spaces).toHaveLength(1);
    const now = new Date().toISOString();
    server.ctx.store.sqlite.run("INSERT INTO spaces (id, name, slug, created_at, updated_at) VALUES ('spc_outside', 'Outside', 'outside', ?, ?)", [now, now]);
    server.ctx.store.sqlite.run("INSERT INTO members (space_id, user_id, role, created_at) VALUES ('spc_outside', ?, 'owner', ?)", [ada.id, now]);
    server.ctx.store.sqlite.run("INSERT INTO nodes (id, space_id, type, slug, name, created_at, updated_at) VALUES ('nod_outside', 'spc_outside', 'folder', 'root', 'Outside', ?, ?)", [now, now]);
    expect((await server.call("GET", "/api/v1/nodes", { key, space: "outside" })).status).toBe(200);
  });

  test("members are listed with read, managed with manage", async () => {
    const space = await server.space(ada.id, "Team");
    const carol = await server.user("Carol");
    await server.call("POST", `/api/v1/spaces/${space.id}/members`, { session, body: { email: carol.email, role: "editor" } });
    const carolKey = await server.key(carol.id, "manage");
    expect((await server.call("GET", `/api/v1/spaces/${space.id}/members`, { key: carolKey })).status).toBe(200);
    const add = await server.call("POST", `/api/v1/spaces/${space.id}/members`, { key: carolKey, body: { email: ada.email, role: "viewer" } });
    expect(add.status).toBe(403);
    expect(add.body.data).toEqual({ required: "manage", effective: "write" });
  });
});

describe("which space a request targets (section 2.3)", () => {
  test("one space: the header may be omitted", async () => {
    const space = await server.space(ada.id, "Only");
    const key = await server.key(ada.id, "read");
    expect((await server.call("GET", "/api/v1/nodes", { key })).status).toBe(200);
    const auth = await server.call("GET", "/api/v1/auth", { key });
    expect(auth.body.space).toEqual({ id: space.id, name: "Only", slug: "only", plan: null, nodeVisibilityMode: "open" });
  });

  test("several spaces and no header: 400 SPACE_SELECTION_REQUIRED listing them", async () => {
    const a = await server.space(ada.id, "Alpha");
    const b = await server.space(ada.id, "Beta");
    const reply = await server.call("GET", "/api/v1/nodes", { key: await server.key(ada.id, "read") });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: "BAD_REQUEST", reason: "SPACE_SELECTION_REQUIRED" });
    expect(reply.body.data).toEqual({
      reason: "SPACE_SELECTION_REQUIRED",
      spaces: [
        { id: a.id, name: "Alpha", slug: "alpha" },
        { id: b.id, name: "Beta", slug: "beta" },
      ],
      issues: [{ path: [], message: reply.body.error }],
    });
  });

  test("the header picks by id or slug; x-busabase-space is the same header", async () => {
    await server.space(ada.id, "Alpha");
    const beta = await server.space(ada.id, "Beta");
    const key = await server.key(ada.id, "read");
    const choices: Record<string, string>[] = [{ "x-basalt-space": beta.id }, { "x-basalt-space": "beta" }, { "x-busabase-space": "beta" }];
    for (const headers of choices) {
      const reply = await server.call("GET", "/api/v1/auth", { key, headers });
      expect(reply.body.space.id).toBe(beta.id);
      expect((await server.call("GET", "/api/v1/nodes", { key, headers })).status).toBe(200);
    }
  });

  test("a foreign or unknown space: the same 403 SPACE_NOT_ALLOWED", async () => {
    await server.space(ada.id, "Mine");
    const bob = await server.user("Bob");
    const foreign = await server.space(bob.id, "Theirs");
    const key = await server.key(ada.id, "read");
    const replies = [await server.call("GET", "/api/v1/nodes", { key, space: foreign.id }), await server.call("GET", "/api/v1/nodes", { key, space: "spc_does_not_exist" })];
    for (const reply of replies) {
      expect(reply.status).toBe(403);
      expect(reply.body.reason).toBe("SPACE_NOT_ALLOWED");
    }
    expect(replies[0].body).toEqual(replies[1].body);
    expect((await server.call("GET", `/api/v1/spaces/${foreign.id}`, { key })).status).toBe(403);
  });

  test("routes outside spaces ignore the header", async () => {
    const key = await server.key(ada.id, "read");
    expect((await server.call("GET", "/api/v1/users/me", { key, space: "nonsense" })).status).toBe(200);
    expect((await server.call("GET", "/api/v1/spaces", { key, space: "nonsense" })).status).toBe(200);
  });

  test("effective level is the lower of key level and role level", async () => {
    const space = await server.space(ada.id, "Team");
    const bob = await server.user("Bob");
    await server.call("POST", `/api/v1/spaces/${space.id}/members`, { session, body: { email: bob.email, role: "contributor" } });
    const cases: [string, string][] = [
      ["read", "read"],
      ["changeRequest", "changeRequest"],
      ["write", "changeRequest"],
      ["manage", "changeRequest"],
    ];
    for (const [level, effective] of cases) {
      const reply = await server.call("GET", "/api/v1/auth", { key: await server.key(bob.id, level as never), space: space.id });
      expect(reply.body.effectiveLevel).toBe(effective);
    }
  });
});
