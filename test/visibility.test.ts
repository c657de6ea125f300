import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/** Node visibility and grants (docs/visibility.md): a private node, and what is below it, is not there for a member without a grant. */
let server: TestServer;
let ws: Workspace;
let bob: { id: string; key: string; propose: string };
let secret: string;
let salariesRecord: string;
let plans: string;
const SECRET = "Confidential-XYZ";

beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  const user = await server.user("Bob");
  expect((await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { key: ws.manage, body: { email: user.email, role: "editor" } })).status).toBe(201);
  bob = { id: user.id, key: await server.key(user.id, "write"), propose: await server.key(user.id, "changeRequest") };
  await createBase(server, ws.write);
  const made = await server.call("POST", "/api/v1/nodes/change-requests", {
    key: ws.write,
    body: { operations: [{ kind: "create", ref: "f", nodeType: "folder", slug: "secret", name: "Secret" }, { kind: "create", parentNodeRef: "f", nodeType: "base", slug: "salaries", name: "Salaries", fields: [{ slug: "name", name: "Name" }] }] },
  });
  secret = made.body.operations[0].nodeId;
  salariesRecord = (await server.call("POST", "/api/v1/bases/salaries/change-requests", { key: ws.write, body: { fields: { name: SECRET } } })).body.id;
  plans = (await server.call("POST", "/api/v1/docs", { key: ws.write, body: { parentNodeId: secret, slug: "plans", name: "Plans", body: `# ${SECRET}\n` } })).body.node.id;
  await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Open paper" } } });
});
afterEach(() => server.stop());

const setVisibility = (visibility: string | null, node = secret, key = ws.manage) => server.call("POST", `/api/v1/nodes/${node}/visibility`, { key, body: { visibility } });
const grant = (body: Record<string, unknown>, key = ws.manage) => server.call("POST", `/api/v1/nodes/${secret}/principals`, { key, body });

