import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createBase, PAPER_FIELDS, TestServer, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace()));
afterEach(() => server.stop());

describe("bases", () => {
  test("direct creation answers the Base with materialized: true", async () => {
    const reply = await server.call("POST", "/api/v1/bases", { key: ws.write, body: { slug: "papers", name: "Papers", description: "reading list", fields: PAPER_FIELDS } });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ materialized: true, slug: "papers", name: "Papers", description: "reading list", reviewPolicy: { kind: "single", requiredApprovals: 1 } });
    expect(reply.body.id).toMatch(/^bse_/);
    expect(reply.body.fields.map((f: { slug: string; position: number }) => [f.slug, f.position])).toEqual([["title", 0], ["year", 1], ["status", 2]]);
    expect(reply.body.fields[0]).toMatchObject({ id: expect.stringMatching(/^fld_/), baseId: reply.body.id, name: "Title", type: "text", required: true, options: {} });
    expect((await server.call("GET", `/api/v1/bases/${reply.body.id}`, { key: ws.read })).body.slug).toBe("papers");
    expect((await server.call("GET", "/api/v1/bases", { key: ws.read })).body).toHaveLength(1);
  });

  test("a changeRequest key proposes a base: a ChangeRequest with materialized: false", async () => {
    const reply = await server.call("POST", "/api/v1/bases", { key: ws.propose, body: { slug: "papers", name: "Papers", fields: PAPER_FIELDS } });
    expect(reply.body).toMatchObject({ materialized: false, status: "in_review", targetType: "node" });
    expect((await server.call("GET", "/api/v1/bases", { key: ws.read })).body).toEqual([]);
  });

  test("archiving a base (Busabase's lifecycle route) always waits for review; restoring it may merge at once", async () => {
    await createBase(server, ws.write);
    const lifecycle = (operation: string, key = ws.write, extra: Record<string, unknown> = {}) => server.call("POST", "/api/v1/bases/papers/lifecycle/change-requests", { key, body: { operation, ...extra } });
    expect((await lifecycle("archive", ws.write, { autoMerge: true })).body).toMatchObject({ code: "BAD_REQUEST", error: expect.stringContaining("`autoMerge: true` is not accepted here: archiving a Base") });
    expect((await lifecycle("delete")).status).toBe(400);
    expect((await lifecycle("archive", ws.read)).status).toBe(403);
    const archive = await lifecycle("archive", ws.write, { message: "done with it" });
    expect(archive.status).toBe(201);
    expect(archive.body).toMatchObject({ status: "in_review", sourceMeta: { message: "done with it" }, operations: [{ operation: "node_delete" }] });
    expect((await server.call("GET", "/api/v1/bases", { key: ws.read })).body).toHaveLength(1);

    const bob = await server.user("Bob");
    const session = await server.signIn("ada@example.com");
    await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { session, body: { email: bob.email, role: "editor" } });
    const bobKey = await server.key(bob.id, "write");
    await server.call("POST", `/api/v1/change-requests/${archive.body.id}/reviews`, { key: bobKey, body: { verdict: "approved" } });
    expect((await server.call("POST", `/api/v1/change-requests/${archive.body.id}/merge`, { key: bobKey })).body.changeRequest.status).toBe("merged");
    expect((await server.call("GET", "/api/v1/bases", { key: ws.read })).body).toEqual([]);
    expect((await server.call("GET", "/api/v1/records?baseId=papers", { key: ws.read })).status).toBe(404);
    expect((await lifecycle("archive")).status).toBe(404);

    const restore = await lifecycle("restore");
    expect(restore.body).toMatchObject({ status: "merged", operations: [{ operation: "node_restore" }] });
    expect((await server.call("GET", "/api/v1/bases", { key: ws.read })).body.map((b: { slug: string }) => b.slug)).toEqual(["papers"]);
    expect((await lifecycle("restore")).status).toBe(404);
  });

  test("PATCH renames with write; the review policy needs manage and 1..10", async () => {
    await createBase(server, ws.write);
    expect((await server.call("PATCH", "/api/v1/bases/papers", { key: ws.write, body: { name: "Reading", description: "d" } })).body).toMatchObject({ name: "Reading", description: "d" });
    const policy = await server.call("PATCH", "/api/v1/bases/papers", { key: ws.write, body: { reviewPolicy: { requiredApprovals: 2 } } });
    expect(policy.status).toBe(403);
    expect(policy.body.data).toEqual({ required: "manage", effective: "write" });
    expect((await server.call("PATCH", "/api/v1/bases/papers", { key: ws.manage, body: { reviewPolicy: { requiredApprovals: 11 } } })).status).toBe(400);
    expect((await server.call("PATCH", "/api/v1/bases/papers", { key: ws.manage, body: { reviewPolicy: { requiredApprovals: 3 } } })).body.reviewPolicy).toEqual({ kind: "single", requiredApprovals: 3 });
  });
});

