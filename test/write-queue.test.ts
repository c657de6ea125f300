import { afterEach, beforeEach, expect, test } from "bun:test";
import { createBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace({ deliveries: false })));
afterEach(() => server.stop());

test("concurrent writes share commits, yet each one succeeds or fails on its own", async () => {
  await createBase(server, ws.write);
  const creates = Array.from({ length: 40 }, (_, i) =>
    server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, space: ws.space.id, body: { fields: i % 4 === 0 ? { year: "bad" } : { title: `Paper ${i}`, year: i } } }),
  );
  const sameSlug = [1, 2].map(() => server.call("POST", "/api/v1/spaces", { key: ws.manage, body: { name: "Twin", slug: "twin" } }));
  const replies = await Promise.all([...creates, ...sameSlug]);
  const created = replies.slice(0, 40);
  expect(created.filter((r) => r.status === 201)).toHaveLength(30);
  expect(created.filter((r) => r.status === 400)).toHaveLength(10);
  expect(replies.slice(40).map((r) => r.status).sort()).toEqual([201, 409]);
  expect((await server.call("GET", "/api/v1/records/count?baseId=papers", { key: ws.read, space: ws.space.id })).body.total).toBe(30);
  const titles = created.filter((r) => r.status === 201).map((r) => r.body.fields.title);
  expect(new Set(titles).size).toBe(30);
  const events = server.ctx.store.sqlite.query("SELECT count(*) AS n FROM events WHERE type = 'record.created'").get();
  expect(events).toEqual({ n: 30 });
});
