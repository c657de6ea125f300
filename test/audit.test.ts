import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createBase, type Session, TestServer, type Workspace, workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
let session: Session;
beforeAll(async () => {
  server = new TestServer({ webhookAllow: "127.0.0.1/32", deliveries: false });
  ws = await workspace(server);
  session = await server.signIn("ada@example.com");
  await createBase(server, ws.write);
});
afterAll(() => server.stop());

const trail = async (key = ws.manage, query = "limit=100") => (await server.call("GET", `/api/v1/audit-events?${query}`, { key })).body;
const latest = async () => (await trail())[0];

describe("the audit trail", () => {
  test("keys created, raised, edited and deleted, and a device approval, are recorded without their secrets", async () => {
    const created = await server.call("POST", "/api/v1/api-keys", { session, body: { name: "robot", level: "read" } });
    expect(await latest()).toMatchObject({ action: "api_key.created", actorId: ws.owner.id, actorKeyId: null, spaceId: null, targetType: "api_key", targetId: created.body.key.id, metadata: { name: "robot", level: "read" } });
    await server.call("PATCH", `/api/v1/api-keys/${created.body.key.id}`, { session, body: { name: "robot 2" } });
    expect(await latest()).toMatchObject({ action: "api_key.updated", metadata: { before: { name: "robot" }, after: { name: "robot 2" } } });
    await server.call("PATCH", `/api/v1/api-keys/${created.body.key.id}`, { session, body: { level: "write", confirm: true } });
    expect(await latest()).toMatchObject({ action: "api_key.raised", metadata: { before: { level: "read" }, after: { level: "write" } } });
    await server.call("DELETE", `/api/v1/api-keys/${created.body.key.id}`, { session });
    expect(await latest()).toMatchObject({ action: "api_key.deleted", targetId: created.body.key.id });

    const grant = await server.call("POST", "/api/v1/device/code", { body: { clientName: "cli" } });
    await server.call("POST", "/api/v1/device/approve", { session, body: { userCode: grant.body.userCode, name: "laptop", level: "read" } });
    expect(await latest()).toMatchObject({ action: "device_request.approved", metadata: { clientName: "cli", keyName: "laptop", keyLevel: "read" } });

    const everything = JSON.stringify(await trail());
    expect(everything).not.toContain(created.body.apiKey);
    expect(everything).not.toContain(grant.body.deviceCode);
  });

  test("members added, changed and removed, and the space renamed, with the key that did it", async () => {
    const bob = await server.user("Bob");
    await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { key: ws.manage, body: { email: "bob@example.com", role: "viewer" } });
    const added = await latest();
    expect(added).toMatchObject({ action: "member.added", spaceId: ws.space.id, targetId: bob.id, metadata: { email: "bob@example.com", role: "viewer" } });
    expect(added.actorKeyId).toMatch(/^key_/);
    await server.call("PATCH", `/api/v1/spaces/${ws.space.id}/members/${bob.id}`, { key: ws.manage, body: { role: "editor" } });
    expect(await latest()).toMatchObject({ action: "member.changed", metadata: { before: { role: "viewer" }, after: { role: "editor" } } });
    await server.call("DELETE", `/api/v1/spaces/${ws.space.id}/members/${bob.id}`, { key: ws.manage });
    expect(await latest()).toMatchObject({ action: "member.removed", targetId: bob.id });
    await server.call("PATCH", `/api/v1/spaces/${ws.space.id}`, { key: ws.manage, body: { name: "Research lab" } });
    expect(await latest()).toMatchObject({ action: "space.updated", metadata: { before: { name: "Research" }, after: { name: "Research lab" } } });
  });

  test("webhook rules: the URL's path, query, secret and header values are never recorded", async () => {
    const body = { name: "hook", eventType: "record.created", actionKind: "webhook", config: { targetUrl: "http://127.0.0.1:9/hooks/T0KEN-PATH?token=s3cr3t", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", headers: { Authorization: "Bearer hunter2" } } };
    const rule = (await server.call("POST", "/api/v1/webhooks", { key: ws.manage, body })).body;
    expect(await latest()).toMatchObject({ action: "webhook_rule.created", targetId: rule.id, metadata: { name: "hook", targetOrigin: "http://127.0.0.1:9", headerNames: ["authorization"] } });
    await server.call("PUT", `/api/v1/webhooks/${rule.id}`, { key: ws.manage, body: { ...body, name: "renamed" } });
    expect(await latest()).toMatchObject({ action: "webhook_rule.updated", metadata: { before: { name: "hook" }, after: { name: "renamed" } } });
    await server.call("DELETE", `/api/v1/webhooks/${rule.id}`, { key: ws.manage });
    expect(await latest()).toMatchObject({ action: "webhook_rule.deleted", targetId: rule.id });
    const everything = JSON.stringify(await trail());
    for (const secret of ["T0KEN-PATH", "s3cr3t", "hunter2", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]) expect(everything).not.toContain(secret);
  });

  test("merges and closes by reviewers; a manage key reads the trail, a write key may not", async () => {
    const first = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "A" } } })).body;
    await server.call("POST", `/api/v1/change-requests/${first.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    await server.call("POST", `/api/v1/change-requests/${first.id}/merge`, { key: ws.write });
    expect(await latest()).toMatchObject({ action: "change_request.merged", targetId: first.id, metadata: { operationCount: 1 } });
    const second = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "B" } } })).body;
    await server.call("POST", `/api/v1/change-requests/${second.id}/close`, { key: ws.write, body: { reason: "duplicate" } });
    expect(await latest()).toMatchObject({ action: "change_request.closed", targetId: second.id, metadata: { from: "in_review", reason: "duplicate" } });
    expect((await server.call("GET", "/api/v1/audit-events", { key: ws.write })).status).toBe(403);
    const page = await trail(ws.manage, "limit=2");
    const next = await trail(ws.manage, `limit=2&before=${page[1].id}`);
    expect([...page, ...next].map((event: { id: string }) => event.id)).toEqual((await trail()).slice(0, 4).map((event: { id: string }) => event.id));
  });

  test("another space's managers see none of it; a failed action records nothing", async () => {
    const eve = await server.user("Eve");
    await server.space(eve.id, "Elsewhere");
    const eveKey = await server.key(eve.id, "manage");
    const theirs = await trail(eveKey);
    expect(theirs.every((event: { actorId: string }) => event.actorId === eve.id)).toBe(true);
    const before = (await trail()).length;
    expect((await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { key: ws.manage, body: { email: "nobody@example.com", role: "viewer" } })).status).toBe(404);
    expect((await trail()).length).toBe(before);
  });
});

describe("events a client appends (Busabase's POST /audit-events)", () => {
  test("an action of Busabase's about a record of the space, acted by the caller; another space's record is not found; it needs manage", async () => {
    const record = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Seen" } } })).body;
    const appended = await server.call("POST", "/api/v1/audit-events", { key: ws.manage, body: { action: "record.viewed", actorId: "usr_someone_else", recordId: record.id, operationId: "opr_x", metadata: { via: "cli" } } });
    expect(appended.status).toBe(200);
    expect(appended.body).toMatchObject({ action: "record.viewed", actorId: ws.owner.id, actor: { id: ws.owner.id }, recordId: record.id, operationId: "opr_x", commitId: null, metadata: { via: "cli", operationId: "opr_x" } });
    expect((await trail())[0]).toMatchObject({ id: appended.body.id, recordId: record.id });
    expect((await server.call("POST", "/api/v1/audit-events", { key: ws.manage, body: { action: "record.viewed", recordId: "rec_0000000000000000" } })).status).toBe(404);
    expect((await server.call("POST", "/api/v1/audit-events", { key: ws.manage, body: { action: "api_key.created" } })).status).toBe(400);
    expect((await server.call("POST", "/api/v1/audit-events", { key: ws.write, body: { action: "record.viewed" } })).status).toBe(403);
  });

  test("an appended event is marked source client, whatever it claims; the server's own are source server, and nothing a client sends makes one", async () => {
    const proposal = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "Forged" } } })).body;
    const forged = await server.call("POST", "/api/v1/audit-events", { key: ws.manage, body: { action: "change_request.merged", changeRequestId: proposal.id, source: "server", metadata: { source: "server", operationCount: 1 } } });
    expect(forged.status).toBe(200);
    expect(forged.body).toMatchObject({ action: "change_request.merged", source: "client" });
    await server.call("POST", `/api/v1/change-requests/${proposal.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    await server.call("POST", `/api/v1/change-requests/${proposal.id}/merge`, { key: ws.write });
    const merges = (await trail()).filter((event: { action: string; changeRequestId: string }) => event.action === "change_request.merged" && event.changeRequestId === proposal.id);
    expect(merges.map((event: { id: string; source: string }) => [event.id === forged.body.id, event.source])).toEqual([
      [false, "server"],
      [true, "client"],
    ]);
    const feed = (await server.call("GET", "/api/v1/activity/paged?limit=50", { key: ws.manage })).body;
    expect(feed.items.find((item: { id: string }) => item.id === forged.body.id)?.auditEvent).toMatchObject({ source: "client" });
  });
});

