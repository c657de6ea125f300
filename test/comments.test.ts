import { afterEach, beforeEach, expect, test } from "bun:test";
import { createBase, eventually, TestServer, type Workspace, workspace } from "./helpers";
import { Receiver } from "./receiver";

let server: TestServer;
let ws: Workspace;
let receiver: Receiver;
beforeEach(async () => {
  server = new TestServer({ webhookAllow: "127.0.0.1/32" });
  ws = await workspace(server);
  await createBase(server, ws.write);
  receiver = new Receiver();
});
afterEach(async () => {
  await server.stop();
  receiver.stop();
});

const comment = (subjectType: string, subjectId: string, body: unknown, key = ws.propose, extra: Record<string, unknown> = {}) =>
  server.call("POST", "/api/v1/comments", { key, body: { subjectType, subjectId, body, ...extra } });
const thread = async (query: string, key = ws.read) => (await server.call("GET", `/api/v1/comments?${query}`, { key })).body;
const create = async (fields: Record<string, unknown>, key = ws.write) => (await server.call("POST", "/api/v1/bases/papers/change-requests", { key, body: { fields } })).body;

test("a comment on a record is the caller's, trimmed, and listed oldest first, a page at a time", async () => {
  const record = await create({ title: "Attention" });
  const first = await comment("record", record.id, "  is this the 2017 paper?  ");
  expect(first.status).toBe(201);
  expect(first.body).toEqual({
    id: expect.stringMatching(/^com_/),
    subjectType: "record",
    subjectId: record.id,
    recordId: record.id,
    changeRequestId: null,
    operationId: null,
    commitId: null,
    authorId: ws.owner.id,
    authorUser: { id: ws.owner.id, name: "Ada", email: "ada@example.com", image: null },
    body: "is this the 2017 paper?",
    mentionsAi: false,
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  });
  for (let i = 0; i < 4; i++) await comment("record", record.id, `reply ${i}`);
  const all = await thread(`subjectType=record&subjectId=${record.id}`);
  expect(all.map((c: { body: string }) => c.body)).toEqual(["is this the 2017 paper?", "reply 0", "reply 1", "reply 2", "reply 3"]);
  const page = await thread(`subjectType=record&subjectId=${record.id}&limit=2`);
  const next = await thread(`subjectType=record&subjectId=${record.id}&limit=2&after=${page[1].id}`);
  expect([...page, ...next].map((c: { id: string }) => c.id)).toEqual(all.slice(0, 4).map((c: { id: string }) => c.id));
});

test("a change request's comments include its operations' and show in its detail; a commit takes comments too", async () => {
  const proposal = await create({ title: "Draft" }, ws.propose);
  await comment("change_request", proposal.id, "why this one?", ws.write);
  await comment("operation", proposal.operations[0].id, "the title needs a year", ws.write, { mentionsAi: true });
  const detail = (await server.call("GET", `/api/v1/change-requests/${proposal.id}`, { key: ws.read })).body;
  expect(detail.comments.map((c: { body: string; changeRequestId: string }) => [c.body, c.changeRequestId])).toEqual([
    ["why this one?", proposal.id],
    ["the title needs a year", proposal.id],
  ]);
  expect(detail.comments[1]).toMatchObject({ subjectType: "operation", operationId: proposal.operations[0].id, mentionsAi: true });
  expect((await thread(`subjectType=change_request&subjectId=${proposal.id}`)).length).toBe(2);
  expect((await thread(`subjectType=operation&subjectId=${proposal.operations[0].id}`)).length).toBe(1);

  const record = await create({ title: "Attention" });
  const onCommit = await comment("commit", record.headCommitId, "good source");
  expect(onCommit.body).toMatchObject({ subjectType: "commit", commitId: record.headCommitId, recordId: record.id });
});

test("posting needs changeRequest; a subject of another space, an unknown one or an empty body is refused and nothing is written", async () => {
  const record = await create({ title: "Attention" });
  expect((await comment("record", record.id, "hi", ws.read)).status).toBe(403);
  const eve = await server.user("Eve");
  await server.space(eve.id, "Elsewhere");
  const eveKey = await server.key(eve.id, "manage");
  expect((await comment("record", record.id, "peek", eveKey)).status).toBe(404);
  expect((await server.call("GET", `/api/v1/comments?subjectType=record&subjectId=${record.id}`, { key: eveKey })).status).toBe(404);
  for (const [type, id, body] of [["record", "rec_nope", "x"], ["change_request", "crq_nope", "x"], ["operation", "opr_nope", "x"], ["commit", "cmt_nope", "x"]]) {
    expect((await comment(type, id, body)).status).toBe(404);
  }
  for (const [type, body] of [["record", "   "], ["record", ""], ["record", "x".repeat(10_001)], ["node", "x"]]) {
    expect((await comment(type, record.id, body)).status).toBe(400);
  }
  expect((await server.call("GET", "/api/v1/comments?subjectType=record", { key: ws.read })).status).toBe(400);
  expect((server.ctx.store.sqlite.query("SELECT count(*) AS n FROM comments").get() as { n: number }).n).toBe(0);
});

test("a comment is a comment.created event, written with it, that a webhook rule can subscribe to", async () => {
  const rule = await server.call("POST", "/api/v1/webhooks", { key: ws.manage, body: { name: "comments", eventType: "comment.created", actionKind: "webhook", config: { targetUrl: receiver.url } } });
  expect(rule.status).toBe(201);
  const record = await create({ title: "Attention" });
  const made = (await comment("record", record.id, "cite it")).body;
  await eventually(() => receiver.received.length === 1);
  const delivered = JSON.parse(receiver.received[0].body);
  expect(delivered).toMatchObject({ type: "comment.created", spaceId: ws.space.id, baseId: record.baseId, data: { comment: made } });
});
