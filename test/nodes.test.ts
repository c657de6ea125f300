import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { TestServer, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace()));
afterEach(() => server.stop());

const nodeChanges = (operations: unknown[], key = ws.write, extra: Record<string, unknown> = {}) => server.call("POST", "/api/v1/nodes/change-requests", { key, body: { operations, ...extra } });
const tree = async (query = "") => (await server.call("GET", `/api/v1/nodes${query}`, { key: ws.read })).body;

describe("the node tree", () => {
  test("create with refs inside one change request; list with depth", async () => {
    const reply = await nodeChanges([
      { kind: "create", ref: "lab", nodeType: "folder", slug: "lab", name: "Lab" },
      { kind: "create", ref: "notes", parentNodeRef: "lab", nodeType: "folder", slug: "notes", name: "Notes" },
      { kind: "create", parentNodeRef: "notes", nodeType: "base", slug: "papers", name: "Papers", fields: [{ slug: "title", name: "Title", type: "text" }] },
    ]);
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe("merged");
    expect(reply.body.operations.map((op: { operation: string; status: string }) => [op.operation, op.status])).toEqual([
      ["node_create", "merged"],
      ["node_create", "merged"],
      ["node_create", "merged"],
    ]);
    const shallow = await tree("?depth=1");
    expect(shallow).toHaveLength(1);
    expect(shallow[0]).toMatchObject({ slug: "lab", type: "folder", hasChildren: true, shared: false, explicitVisibility: null, icon: null, status: "active", baseId: null });
    expect(shallow[0].children).toEqual([expect.objectContaining({ slug: "notes", hasChildren: true })]);
    expect(shallow[0].children[0].children).toEqual([]);
    const deep = await tree();
    const papers = deep[0].children[0].children[0];
    expect(papers).toMatchObject({ slug: "papers", type: "base", baseId: expect.stringMatching(/^bse_/), hasChildren: false });
    expect((await server.call("GET", `/api/v1/nodes/notes`, { key: ws.read })).body.children.map((n: { slug: string }) => n.slug)).toEqual(["papers"]);
    expect((await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.fields[0].slug).toBe("title");
    for (const depth of ["0", "6", "two", "1.5"]) expect(await tree(`?depth=${depth}`)).toMatchObject({ code: "BAD_REQUEST", error: "depth must be a whole number from 1 to 5." });
  });

  test("a proposal waits for review and lands on merge; a bad ref is a 400", async () => {
    const proposal = await nodeChanges([{ kind: "create", nodeType: "folder", slug: "drafts", name: "Drafts" }], ws.propose);
    expect(proposal.body.status).toBe("in_review");
    expect(await tree()).toEqual([]);
    await server.call("POST", `/api/v1/change-requests/${proposal.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    await server.call("POST", `/api/v1/change-requests/${proposal.body.id}/merge`, { key: ws.write });
    expect((await tree()).map((n: { slug: string }) => n.slug)).toEqual(["drafts"]);
    expect((await nodeChanges([{ kind: "create", parentNodeRef: "nowhere", nodeType: "folder", slug: "x", name: "X" }])).status).toBe(400);
  });

  test("slugs are unique among siblings", async () => {
    await nodeChanges([{ kind: "create", nodeType: "folder", slug: "a", name: "A" }]);
    const duplicate = await nodeChanges([{ kind: "create", nodeType: "folder", slug: "a", name: "A again" }]);
    expect(duplicate.status).toBe(409);
    expect((await nodeChanges([{ kind: "create", nodeType: "folder", slug: "Not OK", name: "x" }])).status).toBe(400);
  });

  test("rename, move (never into itself), metadata", async () => {
    await nodeChanges([
      { kind: "create", ref: "a", nodeType: "folder", slug: "a", name: "A" },
      { kind: "create", ref: "b", nodeType: "folder", slug: "b", name: "B" },
      { kind: "create", parentNodeRef: "a", nodeType: "folder", slug: "child", name: "Child" },
    ]);
    const renamed = await nodeChanges([{ kind: "rename", nodeId: "b", slug: "bee", name: "Bee", description: "buzz" }]);
    expect(renamed.body.status).toBe("merged");
    expect((await server.call("GET", "/api/v1/nodes/bee", { key: ws.read })).body).toMatchObject({ name: "Bee", description: "buzz" });
    const moved = await server.call("POST", "/api/v1/nodes/bee/move", { key: ws.write, body: { parentNodeId: "a" } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ status: "merged", operations: [expect.objectContaining({ operation: "node_move" })] });
    expect((await server.call("GET", "/api/v1/nodes/a", { key: ws.read })).body.children.map((n: { slug: string }) => n.slug)).toEqual(["child", "bee"]);
    expect((await server.call("POST", "/api/v1/nodes/a/move", { key: ws.write, body: { parentNodeId: "child" } })).status).toBe(400);
    const below = async (node: string, ancestor: string) => (await server.call("GET", `/api/v1/nodes/${node}/is-descendant?potentialAncestorId=${ancestor}`, { key: ws.read })).body;
    expect(await below("child", "a")).toEqual({ isDescendant: true });
    expect(await below("bee", "a")).toEqual({ isDescendant: true });
    expect(await below("a", "child")).toEqual({ isDescendant: false });
    expect(await below("a", "a")).toEqual({ isDescendant: false });
    expect((await server.call("GET", "/api/v1/nodes/a/is-descendant?potentialAncestorId=nope", { key: ws.read })).status).toBe(404);
    expect((await server.call("GET", "/api/v1/nodes/a/is-descendant", { key: ws.read })).status).toBe(400);
    expect((await server.call("POST", "/api/v1/nodes/a/move", { key: ws.propose, body: {} })).status).toBe(403);
    const meta = await server.call("PATCH", "/api/v1/nodes/a/metadata", { key: ws.write, body: { metadata: { color: "red", order: 1 } } });
    const again = await server.call("PATCH", "/api/v1/nodes/a/metadata", { key: ws.write, body: { metadata: { order: 2 } } });
    expect(meta.body.metadata).toEqual({ color: "red", order: 1 });
    expect(again.body.metadata).toEqual({ color: "red", order: 2 });
  });

  test("favorites are each person's own: toggled by a POST, listed in the order marked, archived nodes left out", async () => {
    await nodeChanges([
      { kind: "create", ref: "a", nodeType: "folder", slug: "a", name: "A" },
      { kind: "create", ref: "b", nodeType: "folder", slug: "b", name: "B" },
    ]);
    const favorites = async (key = ws.read) => (await server.call("GET", "/api/v1/nodes/favorites", { key })).body.map((n: { slug: string }) => n.slug);
    const toggle = async (node: string, key = ws.read) => (await server.call("POST", `/api/v1/nodes/${node}/favorite`, { key })).body;
    expect(await favorites()).toEqual([]);
    expect(await toggle("b")).toEqual({ favorited: true });
    server.clock.advance(1);
    expect(await toggle("a")).toEqual({ favorited: true });
    expect(await favorites()).toEqual(["b", "a"]);
    expect(await toggle("b")).toEqual({ favorited: false });
    expect(await favorites(ws.write)).toEqual(["a"]);

    const bob = await server.user("Bob");
    const session = await server.signIn("ada@example.com");
    await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { session, body: { email: bob.email, role: "viewer" } });
    const bobKey = await server.key(bob.id, "read");
    expect(await favorites(bobKey)).toEqual([]);
    expect(await toggle("b", bobKey)).toEqual({ favorited: true });
    expect(await favorites()).toEqual(["a"]);

    expect((await nodeChanges([{ kind: "delete", nodeId: "a" }])).body.status).toBe("merged");
    expect(await favorites()).toEqual([]);
    expect((await server.call("POST", "/api/v1/nodes/a/favorite", { key: ws.read })).status).toBe(404);
    expect((await server.call("POST", "/api/v1/nodes/nope/favorite", { key: ws.read })).status).toBe(404);
  });

  test("delete archives the subtree, restore brings it back, purge needs manage and an archived node", async () => {
    await nodeChanges([
      { kind: "create", ref: "a", nodeType: "folder", slug: "a", name: "A" },
      { kind: "create", parentNodeRef: "a", nodeType: "base", slug: "inner", name: "Inner", fields: [{ slug: "t", name: "T", type: "text" }] },
    ]);
    await server.call("POST", "/api/v1/bases/inner/change-requests", { key: ws.write, body: { fields: { t: "x" } } });
    expect((await server.call("DELETE", "/api/v1/nodes/a", { key: ws.manage })).status).toBe(409);
    const deleted = await nodeChanges([{ kind: "delete", nodeId: "a" }]);
    expect(deleted.body.operations[0].status).toBe("archived");
    expect(await tree()).toEqual([]);
    expect((await server.call("GET", "/api/v1/nodes/a", { key: ws.read })).status).toBe(404);
    expect((await tree("?status=archived&depth=2"))[0]).toMatchObject({ slug: "a", status: "archived", children: [expect.objectContaining({ slug: "inner", status: "archived" })] });
    expect((await server.call("GET", "/api/v1/bases?status=archived", { key: ws.read })).body.map((b: { slug: string }) => b.slug)).toEqual(["inner"]);
    expect((await server.call("GET", "/api/v1/bases", { key: ws.read })).body).toEqual([]);

    const restored = await nodeChanges([{ kind: "restore", nodeId: "a" }]);
    expect(restored.body.status).toBe("merged");
    expect((await tree("?depth=2"))[0].children[0].slug).toBe("inner");

    await nodeChanges([{ kind: "delete", nodeId: "a" }]);
    const asWriter = await server.call("DELETE", "/api/v1/nodes/a", { key: ws.write });
    expect(asWriter.status).toBe(403);
    const purged = await server.call("DELETE", "/api/v1/nodes/a", { key: ws.manage });
    expect(purged.body).toEqual({ success: true, purged: true });
    expect(server.ctx.store.sqlite.query("SELECT count(*) AS n FROM records").get()).toEqual({ n: 0 });
    expect((await tree("?status=archived")).length).toBe(0);
  });
});

describe("search over a deep tree", () => {
  test("a 5,000-deep folder chain (as a database made before the depth limit may hold) is searched in linear time, each path built once", async () => {
    const root = server.ctx.store.sqlite.query("SELECT id FROM nodes WHERE space_id = ? AND parent_id IS NULL").get(ws.space.id) as { id: string };
    const insert = server.ctx.store.sqlite.prepare(
      "INSERT INTO nodes (id, space_id, parent_id, type, slug, name, created_at, updated_at) VALUES (?, ?, ?, 'folder', ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
    );
    server.ctx.store.sqlite.transaction(() => {
      for (let depth = 1, parent = root.id; depth <= 5000; parent = `nod_deep${depth}`, depth++) insert.run(`nod_deep${depth}`, ws.space.id, parent, `d${depth}`, `Deep ${depth}`);
    })();
    const hits = (await server.call("GET", "/api/v1/nodes/search?query=deep&limit=50", { key: ws.read })).body;
    expect(hits).toHaveLength(50);
    expect(hits[0].path).toBe("d1");
    expect(hits[49].path).toBe(Array.from({ length: 50 }, (_, i) => `d${i + 1}`).join("/"));
    const deepest = (await server.call("GET", "/api/v1/nodes/search?query=d5000", { key: ws.read })).body;
    expect(deepest[0].path.split("/")).toHaveLength(5000);
  });
});
