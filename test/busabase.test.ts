import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { freshPapersWorkspace, type TestServer, type Workspace } from "./helpers";

/** The wire forms Busabase's CLI and SDK send and expect (contract sections 6, 7 and 12). */
let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshPapersWorkspace()));
afterEach(() => server.stop());

const create = async (fields: Record<string, unknown>) => (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields } })).body;

describe("records", () => {
  test("bulk items may be bare maps; an item whose only key is fields is the wrapped form", async () => {
    const reply = await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", {
      key: ws.propose,
      body: { records: [{ title: "Bare", year: 2020 }, { fields: { title: "Wrapped" } }] },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.operations.map((op: { headCommit: { payload: unknown } }) => op.headCommit.payload)).toEqual([{ title: "Bare", year: 2020 }, { title: "Wrapped" }]);
  });

  test("sort in object form: sort[fieldSlug] and sort[direction]", async () => {
    for (const year of [2019, 2021, 2020]) await create({ title: `p${year}`, year });
    const years = async (query: string) => (await server.call("GET", `/api/v1/records?baseId=papers&${query}`, { key: ws.read })).body.records.map((r: { fields: { year: number } }) => r.fields.year);
    expect(await years("sort[fieldSlug]=year&sort[direction]=desc")).toEqual([2021, 2020, 2019]);
    expect(await years("sort[fieldSlug]=year&sort[direction]=asc")).toEqual([2019, 2020, 2021]);
    expect(await years("sort[fieldSlug]=year")).toEqual([2019, 2020, 2021]);
    expect((await server.call("GET", "/api/v1/records?baseId=papers&sort[fieldSlug]=year&sort[direction]=up", { key: ws.read })).status).toBe(400);
  });

  test("Busabase's filter operators: equals in any case, contains, is_empty and not_empty with '-' as empty, is_true, and is_false matching an unset checkbox", async () => {
    await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug: "read", name: "Read" } });
    await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug: "done", name: "Done", type: "checkbox" } });
    await create({ title: "Attention", year: 2017, read: "yes", done: true });
    await create({ title: "attention", year: 2018, read: "-", done: false });
    await create({ title: "BERT", year: 2019 });
    const titles = async (operator: string, fieldSlug: string, value?: string) => {
      const query = `filters[0][fieldSlug]=${fieldSlug}&filters[0][operator]=${operator}${value === undefined ? "" : `&filters[0][value]=${encodeURIComponent(value)}`}&sort=year`;
      const listed = await server.call("GET", `/api/v1/records?baseId=papers&${query}`, { key: ws.read });
      expect(listed.status).toBe(200);
      const counted = await server.call("GET", `/api/v1/records/count?baseId=papers&${query}`, { key: ws.read });
      expect(counted.body.total).toBe(listed.body.records.length);
      return listed.body.records.map((record: { fields: { title: string } }) => record.fields.title);
    };
    expect(await titles("equals", "title", "ATTENTION")).toEqual(["Attention", "attention"]);
    expect(await titles("equals", "year", "2018")).toEqual(["attention"]);
    expect(await titles("contains", "title", "ert")).toEqual(["BERT"]);
    expect(await titles("is_empty", "read")).toEqual(["attention", "BERT"]);
    expect(await titles("not_empty", "read")).toEqual(["Attention"]);
    expect(await titles("is_true", "done")).toEqual(["Attention"]);
    expect(await titles("is_false", "done")).toEqual(["attention", "BERT"]);
    const missing = await server.call("GET", "/api/v1/records?baseId=papers&filters[0][fieldSlug]=title&filters[0][operator]=equals", { key: ws.read });
    expect(missing.status).toBe(400);
  });

  test("look-up by field value: records/get (newest, 404 when none) and records/search", async () => {
    const older = await create({ title: "Twin", year: 1 });
    const newer = await create({ title: "Twin", year: 2 });
    const one = await server.call("GET", "/api/v1/records/get?baseId=papers&fieldSlug=title&valueText=Twin", { key: ws.read });
    expect(one.body.id).toBe(newer.id);
    expect((await server.call("GET", "/api/v1/records/get?baseId=papers&fieldSlug=year&valueText=1", { key: ws.read })).body.id).toBe(older.id);
    expect((await server.call("GET", "/api/v1/records/get?baseId=papers&fieldSlug=title&valueText=None", { key: ws.read })).status).toBe(404);
    const found = await server.call("GET", "/api/v1/records/search?baseId=papers&fieldSlug=title&valueText=Twin", { key: ws.read });
    expect(found.body.map((r: { id: string }) => r.id)).toEqual([newer.id, older.id]);
    expect((await server.call("GET", "/api/v1/records/search?baseId=papers&fieldSlug=title&valueText=Twin&limit=1", { key: ws.read })).body).toHaveLength(1);
  });

  test("a batch merge carries the merged record of each item", async () => {
    const proposal = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "Merged" } } })).body;
    await server.call("POST", `/api/v1/change-requests/${proposal.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    const merged = await server.call("POST", "/api/v1/change-requests/merge", { key: ws.write, body: { changeRequestIds: [proposal.id] } });
    expect(merged.body.results[0]).toMatchObject({ ok: true, status: "merged", record: { fields: { title: "Merged" } }, view: null });
    expect(merged.body.results[0].changeRequest.operations[0].deleteMode).toBe("archive");
    const viewProposal = (await server.call("POST", "/api/v1/views/change-requests", { key: ws.propose, body: { operation: "create", baseId: "papers", name: "Drafts", config: { filters: [{ fieldSlug: "status", operator: "equals", value: "draft" }] } } })).body;
    await server.call("POST", `/api/v1/change-requests/${viewProposal.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    const mergedView = await server.call("POST", "/api/v1/change-requests/merge", { key: ws.write, body: { changeRequestIds: [viewProposal.id] } });
    expect(mergedView.body.results[0]).toMatchObject({ ok: true, record: null, view: { name: "Drafts", config: { filters: [{ operator: "equals" }] } } });
  });
});

