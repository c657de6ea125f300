import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { TestServer, createBase, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
let folder: string;
let doc: string;
beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  const made = await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "folder", slug: "public", name: "Public" }] } });
  folder = made.body.operations[0].nodeId;
  doc = (await server.call("POST", "/api/v1/docs", { key: ws.write, body: { parentNodeId: folder, slug: "press", name: "Press kit", body: "# Press kit\n" } })).body.node.id;
  await createBase(server, ws.write);
});
afterEach(() => server.stop());

const share = (node: string, body: Record<string, unknown>, key = ws.manage) => server.call("POST", `/api/v1/nodes/${node}/share`, { key, body });
const visit = (node: string, password?: string) => fetch(`${server.url}/api/v1/shared/${node}`, { headers: password === undefined ? {} : { "x-share-password": password } });

describe("public shares", () => {
  test("a shared folder is read, with what is below it, without a key; nothing else of the space is", async () => {
    expect((await server.call("GET", `/api/v1/nodes/${folder}/share`, { key: ws.manage })).body).toBeNull();
    expect((await visit(doc)).status).toBe(404);
    const shared = await share(folder, { scope: "public" });
    expect(shared.body).toMatchObject({ nodeId: folder, scope: "public", capability: "read", hasPassword: false, expiresAt: null });
    expect((await server.call("GET", "/api/v1/nodes", { key: ws.read })).body.find((node: { id: string }) => node.id === folder).shared).toBe(true);
    const below = await visit(doc);
    expect(below.status).toBe(200);
    expect(await below.json()).toMatchObject({ type: "doc", body: "# Press kit\n" });
    expect(await (await visit(folder)).json()).toMatchObject({ type: "folder", children: [{ slug: "press" }] });
    // The base beside the folder is not shared.
    const base = (await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body;
    expect((await visit(base.nodeId)).status).toBe(404);
    expect((await share(folder, { scope: "public" }, ws.write)).status).toBe(403);

    expect((await server.call("DELETE", `/api/v1/nodes/${folder}/share`, { key: ws.manage })).body).toMatchObject({ scope: "none" });
    expect((await visit(doc)).status).toBe(404);
  });

  test("a password is asked for, kept as a hash, and tried at most 10 times a minute; an expired share reads nothing", async () => {
    expect((await share(doc, { scope: "none", password: "open sesame" })).body.error).toBe("A share password can only be set while the node is publicly shared.");
    const made = await share(doc, { scope: "public", password: "open sesame", expiresAt: "2026-11-21T13:00:00.000Z" });
    expect(made.body).toMatchObject({ hasPassword: true, expiresAt: "2026-11-21T13:00:00.000Z" });
    expect(JSON.stringify(made.body)).not.toContain("sesame");
    const stored = server.ctx.store.sqlite.query("SELECT password_hash AS hash FROM node_shares").get() as { hash: string };
    expect(stored.hash).not.toContain("sesame");
    expect(await (await visit(doc)).json()).toMatchObject({ reason: "SHARE_PASSWORD_REQUIRED" });
    expect((await visit(doc, "wrong")).status).toBe(401);
    expect((await visit(doc, "open sesame")).status).toBe(200);
    // Changing the expiry keeps the password; null removes it.
    expect((await share(doc, { scope: "public", expiresAt: null })).body).toMatchObject({ hasPassword: true, expiresAt: null });
    let limited = 0;
    for (let i = 0; i < 12; i++) if ((await visit(doc, `guess ${i}`)).status === 429) limited++;
    expect(limited).toBeGreaterThan(0);
    server.clock.advance(61_000);
    expect((await share(doc, { scope: "public", password: null, expiresAt: "2026-11-21T12:05:00.000Z" })).body.hasPassword).toBe(false);
    expect((await visit(doc)).status).toBe(200);
    server.clock.advance(5 * 60_000);
    expect((await visit(doc)).status).toBe(404);
  });

  test("the tree shows a node shared until its share expires, though nothing is written in between (the tree is kept until then)", async () => {
    const sharedIn = async (path: string) => {
      const tree = (await server.call("GET", path, { key: ws.read })).body;
      const flat = (nodes: { id: string; shared: boolean; children: unknown[] }[]): { id: string; shared: boolean }[] => nodes.flatMap((node) => [node, ...flat(node.children as never)]);
      return Object.fromEntries(flat(Array.isArray(tree) ? tree : [tree]).filter((node) => node.id === folder || node.id === doc).map((node) => [node.id === folder ? "folder" : "doc", node.shared]));
    };
    await share(folder, { scope: "public" });
    await share(doc, { scope: "public", expiresAt: new Date(server.clock.now() + 60_000).toISOString() });
    for (let i = 0; i < 2; i++) expect(await sharedIn("/api/v1/nodes")).toEqual({ folder: true, doc: true });
    expect(await sharedIn(`/api/v1/nodes/${folder}`)).toEqual({ folder: true, doc: true });
    server.clock.advance(59_000);
    expect(await sharedIn("/api/v1/nodes")).toEqual({ folder: true, doc: true });
    server.clock.advance(1_000);
    expect(await sharedIn("/api/v1/nodes")).toEqual({ folder: true, doc: false });
    expect(await sharedIn(`/api/v1/nodes/${folder}`)).toEqual({ folder: true, doc: false });
    await share(folder, { scope: "none" });
    expect(await sharedIn("/api/v1/nodes")).toEqual({ folder: false, doc: false });
  });
});
