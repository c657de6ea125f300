import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createBase, deleteField, freshPapersWorkspace, type TestServer, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeAll(async () => {
  ({ server, ws } = await freshPapersWorkspace());
  const rows = [
    { title: "Attention", year: 2017, status: "published" },
    { title: "BERT", year: 2018, status: "published" },
    { title: "Draft one", year: 2024, status: "draft" },
    { title: "GPT-3", year: 2020, status: "published" },
  ];
  await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.write, body: { records: rows.map((fields) => ({ fields })) } });
});
afterAll(() => server.stop());

const propose = (body: Record<string, unknown>, key = ws.write) => server.call("POST", "/api/v1/views/change-requests", { key, body });
const titles = (records: { headCommit: { payload: { title: string } } }[]) => records.map((record) => record.headCommit.payload.title);
const published = { filters: [{ fieldSlug: "status", operator: "equals", value: "published" }], sorts: [{ fieldSlug: "year", direction: "desc" }] };

describe("saved views", () => {
  test("a write key's view merges at once; the listing, count and numbered page apply it", async () => {
    const reply = await propose({ operation: "create", baseId: "papers", name: "Published, newest", type: "table", config: { ...published, visibleFieldSlugs: ["title", "year"] } });
    expect(reply.status).toBe(201);
    const view = { ...reply.body };
    expect(reply.body).toMatchObject({
      id: expect.stringMatching(/^viw_/),
      slug: "published-newest",
      type: "table",
      status: "active",
      materialized: true,
      missingFieldSlugs: [],
      createdBy: ws.owner.id,
      config: { filters: [{ fieldSlug: "status", operator: "equals", value: "published", fieldId: expect.stringMatching(/^fld_/) }], sorts: [{ fieldSlug: "year", direction: "desc" }], visibleFieldSlugs: ["title", "year"] },
    });
    const listed = (await server.call("GET", "/api/v1/bases/papers/views", { key: ws.read })).body;
    expect(listed.map((v: { id: string }) => v.id)).toEqual([view.id]);
    expect((await server.call("GET", `/api/v1/views/${view.id}`, { key: ws.read })).body).toEqual(listed[0]);

    const page = (await server.call("GET", `/api/v1/records?viewId=${view.id}`, { key: ws.read })).body;
    expect(titles(page.records)).toEqual(["GPT-3", "BERT", "Attention"]);
    const narrowed = (await server.call("GET", `/api/v1/records?baseId=papers&viewId=${view.id}&filters[0][fieldSlug]=year&filters[0][operator]=lt&filters[0][value]=2020&sort=year`, { key: ws.read })).body;
    expect(titles(narrowed.records)).toEqual(["Attention", "BERT"]);
    expect((await server.call("GET", `/api/v1/records/count?baseId=papers&viewId=${view.id}`, { key: ws.read })).body).toEqual({ total: 3 });
    const numbered = (await server.call("GET", `/api/v1/records/page?viewId=${view.id}&page=2&pageSize=2`, { key: ws.read })).body;
    expect({ ...numbered, records: titles(numbered.records) }).toEqual({ records: ["Attention"], total: 3, totalPages: 2, page: 2, pageSize: 2 });
  });

  test("a changeRequest key's view waits for review; its operation names the view once merged", async () => {
    const reply = await propose({ operation: "create", baseId: "papers", name: "Drafts", type: "kanban", config: { groupByFieldSlug: "status" }, message: "a board" }, ws.propose);
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ materialized: false, status: "in_review", operations: [{ operation: "view_create", targetViewId: null, mergedViewId: null }] });
    expect((await server.call("GET", "/api/v1/bases/papers/views", { key: ws.read })).body.map((v: { slug: string }) => v.slug)).not.toContain("drafts");
    await server.call("POST", `/api/v1/change-requests/${reply.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    const merged = (await server.call("POST", `/api/v1/change-requests/${reply.body.id}/merge`, { key: ws.write })).body;
    const views = (await server.call("GET", "/api/v1/bases/papers/views", { key: ws.read })).body;
    const board = views.find((v: { slug: string }) => v.slug === "drafts");
    expect(board).toMatchObject({ type: "kanban", config: { filters: [], sorts: [], groupByFieldSlug: "status" } });
    const cr = (await server.call("GET", `/api/v1/change-requests/${merged.changeRequest?.id ?? reply.body.id}`, { key: ws.read })).body;
    expect(cr).toMatchObject({ status: "merged", mergeSummary: { viewIds: [board.id] }, operations: [{ targetViewId: board.id, mergedViewId: board.id, status: "merged" }] });
  });

  test("update, delete and restore are change requests too; a taken slug is a 409", async () => {
    const view = (await propose({ operation: "create", baseId: "papers", name: "Old ones", config: { filters: [{ fieldSlug: "year", operator: "lt", value: 2019 }] } })).body;
    const updated = (await propose({ operation: "update", viewId: view.id, name: "Before 2019", type: "gallery" })).body;
    expect(updated).toMatchObject({ id: view.id, name: "Before 2019", type: "gallery", slug: "old-ones", config: { filters: [{ fieldSlug: "year", operator: "lt", value: "2019" }] } });
    expect((await propose({ operation: "create", baseId: "papers", name: "Old ones" })).body).toMatchObject({ code: "CONFLICT", data: { reason: "SLUG_TAKEN" } });
    const deleted = (await propose({ operation: "delete", viewId: view.id })).body;
    expect(deleted).toMatchObject({ status: "archived", archivedAt: expect.any(String), materialized: true });
    expect((await server.call("GET", "/api/v1/bases/papers/views?status=archived", { key: ws.read })).body.map((v: { id: string }) => v.id)).toEqual([view.id]);
    expect((await propose({ operation: "update", viewId: view.id, name: "x" })).status).toBe(404);
    expect((await propose({ operation: "restore", viewId: view.id })).body).toMatchObject({ status: "active", archivedAt: null });
  });

  test("a deleted view answers as a missing one on every route that lists through it, until it is restored", async () => {
    const view = (await propose({ operation: "create", baseId: "papers", name: "Gone soon", config: published })).body;
    const routes = [
      `/api/v1/records?viewId=${view.id}`,
      `/api/v1/records/page?viewId=${view.id}&page=1&pageSize=2`,
      `/api/v1/records/count?viewId=${view.id}`,
      `/api/v1/bases/papers/export?viewId=${view.id}&format=json`,
    ];
    for (const path of routes) expect((await server.call("GET", path, { key: ws.read })).status).toBe(200);
    await propose({ operation: "delete", viewId: view.id });
    const missing = (await server.call("GET", `/api/v1/records?viewId=viw_nothere`, { key: ws.read })).body;
    for (const path of routes) {
      const reply = await server.call("GET", path, { key: ws.read });
      expect({ path, status: reply.status, error: reply.body.error }).toEqual({ path, status: 404, error: missing.error.replace("viw_nothere", view.id) });
    }
    await propose({ operation: "restore", viewId: view.id });
    expect((await server.call("GET", `/api/v1/records/count?viewId=${view.id}`, { key: ws.read })).body).toEqual({ total: 3 });
  });

  test("a page through a view follows its configuration from the update that changes it", async () => {
    const view = (await propose({ operation: "create", baseId: "papers", name: "Early", config: { filters: [{ fieldSlug: "year", operator: "lt", value: 2019 }], sorts: [{ fieldSlug: "year", direction: "asc" }] } })).body;
    const page = async () => titles((await server.call("GET", `/api/v1/records?viewId=${view.id}`, { key: ws.read })).body.records);
    expect(await page()).toEqual(["Attention", "BERT"]);
    expect(await page()).toEqual(["Attention", "BERT"]);
    await propose({ operation: "update", viewId: view.id, config: { filters: [{ fieldSlug: "year", operator: "gte", value: 2019 }], sorts: [{ fieldSlug: "year", direction: "desc" }] } });
    expect(await page()).toEqual(["Draft one", "GPT-3"]);
    // A view read for a page is kept until the database changes: a change committed by another connection (a command on the data directory) is seen at once.
    const other = new Database(server.dbPath);
    try {
      const config = { filters: [{ fieldSlug: "year", operator: "lt", value: 2018 }], sorts: [{ fieldSlug: "year", direction: "asc" }] };
      other.query("UPDATE views SET config = ? WHERE id = ?").run(JSON.stringify(config), view.id);
    } finally {
      other.close();
    }
    expect(await page()).toEqual(["Attention"]);
  });

  test("a configuration is checked against the base's fields, naming what is wrong", async () => {
    const refused = async (config: unknown) => {
      const reply = await propose({ operation: "create", baseId: "papers", name: "Bad", config });
      expect(reply.status).toBe(400);
      // A schema's refusal names each problem in data.issues; the domain's, in the sentence.
      const issues = (reply.body.data?.issues ?? []) as { path: string[]; message: string }[];
      return [reply.body.error, ...issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`)].join(" ");
    };
    expect(await refused({ filters: [{ fieldSlug: "colour", operator: "eq", value: "red" }] })).toContain('no field "colour"');
    expect(await refused({ filters: [{ fieldSlug: "year", operator: "around", value: "1" }] })).toContain("config.filters[0].operator");
    expect(await refused({ filters: [{ fieldSlug: "year", operator: "gt", value: "soon" }] })).toContain("must be numbers");
    expect(await refused({ sorts: [{ fieldSlug: "year" }, { fieldSlug: "title" }] })).toContain("sorts");
    expect(await refused({ groupByFieldSlug: "year" })).toContain("number field");
    expect(await refused({ visibleFieldSlugs: ["title", "abstract"] })).toContain('no field "abstract"');
    expect((await server.call("GET", "/api/v1/bases/papers/views", { key: ws.read })).body.map((v: { name: string }) => v.name)).not.toContain("Bad");
  });

  test("a view naming a deleted field keeps working and says which field is gone", async () => {
    await createBase(server, ws.write, "notes", [
      { slug: "title", name: "Title", type: "text" },
      { slug: "stage", name: "Stage", type: "select", options: { choices: [{ name: "a" }, { name: "b" }] } },
    ]);
    for (const [title, stage] of [["one", "a"], ["two", "b"], ["three", "a"]]) await server.call("POST", "/api/v1/bases/notes/change-requests", { key: ws.write, body: { fields: { title, stage } } });
    const view = (await propose({ operation: "create", baseId: "notes", name: "Stage a", config: { filters: [{ fieldSlug: "stage", operator: "eq", value: "a" }], sorts: [{ fieldSlug: "title", direction: "asc" }] } })).body;
    expect(titles((await server.call("GET", `/api/v1/records?viewId=${view.id}`, { key: ws.read })).body.records)).toEqual(["one", "three"]);
    const stage = (await server.call("GET", "/api/v1/bases/notes", { key: ws.read })).body.fields.find((f: { slug: string }) => f.slug === "stage");
    await deleteField(server, ws.write, "notes", stage.id);
    // A new field under the old slug is another field: the view does not start filtering on it.
    await server.call("POST", "/api/v1/bases/notes/fields", { key: ws.write, body: { slug: "stage", name: "Stage", type: "text" } });
    expect((await server.call("GET", `/api/v1/views/${view.id}`, { key: ws.read })).body.missingFieldSlugs).toEqual(["stage"]);
    const page = await server.call("GET", `/api/v1/records?viewId=${view.id}`, { key: ws.read });
    expect(page.status).toBe(200);
    expect(titles(page.body.records)).toEqual(["one", "three", "two"]);
  });

  test("another space's view is not found, and a view of another base is refused", async () => {
    const view = (await propose({ operation: "create", baseId: "papers", name: "Mine" })).body;
    const eve = await server.user("Eve");
    await server.space(eve.id, "Elsewhere");
    const eveKey = await server.key(eve.id, "manage");
    expect((await server.call("GET", `/api/v1/views/${view.id}`, { key: eveKey })).status).toBe(404);
    expect((await server.call("GET", `/api/v1/records?viewId=${view.id}`, { key: eveKey })).status).toBe(404);
    expect((await server.call("POST", "/api/v1/views/change-requests", { key: eveKey, body: { operation: "delete", viewId: view.id } })).status).toBe(404);
    await createBase(server, ws.write, "people", [{ slug: "name", name: "Name", type: "text" }]);
    const wrong = await server.call("GET", `/api/v1/records?baseId=people&viewId=${view.id}`, { key: ws.read });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toContain("another base");
    expect((await server.call("POST", "/api/v1/views/change-requests", { key: ws.read, body: { operation: "create", baseId: "papers", name: "x" } })).status).toBe(403);
  });
});