describe("nodes", () => {
  test("GET /nodes answers the whole tree (depth 5 by default), with children on every node", async () => {
    const operations = [
      { kind: "create", ref: "a", nodeType: "folder", slug: "a", name: "A" },
      { kind: "create", ref: "b", parentNodeRef: "a", nodeType: "folder", slug: "b", name: "B" },
      { kind: "create", parentNodeRef: "b", nodeType: "folder", slug: "c", name: "C" },
    ];
    await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations } });
    const tree = (await server.call("GET", "/api/v1/nodes", { key: ws.read })).body;
    const a = tree.find((n: { slug: string }) => n.slug === "a");
    expect(a.children[0].slug).toBe("b");
    expect(a.children[0].children[0]).toMatchObject({ slug: "c", children: [], hasChildren: false });
    const shallow = (await server.call("GET", "/api/v1/nodes?depth=1", { key: ws.read })).body.find((n: { slug: string }) => n.slug === "a");
    expect(shallow.children[0]).toMatchObject({ slug: "b", children: [], hasChildren: true });
  });

  test("GET /nodes with types[] answers a flat list of every node of those types, however deep, without children", async () => {
    const operations = [
      { kind: "create", ref: "a", nodeType: "folder", slug: "a", name: "A" },
      { kind: "create", ref: "b", parentNodeRef: "a", nodeType: "folder", slug: "b", name: "B" },
      { kind: "create", parentNodeRef: "b", nodeType: "base", slug: "deep", name: "Deep" },
    ];
    await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations } });
    const list = async (query: string) => (await server.call("GET", `/api/v1/nodes?${query}`, { key: ws.read })).body;
    const folders = await list("types[0]=folder");
    expect(folders.map((node: { slug: string }) => node.slug).sort()).toEqual(["a", "b"]);
    expect(folders.every((node: { children: unknown[]; hasChildren: boolean }) => node.children.length === 0 && !node.hasChildren)).toBe(true);
    expect((await list("types[0]=base&types[1]=doc")).map((node: { slug: string }) => node.slug).sort()).toEqual(["deep", "papers"]);
    expect(await list("types=doc")).toEqual([]);
    expect((await server.call("GET", "/api/v1/nodes?types[0]=table", { key: ws.read })).status).toBe(400);
  });

  test("GET /nodes/{id} is Busabase's typed detail too: type, node, a folder's children; another ?type is not found", async () => {
    const operations = [
      { kind: "create", ref: "a", nodeType: "folder", slug: "a", name: "A" },
      { kind: "create", parentNodeRef: "a", nodeType: "folder", slug: "b", name: "B" },
    ];
    await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations } });
    const folder = (await server.call("GET", "/api/v1/nodes/a?type=folder", { key: ws.read })).body;
    expect(folder).toMatchObject({ type: "folder", node: { slug: "a", type: "folder" }, children: [{ slug: "b" }] });
    expect((await server.call("GET", "/api/v1/nodes/papers", { key: ws.read })).body).toMatchObject({ type: "base", node: { slug: "papers" } });
    expect((await server.call("GET", "/api/v1/nodes/a?type=doc", { key: ws.read })).status).toBe(404);
  });

  test("GET /nodes/search finds active nodes by name or slug, with their path; the word search is no node", async () => {
    await server.call("POST", "/api/v1/nodes/change-requests", {
      key: ws.write,
      body: { operations: [{ kind: "create", ref: "r", nodeType: "folder", slug: "reading", name: "Reading list" }, { kind: "create", parentNodeRef: "r", nodeType: "folder", slug: "deep-learning", name: "Deep Learning" }] },
    });
    const hits = (await server.call("GET", "/api/v1/nodes/search?query=LEARN", { key: ws.read })).body;
    expect(hits).toEqual([expect.objectContaining({ slug: "deep-learning", name: "Deep Learning", type: "folder", path: "reading/deep-learning" })]);
    expect((await server.call("GET", "/api/v1/nodes/search?query=pap", { key: ws.read })).body.map((h: { path: string }) => h.path)).toEqual(["papers"]);
    expect((await server.call("GET", "/api/v1/nodes/search?query=e&limit=51", { key: ws.read })).status).toBe(400);
  });
});

