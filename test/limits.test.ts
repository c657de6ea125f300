import { afterEach, beforeEach, expect, test } from "bun:test";
import { BUN, createBase, freshWorkspace, REPO, type TestServer, type Workspace } from "./helpers";
import { join } from "node:path";

/** Limits an operator sets (issue 20, item 10), here low so that a test reaches them. */
let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace({ flags: { "max-spaces-per-user": "2", "max-bases-per-space": "2", "max-fields-per-base": "3", "max-folder-depth": "3", "max-metadata": "200" } })));
afterEach(() => server.stop());

const refusal = (limit: string, max: number) => ({ code: "CONFLICT", reason: "LIMIT_REACHED", data: { reason: "LIMIT_REACHED", limit, max } });
const field = (slug: string) => ({ slug, name: slug, type: "text" });

test("spaces per account: the second space is made, the third is a 409 naming the limit and its flag", async () => {
  const session = await server.signIn("ada@example.com");
  expect((await server.call("POST", "/api/v1/spaces", { session, body: { name: "Second" } })).status).toBe(201);
  const third = await server.call("POST", "/api/v1/spaces", { session, body: { name: "Third" } });
  expect(third.status).toBe(409);
  expect(third.body).toMatchObject(refusal("spacesPerUser", 2));
  expect(third.body.error).toBe("An account owns at most 2 spaces; this would make 3. The operator sets the limit with --max-spaces-per-user (BASALT_MAX_SPACES_PER_USER).");
});

test("bases per space and fields per base, through every way they are made; nothing is written by a refusal", async () => {
  await createBase(server, ws.write, "one", [field("a"), field("b"), field("c")]);
  const tooWide = await server.call("POST", "/api/v1/bases", { key: ws.write, body: { slug: "wide", name: "Wide", fields: [field("a"), field("b"), field("c"), field("d")] } });
  expect(tooWide.body).toMatchObject(refusal("fieldsPerBase", 3));
  const fourth = await server.call("POST", "/api/v1/bases/one/fields", { key: ws.write, body: field("d") });
  expect(fourth.body).toMatchObject(refusal("fieldsPerBase", 3));
  const proposed = await server.call("POST", "/api/v1/bases/one/fields/change-requests", { key: ws.write, body: { operation: "create", ...field("d"), autoMerge: true } });
  expect(proposed.body).toMatchObject(refusal("fieldsPerBase", 3));
  await createBase(server, ws.write, "two", [field("a")]);
  const third = await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "base", slug: "three", name: "Three", fields: [] }] } });
  expect(third.body).toMatchObject(refusal("basesPerSpace", 2));
  const bases = (await server.call("GET", "/api/v1/bases", { key: ws.read })).body;
  expect(bases.map((b: { slug: string; fields: unknown[] }) => [b.slug, b.fields.length])).toEqual([["one", 3], ["two", 1]]);
});

test("folder depth on create and on move (with what hangs below), and metadata size after a merge", async () => {
  const create = (slug: string, parentNodeRef?: string, metadata?: unknown) =>
    server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "folder", slug, name: slug, ...(parentNodeRef ? { parentNodeId: parentNodeRef } : {}), ...(metadata ? { metadata } : {}) }] } });
  expect((await create("a")).status).toBe(201);
  expect((await create("b", "a")).status).toBe(201);
  expect((await create("c", "b")).status).toBe(201);
  expect((await create("d", "c")).body).toMatchObject(refusal("folderDepth", 3));
  expect((await create("x")).status).toBe(201);
  expect((await create("y", "x")).status).toBe(201);
  // x (with y below it) under b would put y at depth 4.
  const moved = await server.call("POST", "/api/v1/nodes/x/move", { key: ws.write, body: { parentNodeId: "b" } });
  expect(moved.body).toMatchObject(refusal("folderDepth", 3));
  expect((await server.call("POST", "/api/v1/nodes/x/move", { key: ws.write, body: { parentNodeId: "a" } })).status).toBe(200);

  expect((await create("big", undefined, { note: "x".repeat(300) })).body).toMatchObject(refusal("metadataBytes", 200));
  expect((await server.call("PATCH", "/api/v1/nodes/a/metadata", { key: ws.write, body: { metadata: { one: "x".repeat(100) } } })).status).toBe(200);
  const grown = await server.call("PATCH", "/api/v1/nodes/a/metadata", { key: ws.write, body: { metadata: { two: "x".repeat(100) } } });
  expect(grown.body).toMatchObject(refusal("metadataBytes", 200));
  expect((await server.call("GET", "/api/v1/nodes/a", { key: ws.read })).body.metadata).toEqual({ one: "x".repeat(100) });
});

test("serve takes the limits as flags and variables, and refuses a limit that is not a whole number", () => {
  const bad = Bun.spawnSync([BUN, join(REPO, "src/main.ts"), "serve", "--max-fields-per-base", "many", "--data-dir", join(server.dir, "cli")]);
  expect([bad.exitCode, bad.stderr.toString().trim()]).toEqual([1, 'basalt: --max-fields-per-base "many" is not a whole number of at least 1.']);
  const help = Bun.spawnSync([BUN, join(REPO, "src/main.ts"), "--help"]).stdout.toString();
  for (const flag of ["--max-spaces-per-user", "--max-bases-per-space", "--max-fields-per-base", "--max-folder-depth", "--max-metadata"]) expect(help).toContain(flag);
});
