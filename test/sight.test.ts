import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/**
 * Sight on derived values (docs/security.md, docs/visibility.md): a member without a grant on a
 * private folder finds no byte of it through any read, including what is derived from it (a
 * lookup, a linked name, a commit, an event, a form), on every GET route of openapi.json, the
 * stream, MCP and the pages read without a key.
 */
let server: TestServer;
let ws: Workspace;
let bob: { id: string; key: string };
const SECRET = "Confidential-XYZ";
/** Every id of the private folder: none may reach Bob. */
const hidden: Record<string, string> = {};
/** What Bob sees, to fill routes' paths with. */
const seen: Record<string, string> = {};

const call = (method: string, path: string, key: string, body?: unknown) => server.call(method, path, { key, body });
const made = async (method: string, path: string, body: unknown, key = ws.manage) => {
  const reply = await call(method, path, key, body);
  if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${reply.text}`);
  return reply.body;
};

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace());
  const user = await server.user("Bob");
  await made("POST", `/api/v1/spaces/${ws.space.id}/members`, { email: user.email, role: "editor" });
  bob = { id: user.id, key: await server.key(user.id, "write") };
  const papers = await createBase(server, ws.write);
  const tree = await made("POST", "/api/v1/nodes/change-requests", {
    operations: [
      { kind: "create", ref: "f", nodeType: "folder", slug: "secret", name: `${SECRET} folder` },
      { kind: "create", parentNodeRef: "f", nodeType: "base", slug: "salaries", name: `${SECRET} salaries`, fields: [{ slug: "name", name: `${SECRET} name` }] },
      // Made before the visible one of the same slug, so it comes first by id.
      { kind: "create", parentNodeRef: "f", nodeType: "doc", slug: "notes", name: `${SECRET} notes` },
    ],
  });
  hidden.folder = tree.operations[0].nodeId;
  hidden.salariesNode = tree.operations[1].nodeId;
  hidden.privateNotes = tree.operations[2].nodeId;
  const salaries = await made("GET", "/api/v1/bases/salaries", undefined);
  hidden.salaries = salaries.id;
  hidden.salariesField = salaries.fields[0].id;
  hidden.salary = (await made("POST", "/api/v1/bases/salaries/change-requests", { fields: { name: SECRET } })).id;
  hidden.plans = (await made("POST", "/api/v1/docs", { parentNodeId: hidden.folder, slug: "plans", name: "Plans", body: `# ${SECRET}\n` })).node.id;
  hidden.changeRequest = (await made("POST", `/api/v1/records/${hidden.salary}/change-requests`, { operation: "update", fields: { name: `${SECRET} renamed` }, autoMerge: false })).id;
  await made("POST", "/api/v1/views/change-requests", { operation: "create", baseId: "salaries", name: `${SECRET} view`, type: "table" });
  hidden.view = (await made("GET", "/api/v1/bases/salaries/views", undefined))[0].id;

  // A visible base linking into the private one, with a lookup of its values.
  const field = (body: Record<string, unknown>) => made("POST", "/api/v1/bases/papers/fields/change-requests", { operation: "create", ...body });
  await field({ slug: "payee", name: "Payee", type: "relation", options: { targetBaseSlug: "salaries" } });
  await field({ slug: "payee_name", name: "Payee name", type: "lookup", options: { lookup: { relationFieldSlug: "payee", targetFieldSlug: "name" } } });
  // A visible base made with a link into the private one among its fields: its commit holds the definition.
  await made("POST", "/api/v1/bases", { slug: "ledger", name: "Ledger", fields: [{ slug: "entry", name: "Entry", type: "text" }, { slug: "paid_to", name: "Paid to", type: "relation", options: { targetBaseId: hidden.salaries } }] });
  seen.papers = papers.id;
  seen.papersNode = papers.nodeId;
  seen.paper = (await made("POST", "/api/v1/bases/papers/change-requests", { fields: { title: "Linked paper", payee: [hidden.salary] } })).id;
  seen.pending = (await made("POST", `/api/v1/records/${seen.paper}/change-requests`, { operation: "update", fields: { title: "Renamed paper", payee: [hidden.salary] }, autoMerge: false }, ws.write)).id;
  await made("POST", "/api/v1/views/change-requests", { operation: "create", baseId: "papers", name: "All", type: "table" });
  seen.view = (await made("GET", "/api/v1/bases/papers/views", undefined))[0].id;
  seen.notes = (await made("POST", "/api/v1/docs", { slug: "notes", name: "Open notes", body: "open" })).node.id;
  const formNodes = await made("POST", "/api/v1/nodes/change-requests", { operations: [{ kind: "create", nodeType: "form", slug: "signup", name: "Signup" }] });
  seen.form = formNodes.operations[0].nodeId;
  await made("POST", "/api/v1/forms", { nodeId: seen.form, targetBaseId: hidden.salaries, name: "Signup", bindings: [{ inputName: "who", fieldSlug: "name", label: "Who" }] });
  await made("POST", `/api/v1/nodes/${seen.papersNode}/share`, { scope: "public" });
  seen.embed = (await made("POST", "/api/v1/embed-links", { nodeId: seen.papersNode })).url.split("/").at(-1);
  seen.root = (await made("GET", `/api/v1/nodes/${seen.notes}`, undefined)).parentId;

  await made("POST", `/api/v1/nodes/${hidden.folder}/visibility`, { visibility: "private" });
});
afterAll(() => server.stop());

