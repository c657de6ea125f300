import { afterEach, beforeEach, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { freshPapersWorkspace, type TestServer, type Workspace } from "./helpers";

/** The MCP server at /mcp, driven by the SDK's own client over HTTP (section 12). */
let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshPapersWorkspace()));
afterEach(() => server.stop());

async function connect(key: string, space?: string): Promise<Client> {
  const client = new Client({ name: "basalt-test", version: "1.0.0" });
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (space) headers["x-basalt-space"] = space;
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers } }));
  return client;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0].text;

test("lists the core loop's tools", async () => {
  const client = await connect(ws.read);
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  for (const name of ["whoami", "list_tree", "get_base", "list_records", "search_records", "get_record", "get_record_links", "propose_record_create", "propose_record_update", "propose_record_delete", "get_change_request", "review_change_request", "merge_change_request", "list_agent_tasks", "revise_operation", "search", "grep", "list_views", "propose_view_change", "list_comments", "add_comment"]) {
    expect(names).toContain(name);
  }
  await client.close();
});

test("reads the tree and a base's records", async () => {
  await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Attention" } } });
  const client = await connect(ws.read);
  const tree = JSON.parse(text(await client.callTool({ name: "list_tree", arguments: {} })));
  expect(tree.map((node: { slug: string }) => node.slug)).toEqual(["papers"]);
  const page = JSON.parse(text(await client.callTool({ name: "list_records", arguments: { base: "papers" } })));
  expect(page.records[0].fields.title).toBe("Attention");
  await client.close();
});

test("a Change Request key's proposal waits for review; a write key merges it", async () => {
  const agent = await connect(ws.propose);
  const proposed = JSON.parse(text(await agent.callTool({ name: "propose_record_create", arguments: { base: "papers", fields: { title: "From an agent" }, message: "found it" } })));
  expect(proposed).toMatchObject({ status: "in_review", sourceAttribution: { channel: "mcp" } });
  const refused = await agent.callTool({ name: "merge_change_request", arguments: { changeRequestId: proposed.id } });
  expect(refused.isError).toBe(true);
  const rest = await server.call("POST", `/api/v1/change-requests/${proposed.id}/merge`, { key: ws.propose });
  expect(text(refused)).toBe(rest.body.error);
  await agent.close();

  const reviewer = await connect(ws.write);
  await reviewer.callTool({ name: "review_change_request", arguments: { changeRequestId: proposed.id, verdict: "approved" } });
  const merged = JSON.parse(text(await reviewer.callTool({ name: "merge_change_request", arguments: { changeRequestId: proposed.id } })));
  expect(merged.changeRequest.status).toBe("merged");
  expect(merged.record.fields.title).toBe("From an agent");
  await reviewer.close();
});

test("an agent finds the proposal a reviewer sent back, with the reason, and revises it through the tools", async () => {
  const agent = await connect(ws.propose);
  const proposed = JSON.parse(text(await agent.callTool({ name: "propose_record_create", arguments: { base: "papers", fields: { title: "Atention" } } })));
  expect(JSON.parse(text(await agent.callTool({ name: "list_agent_tasks", arguments: {} })))).toEqual([]);
  await server.call("POST", `/api/v1/change-requests/${proposed.id}/reviews`, { key: ws.write, body: { verdict: "rejected", reason: "spelling" } });
  const [task] = JSON.parse(text(await agent.callTool({ name: "list_agent_tasks", arguments: {} })));
  expect(task).toMatchObject({ trigger: "changes_requested", reviewReason: "spelling", changeRequest: { id: proposed.id } });
  const revised = JSON.parse(text(await agent.callTool({ name: "revise_operation", arguments: { operationId: task.changeRequest.operations[0].id, fields: { title: "Attention" } } })));
  expect(revised).toMatchObject({ id: proposed.id, status: "in_review" });
  expect(JSON.parse(text(await agent.callTool({ name: "list_agent_tasks", arguments: {} })))).toEqual([]);
  const wrong = await agent.callTool({ name: "revise_operation", arguments: { operationId: "opr_nope", fields: {} } });
  expect(wrong.isError).toBe(true);
  await agent.close();
});

