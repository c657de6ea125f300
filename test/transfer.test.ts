import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, createBase, freshWorkspace, REPO, type TestServer, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
const ids: Record<string, string> = {};

const create = async (base: string, fields: Record<string, unknown>) => {
  const reply = await server.call("POST", `/api/v1/bases/${base}/change-requests`, { key: ws.write, body: { fields } });
  if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${reply.text}`);
  return reply.body.id as string;
};

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace({ deliveries: false }));
  await createBase(server, ws.write, "authors", [{ slug: "name", name: "Name", type: "text" }]);
  await createBase(server, ws.write, "papers", [
    { slug: "title", name: "Title", type: "text" },
    { slug: "year", name: "Year", type: "number" },
    { slug: "tags", name: "Tags", type: "multiselect", options: { choices: [{ name: "ml" }, { name: "nlp" }] } },
    { slug: "authors", name: "Authors", type: "relation", options: { targetBaseSlug: "authors" } },
  ]);
  ids.ada = await create("authors", { name: "Ada" });
  ids.alan = await create("authors", { name: "Alan, Jr." });
  ids.attention = await create("papers", { title: "Attention", year: 2017, tags: ["ml", "nlp"], authors: [ids.ada, ids.alan] });
  ids.quoted = await create("papers", { title: 'He said "hi", then\nleft', year: -5 });
  ids.formula = await create("papers", { title: "=HYPERLINK(\"http://evil\")", year: 2020 });
});
afterAll(() => server.stop());

const exported = (query: string, key = ws.read) => server.call("GET", `/api/v1/bases/papers/export?${query}`, { key });

/** A CSV's rows and cells (quotes undone), for reading back what was exported. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") row.push(cell), (cell = "");
    else if (char === "\r" && text[i + 1] === "\n") row.push(cell), rows.push(row), (row = []), (cell = ""), i++;
    else cell += char;
  }
  return rows;
}

describe("export", () => {
  test("CSV: a header of id, slugs and times; linked records by their primary value; quotes, lists and formulas made safe", async () => {
    const reply = await exported("format=csv&sort=year");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(reply.headers.get("content-disposition")).toBe('attachment; filename="papers.csv"');
    const raw = await fetch(`${server.url}/api/v1/bases/papers/export`, { headers: { authorization: `Bearer ${ws.read}` } });
    expect([...new Uint8Array(await raw.arrayBuffer()).slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const [header, ...rows] = parseCsv(reply.text);
    expect(header).toEqual(["id", "title", "year", "tags", "authors", "createdAt", "updatedAt"]);
    expect(rows.map((row) => row.slice(0, 5))).toEqual([
      [ids.quoted, 'He said "hi", then\nleft', "-5", "", ""],
      [ids.attention, "Attention", "2017", "ml, nlp", "Ada, Alan, Jr."],
      [ids.formula, "'=HYPERLINK(\"http://evil\")", "2020", "", ""],
    ]);
    expect(rows[0][5]).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test("JSON and JSON lines keep values as stored, relation values as ids", async () => {
    const json = await exported("format=json&sort=year");
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(json.body.map((record: { id: string }) => record.id)).toEqual([ids.quoted, ids.attention, ids.formula]);
    expect(json.body[1]).toEqual({ id: ids.attention, createdAt: expect.any(String), updatedAt: expect.any(String), fields: { title: "Attention", year: 2017, tags: ["ml", "nlp"], authors: [ids.ada, ids.alan] } });
    const lines = await exported("format=jsonl&sort=-year");
    expect(lines.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const records = lines.text.trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(records.map((record) => record.fields.year)).toEqual([2020, 2017, -5]);
  });

  test("through filters or a view; an empty result is a header alone, or []", async () => {
    const filtered = await exported("format=json&filters[0][fieldSlug]=year&filters[0][operator]=gt&filters[0][value]=2000&sort=year");
    expect(filtered.body.map((record: { id: string }) => record.id)).toEqual([ids.attention, ids.formula]);
    const view = await server.call("POST", "/api/v1/views/change-requests", {
      key: ws.write,
      body: { operation: "create", baseId: "papers", name: "Recent", type: "table", config: { filters: [{ fieldSlug: "year", operator: "gte", value: "2020" }] } },
    });
    expect(view.status).toBe(201);
    expect((await exported(`format=json&viewId=${view.body.id}`)).body.map((record: { id: string }) => record.id)).toEqual([ids.formula]);
    expect((await exported("format=json&filters[0][fieldSlug]=year&filters[0][operator]=gt&filters[0][value]=3000")).body).toEqual([]);
    const empty = await exported("format=csv&filters[0][fieldSlug]=year&filters[0][operator]=gt&filters[0][value]=3000");
    expect(parseCsv(empty.text)).toEqual([["id", "title", "year", "tags", "authors", "createdAt", "updatedAt"]]);
  });

  test("a base larger than one read is walked page by page, every record once", async () => {
    await createBase(server, ws.write, "many", [{ slug: "n", name: "N", type: "number" }]);
    for (let made = 0; made < 1_203; made += 401) {
      const bulk = await server.call("POST", "/api/v1/bases/many/records/bulk-change-request", { key: ws.write, body: { records: Array.from({ length: 401 }, (_, i) => ({ n: made + i })) } });
      expect(bulk.status).toBe(201);
    }
    const reply = await server.call("GET", "/api/v1/bases/many/export?format=jsonl&sort=n", { key: ws.read });
    const numbers = reply.text.trimEnd().split("\n").map((line) => JSON.parse(line).fields.n);
    expect(numbers).toEqual(Array.from({ length: 1_203 }, (_, i) => i));
  });

  test("basalt export writes the same records to standard output or a file; a wrong format is one sentence", async () => {
    const basalt = (...args: string[]) => Bun.spawnSync([BUN, join(REPO, "src/main.ts"), "export", ...args, "--data-dir", server.dir]);
    const printed = basalt("--space", "research", "--base", "papers", "--format", "jsonl", "--sort", "year");
    expect(printed.exitCode).toBe(0);
    const viaApi = (await exported("format=jsonl&sort=year")).text;
    expect(printed.stdout.toString()).toBe(viaApi);
    const out = join(server.dir, "papers.csv");
    const written = basalt("--space", "research", "--base", "papers", "--out", out);
    expect(written.exitCode).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(`\uFEFF${(await exported("format=csv")).text}`);
    const wrong = basalt("--space", "research", "--base", "papers", "--format", "xlsx");
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr.toString().trim()).toBe("basalt: --format must be one of csv, json, jsonl.");
  });

  test("bad input is a clear 400; another space's key cannot read the base", async () => {
    const format = await exported("format=xlsx");
    expect(format.status).toBe(400);
    expect(format.body.error).toContain("csv, json, jsonl");
    const field = await exported("format=csv&sort=nothing");
    expect(field.status).toBe(400);
    expect((await server.call("GET", "/api/v1/bases/papers/export")).status).toBe(401);
    const grace = await server.user("Grace");
    await server.space(grace.id, "Elsewhere");
    const foreign = await server.call("GET", "/api/v1/bases/papers/export", { key: await server.key(grace.id, "read") });
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain("Attention");
  });
});