/** Which of the private folder's names, values and ids a text holds. */
const leaksIn = (text: string): string[] => [...(text.toUpperCase().includes(SECRET.toUpperCase()) ? [SECRET] : []), ...Object.entries(hidden).filter(([, id]) => text.includes(id)).map(([name]) => name)];

/** A path of a template, its parameters filled with what Bob sees. */
const PATH_VALUES: Record<string, string[]> = {
  nodeId: ["papersNode", "form", "notes", "root"],
  baseId: ["papers"],
  recordId: ["paper"],
  changeRequestId: ["pending"],
  viewId: ["view"],
  token: ["embed"],
};
const QUERY = () =>
  `?baseId=papers&recordId=${seen.paper}&limit=100&linkedNames=true&query=Conf&sources[0]=records&sources[1]=names&subjectType=record&subjectId=${seen.paper}&fieldSlug=title&valueText=Linked%20paper&startLine=1&endLine=10&include=base,headCommit`;

async function mcpText(key: string, tool: string, args: Record<string, unknown>): Promise<string> {
  const client = new Client({ name: "basalt-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  const result = (await client.callTool({ name: tool, arguments: args })) as { content: { text: string }[] };
  await client.close();
  return result.content.map((part) => part.text).join("\n");
}

async function mcpTexts(key: string): Promise<Record<string, string>> {
  const client = new Client({ name: "basalt-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  const calls: Record<string, Record<string, unknown>> = {
    whoami: {},
    list_tree: {},
    list_bases: {},
    get_base: { base: "papers" },
    list_records: { base: "papers" },
    search: { query: "Conf" },
    grep: { pattern: "Conf" },
    wait_for_events: { after: 0 },
    list_views: { base: "papers" },
    search_records: { base: "papers", fieldSlug: "title", value: "Linked paper" },
    get_record: { recordId: seen.paper },
    get_record_links: { recordId: seen.paper },
    get_change_request: { changeRequestId: seen.pending },
    list_comments: { subjectType: "record", subjectId: seen.paper },
    list_agent_tasks: {},
    read_doc: { doc: "notes" },
  };
  const out: Record<string, string> = {};
  for (const [tool, args] of Object.entries(calls)) {
    const result = (await client.callTool({ name: tool, arguments: args })) as { content: { text: string }[] };
    out[tool] = result.content.map((part) => part.text).join("\n");
  }
  await client.close();
  return out;
}

describe("a member without a grant finds no byte of a private folder", () => {
  test("on every GET route of openapi.json, in MCP and on the pages read without a key", async () => {
    const document = (await call("GET", "/api/v1/openapi.json", ws.read)).body as { paths: Record<string, Record<string, unknown>> };
    const found: Record<string, string[]> = {};
    let walked = 0;
    for (const [template, operations] of Object.entries(document.paths)) {
      if (!("get" in operations) || template.endsWith("/events/stream")) continue;
      const names = [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const rounds = Math.max(1, ...names.map((name) => PATH_VALUES[name]?.length ?? 1));
      const choices = Array.from({ length: rounds }, (_, i) => Object.fromEntries(names.map((name) => [name, seen[PATH_VALUES[name]?.[i] ?? PATH_VALUES[name]?.[0] ?? "root"] ?? "unknown"])));
      for (const values of choices) {
        const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? "unknown")).replace("/*", "/README.md");
        for (const reply of [await call("GET", path + QUERY(), bob.key), await server.call("GET", path + QUERY(), {})]) {
          walked++;
          const leaks = leaksIn(reply.text);
          if (leaks.length > 0) found[`${path} (${reply.status})`] = leaks;
        }
      }
    }
    // The pages outside the document: an embed link's page.
    const page = await fetch(`${server.url}/embed/${seen.embed}`);
    expect(page.status).toBe(200);
    if (leaksIn(await page.text()).length > 0) found["/embed page"] = leaksIn(await (await fetch(`${server.url}/embed/${seen.embed}`)).text());
    for (const [tool, text] of Object.entries(await mcpTexts(bob.key))) {
      const leaks = leaksIn(text);
      if (leaks.length > 0) found[`mcp ${tool}`] = leaks;
    }
    expect(walked).toBeGreaterThan(120);
    expect(found).toEqual({});
  });

  test("a visible node answers by its slug though a private node shares it", async () => {
    const reply = await call("GET", "/api/v1/nodes/notes", bob.key);
    expect([reply.status, reply.body.id]).toEqual([200, seen.notes]);
    expect((await call("GET", "/api/v1/docs/notes/lines", bob.key)).text).toContain("open");
    expect(await mcpText(bob.key, "read_doc", { doc: "notes" })).toContain("open");
    // The manager, who sees both, still reads the first by id, as before.
    expect((await call("GET", "/api/v1/nodes/notes", ws.read)).body.id).toBe(hidden.privateNotes);
  });

  test("a slug a private node shares names the visible node in a query and a body too", async () => {
    const papers = await made("GET", "/api/v1/bases/papers", undefined, bob.key);
    const search = await call("GET", `/api/v1/records/search?baseId=salaries&fieldSlug=title&valueText=Linked`, bob.key);
    // No visible base holds "salaries": the hidden one answers as none does.
    expect(search.status).toBe(404);
    const renamed = await call("POST", "/api/v1/nodes/change-requests", bob.key, { operations: [{ kind: "rename", nodeId: "notes", name: "Open notes, renamed" }] });
    expect(renamed.status).toBe(201);
    expect(renamed.body.operations[0].nodeId).toBe(seen.notes);
    expect((await call("GET", `/api/v1/nodes/${hidden.privateNotes}`, ws.read)).body.name).toBe(`${SECRET} notes`);
    await made("POST", "/api/v1/nodes/change-requests", { operations: [{ kind: "create", nodeType: "base", slug: "salaries", name: "Open salaries", fields: [{ slug: "title", name: "Title" }] }] });
    const found = await call("GET", `/api/v1/records/search?baseId=salaries&fieldSlug=title&valueText=Linked`, bob.key);
    expect([found.status, found.body]).toEqual([200, []]);
    expect(papers.id).toBe(seen.papers);
  });

  test("a form whose base is private is not there, and takes no keyed submission", async () => {
    expect((await call("GET", `/api/v1/forms/${seen.form}`, bob.key)).status).toBe(404);
    const before = (await call("GET", "/api/v1/change-requests?limit=100", ws.read)).body.changeRequests.length;
    const submitted = await call("POST", `/api/v1/forms/${seen.form}/submit`, bob.key, { values: { who: "Bob" } });
    expect(submitted.status).toBe(404);
    expect((await call("GET", "/api/v1/change-requests?limit=100", ws.read)).body.changeRequests.length).toBe(before);
  });
});

describe("a hidden thing answers exactly as one that does not exist", () => {
  /** For each kind a path names: a hidden one of Bob's space, and one that exists nowhere. */
  const PAIRS = (): Record<string, [string, string][]> => ({
    nodeId: [[hidden.privateNotes, "nod_01ZZZZZZZZZZZZZZZZ"], [hidden.folder, "nod_01YYYYYYYYYYYYYYYY"]],
    // By id: a later test makes a visible base of the hidden one's slug.
    baseId: [[hidden.salaries, "bse_01ZZZZZZZZZZZZZZZZ"], [hidden.salariesNode, "nod_01XXXXXXXXXXXXXXXX"]],
    recordId: [[hidden.salary, "rec_01ZZZZZZZZZZZZZZZZ"]],
    changeRequestId: [[hidden.changeRequest, "crq_01ZZZZZZZZZZZZZZZZ"]],
    viewId: [[hidden.view, "viw_01ZZZZZZZZZZZZZZZZ"]],
  });
  const anonymous = (text: string, ref: string) => text.replaceAll(ref, "REF").replaceAll(encodeURIComponent(ref), "REF");

  test("every route of openapi.json naming a node, base, record, view or change request in its path, with every method", async () => {
    const document = (await call("GET", "/api/v1/openapi.json", ws.read)).body as { paths: Record<string, Record<string, unknown>> };
    const differ: Record<string, [string, string]> = {};
    let compared = 0;
    for (const [template, operations] of Object.entries(document.paths)) {
      const names = [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      if (names.length !== 1 || !(names[0] in PAIRS()) || template.endsWith("/events/stream")) continue;
      for (const method of Object.keys(operations).filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))) {
        for (const [secret, none] of PAIRS()[names[0]]) {
          const ask = (ref: string) => call(method.toUpperCase(), template.replace(/\{\w+\}/, encodeURIComponent(ref)).replace("/*", "/README.md"), bob.key, method === "get" ? undefined : {});
          const [a, b] = [await ask(secret), await ask(none)];
          compared++;
          const [one, other] = [`${a.status} ${anonymous(a.text, secret)}`, `${b.status} ${anonymous(b.text, none)}`];
          if (one !== other) differ[`${method.toUpperCase()} ${template} (${secret})`] = [one.slice(0, 160), other.slice(0, 160)];
        }
      }
    }
    expect(compared).toBeGreaterThan(60);
    expect(differ).toEqual({});
  });

  test("a field, a formula, a conversion or a grep naming a hidden base, or a link into one, is refused as one naming nothing", async () => {
    const same = async (label: string, ask: (ref: string) => Promise<{ status: number; text: string }>, secret: string, none: string) => {
      const [a, b] = [await ask(secret), await ask(none)];
      expect([label, a.status, anonymous(a.text, secret)]).toEqual([label, b.status, anonymous(b.text, none)]);
      expect(leaksIn(anonymous(a.text, secret))).toEqual([]);
    };
    const fieldChange = (body: Record<string, unknown>) => call("POST", "/api/v1/bases/papers/fields/change-requests", bob.key, { autoMerge: false, ...body });
    await same("formula", (ref) => call("POST", "/api/v1/bases/papers/formulas/check", bob.key, { expression: `{${ref}}` }), "payee", "nothing");
    await same("relation", (ref) => fieldChange({ operation: "create", slug: "to_secret", name: "To secret", type: "relation", options: { targetBaseSlug: ref } }), hidden.salariesNode, "nod_01ZZZZZZZZZZZZZZZZ");
    await same("relation by id", (ref) => fieldChange({ operation: "create", slug: "to_secret", name: "To secret", type: "relation", options: { targetBaseId: ref } }), hidden.salaries, "bse_01ZZZZZZZZZZZZZZZZ");
    await same("lookup", (ref) => fieldChange({ operation: "create", slug: "peek", name: "Peek", type: "lookup", options: { lookup: { relationFieldSlug: ref, targetFieldSlug: "name" } } }), "payee", "nothing");
    await same("update", (ref) => fieldChange({ operation: "update", fieldId: ref, patch: { name: "Renamed" } }), "payee", "nothing");
    await same("conversion", (ref) => call("POST", "/api/v1/bases/papers/fields/convert/preview", bob.key, { fieldId: ref, newType: "text" }), "payee", "nothing");
    await same("conversion target", (ref) => call("POST", "/api/v1/bases/papers/fields/convert/preview", bob.key, { fieldId: "title", newType: "relation", targetBaseId: ref }), hidden.salaries, "bse_01ZZZZZZZZZZZZZZZZ");
    await same("grep", (ref) => call("POST", "/api/v1/grep", bob.key, { pattern: "x", scope: { records: { baseIds: [ref] } } }), hidden.salaries, "bse_01ZZZZZZZZZZZZZZZZ");
    await same("grep by node", (ref) => call("POST", "/api/v1/grep", bob.key, { pattern: "x", scope: { records: { baseSlugs: [ref] } } }), hidden.salariesNode, "nod_01ZZZZZZZZZZZZZZZZ");
    await same("new base", (ref) => call("POST", "/api/v1/nodes/change-requests", bob.key, { operations: [{ kind: "create", nodeType: "base", slug: "peeking", name: "Peeking", fields: [{ slug: "to", name: "To", type: "relation", options: { targetBaseSlug: ref } }] }] }), hidden.salaries, "bse_01ZZZZZZZZZZZZZZZZ");
  });

  test("a member to whom a node is private neither follows nor pushes to the space: every /sync route refuses, and a pushed move changes nothing", async () => {
    const document = (await call("GET", "/api/v1/openapi.json", ws.read)).body as { paths: Record<string, Record<string, unknown>> };
    const refused: string[] = [];
    for (const [template, operations] of Object.entries(document.paths).filter(([path]) => path.startsWith("/api/v1/sync/"))) {
      for (const method of Object.keys(operations).filter((m) => ["get", "post", "put", "delete"].includes(m))) {
        const reply = await call(method.toUpperCase(), template.replace(/\{\w+\}/g, "x"), bob.key, method === "get" ? undefined : {});
        if (reply.status === 403 && reply.body.reason === "SYNC_NEEDS_WHOLE_SPACE") refused.push(`${method} ${template}`);
        else throw new Error(`${method} ${template}: ${reply.status} ${reply.text}`);
      }
    }
    expect(refused.length).toBeGreaterThanOrEqual(9);
    const root = seen.root;
    const moved = await call("POST", "/api/v1/sync/structure", bob.key, {
      changeRequestId: "crq_01M8JXAAAAAAAAAAB1",
      origin: "ins_0123456789abcdef0123",
      operations: [{ commitId: "cmt_01M8JXAAAAAAAAAAB1", kind: "node_move", targetType: "node", baseId: null, nodeId: null, payload: { nodeId: hidden.salariesNode, parentNodeId: root } }],
    });
    expect([moved.status, moved.body.reason]).toEqual([403, "SYNC_NEEDS_WHOLE_SPACE"]);
    expect((await call("GET", `/api/v1/nodes/${hidden.salariesNode}`, ws.read)).body.parentId).toBe(hidden.folder);
  });

  test("the base a member's own change answers with shows no link into a hidden base", async () => {
    const field = await call("POST", "/api/v1/bases/papers/fields", bob.key, { slug: "note", name: "Note", type: "text" });
    const patched = await call("PATCH", "/api/v1/bases/papers", bob.key, { description: "Papers we read" });
    for (const reply of [field, patched]) {
      expect(reply.status).toBe(200);
      expect(reply.body.fields.map((one: { slug: string }) => one.slug)).not.toContain("payee");
      expect(leaksIn(reply.text)).toEqual([]);
    }
  });
});

describe("a view shows a member no field hidden from them", () => {
  test("its configuration names no link into a hidden base (nor its lookups), on every route that produces a view", async () => {
    // Links, lookups and formulas reading them are never filtered or sorted by: a view names a hidden one only in what it shows.
    const config = {
      filters: [{ fieldSlug: "title", operator: "isNotEmpty" }],
      visibleFieldSlugs: ["title", "payee", "payee_name"],
      fieldWidths: { title: 200, payee: 120 },
      coverFieldSlug: "payee_name",
    };
    const proposed = await made("POST", "/api/v1/views/change-requests", { operation: "create", baseId: "papers", name: "Paid papers", type: "gallery", config });
    const viewId = proposed.id as string;
    const changeRequest = (await made("GET", "/api/v1/change-requests?limit=1", undefined)).changeRequests[0].id as string;
    const update = await made("POST", "/api/v1/views/change-requests", { operation: "update", viewId, config, autoMerge: false });
    // The owner sees what they saved.
    expect((await made("GET", `/api/v1/views/${viewId}`, undefined)).config.visibleFieldSlugs).toEqual(["title", "payee", "payee_name"]);
    const client = new Client({ name: "basalt-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${bob.key}` } } }));
    const listed = ((await client.callTool({ name: "list_views", arguments: { base: "papers" } })) as { content: { text: string }[] }).content[0].text;
    await client.close();
    const answers = [
      await call("GET", "/api/v1/bases/papers/views", bob.key),
      await call("GET", `/api/v1/views/${viewId}`, bob.key),
      await call("GET", `/api/v1/change-requests/${changeRequest}`, bob.key),
      await call("GET", `/api/v1/change-requests/${update.id}`, bob.key),
      await call("GET", "/api/v1/bases/papers", bob.key),
    ];
    for (const reply of answers) expect(reply.status).toBe(200);
    const texts = [...answers.map((reply) => reply.text), listed];
    expect(texts.filter((text) => text.includes("payee"))).toEqual([]);
    expect(answers[1].body.config).toEqual({ filters: [{ fieldSlug: "title", fieldId: expect.any(String), operator: "isNotEmpty" }], sorts: [], visibleFieldSlugs: ["title"], fieldWidths: { title: 200 }, coverFieldSlug: null });
    expect(answers[1].body.missingFieldSlugs).toEqual([]);
    // Listing through the view applies what the owner saved, for the member as for the owner.
    const count = async (key: string) => (await call("GET", `/api/v1/records/count?viewId=${viewId}`, key)).body;
    expect(await count(bob.key)).toEqual(await count(ws.manage));
  });
});

/** A key's open event stream, read as it comes: closed once it has said `marker` (or after 5 s), answering all it said. */
async function openStream(key: string) {
  const controller = new AbortController();
  const response = await fetch(`${server.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${key}` }, signal: controller.signal });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      text += value;
    }
  })();
  for (let waited = 0; !text.includes(": connected") && waited < 5000; waited += 5) await Bun.sleep(5);
  return {
    async closeOnceItSays(marker: string): Promise<string> {
      for (let waited = 0; !text.includes(marker) && waited < 5000; waited += 10) await Bun.sleep(10);
      controller.abort();
      await pump;
      return text;
    },
  };
}

