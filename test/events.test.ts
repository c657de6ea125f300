import { afterEach, beforeEach, expect, test } from "bun:test";
import { createBase, fillBase, TestServer, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace({ deliveries: false })));
afterEach(() => server.stop());

interface EventRow {
  id: string;
  type: string;
  spaceId: string;
  baseId: string | null;
  data: Record<string, any>;
}
const events = (): EventRow[] =>
  (server.ctx.store.sqlite.query("SELECT id, type, space_id AS spaceId, base_id AS baseId, data FROM events ORDER BY id").all() as (EventRow & { data: string })[]).map((row) => ({
    ...row,
    data: JSON.parse(row.data),
  }));

test("every change writes its event rows, with the record's previous values on update", async () => {
  const base = await createBase(server, ws.write);
  expect(events().map((e) => e.type)).toEqual(["change_request.created", "base.created", "change_request.merged"]);
  const record = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "A", year: 1 } } })).body;
  const created = events().find((e) => e.type === "record.created")!;
  expect(created).toMatchObject({ spaceId: ws.space.id, baseId: base.id });
  expect(created.id).toMatch(/^evt_/);
  expect(created.data.record).toMatchObject({ id: record.id, fields: { title: "A", year: 1 } });

  await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { year: 2, title: "A" } } });
  const updated = events().find((e) => e.type === "record.updated")!;
  expect(updated.data.previous).toEqual({ year: 1 });
  expect(updated.data.changedFields).toEqual(["year"]);
  expect(updated.data.record.fields.year).toBe(2);

  const proposal = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "delete" } })).body;
  await server.call("POST", `/api/v1/change-requests/${proposal.id}/reviews`, { key: ws.write, body: { verdict: "rejected" } });
  await server.call("POST", `/api/v1/change-requests/${proposal.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
  await server.call("POST", `/api/v1/change-requests/${proposal.id}/merge`, { key: ws.write });
  const restore = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "restore" } })).body;
  await server.call("POST", `/api/v1/change-requests/${restore.id}/close`, { key: ws.write, body: { reason: "no" } });
  const types = new Set(events().map((e) => e.type));
  for (const type of ["record.deleted", "change_request.changes_requested", "change_request.approved", "change_request.rejected"]) expect(types).toContain(type);
});

test("a request that fails writes no event", async () => {
  await createBase(server, ws.write);
  const before = events().length;
  expect((await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { year: "nope" } } })).status).toBe(400);
  expect((await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.write, body: { records: [{ fields: { title: "ok" } }, { fields: {} }] } })).status).toBe(400);
  expect(events().length).toBe(before);
});

test("a conflict writes change_request.conflict and no record event", async () => {
  await createBase(server, ws.write);
  const record = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "A" } } })).body;
  const proposal = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.propose, body: { operation: "update", fields: { title: "B" } } })).body;
  await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: "C" } } });
  await server.call("POST", `/api/v1/change-requests/${proposal.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
  const updatesBefore = events().filter((e) => e.type === "record.updated").length;
  expect((await server.call("POST", `/api/v1/change-requests/${proposal.id}/merge`, { key: ws.write })).status).toBe(409);
  expect(events().filter((e) => e.type === "record.updated").length).toBe(updatesBefore);
  expect(events().at(-1)).toMatchObject({ type: "change_request.conflict", data: { changeRequestId: proposal.id, conflict: { recordId: record.id, fields: ["title"] } } });
});

test("a change that alters other records' derived values sends records.recomputed naming them, batched per base and bounded", async () => {
  await createBase(server, ws.write, "people", [
    { slug: "name", name: "Name", type: "text" },
    { slug: "score", name: "Score", type: "number" },
  ]);
  const tasks = await createBase(server, ws.write, "tasks", [
    { slug: "title", name: "Title", type: "text" },
    { slug: "owner", name: "Owner", type: "relation", options: { targetBaseSlug: "people", multiple: false } },
  ]);
  const people = (await server.call("GET", "/api/v1/bases/people", { key: ws.read })).body;
  await server.call("POST", "/api/v1/bases/tasks/fields", { key: ws.write, body: { slug: "owner_score", name: "Owner score", type: "lookup", options: { lookup: { relationFieldSlug: "owner", targetFieldSlug: "score" } } } });
  const create = async (base: string, fields: Record<string, unknown>) => (await server.call("POST", `/api/v1/bases/${base}/change-requests`, { key: ws.write, body: { fields } })).body.id as string;
  const recomputed = () => events().filter((e) => e.type === "records.recomputed");
  const ada = await create("people", { name: "Ada", score: 1 });
  const mine = [await create("tasks", { title: "One", owner: ada }), await create("tasks", { title: "Two", owner: ada })];
  // A new link changes the other side's relation value: Ada's.
  expect(recomputed().at(-1)).toMatchObject({ baseId: people.id, data: { recordIds: [ada], count: 1, truncated: false } });
  await create("tasks", { title: "Nobody's" });

  const before = recomputed().length;
  await server.call("POST", `/api/v1/records/${ada}/change-requests`, { key: ws.write, body: { operation: "update", fields: { score: 5 } } });
  const after = recomputed().slice(before);
  expect(after).toHaveLength(1);
  expect(after[0]).toMatchObject({ baseId: tasks.id, data: { count: 2, truncated: false } });
  expect([...after[0].data.recordIds].sort()).toEqual([...mine].sort());
  expect((await server.call("GET", `/api/v1/records/${mine[0]}`, { key: ws.read })).body.fields.owner_score).toEqual([5]);

  // A merge whose changes reach more records than one event names: the first 1,000, and how many in all.
  const grace = await create("people", { name: "Grace", score: 1 });
  for (const owner of [ada, grace]) {
    await fillBase(server, ws.write, "tasks", 600, (i) => ({ title: `T${i}`, owner }));
  }
  const mark = recomputed().length;
  const bulk = await server.call("POST", "/api/v1/bases/people/records/bulk-update-change-request", { key: ws.write, body: { updates: [ada, grace].map((recordId) => ({ recordId, fields: { score: 9 } })) } });
  expect(bulk.body.status).toBe("merged");
  const bounded = recomputed().slice(mark);
  expect(bounded).toHaveLength(1);
  expect([bounded[0].data.recordIds.length, bounded[0].data.count, bounded[0].data.truncated]).toEqual([1000, 1202, true]);
});
