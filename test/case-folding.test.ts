import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFieldKinds } from "../src/content/fields/registry";
import { flushStagedSearch } from "../src/db/search-index";
import { createBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/** Filters and search fold case in every script, as "grace hopper" finds "Grace Hopper", and accents ("zoe" finds "Zoë"); search reads select fields too (issue 47, item 10). */
let server: TestServer;
let ws: Workspace;
const ids: Record<string, string> = {};

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write, "people", [
    { slug: "name", name: "Name", type: "text" },
    { slug: "team", name: "Team", type: "select", options: { choices: [{ name: "Platform" }, { name: "Növelty" }] } },
    { slug: "tags", name: "Tags", type: "multiselect", options: { choices: [{ name: "infra" }, { name: "Œuvre" }] } },
  ]);
  for (const [key, fields] of [
    ["zoe", { name: "Zoë Müller", team: "Platform" }],
    ["cafe", { name: "café crème", team: "Növelty", tags: ["Œuvre"] }],
    ["grace", { name: "Grace Hopper" }],
  ] as const) {
    ids[key] = (await server.call("POST", "/api/v1/bases/people/change-requests", { key: ws.write, body: { fields } })).body.id;
  }
});
afterAll(() => server.stop());

const filtered = async (operator: string, value: string) => {
  const reply = await server.call("GET", `/api/v1/records?baseId=people&filters[0][fieldSlug]=name&filters[0][operator]=${operator}&filters[0][value]=${encodeURIComponent(value)}`, { key: ws.read });
  expect(reply.status).toBe(200);
  return reply.body.records.map((record: { id: string }) => record.id);
};
const found = async (query: string) => (await server.call("GET", `/api/v1/search?query=${encodeURIComponent(query)}`, { key: ws.read })).body.results.map((hit: { id: string }) => hit.id);

describe("case folds beyond ASCII", () => {
  test("contains and equals fold every script's case, and ASCII as before", async () => {
    expect(await filtered("contains", "CAFÉ")).toEqual([ids.cafe]);
    expect(await filtered("contains", "MÜLL")).toEqual([ids.zoe]);
    expect(await filtered("equals", "ZOË MÜLLER")).toEqual([ids.zoe]);
    expect(await filtered("equals", "zoë müller")).toEqual([ids.zoe]);
    expect(await filtered("equals", "grace hopper")).toEqual([ids.grace]);
    expect(await filtered("contains", "HOPP")).toEqual([ids.grace]);
  });

  test("accents fold too: \"zoe\" finds \"Zoë\", \"cafe\" finds \"café\", either way round", async () => {
    expect(await filtered("contains", "zoe")).toEqual([ids.zoe]);
    expect(await filtered("equals", "zoe muller")).toEqual([ids.zoe]);
    expect(await filtered("equals", "ZOE MULLER")).toEqual([ids.zoe]);
    expect(await filtered("contains", "cafe cr")).toEqual([ids.cafe]);
    expect(await filtered("contains", "HÖPPER")).toEqual([ids.grace]);
    expect(await filtered("contains", "zoé")).toEqual([ids.zoe]);
  });

  test("a value written in decomposed accents matches one typed composed", async () => {
    expect(await filtered("contains", "Cafe\u0301")).toEqual([ids.cafe]);
  });

  test("search finds records by any case of their words and by a select field's value", async () => {
    expect(await found("CAFÉ")).toEqual([ids.cafe]);
    expect(await found("ZOË MÜLLER")).toEqual([ids.zoe]);
    expect(await found("platform")).toEqual([ids.zoe]);
    expect(await found("növelty")).toEqual([ids.cafe]);
    expect(await found("œuvre")).toEqual([ids.cafe]);
  });

  test("records written before search read select fields are indexed again when the server starts", async () => {
    const { sqlite } = server.ctx.store;
    sqlite.run(`UPDATE "field_kinds" SET "searched" = 0 WHERE "type" = 'select'`);
    sqlite.transaction(() => {
      sqlite.run(`INSERT INTO "record_search_staged"("record_rowid", "indexed") SELECT rowid, 1 FROM "records"`);
      flushStagedSearch(sqlite);
    })();
    expect(await found("platform")).toEqual([]);
    writeFieldKinds(server.ctx.store);
    expect(await found("platform")).toEqual([ids.zoe]);
  });
});