describe("the activity feed", () => {
  test("change requests, revisions and record changes, newest first, paged by cursor; audit events for managers only", async () => {
    const proposal = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "Draft" }, message: "first try" } })).body;
    await server.call("POST", `/api/v1/operations/${proposal.operations[0].id}/revisions`, { key: ws.propose, body: { fields: { title: "Draft 2" }, message: "second try" } });
    const record = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Direct" } } })).body;
    await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: "Direct, edited" }, message: "typo" } });

    const feed = (await server.call("GET", "/api/v1/activity/paged?limit=4", { key: ws.read })).body;
    expect(feed.items.map((item: { kind: string; action: string }) => [item.kind, item.action])).toEqual([
      ["record", "record_update"],
      ["change_request", "merged"],
      ["change_request", "merged"],
      ["operation", "revised"],
    ]);
    expect(feed.items[0]).toMatchObject({ recordId: record.id, summary: "typo", actorId: ws.owner.id });
    expect(feed.items[3]).toMatchObject({ operationId: proposal.operations[0].id, summary: "second try" });
    // Each item embeds what it is about (Busabase's shape).
    expect(feed.items[0].record).toMatchObject({ id: record.id, fields: { title: "Direct, edited" } });
    expect(feed.items[1].changeRequest).toMatchObject({ id: feed.items[1].id, status: "merged" });
    expect(feed.items[3].changeRequest).toMatchObject({ id: proposal.id, operations: [{ id: proposal.operations[0].id }] });
    const next = (await server.call("GET", `/api/v1/activity/paged?limit=4&cursor=${feed.nextCursor}`, { key: ws.read })).body;
    expect(next.items[0]).toMatchObject({ kind: "change_request", id: proposal.id, summary: "first try", action: "in_review" });
    expect(next.items.some((item: { kind: string }) => item.kind === "audit")).toBe(false);

    const managed = (await server.call("GET", "/api/v1/activity/paged?limit=100", { key: ws.manage })).body;
    const audit = managed.items.find((item: { kind: string }) => item.kind === "audit");
    expect(audit.auditEvent).toMatchObject({ id: audit.id, action: audit.action });
    expect((await server.call("GET", "/api/v1/activity/paged?cursor=!!", { key: ws.read })).status).toBe(400);
  });
});
