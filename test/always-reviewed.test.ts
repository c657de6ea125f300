import { afterAll, beforeAll, expect, test } from "bun:test";
import { createBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/** Operations that destroy or rewrite values always wait for a person (contract §2.5; issue 35, item 19). */
let server: TestServer;
let ws: Workspace;
let base: { id: string; fields: { id: string; slug: string }[] };
let record: string;

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace({ deliveries: false }));
  base = await createBase(server, ws.write, "notes", [
    { slug: "title", name: "Title", type: "text" },
    { slug: "score", name: "Score", type: "text" },
  ]);
  record = (await server.call("POST", "/api/v1/bases/notes/change-requests", { key: ws.write, body: { fields: { title: "Keep me", score: "5" } } })).body.id;
});
afterAll(() => server.stop());

const state = () => server.ctx.store.sqlite.query("SELECT (SELECT status FROM records WHERE id = ?1) AS record, (SELECT count(*) FROM fields WHERE base_id = ?2) AS fields, (SELECT count(*) FROM change_requests WHERE space_id = ?3) AS proposals").get(record, base.id, ws.space.id);

test("autoMerge: true on a field delete or convert, a record delete or restore, is a 400 giving the reason; nothing is merged or proposed", async () => {
  const score = base.fields.find((field) => field.slug === "score")!.id;
  const before = state();
  const attempts: [string, unknown, string][] = [
    [`/api/v1/bases/${base.id}/fields/change-requests`, { operation: "delete", fieldId: score, autoMerge: true }, "deleting a field soft-deletes its stored values"],
    [`/api/v1/bases/${base.id}/fields/change-requests`, { operation: "convert", fieldId: score, newType: "number", autoMerge: true }, "converting a field's type can drop values"],
    [`/api/v1/records/${record}/change-requests`, { operation: "delete", autoMerge: true }, "archiving a record removes user content"],
    [`/api/v1/records/${record}/change-requests`, { operation: "restore", autoMerge: true }, "restoring a record brings archived content back"],
  ];
  for (const [path, body, reason] of attempts) {
    const refused = await server.call("POST", path, { key: ws.manage, body });
    expect([refused.status, refused.body.code, refused.body.error]).toEqual([400, "BAD_REQUEST", expect.stringContaining(`\`autoMerge: true\` is not accepted here: ${reason}`)]);
  }
  expect(state()).toEqual(before);
});

test("without the flag a field delete waits in review, even for a manage key", async () => {
  const score = base.fields.find((field) => field.slug === "score")!.id;
  const deletion = await server.call("POST", `/api/v1/bases/${base.id}/fields/change-requests`, { key: ws.manage, body: { operation: "delete", fieldId: score } });
  expect([deletion.status, deletion.body.status]).toEqual([201, "in_review"]);
  expect(state()).toMatchObject({ fields: 2 });
  await server.call("POST", `/api/v1/change-requests/${deletion.body.id}/close`, { key: ws.manage });
});

test("without the flag a record delete waits in review, even for a manage key", async () => {
  const deletion = await server.call("POST", `/api/v1/records/${record}/change-requests`, { key: ws.manage, body: { operation: "delete" } });
  expect([deletion.status < 300, deletion.body.status]).toEqual([true, "in_review"]);
  expect(state()).toMatchObject({ record: "active" });
});