describe("what reaches a member as it happens", () => {
  test("a base made in a private folder, its records, and a visible record's values looked up from it never reach a member's open stream", async () => {
    const stream = await openStream(bob.key);
    await made("POST", "/api/v1/nodes/change-requests", { operations: [{ kind: "create", parentNodeId: hidden.folder, nodeType: "base", slug: "bonuses", name: `${SECRET} bonuses`, fields: [{ slug: "amount", name: "Amount" }] }] });
    await made("POST", "/api/v1/bases/bonuses/change-requests", { fields: { amount: SECRET } });
    await made("POST", "/api/v1/bases/papers/change-requests", { fields: { title: "Streamed paper", payee: [hidden.salary] } });
    const memo = (await made("POST", "/api/v1/docs", { parentNodeId: hidden.folder, slug: "memo", name: "Memo", body: "memo" })).node.id as string;
    await made("PUT", `/api/v1/nodes/${memo}/content`, { content: { kind: "doc", body: "memo, again" } });
    const memoChanges = (await made("GET", "/api/v1/change-requests?limit=2", undefined)).changeRequests.map((cr: { id: string }) => cr.id) as string[];
    await made("POST", "/api/v1/bases/papers/change-requests", { fields: { title: "Marker paper" } });
    const text = await stream.closeOnceItSays("Marker paper");
    expect(text).toContain("Streamed paper");
    expect(leaksIn(text)).toEqual([]);
    expect([memo, ...memoChanges].filter((id) => text.includes(id)), text.split("\n\n").filter((frame) => memoChanges.some((id) => frame.includes(id))).join("\n")).toEqual([]);
  });

  test("a base moved into a private folder, by a route or by another process, stops reaching a member's open stream at once", async () => {
    const made2 = await made("POST", "/api/v1/nodes/change-requests", {
      operations: [
        { kind: "create", nodeType: "base", slug: "people", name: "People", fields: [{ slug: "name", name: "Name" }] },
        { kind: "create", nodeType: "base", slug: "payroll", name: "Payroll", fields: [{ slug: "name", name: "Name" }] },
      ],
    });
    const [people, payroll] = made2.operations.map((op: { nodeId: string }) => op.nodeId) as string[];
    const stream = await openStream(bob.key);
    // Both bases are seen while they stand at the root: their events reach the stream.
    await made("POST", "/api/v1/bases/people/change-requests", { fields: { name: "Before the move" } });
    await made("POST", "/api/v1/bases/payroll/change-requests", { fields: { name: "Payroll before" } });
    await made("POST", `/api/v1/nodes/${people}/move`, { parentNodeId: hidden.folder });
    await made("POST", "/api/v1/bases/people/change-requests", { fields: { name: `${SECRET} after the move` }, autoMerge: true });
    // Another process (a command on the data directory) moves the other base in: the stream sees it too.
    const other = new Database(server.dbPath);
    try {
      other.query("UPDATE nodes SET parent_id = ? WHERE id = ?").run(hidden.folder, payroll);
    } finally {
      other.close();
    }
    await made("POST", "/api/v1/bases/payroll/change-requests", { fields: { name: `${SECRET} payroll after` } });
    await made("POST", "/api/v1/bases/papers/change-requests", { fields: { title: "Marker after the moves" } });
    const text = await stream.closeOnceItSays("Marker after the moves");
    expect(text).toContain("Before the move");
    expect(text).toContain("Payroll before");
    expect(leaksIn(text)).toEqual([]);
  });

  test("a grant revoked while an MCP wait_for_events waits narrows what it answers", async () => {
    await made("POST", `/api/v1/nodes/${hidden.folder}/principals`, { principalType: "user", principalId: bob.id, role: "read" });
    const client = new Client({ name: "basalt-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${bob.key}` } } }));
    const waiting = client.callTool({ name: "wait_for_events", arguments: { timeoutSeconds: 20 } }) as Promise<{ content: { text: string }[] }>;
    const hub = server.ctx.eventStream as unknown as { waiting: Map<string, Set<unknown>> };
    for (let waited = 0; hub.waiting.size === 0 && waited < 5000; waited += 5) await Bun.sleep(5);
    await server.call("DELETE", `/api/v1/nodes/${hidden.folder}/principals`, { key: ws.manage, body: { principalType: "user", principalId: bob.id } });
    await made("POST", "/api/v1/bases/salaries/change-requests", { fields: { name: `${SECRET} after the grant` } });
    const answer = (await waiting).content[0].text;
    await client.close();
    expect(JSON.parse(answer).events).toEqual([]);
    expect(leaksIn(answer)).toEqual([]);
  });

  test("the answer to a member's own write, and its event, carry nothing of the private base it links", async () => {
    const reply = await call("POST", "/api/v1/bases/papers/change-requests", bob.key, { fields: { title: "Bob's paper" } });
    expect(reply.status).toBe(201);
    expect(reply.body.fields.title).toBe("Bob's paper");
    expect(leaksIn(reply.text)).toEqual([]);
    const proposed = await call("POST", "/api/v1/bases/papers/change-requests", bob.key, { fields: { title: "Bob's proposal" }, autoMerge: false });
    expect(proposed.body.materialized).toBe(false);
    expect(leaksIn(proposed.text)).toEqual([]);
  });

  test("a link into a hidden base is no field a member writes: refused as a field the base lacks, on every write path", async () => {
    const record = (fields: Record<string, unknown>) => call("POST", "/api/v1/bases/papers/change-requests", bob.key, { fields: { title: "Bob's", ...fields } });
    const attempts = [
      await record({ payee: [hidden.salary] }),
      await record({ payee: ["rec_01ZZZZZZZZZZZZZZZZ"] }),
      await call("POST", `/api/v1/records/${seen.paper}/change-requests`, bob.key, { operation: "update", fields: { payee: [] } }),
      await call("POST", "/api/v1/bases/papers/records/bulk-change-request", bob.key, { records: [{ fields: { payee: [hidden.salary] } }] }),
    ];
    for (const reply of attempts) {
      expect(reply.status).toBe(400);
      expect(reply.body.data.issues[0].message).toBe('"payee" is not a field of this base.');
      expect(reply.body.data.fields).not.toContain("payee");
      expect(leaksIn(reply.text)).toEqual([]);
    }
    // What a manager linked stays linked when a member edits the record's other fields.
    expect((await call("POST", `/api/v1/records/${seen.paper}/change-requests`, bob.key, { operation: "update", fields: { title: "Linked paper, edited" } })).status).toBe(201);
    expect((await call("GET", `/api/v1/records/${seen.paper}`, ws.read)).body.fields.payee).toEqual([hidden.salary]);
  });
});
