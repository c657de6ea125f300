import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createBase, fillBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/** Filter groups: conditions combined by all (AND) or any (OR), nested, on listings, counts, MCP and views. */
let server: TestServer;
let ws: Workspace;
beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write, "tasks", [
    { slug: "title", name: "Title", type: "text" },
    { slug: "status", name: "Status", type: "select", options: { choices: [{ name: "Todo" }, { name: "Doing" }, { name: "Done" }] } },
    { slug: "points", name: "Points", type: "number" },
    { slug: "urgent", name: "Urgent", type: "checkbox" },
  ]);
  const rows = [
    { title: "Write spec", status: "Todo", points: 3, urgent: true },
    { title: "Fix login", status: "Doing", points: 5, urgent: false },
    { title: "Ship beta", status: "Done", points: 8, urgent: true },
    { title: "Plan party", status: "Todo", points: 1, urgent: false },
  ];
  await fillBase(server, ws.write, "tasks", rows.length, (i) => rows[i]);
});
afterEach(() => server.stop());

const titles = async (query: string) => {
  const reply = await server.call("GET", `/api/v1/records?baseId=tasks&sort=title&${query}`, { key: ws.read });
  expect(reply.status).toBe(200);
  return reply.body.records.map((record: { fields: { title: string } }) => record.fields.title);
};
const count = async (query: string) => (await server.call("GET", `/api/v1/records/count?baseId=tasks&${query}`, { key: ws.read })).body.total;

describe("filter groups", () => {
  test("a group with match=any is OR; groups are ANDed with the filters and with each other", async () => {
    const either = "groups[0][match]=any&groups[0][filters][0][fieldSlug]=status&groups[0][filters][0][operator]=eq&groups[0][filters][0][value]=Done&groups[0][filters][1][fieldSlug]=points&groups[0][filters][1][operator]=lt&groups[0][filters][1][value]=2";
    expect(await titles(either)).toEqual(["Plan party", "Ship beta"]);
    expect(await count(either)).toBe(2);
    expect(await titles(`${either}&filters[0][fieldSlug]=urgent&filters[0][operator]=is_true`)).toEqual(["Ship beta"]);
    const urgentOrBig = "groups[1][match]=any&groups[1][filters][0][fieldSlug]=urgent&groups[1][filters][0][operator]=is_true&groups[1][filters][1][fieldSlug]=points&groups[1][filters][1][operator]=gte&groups[1][filters][1][value]=5";
    expect(await titles(`${either}&${urgentOrBig}`)).toEqual(["Ship beta"]);
  });

  test("groups nest: (Todo and urgent) or (Doing and at least 5 points)", async () => {
    const query = [
      "groups[0][match]=any",
      "groups[0][groups][0][match]=all",
      "groups[0][groups][0][filters][0][fieldSlug]=status&groups[0][groups][0][filters][0][operator]=eq&groups[0][groups][0][filters][0][value]=Todo",
      "groups[0][groups][0][filters][1][fieldSlug]=urgent&groups[0][groups][0][filters][1][operator]=is_true",
      "groups[0][groups][1][match]=all",
      "groups[0][groups][1][filters][0][fieldSlug]=status&groups[0][groups][1][filters][0][operator]=eq&groups[0][groups][1][filters][0][value]=Doing",
      "groups[0][groups][1][filters][1][fieldSlug]=points&groups[0][groups][1][filters][1][operator]=gte&groups[0][groups][1][filters][1][value]=5",
    ].join("&");
    expect(await titles(query)).toEqual(["Fix login", "Write spec"]);
    expect(await count(query)).toBe(2);
    // An empty group holds for every record.
    expect(await count("groups[0][match]=any")).toBe(4);
  });

  test("a bad group is a 400 naming it; too many conditions or too deep a nesting are refused", async () => {
    const bad = await server.call("GET", "/api/v1/records?baseId=tasks&groups[0][match]=some", { key: ws.read });
    expect(bad).toMatchObject({ status: 400, body: { error: "groups[0][match] must be all or any." } });
    const noField = await server.call("GET", "/api/v1/records?baseId=tasks&groups[0][filters][0][fieldSlug]=nope&groups[0][filters][0][operator]=eq&groups[0][filters][0][value]=1", { key: ws.read });
    expect(noField).toMatchObject({ status: 400, body: { error: 'The base has no field "nope".' } });
    const many = Array.from({ length: 51 }, (_, i) => `groups[0][filters][${i}][fieldSlug]=points&groups[0][filters][${i}][operator]=gt&groups[0][filters][${i}][value]=${i}`).join("&");
    expect((await server.call("GET", `/api/v1/records?baseId=tasks&${many}`, { key: ws.read })).body.error).toBe("A listing takes at most 50 filters; this one has 51.");
    const deep = "groups[0][groups][0][groups][0][groups][0][match]=any";
    expect((await server.call("GET", `/api/v1/records?baseId=tasks&${deep}`, { key: ws.read })).body.error).toBe("Filter groups nest at most 3 deep.");
  });

  test("a view keeps its groups: its listing and count apply them, and the grid's own filters narrow it further", async () => {
    const base = (await server.call("GET", "/api/v1/bases/tasks", { key: ws.read })).body;
    const config = {
      groups: [{ match: "any", filters: [{ fieldSlug: "status", operator: "eq", value: "Done" }], groups: [{ match: "all", filters: [{ fieldSlug: "status", operator: "eq", value: "Todo" }, { fieldSlug: "urgent", operator: "is_true" }] }] }],
    };
    const made = await server.call("POST", "/api/v1/views/change-requests", { key: ws.write, body: { operation: "create", baseId: base.id, name: "Hot", config } });
    expect(made.status).toBe(201);
    expect(made.body.config.groups[0]).toMatchObject({ match: "any", filters: [{ fieldSlug: "status", fieldId: expect.stringMatching(/^fld_/) }] });
    expect(await titles(`viewId=${made.body.id}`)).toEqual(["Ship beta", "Write spec"]);
    expect(await count(`viewId=${made.body.id}`)).toBe(2);
    expect(await titles(`viewId=${made.body.id}&filters[0][fieldSlug]=points&filters[0][operator]=gt&filters[0][value]=5`)).toEqual(["Ship beta"]);
    const refused = await server.call("POST", "/api/v1/views/change-requests", { key: ws.write, body: { operation: "create", baseId: base.id, name: "Bad", config: { groups: [{ match: "any", filters: [{ fieldSlug: "missing", operator: "eq", value: "x" }] }] } } });
    expect(refused).toMatchObject({ status: 400, body: { error: 'config.groups[0].filters[0]: the base has no field "missing".' } });
  });
});