describe("fields", () => {
  beforeEach(async () => {
    await createBase(server, ws.write);
  });

  test("POST /fields adds a field directly with write", async () => {
    const reply = await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug: "venue", name: "Venue", type: "text" } });
    expect(reply.status).toBe(200);
    expect(reply.body.fields.map((f: { slug: string }) => f.slug)).toEqual(["title", "year", "status", "venue"]);
    expect((await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.propose, body: { slug: "x", name: "X", type: "text" } })).status).toBe(403);
  });

  test("field change requests: create, update, delete, reorder", async () => {
    const propose = (body: Record<string, unknown>) => server.call("POST", "/api/v1/bases/papers/fields/change-requests", { key: ws.propose, body });
    const approveAndMerge = async (id: string) => {
      await server.call("POST", `/api/v1/change-requests/${id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
      const merged = await server.call("POST", `/api/v1/change-requests/${id}/merge`, { key: ws.write });
      expect(merged.status).toBe(200);
    };
    const fields = async () => (await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.fields;

    const created = await propose({ operation: "create", slug: "venue", name: "Venue", type: "text" });
    expect(created.status).toBe(201);
    expect(created.body.operations[0].operation).toBe("base_add_field");
    await approveAndMerge(created.body.id);
    const venue = (await fields()).find((f: { slug: string }) => f.slug === "venue");
    expect(venue).toBeDefined();

    const updated = await propose({ operation: "update", fieldId: venue.id, patch: { name: "Published in", required: true } });
    expect(updated.body.operations[0].operation).toBe("base_update_field");
    await approveAndMerge(updated.body.id);
    expect((await fields()).find((f: { id: string }) => f.id === venue.id)).toMatchObject({ name: "Published in", required: true });

    const all = await fields();
    const reordered = await propose({ operation: "reorder", fieldIds: [...all].reverse().map((f: { id: string }) => f.id) });
    await approveAndMerge(reordered.body.id);
    expect((await fields()).map((f: { slug: string }) => f.slug)).toEqual(["venue", "status", "year", "title"]);

    const removed = await propose({ operation: "delete", fieldId: venue.id });
    expect(removed.body.operations[0].operation).toBe("base_delete_field");
    await approveAndMerge(removed.body.id);
    expect((await fields()).map((f: { slug: string }) => f.slug)).toEqual(["status", "year", "title"]);

    expect((await propose({ operation: "delete", fieldId: "fld_nope" })).status).toBe(400);
    expect((await propose({ operation: "rename", fieldId: venue.id })).status).toBe(400);
    expect((await propose({ operation: "reorder", fieldIds: ["title"] })).status).toBe(400);
  });

  test("renaming a choice (the same id, another name) renames it in the records that hold it; a dropped choice's values stay", async () => {
    await server.call("POST", "/api/v1/bases/papers/fields", {
      key: ws.write,
      body: { slug: "tags", name: "Tags", type: "multiselect", options: { choices: [{ name: "ml" }, { name: "db" }, { name: "os" }] } },
    });
    const created = await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", {
      key: ws.write,
      body: { records: [{ title: "A", status: "draft", tags: ["ml", "os"] }, { title: "B", status: "published", tags: ["db"] }, { title: "C" }] },
    });
    const [a, b, c] = created.body.operations.map((op: { mergedRecordId: string }) => op.mergedRecordId);
    const fields = (await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.fields;
    const fieldId = (slug: string) => fields.find((f: { slug: string }) => f.slug === slug).id;
    const update = (slug: string, choices: unknown[]) =>
      server.call("POST", "/api/v1/bases/papers/fields/change-requests", { key: ws.write, body: { operation: "update", fieldId: fieldId(slug), patch: { options: { choices } }, autoMerge: true } });
    expect((await update("status", [{ id: "draft", name: "Draft" }, { id: "published", name: "published" }])).body.status).toBe("merged");
    expect((await update("tags", [{ id: "ml", name: "machine learning" }, { id: "db", name: "db" }])).body.status).toBe("merged");
    const fieldsOf = async (id: string) => (await server.call("GET", `/api/v1/records/${id}`, { key: ws.read })).body.fields;
    expect(await fieldsOf(a)).toMatchObject({ status: "Draft", tags: ["machine learning", "os"] });
    expect(await fieldsOf(b)).toMatchObject({ status: "published", tags: ["db"] });
    expect(await fieldsOf(c)).toMatchObject({ status: null, tags: null });
    const drafts = await server.call("GET", "/api/v1/records?baseId=papers&filters[0][fieldSlug]=status&filters[0][operator]=eq&filters[0][value]=Draft", { key: ws.read });
    expect(drafts.body.records.map((record: { id: string }) => record.id)).toEqual([a]);
  });
});