describe("Busabase's command-line login (section 12)", () => {
  test("device code, token polling, then finalize with the access token as Bearer", async () => {
    const code = await server.call("POST", "/api/auth/device/code", { body: { client_id: "busabase-cli" } });
    expect(code.status).toBe(200);
    expect(code.body).toMatchObject({ verification_uri: "http://basalt.test/admin/device", expires_in: 900, interval: 5 });
    expect(code.body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    const token = (deviceCode: string) => server.call("POST", "/api/auth/device/token", { body: { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: deviceCode, client_id: "busabase-cli" } });
    server.clock.advance(5000);
    const pending = await token(code.body.device_code);
    expect(pending.status).toBe(400);
    expect(pending.body.error).toBe("authorization_pending");

    const session = await server.signIn("ada@example.com");
    await server.call("POST", "/api/v1/device/approve", { session, body: { userCode: code.body.user_code, name: "busabase", level: "read" } });
    const granted = await token(code.body.device_code);
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ token_type: "Bearer" });
    expect(granted.body.expires_in).toBeGreaterThan(0);
    expect((await server.call("GET", "/api/v1/auth", { key: granted.body.access_token })).status).toBe(401);

    const withoutToken = await server.call("POST", "/api/v1/device/finalize", { body: { deviceCode: code.body.device_code } });
    expect(withoutToken.status).toBe(400);
    const finalized = await server.call("POST", "/api/v1/device/finalize", { key: granted.body.access_token, body: { deviceCode: code.body.device_code } });
    expect(finalized.status).toBe(200);
    expect(finalized.body).toMatchObject({ credentialType: "api_key" });
    expect((await server.call("GET", "/api/v1/auth", { key: finalized.body.apiKey })).body.credential.name).toBe("busabase");
    expect((await token(code.body.device_code)).body.error).toBe("invalid_grant");
  });
});

describe("object shapes Busabase's schemas require", () => {
  test("records carry base, parentRecordId and parentCommitId; commits a string message; user references an image", async () => {
    const record = await create({ title: "Shaped" });
    expect(record).toMatchObject({ parentRecordId: null, parentCommitId: null, base: { slug: "papers", fields: expect.any(Array) } });
    expect(record.headCommit.message).toBe("");
    expect(record.headCommit.authorUser).toEqual({ id: ws.owner.id, name: "Ada", email: "ada@example.com", image: null });
    const updated = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { year: 1 } } })).body;
    expect(updated.parentCommitId).toBe(record.headCommitId);
    const listed = (await server.call("GET", "/api/v1/records?baseId=papers", { key: ws.read })).body.records[0];
    expect(listed).toMatchObject({ id: record.id, parentCommitId: record.headCommitId, base: { slug: "papers" } });
    const deletion = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.propose, body: { operation: "delete" } })).body;
    expect(deletion.primaryOperation.deleteMode).toBe("archive");
    expect(deletion.node.children).toEqual([]);
  });
});
