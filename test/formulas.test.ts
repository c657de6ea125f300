import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { checkFormula } from "../src/content/fields/formula/check";
import { evaluateFormula } from "../src/content/fields/formula/evaluate";
import type { FormulaType } from "../src/content/fields/formula/parse";
import { createBase, deleteField, TestServer, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace({ deliveries: false })));
afterEach(() => server.stop());

const ORDER_FIELDS = [
  { slug: "item", name: "Item", type: "text", required: true },
  { slug: "price", name: "Price", type: "number" },
  { slug: "qty", name: "Quantity", type: "number" },
  { slug: "due", name: "Due", type: "date" },
  { slug: "total", name: "Total", type: "formula", options: { formula: { expression: "{price} * {qty}" } } },
];

const create = async (base: string, fields: Record<string, unknown>) => {
  const reply = await server.call("POST", `/api/v1/bases/${base}/change-requests`, { key: ws.write, body: { fields } });
  if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${reply.text}`);
  return reply.body;
};
const update = (recordId: string, fields: Record<string, unknown>) => server.call("POST", `/api/v1/records/${recordId}/change-requests`, { key: ws.write, body: { operation: "update", fields } });
const record = async (id: string) => (await server.call("GET", `/api/v1/records/${id}`, { key: ws.read })).body;
/** `filter("total", "gt", 20)` as the listing's query. */
const filter = (slug: string, operator: string, value?: unknown) => `filters[0][fieldSlug]=${slug}&filters[0][operator]=${operator}${value === undefined ? "" : `&filters[0][value]=${encodeURIComponent(String(value))}`}`;
const list = (query: string) => server.call("GET", `/api/v1/records?baseId=orders&${query}`, { key: ws.read });
const fieldChange = (base: string, body: Record<string, unknown>) => server.call("POST", `/api/v1/bases/${base}/fields/change-requests`, { key: ws.write, body: { ...body, ...(body.operation === "delete" ? {} : { autoMerge: true }) } });
const addFormula = (base: string, slug: string, expression: string) => fieldChange(base, { operation: "create", slug, name: slug, type: "formula", options: { formula: { expression } } });
const fieldOf = async (base: string, slug: string) => (await server.call("GET", `/api/v1/bases/${base}`, { key: ws.read })).body.fields.find((f: any) => f.slug === slug);

describe("formula fields", () => {
  test("a formula over the record's fields is computed on write, shown, filtered and sorted like any field", async () => {
    await createBase(server, ws.write, "orders", ORDER_FIELDS);
    expect((await fieldOf("orders", "total")).options).toEqual({ formula: { expression: "{price} * {qty}", resultType: "number", computedAtRead: false } });
    const pens = await create("orders", { item: "pens", price: 2.5, qty: 4, total: 999 });
    expect(pens.fields.total).toBe(10);
    const ink = await create("orders", { item: "ink", price: 30, qty: 1 });
    await create("orders", { item: "paper", price: 5 });

    expect((await update(pens.id, { qty: 40 })).status).toBe(201);
    expect((await record(pens.id)).fields.total).toBe(100);

    const over = await list(`${filter("total", "gt", 20)}&sort=-total`);
    expect(over.status).toBe(200);
    expect(over.body.records.map((r: any) => [r.fields.item, r.fields.total])).toEqual([["pens", 100], ["ink", 30]]);
    const ascending = await list("sort=total");
    expect(ascending.body.records.map((r: any) => r.fields.total)).toEqual([null, 30, 100]);
    expect((await list(filter("total", "isEmpty"))).body.records.map((r: any) => r.fields.item)).toEqual(["paper"]);
    expect(ink.fields.total).toBe(30);
  });

  test("text, logic and date functions", async () => {
    await createBase(server, ws.write, "orders", [
      ...ORDER_FIELDS,
      { slug: "label", name: "Label", type: "formula", options: { formula: { expression: 'UPPER(TRIM({item})) & " x" & {qty} & IF({total} > 50, " (large)", "")' } } },
      { slug: "ship", name: "Ship by", type: "formula", options: { formula: { expression: 'DATEADD({due}, 1, "month")' } } },
      { slug: "days", name: "Days", type: "formula", options: { formula: { expression: 'DATETIME_DIFF({ship}, {due}, "days")' } } },
      { slug: "when", name: "When", type: "formula", options: { formula: { expression: 'DATETIME_FORMAT({due}, "D MMM YYYY")' } } },
      { slug: "ok", name: "OK", type: "formula", options: { formula: { expression: "AND({qty} >= 1, NOT({price} = BLANK()), LEN({item}) < 10)" } } },
      { slug: "rounded", name: "Rounded", type: "formula", options: { formula: { expression: "ROUND(MAX({price}, ABS(-3)) / 3, 2)" } } },
    ]);
    const order = await create("orders", { item: "  pens ", price: 20, qty: 3, due: "2024-01-31" });
    expect(order.fields).toMatchObject({ label: "PENS x3 (large)", ship: "2024-02-29", days: 29, when: "31 Jan 2024", ok: true, rounded: 6.67 });
    expect((await fieldOf("orders", "ok")).options.formula.resultType).toBe("boolean");
    expect((await list(filter("ok", "eq", true))).body.records).toHaveLength(1);
    expect((await list(filter("ship", "lt", "2024-03-01"))).body.records).toHaveLength(1);
  });

  test("a formula that fails for one record is null for it, and the page still answers", async () => {
    await createBase(server, ws.write, "orders", [
      ...ORDER_FIELDS,
      { slug: "each", name: "Each", type: "formula", options: { formula: { expression: "{price} / {qty}" } } },
      { slug: "later", name: "Later", type: "formula", options: { formula: { expression: 'DATEADD({item}, 1, "day")' } } },
    ]);
    await create("orders", { item: "2024-05-01", price: 10, qty: 0 });
    await create("orders", { item: "not a date", price: 10, qty: 4 });
    const page = await list("sort=item");
    expect(page.status).toBe(200);
    expect(page.body.records.map((r: any) => [r.fields.each, r.fields.later])).toEqual([
      [null, "2024-05-02"],
      [2.5, null],
    ]);
  });

  test("an unknown field, a type error, a circle, an unknown function and bad syntax are 400s that name them, and nothing is made", async () => {
    await createBase(server, ws.write, "orders", ORDER_FIELDS);
    const cases: [string, RegExp][] = [
      ["{prize} * 2", /"bad".*\{prize\} at character 1 is not a field/],
      ["{item} * 2", /"bad".*"\*" at character 8 needs numbers, not text/],
      ["{bad} + 1", /\{bad\} -> \{bad\}.*circle/],
      ["SUMIF({price})", /SUMIF at character 1 is not a function/],
      ["({price} + 1", /"\)" was expected/],
      ['DATEADD({due}, 1, "fortnight")', /"fortnight" .* is not a unit/],
    ];
    for (const [expression, message] of cases) {
      const reply = await addFormula("orders", "bad", expression);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatch(message);
    }
    expect(await fieldOf("orders", "bad")).toBeUndefined();

    const circle = await server.call("POST", "/api/v1/bases", {
      key: ws.write,
      body: {
        slug: "loops",
        name: "Loops",
        fields: [
          { slug: "a", name: "A", type: "formula", options: { formula: { expression: "{b} + 1" } } },
          { slug: "b", name: "B", type: "formula", options: { formula: { expression: "{a} + 1" } } },
        ],
      },
    });
    expect(circle.status).toBe(400);
    expect(circle.body.error).toMatch(/\{a\} -> \{b\} -> \{a\}/);
    expect((await server.call("GET", "/api/v1/bases/loops", { key: ws.read })).status).toBe(404);
  });

  test("a formula reading linked records or the clock is computed when read: shown, never filtered or sorted", async () => {
    await createBase(server, ws.write, "customers", [{ slug: "name", name: "Name", type: "text" }]);
    await createBase(server, ws.write, "orders", [
      ...ORDER_FIELDS,
      { slug: "customer", name: "Customer", type: "relation", options: { targetBaseSlug: "customers", multiple: false } },
      { slug: "who", name: "Who", type: "lookup", options: { lookup: { relationFieldSlug: "customer", targetFieldSlug: "name", rollup: "concatenate" } } },
      { slug: "greeting", name: "Greeting", type: "formula", options: { formula: { expression: '"Dear " & {who}' } } },
      { slug: "age", name: "Age", type: "formula", options: { formula: { expression: 'DATETIME_DIFF(TODAY(), {due}, "days")' } } },
    ]);
    expect((await fieldOf("orders", "greeting")).options.formula).toEqual({ expression: '"Dear " & {who}', resultType: "text", computedAtRead: true });
    const ada = await create("customers", { name: "Ada" });
    const order = await create("orders", { item: "pens", customer: ada.id, due: "2026-11-01" });
    expect(order.fields.greeting).toBe("Dear Ada");
    expect(order.fields.age).toBe(20);
    server.clock.advance(2 * 86_400_000);
    expect((await record(order.id)).fields.age).toBe(22);
    await update(ada.id, { name: "Ada L." });
    expect((await list("")).body.records[0].fields.greeting).toBe("Dear Ada L.");

    for (const query of [filter("greeting", "eq", "x"), "sort=age"]) {
      const refused = await list(query);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/computed when read/);
    }
  });

  test("changing a formula rewrites every record's stored value in the background; meanwhile records show the new value", async () => {
    await createBase(server, ws.write, "orders", ORDER_FIELDS);
    const items = Array.from({ length: 2500 }, (_, i) => ({ item: `item ${i}`, price: i, qty: 2 }));
    for (let i = 0; i < items.length; i += 1000) {
      const bulk = await server.call("POST", "/api/v1/bases/orders/records/bulk-change-request", { key: ws.write, body: { records: items.slice(i, i + 1000), autoMerge: true } });
      expect(bulk.status).toBe(201);
    }
    const total = await fieldOf("orders", "total");
    expect((await fieldChange("orders", { operation: "update", fieldId: total.id, patch: { options: { formula: { expression: "{price} * {qty} + 1" } } } })).status).toBe(201);
    const first = (await list("sort=createdAt&limit=1")).body.records[0];
    expect(first.fields.total).toBe(1);
    await server.fieldUpkeep.settled();
    const stored = server.ctx.store.sqlite.query("SELECT count(*) AS n FROM records WHERE json_extract(data, '$.total') = json_extract(data, '$.price') * 2 + 1").get() as { n: number };
    expect(stored.n).toBe(2500);
    const matches = await server.call("GET", `/api/v1/records/count?baseId=orders&${filter("total", "eq", 4999)}`, { key: ws.read });
    expect(matches.body).toEqual({ total: 1 });
  });

  test("a field a formula reads cannot be deleted, and a formula keeps what it yields", async () => {
    await createBase(server, ws.write, "orders", ORDER_FIELDS);
    const price = await fieldOf("orders", "price");
    const refused = await fieldChange("orders", { operation: "delete", fieldId: price.id });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/formula "total" of the base "orders" reads "price"/);

    const total = await fieldOf("orders", "total");
    const retyped = await fieldChange("orders", { operation: "update", fieldId: total.id, patch: { options: { formula: { expression: '{item} & "!"' } } } });
    expect(retyped.status).toBe(400);
    expect(retyped.body.error).toMatch(/would yield text instead of number/);
    const clocked = await fieldChange("orders", { operation: "update", fieldId: total.id, patch: { options: { formula: { expression: 'DATETIME_DIFF(NOW(), {due}, "days")' } } } });
    expect(clocked.status).toBe(400);
    expect(clocked.body.error).toMatch(/computed when read instead of stored/);

    expect((await deleteField(server, ws.write, "orders", total.id)).body.changeRequest.status).toBe("merged");
    expect((await deleteField(server, ws.write, "orders", price.id)).body.changeRequest.status).toBe("merged");
  });
});

describe("the formula language", () => {
  const types: Record<string, FormulaType> = { n: "number", s: "text", d: "date", b: "boolean", l: "list" };
  const values: Record<string, unknown> = { n: -7.25, s: "Mixed Case", d: "2024-02-29T10:30:00Z", b: false, l: [3, 9, 1] };
  const run = (expression: string) => {
    const { tree, type } = checkFormula(expression, (slug) => types[slug]);
    return evaluateFormula(tree, type, (slug) => values[slug], Date.parse("2026-11-25T08:00:00Z"));
  };

  test("operators keep their precedence and blanks propagate", () => {
    expect(run("1 + 2 * 3 - 4 / 2")).toBe(5);
    expect(run("(1 + 2) * 3 % 4")).toBe(1);
    expect(run('1 + 2 & "x" & 3 = "3x3"')).toBe(true);
    expect(run("-{n} > 7 = TRUE")).toBe(true);
    expect(run("BLANK() + 1")).toBeNull();
    expect(run("{n} <> {n}")).toBe(false);
  });

  test("functions", () => {
    expect(run("ABS({n})")).toBe(7.25);
    expect(run("ROUND({n}, 1)")).toBe(-7.3);
    expect(run("MIN({l}, 2)")).toBe(1);
    expect(run("LOWER({s}) & UPPER({s})")).toBe("mixed caseMIXED CASE");
    expect(run("OR({b}, LEN({s}) = 10)")).toBe(true);
    expect(run('CONCAT("a", 1, {b})')).toBe("a1false");
    expect(run("IF({b}, 1)")).toBeNull();
    expect(run('DATEADD({d}, 1, "year")')).toBe("2025-02-28T10:30:00.000Z");
    expect(run('DATETIME_DIFF({d}, "2024-01-01", "months")')).toBe(1);
    expect(run('DATETIME_FORMAT({d}, "YYYY-MM-DD HH:mm [UTC]")')).toBe("2024-02-29 10:30 UTC");
    expect(run("TODAY()")).toBe("2026-11-25");
    expect(run("NOW()")).toBe("2026-11-25T08:00:00.000Z");
  });

  test("a formula is bounded in length and depth", () => {
    expect(() => run("(".repeat(100) + "1" + ")".repeat(100))).toThrow(/nest at most 64/);
    expect(() => run("1" + " + 1".repeat(1200))).toThrow(/at most (4000 characters|1000 parts)/);
  });
});

describe("checking a formula before it is a field", () => {
  test("answers what it would yield, or the sentence a field change would refuse it with; nothing is made", async () => {
    await createBase(server, ws.write, "orders", ORDER_FIELDS);
    const check = (expression: string) => server.call("POST", "/api/v1/bases/orders/formulas/check", { key: ws.read, body: { expression } });
    expect((await check("{price} * {qty} + {total}")).body).toEqual({ valid: true, resultType: "number", computedAtRead: false, error: null });
    expect((await check('CONCAT({item}, "!")')).body).toMatchObject({ valid: true, resultType: "text" });
    expect((await check("TODAY()")).body).toMatchObject({ valid: true, computedAtRead: true });
    const wrong = await check("{item} * 2");
    expect(wrong.body).toMatchObject({ valid: false, resultType: null });
    expect(wrong.body.error).toMatch(/"\*" at character 8 needs numbers, not text/);
    expect(wrong.body.error).not.toContain("formula-being-checked");
    expect((await check("{prize}")).body.error).toMatch(/\{prize\} at character 1 is not a field/);
    expect((await check("")).status).toBe(400);
    expect((await fieldOf("orders", "formula-being-checked"))).toBeUndefined();
  });
});