test("an agent saves a view, lists through it, searches the space and comments, as REST answers", async () => {
  for (const [title, year] of [["Attention", 2017], ["BERT", 2018], ["Old", 1990]] as const) {
    await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title, year } } });
  }
  const agent = await connect(ws.write);
  const proposed = JSON.parse(text(await agent.callTool({ name: "propose_view_change", arguments: { operation: "create", baseId: "papers", name: "Recent", config: { filters: [{ fieldSlug: "year", operator: "gte", value: 2000 }], sorts: [{ fieldSlug: "year", direction: "desc" }] } } })));
  expect(proposed).toMatchObject({ status: "merged", operations: [{ operation: "view_create" }] });
  const [view] = JSON.parse(text(await agent.callTool({ name: "list_views", arguments: { base: "papers" } })));
  expect(view).toEqual((await server.call("GET", "/api/v1/bases/papers/views", { key: ws.read })).body[0]);
  const page = JSON.parse(text(await agent.callTool({ name: "list_records", arguments: { base: "papers", viewId: view.id } })));
  expect(page.records.map((r: { fields: { title: string } }) => r.fields.title)).toEqual(["BERT", "Attention"]);
  const grepped = JSON.parse(text(await agent.callTool({ name: "grep", arguments: { pattern: "^Atten", baseSlugs: ["papers"] } })));
  expect(grepped.matches.map((match: { fieldSlug: string; column: number }) => [match.fieldSlug, match.column])).toContainEqual(["title", 1]);
  const found = JSON.parse(text(await agent.callTool({ name: "search", arguments: { query: "atten" } })));
  expect(found).toEqual((await server.call("GET", "/api/v1/search?query=atten", { key: ws.read })).body);
  expect(found.results.map((hit: { title: string }) => hit.title)).toEqual(["Attention"]);
  const recordId = found.results[0].id;
  const comment = JSON.parse(text(await agent.callTool({ name: "add_comment", arguments: { subjectType: "record", subjectId: recordId, body: "the 2017 one" } })));
  expect(comment).toMatchObject({ authorId: ws.owner.id, body: "the 2017 one" });
  expect(JSON.parse(text(await agent.callTool({ name: "list_comments", arguments: { subjectType: "record", subjectId: recordId } })))).toEqual([comment]);
  const missing = await agent.callTool({ name: "propose_view_change", arguments: { operation: "update", name: "x" } });
  expect(missing.isError).toBe(true);
  // A deleted view lists nothing: it answers as one that does not exist, as REST does.
  await agent.callTool({ name: "propose_view_change", arguments: { operation: "delete", viewId: view.id } });
  const throughDeleted = await agent.callTool({ name: "list_records", arguments: { base: "papers", viewId: view.id } });
  expect(throughDeleted.isError).toBe(true);
  expect(text(throughDeleted)).toBe((await server.call("GET", `/api/v1/records?viewId=${view.id}`, { key: ws.read })).body.error);
  expect(text(throughDeleted)).toBe(`No view "${view.id}" in this space.`);
  await agent.close();
  const reader = await connect(ws.read);
  expect((await reader.callTool({ name: "add_comment", arguments: { subjectType: "record", subjectId: recordId, body: "no" } })).isError).toBe(true);
  await reader.close();
});

test("an agent links records through the tools and reads the same links as REST", async () => {
  const added = await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug: "cites", name: "Cites", type: "relation", options: { targetBaseSlug: "papers" } } });
  expect(added.status).toBe(200);
  const agent = await connect(ws.write);
  const create = async (fields: Record<string, unknown>) => {
    const [recordId] = JSON.parse(text(await agent.callTool({ name: "propose_record_create", arguments: { base: "papers", fields } }))).mergeSummary.recordIds;
    return JSON.parse(text(await agent.callTool({ name: "get_record", arguments: { recordId } })));
  };
  const cited = await create({ title: "Cited" });
  const citing = await create({ title: "Citing", cites: [cited.id] });
  expect(citing.fields.cites).toEqual([cited.id]);
  const links = JSON.parse(text(await agent.callTool({ name: "get_record_links", arguments: { recordId: cited.id } })));
  expect(links).toEqual((await server.call("GET", `/api/v1/records/${cited.id}/links`, { key: ws.read })).body);
  expect(links.map((link: { sourceRecordId: string }) => link.sourceRecordId)).toEqual([citing.id]);
  const wrong = await agent.callTool({ name: "propose_record_create", arguments: { base: "papers", fields: { title: "Bad", cites: ["rec_0000000000"] } } });
  expect(wrong.isError).toBe(true);
  expect(text(wrong)).toContain("rec_0000000000, which is not a record of the base");
  await agent.close();
});

