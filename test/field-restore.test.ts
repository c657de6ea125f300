import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { TestServer, createBase, deleteField, fillBase, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write);
  await fillBase(server, ws.write, "papers", 30, (i) => ({ title: `Paper ${i}`, year: 2000 + i, status: i % 2 ? "draft" : "published" }));
});
afterEach(() => server.stop());

const fieldChange = (body: Record<string, unknown>, key = ws.write) => server.call("POST", "/api/v1/bases/papers/fields/change-requests", { key, body });
const yearField = async () => (await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.fields.find((field: { slug: string }) => field.slug === "year");
const years = async () => (await server.call("GET", "/api/v1/records?baseId=papers&limit=100&sort=title", { key: ws.read })).body.records.map((record: { fields: { year?: number } }) => record.fields.year);

describe("restoring a deleted field", () => {
  test("a field deleted and cleared comes back with every value, indexed again", async () => {
    const year = await yearField();
    const before = await years();
    expect((await deleteField(server, ws.write, "papers", year.id)).body.changeRequest.status).toBe("merged");
    await server.fieldUpkeep.settled();
    expect((await years()).every((value: unknown) => value === undefined)).toBe(true);
    const deleted = (await server.call("GET", "/api/v1/bases/papers/fields/deleted", { key: ws.read })).body;
    expect(deleted.map((field: { id: string }) => field.id)).toEqual([year.id]);

    const proposal = await fieldChange({ operation: "restore", fieldId: year.id }, ws.propose);
    expect(proposal.body).toMatchObject({ status: "in_review", operations: [{ operation: "base_restore_field" }] });
    await server.call("POST", `/api/v1/change-requests/${proposal.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    expect((await server.call("POST", `/api/v1/change-requests/${proposal.body.id}/merge`, { key: ws.write })).status).toBe(200);
    await server.fieldUpkeep.settled();
    expect(await yearField()).toMatchObject({ id: year.id, slug: "year", type: "number" });
    expect(await years()).toEqual(before);
    const filtered = (await server.call("GET", "/api/v1/records/count?baseId=papers&filters[0][fieldSlug]=year&filters[0][operator]=gte&filters[0][value]=2020", { key: ws.read })).body;
    expect(filtered.total).toBe(10);
    expect((await server.call("GET", "/api/v1/bases/papers/fields/deleted", { key: ws.read })).body).toEqual([]);
  });

  test("restored before the upkeep cleared it, its values never left; a slug taken again or a relation is refused", async () => {
    const year = await yearField();
    const before = await years();
    await deleteField(server, ws.write, "papers", year.id);
    expect((await fieldChange({ operation: "restore", fieldId: year.id })).body.status).toBe("merged");
    await server.fieldUpkeep.settled();
    expect(await years()).toEqual(before);

    const status = (await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.fields.find((field: { slug: string }) => field.slug === "status");
    await deleteField(server, ws.write, "papers", status.id);
    await server.fieldUpkeep.settled();
    await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug: "status", name: "Status again" } });
    expect((await fieldChange({ operation: "restore", fieldId: status.id })).body).toMatchObject({ code: "CONFLICT", reason: "SLUG_TAKEN" });
    expect((await fieldChange({ operation: "restore", fieldId: "fld_nothing" })).status).toBe(404);

    await createBase(server, ws.write, "authors", [{ slug: "name", name: "Name", type: "text" }]);
    await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug: "authors", name: "Authors", type: "relation", options: { targetBaseSlug: "authors" } } });
    const link = (await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.fields.find((field: { slug: string }) => field.slug === "authors");
    await deleteField(server, ws.write, "papers", link.id);
    expect((await fieldChange({ operation: "restore", fieldId: link.id })).body.error).toBe("A deleted relation field cannot be restored: add it again.");
  });
});