async function mcp(key: string, tool: string, args: Record<string, unknown>): Promise<string> {
  const client = new Client({ name: "basalt-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  const result = (await client.callTool({ name: tool, arguments: args })) as { content: { text: string }[] };
  await client.close();
  return result.content[0].text;
}

/** Every read a member has of the space's content, as the text each answers. */
async function everythingReadBy(key: string): Promise<Record<string, { status: number; text: string }>> {
  const get = async (path: string) => {
    const reply = await server.call("GET", path, { key });
    return { status: reply.status, text: reply.text };
  };
  const post = async (path: string, body: unknown) => {
    const reply = await server.call("POST", path, { key, body });
    return { status: reply.status, text: reply.text };
  };
  return {
    tree: await get("/api/v1/nodes"),
    flat: await get("/api/v1/nodes?types[]=base&types[]=doc"),
    node: await get(`/api/v1/nodes/${secret}`),
    doc: await get(`/api/v1/nodes/${plans}`),
    nodeSearch: await get("/api/v1/nodes/search?query=sal"),
    bases: await get("/api/v1/bases"),
    base: await get("/api/v1/bases/salaries"),
    records: await get("/api/v1/records?baseId=salaries"),
    record: await get(`/api/v1/records/${salariesRecord}`),
    history: await get(`/api/v1/records/${salariesRecord}/history`),
    export: await get("/api/v1/bases/salaries/export?format=csv"),
    search: await get(`/api/v1/search?query=Confidential&sources[0]=records&sources[1]=names`),
    grep: await post("/api/v1/grep", { pattern: "Confidential" }),
    changeRequests: await get("/api/v1/change-requests?limit=100"),
    activity: await get("/api/v1/activity/paged?limit=100"),
    mcpBases: { status: 200, text: await mcp(key, "list_bases", {}) },
    mcpTree: { status: 200, text: await mcp(key, "list_tree", {}) },
    mcpSearch: { status: 200, text: await mcp(key, "search", { query: "Confidential" }) },
    mcpRecords: { status: 200, text: await mcp(key, "list_records", { base: "salaries" }) },
    mcpDoc: { status: 200, text: await mcp(key, "read_doc", { doc: plans }) },
  };
}

describe("node visibility", () => {
  test("a member without a grant sees none of a private node's content, through any read", async () => {
    const before = await everythingReadBy(bob.key);
    expect(before.record.text).toContain(SECRET);
    expect(before.grep.text).toContain(SECRET);

    expect((await setVisibility("private")).body).toEqual({ updated: true });
    const owner = await server.call("GET", `/api/v1/nodes/${secret}`, { key: ws.read });
    expect(owner.body.explicitVisibility).toBe("private");
    expect(owner.text).toContain("salaries");

    const after = await everythingReadBy(bob.key);
    // A refusal may repeat the id it was asked for; nothing answers the content, and no listing the id.
    const named = new Set(["node", "doc", "record", "history", "base", "records", "export", "mcpRecords", "mcpDoc"]);
    for (const [read, { text }] of Object.entries(after)) {
      expect({ read, leaks: text.includes(SECRET) || (!named.has(read) && text.includes(secret)) || (!named.has(read) && text.includes('salaries"')) }).toEqual({ read, leaks: false });
    }
    for (const read of ["node", "doc", "base", "records", "record", "history", "export"]) expect({ read, status: after[read].status }).toEqual({ read, status: 404 });
    expect(after.tree.text).toContain("papers");
    expect(JSON.parse(after.search.text).results).toEqual([]);

    // Nor can it be written to, or built under.
    expect((await server.call("POST", "/api/v1/bases/salaries/change-requests", { key: bob.key, body: { fields: { name: "x" } } })).status).toBe(404);
    expect((await server.call("POST", "/api/v1/docs", { key: bob.key, body: { parentNodeId: secret, slug: "mine", name: "Mine", body: "" } })).status).toBe(404);
  });

  test("a visible base's link to a private base, its lookups and the formulas over them are not there for a member without a grant", async () => {
    const field = (body: Record<string, unknown>) => server.call("POST", "/api/v1/bases/papers/fields/change-requests", { key: ws.write, body: { operation: "create", ...body } });
    expect((await field({ slug: "payee", name: "Payee", type: "relation", options: { targetBaseSlug: "salaries" } })).status).toBe(201);
    expect((await field({ slug: "payee_name", name: "Payee name", type: "lookup", options: { lookup: { relationFieldSlug: "payee", targetFieldSlug: "name" } } })).status).toBe(201);
    expect((await field({ slug: "shout", name: "Shout", type: "formula", options: { formula: { expression: "UPPER({payee_name})" } } })).status).toBe(201);
    const paper = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Linked paper", payee: [salariesRecord] } } })).body.id;
    const reads = (key: string) =>
      Promise.all(
        [`/api/v1/records?baseId=papers&linkedNames=true`, `/api/v1/records/${paper}`, `/api/v1/records/${paper}/links`, `/api/v1/records/${paper}/history`, `/api/v1/records/get?recordId=${paper}`, "/api/v1/bases/papers/export?format=json", "/api/v1/records/page?baseId=papers&linkedNames=true"].map(async (path) => ({ path, text: (await server.call("GET", path, { key })).text })),
      );
    for (const { path, text } of await reads(bob.key)) expect({ path, shows: text.includes(SECRET) || text.includes(salariesRecord) }).toEqual({ path, shows: true });

    await setVisibility("private");
    for (const { path, text } of await reads(bob.key)) expect({ path, leaks: text.includes(SECRET) || text.toUpperCase().includes(SECRET.toUpperCase()) || text.includes(salariesRecord) }).toEqual({ path, leaks: false });
    const record = (await server.call("GET", `/api/v1/records/${paper}`, { key: bob.key })).body;
    expect(Object.keys(record.fields)).toEqual(["title", "year", "status"]);
    // Nor are they fields of the base as the member reads it.
    const fieldsOf = (base: { fields: { slug: string }[] }) => base.fields.map((field) => field.slug);
    expect(fieldsOf((await server.call("GET", "/api/v1/bases/papers", { key: bob.key })).body)).toEqual(["title", "year", "status"]);
    expect(fieldsOf((await server.call("GET", "/api/v1/bases", { key: bob.key })).body.find((base: { slug: string }) => base.slug === "papers"))).toEqual(["title", "year", "status"]);
    expect(await mcp(bob.key, "list_bases", {})).not.toContain("payee");
    const filtered = await server.call("GET", `/api/v1/records?baseId=papers&filters[0][fieldSlug]=payee_name&filters[0][operator]=contains&filters[0][value]=Conf`, { key: bob.key });
    expect(filtered.status).toBe(400);
    expect(await mcp(bob.key, "get_record", { recordId: paper })).not.toContain(salariesRecord);
    // A manager, and the member with a grant, see the link again.
    expect((await server.call("GET", `/api/v1/records/${paper}`, { key: ws.read })).body.fields.payee).toEqual([salariesRecord]);
    await grant({ principalType: "user", principalId: bob.id, role: "read" });
    expect((await server.call("GET", `/api/v1/records/${paper}`, { key: bob.key })).body.fields).toMatchObject({ payee: [salariesRecord], payee_name: [SECRET] });
  });

  test("the live stream leaves out a private base's events for a member without a grant", async () => {
    await setVisibility("private");
    const controller = new AbortController();
    const response = await fetch(`${server.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${bob.key}` }, signal: controller.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    const pump = (async () => {
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) return;
        seen += value;
      }
    })();
    await server.call("POST", "/api/v1/bases/salaries/change-requests", { key: ws.write, body: { fields: { name: `${SECRET} 2` } } });
    await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Second paper" } } });
    for (let waited = 0; !seen.includes("Second paper") && waited < 2000; waited += 10) await Bun.sleep(10);
    controller.abort();
    await pump;
    expect(seen).toContain("Second paper");
    expect(seen).not.toContain(SECRET);
  });

  test("a grant opens the node and what is below it, at most at its level; revoking it closes them again", async () => {
    await setVisibility("private");
    expect((await grant({ principalType: "user", principalId: bob.id, role: "read" })).body).toEqual({ granted: true });
    const listed = await server.call("GET", `/api/v1/nodes/${secret}/principals`, { key: ws.manage });
    expect(listed.body).toEqual([expect.objectContaining({ nodeId: secret, principalType: "user", principalId: bob.id, role: "read", grantedBy: ws.owner.id })]);
    expect((await server.call("GET", `/api/v1/records/${salariesRecord}`, { key: bob.key })).body.fields.name).toBe(SECRET);
    expect((await server.call("GET", "/api/v1/nodes", { key: bob.key })).text).toContain("salaries");
    const refused = await server.call("POST", "/api/v1/bases/salaries/change-requests", { key: bob.key, body: { fields: { name: "raise" } } });
    expect([refused.status, refused.body.reason, refused.body.error]).toEqual([403, "NODE_ACCESS_REQUIRED", "Requires changeRequest access on this node."]);

    // The same grant again changes its level; a grant never raises a key's own level.
    await grant({ principalType: "user", principalId: bob.id, role: "manage" });
    expect((await server.call("GET", `/api/v1/nodes/${secret}/principals`, { key: ws.manage })).body.map((row: { role: string }) => row.role)).toEqual(["manage"]);
    expect((await server.call("POST", "/api/v1/bases/salaries/change-requests", { key: bob.propose, body: { fields: { name: "raise" }, autoMerge: false } })).status).toBe(201);

    expect((await server.call("DELETE", `/api/v1/nodes/${secret}/principals`, { key: ws.manage, body: { principalType: "user", principalId: bob.id } })).body).toEqual({ removed: true });
    expect((await server.call("GET", `/api/v1/records/${salariesRecord}`, { key: bob.key })).status).toBe(404);
    expect((await server.call("DELETE", `/api/v1/nodes/${secret}/principals`, { key: ws.manage, body: { principalType: "user", principalId: bob.id } })).status).toBe(404);

    // A space grant opens it to every member.
    await grant({ principalType: "space", principalId: ws.space.slug, role: "read" });
    expect((await server.call("GET", `/api/v1/nodes/${plans}`, { key: bob.key })).body.body).toContain(SECRET);
  });

  test("a grant on a node below a private folder shows that node, hung from what the member sees", async () => {
    await setVisibility("private");
    await server.call("POST", `/api/v1/nodes/${plans}/principals`, { key: ws.manage, body: { principalType: "user", principalId: bob.id, role: "read" } });
    const tree = (await server.call("GET", "/api/v1/nodes", { key: bob.key })).body as { slug: string; parentId: string }[];
    expect(tree.map((node) => node.slug).sort()).toEqual(["papers", "plans"]);
    expect(tree.find((node) => node.slug === "plans")!.parentId).not.toBe(secret);
    expect((await server.call("GET", "/api/v1/bases/salaries", { key: bob.key })).status).toBe(404);
  });

  test("a file used only inside a private folder is not there for a member without a grant; one also used where they see is", async () => {
    const upload = async (name: string) => (await server.call("POST", `/api/v1/assets?fileName=${name}`, { key: ws.write, rawBody: SECRET, headers: { "content-type": "text/plain" } })).body.id as string;
    const inside = await upload("inside.txt");
    const both = await upload("both.txt");
    await server.call("POST", "/api/v1/files", { key: ws.write, body: { parentNodeId: secret, slug: "inside", name: "Inside", assetId: inside } });
    await server.call("POST", "/api/v1/files", { key: ws.write, body: { parentNodeId: secret, slug: "both-in", name: "Both", assetId: both } });
    await server.call("POST", "/api/v1/files", { key: ws.write, body: { slug: "both-out", name: "Both", assetId: both } });
    expect((await server.call("GET", `/api/v1/assets/${inside}`, { key: bob.key })).status).toBe(200);
    await setVisibility("private");
    for (const path of [`/api/v1/assets/${inside}`, `/api/v1/assets/${inside}/content`, `/api/v1/assets/${inside}/text/lines`]) expect({ path, status: (await server.call("GET", path, { key: bob.key })).status }).toEqual({ path, status: 404 });
    expect((await server.call("GET", "/api/v1/assets", { key: bob.key })).body.map((asset: { id: string }) => asset.id)).toEqual([both]);
    expect((await server.call("GET", `/api/v1/assets/${both}`, { key: bob.key })).status).toBe(200);
    expect((await server.call("GET", `/api/v1/assets/${inside}`, { key: ws.read })).status).toBe(200);
  });

  test("only a manager sets visibility and grants; the root cannot be private; null inherits again", async () => {
    expect((await setVisibility("private", secret, ws.write)).status).toBe(403);
    expect((await grant({ principalType: "user", principalId: bob.id, role: "read" }, ws.write)).status).toBe(403);
    const root = (await server.call("GET", `/api/v1/nodes/${secret}`, { key: ws.read })).body.parentId;
    const refused = await setVisibility("private", root);
    expect([refused.status, refused.body.error]).toEqual([400, "The workspace root cannot be made private."]);
    expect((await grant({ principalType: "user", principalId: "usr_nobody", role: "read" })).status).toBe(400);
    expect((await grant({ principalType: "team", principalId: "x", role: "read" })).status).toBe(400);
    expect((await setVisibility("sometimes")).status).toBe(400);

    await setVisibility("private");
    expect((await server.call("GET", "/api/v1/bases/salaries", { key: bob.key })).status).toBe(404);
    expect((await server.call("GET", "/api/v1/bases/salaries", { key: ws.read })).status).toBe(200);
    await setVisibility(null);
    expect((await server.call("GET", "/api/v1/bases/salaries", { key: bob.key })).status).toBe(200);
    expect((await server.call("GET", `/api/v1/nodes/${secret}`, { key: ws.read })).body.explicitVisibility).toBeNull();
  });

  test("a public share of a folder leaves out the private node below it", async () => {
    const parent = (await server.call("GET", `/api/v1/nodes/${secret}`, { key: ws.read })).body.parentId;
    const made = await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "folder", slug: "press", name: "Press" }] } });
    const press = made.body.operations[0].nodeId;
    await server.call("POST", `/api/v1/nodes/${secret}/move`, { key: ws.write, body: { parentNodeId: press } });
    await setVisibility("private");
    await server.call("POST", `/api/v1/nodes/${press}/share`, { key: ws.manage, body: { scope: "public" } });
    const visit = await fetch(`${server.url}/api/v1/shared/${press}`);
    expect(visit.status).toBe(200);
    expect(await visit.text()).not.toContain("secret");
    expect((await fetch(`${server.url}/api/v1/shared/${plans}`)).status).toBe(404);
    expect(parent).toBeTruthy();
  });
});