test("a foreign space is refused with the REST sentence; no credential is a 401", async () => {
  const client = await connect(ws.read, "spc_elsewhere");
  const refused = await client.callTool({ name: "list_tree", arguments: {} });
  expect(refused.isError).toBe(true);
  expect(text(refused)).toBe((await server.call("GET", "/api/v1/nodes", { key: ws.read, space: "spc_elsewhere" })).body.error);
  await client.close();
  const anonymous = await fetch(`${server.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
  expect(anonymous.status).toBe(401);
});

const rpc = (key: string, body: unknown) =>
  fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  });

test("openapi.json documents the JSON-RPC body of POST /mcp", async () => {
  const document = (await server.call("GET", "/api/v1/openapi.json")).body;
  const schema = document.paths["/mcp"].post.requestBody.content["application/json"].schema;
  expect(JSON.stringify(schema)).toContain("JsonRpcMessage");
  expect(document.components.schemas.JsonRpcMessage.properties.jsonrpc).toMatchObject({ const: "2.0" });
});

test("a batch of tool calls is capped at 10 messages, a 400 that names the cap; 10 are answered", async () => {
  const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "list_bases", arguments: {} } });
  const refused = await rpc(ws.read, Array.from({ length: 11 }, (_, i) => call(i)));
  expect(refused.status).toBe(400);
  expect((await refused.json()).error).toContain("at most 10");
  const answered = await rpc(ws.read, Array.from({ length: 10 }, (_, i) => call(i)));
  expect(answered.status).toBe(200);
  expect(await answered.json()).toHaveLength(10);
});

test("a tool's internal error answers a generic message and logs its cause, as REST does", async () => {
  server.ctx.store.sqlite.run('ALTER TABLE "records" RENAME TO "records_elsewhere"');
  const client = await connect(ws.read);
  const failed = await client.callTool({ name: "get_record", arguments: { recordId: "rec_any" } });
  expect(failed.isError).toBe(true);
  expect(text(failed)).toBe("Something went wrong on the server.");
  expect(server.logs.some((line) => line.includes("unhandled error in an MCP tool") && line.includes("no such table"))).toBe(true);
  await client.close();
  server.ctx.store.sqlite.run('ALTER TABLE "records_elsewhere" RENAME TO "records"');
});

test("list_records is bounded as REST is: an in filter of 16,000 values is refused at once, naming the cap", async () => {
  const client = await connect(ws.read);
  const value = Array.from({ length: 16_000 }, (_, i) => `v${i}`);
  const refused = await client.callTool({ name: "list_records", arguments: { base: "papers", filters: [{ fieldSlug: "title", operator: "in", value }] } });
  expect(refused.isError).toBe(true);
  expect(text(refused)).toBe("An in filter takes at most 1000 values; the one on title has 16000.");
  await client.close();
});

test("an agent waits for its space's events with wait_for_events, never another space's, and is told when it missed some", async () => {
  const client = await connect(ws.read);
  const start = JSON.parse(text(await client.callTool({ name: "wait_for_events", arguments: {} })));
  expect(start.events).toEqual([]);
  const waiting = client.callTool({ name: "wait_for_events", arguments: { after: start.lastEventId, timeoutSeconds: 5 } });
  await Bun.sleep(50);
  const eve = await server.user("Eve");
  await server.space(eve.id, "Elsewhere");
  const eveKey = await server.key(eve.id, "write");
  await server.call("POST", "/api/v1/bases", { key: eveKey, body: { slug: "notes", name: "Notes", fields: [{ slug: "title", name: "Title", type: "text" }] } });
  await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Heard" } } });
  const heard = JSON.parse(text(await waiting));
  expect(heard.events.map((event: { type: string }) => event.type)).toContain("record.created");
  expect(heard.events.find((event: { type: string }) => event.type === "record.created").data.record.fields.title).toBe("Heard");
  expect(heard.events.every((event: { spaceId: string }) => event.spaceId === ws.space.id)).toBe(true);
  expect(heard.lastEventId).toBe(heard.events.at(-1).seq);
  // Nothing new: an immediate answer with no events. From the start: every kept event of the space, the base's creation first.
  expect(JSON.parse(text(await client.callTool({ name: "wait_for_events", arguments: { after: heard.lastEventId } }))).events).toEqual([]);
  const all = JSON.parse(text(await client.callTool({ name: "wait_for_events", arguments: { after: 0 } }))).events;
  expect(all.map((event: { type: string }) => event.type)).toContain("base.created");
  expect(all.every((event: { spaceId: string }) => event.spaceId === ws.space.id)).toBe(true);
  await client.close();
});

test("a wait_for_events whose key is deleted meanwhile ends long before its wait, answering no events", async () => {
  const key = await server.key(ws.owner.id, "read");
  const client = await connect(key);
  const start = JSON.parse(text(await client.callTool({ name: "wait_for_events", arguments: {} })));
  const began = performance.now();
  const waiting = client.callTool({ name: "wait_for_events", arguments: { after: start.lastEventId, timeoutSeconds: 30 } });
  await Bun.sleep(50);
  const session = await server.signIn("ada@example.com");
  const keyId = (await server.call("GET", "/api/v1/api-keys", { session })).body.find((listed: { prefix: string }) => key.startsWith(listed.prefix))?.id;
  expect((await server.call("DELETE", `/api/v1/api-keys/${keyId}`, { session })).status).toBe(200);
  const answer = (await waiting) as { isError?: boolean };
  // It waits up to 30 s for an event; ending at all before half of that is the revocation's doing.
  expect(performance.now() - began).toBeLessThan(15_000);
  expect(answer.isError).toBe(true);
  await client.close().catch(() => undefined);
});

test("an agent reads and proposes docs and a drive's files", async () => {
  const agent = await connect(ws.propose);
  const made = JSON.parse(text(await agent.callTool({ name: "create_doc", arguments: { slug: "notes", name: "Notes", body: "# Notes\none\n" } })));
  expect(made.status).toBe("in_review");
  await server.call("POST", `/api/v1/change-requests/${made.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
  await server.call("POST", `/api/v1/change-requests/${made.id}/merge`, { key: ws.write });
  expect(JSON.parse(text(await agent.callTool({ name: "read_doc", arguments: { doc: "notes", startLine: 2 } }))).lines).toEqual(["one"]);
  const update = JSON.parse(text(await agent.callTool({ name: "update_doc", arguments: { doc: "notes", body: "# Notes\ntwo\n" } })));
  expect(update.operations[0].operation).toBe("doc_update");

  await server.call("POST", "/api/v1/file-trees", { key: ws.write, body: { type: "drive", slug: "handbook", name: "Handbook" } });
  expect(JSON.parse(text(await agent.callTool({ name: "list_files", arguments: { tree: "handbook" } }))).map((file: { path: string }) => file.path)).toEqual(["README.md"]);
  const readme = JSON.parse(text(await agent.callTool({ name: "read_file", arguments: { tree: "handbook", path: "README.md" } })));
  expect(readme.content).toBe("# Handbook\n");
  const change = JSON.parse(text(await agent.callTool({ name: "change_files", arguments: { tree: "handbook", operations: [{ kind: "update", path: "README.md", content: "# Handbook v2\n", baseContentHash: readme.contentHash }] } })));
  expect(change).toMatchObject({ status: "in_review", operations: [{ operation: "drive_file_update" }] });
  const refused = await agent.callTool({ name: "read_file", arguments: { tree: "handbook", path: "../etc/passwd" } });
  expect((refused as { isError?: boolean }).isError).toBe(true);
  await agent.close();
});
