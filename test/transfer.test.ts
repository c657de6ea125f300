import { inflating, lying, sharing, workbook, XLSX } from "./workbook";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, createBase, freshWorkspace, REPO, TestServer, workspace, type Workspace } from "./helpers";

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

  test("CSV: every cell that is not a number is made safe, a linked record's name and a file's too", async () => {
    await createBase(server, ws.write, "signers", [{ slug: "name", name: "Name", type: "text" }]);
    await createBase(server, ws.write, "letters", [
      { slug: "title", name: "Title", type: "text" },
      { slug: "signers", name: "Signers", type: "relation", options: { targetBaseSlug: "signers" } },
    ]);
    const evil = await create("signers", { name: '=HYPERLINK("http://evil","x")' });
    await create("letters", { title: "Plain", signers: [evil] });
    const reply = await server.call("GET", "/api/v1/bases/letters/export?format=csv", { key: ws.read });
    const [, row] = parseCsv(reply.text);
    expect(row.slice(1, 3)).toEqual(["Plain", `'=HYPERLINK("http://evil","x")`]);
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

  test("as a screen shows it: only the fields asked for, in their order, with their names as headers", async () => {
    const shown = await exported("format=csv&fields=year,title&headers=names&filters[0][fieldSlug]=year&filters[0][operator]=gt&filters[0][value]=2000&sort=year");
    expect(parseCsv(shown.text.replace(/^\uFEFF/, ""))).toEqual([
      ["id", "Year", "Title", "Created", "Last modified"],
      [ids.attention, "2017", "Attention", expect.any(String), expect.any(String)],
      [ids.formula, "2020", "'=HYPERLINK(\"http://evil\")", expect.any(String), expect.any(String)],
    ]);
    const json = await exported("format=json&fields=title&sort=year");
    expect(json.body[0].fields).toEqual({ title: 'He said "hi", then\nleft' });
    expect((await exported("format=csv&fields=nothing")).status).toBe(400);
    expect((await exported("format=csv&headers=labels")).status).toBe(400);
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

describe("import", () => {
  const upload = (base: string, query: string, body: string | Uint8Array<ArrayBuffer> | FormData, contentType: string | null, key = ws.write) =>
    fetch(`${server.url}/api/v1/bases/${base}/imports${query ? `?${query}` : ""}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, ...(contentType ? { "content-type": contentType } : {}) },
      body,
    }).then(async (response) => ({ status: response.status, body: await response.json() }));
  const count = async (base: string) => (await server.call("GET", `/api/v1/records/count?baseId=${base}`, { key: ws.read })).body.total as number;

  test("a preview maps columns by slug or name, suggests types, shows rows and errors by line, and writes nothing", async () => {
    await createBase(server, ws.write, "books", [
      { slug: "title", name: "Title", type: "text", required: true },
      { slug: "pages", name: "Page count", type: "number" },
      { slug: "read", name: "Read", type: "checkbox" },
    ]);
    const csv = '\uFEFFtitle;Page count;Read;Genre;id\r\n"Dune; the novel";412;yes;sf;x1\r\nEmma;many;no;classic;x2\r\n;10;no;sf;x3\r\nWalden;200;1;classic;x4\r\n';
    const reply = await upload("books", "preview=true", csv, "text/csv");
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ format: "csv", delimiter: ";", rowCount: 4, errorCount: 2 });
    expect(reply.body.columns).toEqual([
      { name: "title", action: "map", fieldSlug: "title", suggestedType: "text", reason: null },
      { name: "Page count", action: "map", fieldSlug: "pages", suggestedType: "number", reason: null },
      { name: "Read", action: "map", fieldSlug: "read", suggestedType: "checkbox", reason: null },
      { name: "Genre", action: "skip", fieldSlug: null, suggestedType: "select", reason: expect.stringContaining("createFields=true") },
      { name: "id", action: "skip", fieldSlug: null, suggestedType: "text", reason: expect.stringContaining("export") },
    ]);
    expect(reply.body.rows[0]).toEqual({ line: 2, fields: { title: "Dune; the novel", pages: 412, read: true }, errors: [] });
    expect(reply.body.errors).toEqual([
      { line: 3, column: "Page count", message: 'Page count "many" is not a number.' },
      { line: 4, column: "title", message: "title is required." },
    ]);
    expect(await count("books")).toBe(0);
  });

  test("a file with any bad row imports nothing and names every line; a good one is one change request", async () => {
    const bad = await upload("books", "", "title,pages\nA,1\nB,x\nC,3,4\n", "text/csv");
    expect(bad.status).toBe(400);
    expect(bad.body.data.errors.map((error: { line: number }) => error.line)).toEqual([3, 4]);
    expect(bad.body.error).toContain("nothing was imported");
    expect(await count("books")).toBe(0);

    const proposed = await upload("books", "message=From%20the%20library", "title,pages\nA,1\nB,2\n", "text/csv", ws.propose);
    expect(proposed.status).toBe(201);
    expect(proposed.body).toEqual({ importId: expect.stringMatching(/^imp_/), rowCount: 2, changeRequests: [{ id: expect.stringMatching(/^crq_/), status: "in_review", operationCount: 2 }] });
    const waiting = await server.call("GET", `/api/v1/change-requests/${proposed.body.changeRequests[0].id}`, { key: ws.read });
    expect(waiting.body).toMatchObject({ sourceMeta: { message: "From the library" }, operationCount: 2 });
    expect(await count("books")).toBe(0);
    const createdEvents = () => (server.ctx.store.sqlite.query("SELECT count(*) AS n FROM events WHERE type = 'record.created'").get() as { n: number }).n;
    const before = createdEvents();
    const merged = await upload("books", "", "title,pages\nA,1\nB,2\n", "text/csv");
    expect(merged.body.changeRequests.map((part: { status: string }) => part.status)).toEqual(["merged"]);
    expect(createdEvents() - before).toBe(2);
    const titles = (await server.call("GET", "/api/v1/records?baseId=books&sort=title&include=none", { key: ws.read })).body.records.map((record: { fields: { title: string; pages: number } }) => [record.fields.title, record.fields.pages]);
    expect(titles).toEqual([["A", 1], ["B", 2]]);
  });

  test("a file merges in parts of 250 rows with write; waiting for review, more than 1,000 rows are refused whole", async () => {
    await createBase(server, ws.write, "tallies", [{ slug: "n", name: "N", type: "number" }]);
    const csv = `n\n${Array.from({ length: 2_500 }, (_, i) => i).join("\n")}\n`;
    const refused = await upload("tallies", "", csv, "text/csv", ws.propose);
    expect([refused.status, refused.body.error]).toEqual([400, expect.stringContaining("at most 1,000")]);
    expect((await upload("tallies", "autoMerge=false", csv, "text/csv")).status).toBe(400);
    expect(await count("tallies")).toBe(0);
    const merged = await upload("tallies", "message=Counts", csv, "text/csv");
    expect(merged.status).toBe(201);
    expect(merged.body.rowCount).toBe(2_500);
    expect(merged.body.changeRequests.map((part: { status: string; operationCount: number }) => [part.status, part.operationCount])).toEqual(Array.from({ length: 10 }, () => ["merged", 250]));
    const last = await server.call("GET", `/api/v1/change-requests/${merged.body.changeRequests[9].id}`, { key: ws.read });
    expect(last.body.sourceMeta.message).toBe("Counts (rows 2251-2500 of 2500)");
    const reviewed = await upload("tallies", "", `n\n${Array.from({ length: 600 }, (_, i) => i).join("\n")}\n`, "text/csv", ws.propose);
    expect(reviewed.body.changeRequests.map((part: { status: string; operationCount: number }) => [part.status, part.operationCount])).toEqual([["in_review", 600]]);
    expect(await count("tallies")).toBe(2_500);
    expect(readdirSync(join(server.dir, "files", "tmp"))).toEqual([]);
  });

  test("createFields makes each unknown column a field of its suggested type, with write only", async () => {
    await createBase(server, ws.write, "films", [{ slug: "title", name: "Title", type: "text" }]);
    const csv = "Title,Released,Genre,Rating,Site\nAlien,1979-05-25,sf,8.5,https://example.com/alien\nHeat,1995-12-15,crime,8.3,\nSolaris,1972-03-20,sf,8.1,\nRonin,1998-09-25,crime,7.2,\n";
    expect((await upload("films", "createFields=true", csv, "text/csv", ws.propose)).status).toBe(403);
    expect((await server.call("GET", "/api/v1/bases/films", { key: ws.read })).body.fields).toHaveLength(1);
    const reply = await upload("films", "createFields=true", csv, "text/csv");
    expect(reply.status).toBe(201);
    const fields = (await server.call("GET", "/api/v1/bases/films", { key: ws.read })).body.fields;
    expect(fields.map((field: { slug: string; type: string }) => [field.slug, field.type])).toEqual([["title", "text"], ["released", "date"], ["genre", "select"], ["rating", "number"], ["site", "url"]]);
    expect(fields[2].options.choices.map((choice: { name: string }) => choice.name)).toEqual(["sf", "crime"]);
    const alien = (await server.call("GET", "/api/v1/records?baseId=films&sort=title&include=none&limit=1", { key: ws.read })).body.records[0];
    expect(alien.fields).toEqual({ title: "Alien", released: "1979-05-25", genre: "sf", rating: 8.5, site: "https://example.com/alien" });
  });

  test("JSON arrays, JSON lines and multipart uploads; an export imports back as it was", async () => {
    await createBase(server, ws.write, "copies", [
      { slug: "title", name: "Title", type: "text" },
      { slug: "year", name: "Year", type: "number" },
      { slug: "tags", name: "Tags", type: "multiselect", options: { choices: [{ name: "ml" }, { name: "nlp" }] } },
    ]);
    const exported = (await server.call("GET", "/api/v1/bases/papers/export?format=json&sort=year", { key: ws.read })).body as { fields: Record<string, unknown> }[];
    const rows = exported.map(({ fields }) => Object.fromEntries(Object.entries(fields).filter(([slug]) => ["title", "year", "tags"].includes(slug))));
    expect((await upload("copies", "", JSON.stringify(rows), "application/json")).status).toBe(201);
    const copied = (await server.call("GET", "/api/v1/bases/copies/export?format=json&sort=year", { key: ws.read })).body as { fields: Record<string, unknown> }[];
    expect(copied.map(({ fields }) => fields)).toEqual(rows);

    const lines = '{"title":"L1","year":1}\n\n{"title":"L2","year":"two"}\n';
    const badLine = await upload("copies", "", lines, "application/x-ndjson");
    expect(badLine.status).toBe(400);
    expect(badLine.body.data.errors).toEqual([{ line: 3, column: "year", message: "year must be a finite number." }]);

    const form = new FormData();
    form.append("file", new File(["title,year\nM1,5\n"], "../../etc/passwd.csv", { type: "text/csv" }));
    const multipart = await upload("copies", "", form, null);
    expect(multipart.status).toBe(201);
    expect(await count("copies")).toBe(rows.length + 1);
  });

  test("a new base from a file in one call: a field per column of the type its values fit, then its rows (write only)", async () => {
    const make = (query: string, key = ws.write) =>
      fetch(`${server.url}/api/v1/imports?${query}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "text/csv" }, body: "Name,Born,Field\nAda,1815,maths\nAlan,1912,maths\nGrace,1906,navy\nEdsger,1930,maths\n" }).then(async (response) => ({ status: response.status, body: await response.json() }));
    // A preview says what the base would be and its first rows, and makes nothing.
    const preview = await make("preview=true", ws.propose);
    expect(preview.status).toBe(200);
    expect(preview.body.columns.map((column: { name: string; action: string; suggestedType: string }) => [column.name, column.action, column.suggestedType])).toEqual([["Name", "create", "text"], ["Born", "create", "number"], ["Field", "create", "select"]]);
    expect(preview.body.rows[0]).toMatchObject({ line: 2, errors: [] });
    // Values of columns that become fields are shown as the file has them (their type is decided by every row).
    expect(preview.body.rows[0].fields).toEqual({ name: "Ada", born: "1815", field: "maths" });
    const refused = await make("name=People", ws.propose);
    expect(refused.status).toBe(403);
    expect((await server.call("GET", "/api/v1/bases", { key: ws.read })).body.some((base: { slug: string }) => base.slug === "people")).toBe(false);
    const made = await make("name=People&message=Imported");
    expect(made.status).toBe(201);
    expect(made.body.base).toMatchObject({ slug: "people", name: "People" });
    expect(made.body.base.fields.map((field: { slug: string; type: string }) => [field.slug, field.type])).toEqual([["name", "text"], ["born", "number"], ["field", "select"]]);
    expect(made.body.import).toEqual({ importId: expect.stringMatching(/^imp_/), rowCount: 4, changeRequests: [{ id: expect.any(String), status: "merged", operationCount: 4 }] });
    const people = (await server.call("GET", "/api/v1/records?baseId=people&sort=born&include=none", { key: ws.read })).body.records.map((record: { fields: Record<string, unknown> }) => record.fields);
    expect(people[0]).toEqual({ name: "Ada", born: 1815, field: "maths" });
    expect((await make("")).status).toBe(400);
  });

  test("choices that differ only in case are one choice, and comma-separated items several (issue 47, item 8)", async () => {
    const rows = ["Review,infra, p1", "review,p1", "REVIEW,infra", "Done,\"infra, p1\"", "done,p1", "Review,infra"].map((row) => row.replace(/^([^,]+),(.*)$/, (_, status, tags) => `${status},${tags.startsWith('"') ? tags : `"${tags}"`}`));
    const body = `Status,Tags\n${rows.join("\n")}\n`;
    const make = (query: string) =>
      fetch(`${server.url}/api/v1/imports?${query}`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": "text/csv" }, body }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const preview = await make("preview=true");
    expect(preview.body.columns.map((column: { suggestedType: string }) => column.suggestedType)).toEqual(["select", "multiselect"]);
    const made = await make("name=Triage");
    expect(made.status).toBe(201);
    const [status, tags] = made.body.base.fields;
    expect(status.options.choices.map((choice: { name: string }) => choice.name)).toEqual(["Review", "Done"]);
    expect(tags.options.choices.map((choice: { name: string }) => choice.name)).toEqual(["infra", "p1"]);
    const records = (await server.call("GET", `/api/v1/records?baseId=${made.body.base.id}&include=none&limit=10`, { key: ws.read })).body.records.map((record: { fields: Record<string, unknown> }) => record.fields);
    expect(records.map((fields: { status: string }) => fields.status).sort()).toEqual(["Done", "Done", "Review", "Review", "Review", "Review"]);
    expect(records.some((fields: { tags: string[] }) => JSON.stringify(fields.tags) === JSON.stringify(["infra", "p1"]))).toBe(true);
  });

  test("a column's type is the person's to choose: checked as that type in the preview, made so (issue 47, item 8)", async () => {
    const body = "Name,Born,Field\nAda,1815,maths\nAlan,1912,maths\nGrace,1906,navy\n";
    const make = (query: string) =>
      fetch(`${server.url}/api/v1/imports?${query}`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": "text/csv" }, body }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const chosen = await make("preview=true&types[Born]=text&types[Field]=multiselect");
    expect(chosen.body.columns.map((column: { suggestedType: string }) => column.suggestedType)).toEqual(["text", "text", "multiselect"]);
    expect(chosen.body.errorCount).toBe(0);
    const wrong = await make("preview=true&types[Name]=number");
    expect(wrong.body.errorCount).toBe(3);
    expect(wrong.body.errors[0]).toMatchObject({ line: 2, column: "Name" });
    expect((await make("preview=true&types[Name]=relation")).status).toBe(400);
    const made = await make("name=Chosen types&types[Born]=text&types[Field]=multiselect");
    expect(made.status).toBe(201);
    expect(made.body.base.fields.map((field: { type: string }) => field.type)).toEqual(["text", "text", "multiselect"]);
    const ada = (await server.call("GET", `/api/v1/records?baseId=${made.body.base.id}&sort=name&include=none`, { key: ws.read })).body.records[0].fields;
    expect(ada).toEqual({ name: "Ada", born: "1815", field: ["maths"] });
  });

  test("basalt import: into a base or a new base, proposed as the user named, from the command line", async () => {
    const file = join(server.dir, "more-books.csv");
    writeFileSync(file, "title,pages\nOdyssey,541\nIliad,683\n");
    const basalt = (...args: string[]) => Bun.spawnSync([BUN, join(REPO, "src/main.ts"), "import", ...args, "--data-dir", server.dir]);
    const preview = basalt("--space", "research", "--as", "ada@example.com", "--base", "books", "--from", file, "--preview");
    expect(preview.exitCode).toBe(0);
    expect(JSON.parse(preview.stdout.toString())).toMatchObject({ rowCount: 2, errorCount: 0 });
    const before = await count("books");
    const imported = basalt("--space", "research", "--as", "ada@example.com", "--base", "books", "--from", file, "--message", "Classics");
    expect([imported.exitCode, imported.stdout.toString()]).toEqual([0, expect.stringContaining("Imported 2 row(s) into books in 1 change request(s): merged")]);
    expect(await count("books")).toBe(before + 2);
    const id = /\((crq_[^)]+)\)/.exec(imported.stdout.toString())![1];
    const proposal = (await server.call("GET", `/api/v1/change-requests/${id}`, { key: ws.read })).body;
    expect(proposal.sourceAttribution).toMatchObject({ channel: "cli", displayName: "Ada" });
    const made = basalt("--space", "research", "--as", "ada@example.com", "--name", "Epics", "--from", file);
    expect(made.exitCode).toBe(0);
    expect((await server.call("GET", "/api/v1/bases/epics", { key: ws.read })).body.fields.map((field: { slug: string }) => field.slug)).toEqual(["title", "pages"]);
    const stranger = basalt("--space", "research", "--as", "nobody@example.com", "--base", "books", "--from", file);
    expect([stranger.exitCode, stranger.stderr.toString().trim()]).toEqual([1, "basalt: No user has the e-mail nobody@example.com."]);
  });

  test("broken files are clear errors that write nothing", async () => {
    const before = await count("books");
    const cases: [string | Uint8Array<ArrayBuffer>, string | null, number, string][] = [
      ['title\n"never closed\n', "text/csv", 400, "Line 2: a quoted cell is never closed."],
      ['title\n"ab"c\n', "text/csv", 400, "Line 2: text follows a closing quote"],
      [new Uint8Array([0x74, 0x69, 0x74, 0x6c, 0x65, 0x0a, 0xff, 0xfe, 0x0a]), "text/csv", 400, "not valid UTF-8"],
      [`${Array.from({ length: 10_000 }, (_, i) => `c${i}`).join(",")}\n`, "text/csv", 400, "at most 500"],
      ["title,title\nA,B\n", "text/csv", 400, 'the column "title" appears twice'],
      ['{"title":"x"}', "application/json", 400, "an array of objects"],
      ["[1,2]", "application/json", 400, "Item 1 is not an object"],
      ["title\nA\n", "application/xml", 415, "text/csv"],
      ["title\n", "text/csv", 400, "no rows"],
      // A JSON array is read an item at a time: each error names its item, and no row may be a file's worth.
      ['[{"title":"a"},{"title":', "application/json", 400, "the array is not closed"],
      ['[{"title":"a"}] {}', "application/json", 400, "more after the array's end"],
      ['[{"title":"a"},{"title" "b"}]', "application/json", 400, "item 2"],
      [`[{"title":"a"},{"title":"${"x".repeat(9 * 1024 * 1024)}"}]`, "application/json", 400, "Item 2 is longer than 8,388,608 characters"],
      [`{"title":"${"x".repeat(9 * 1024 * 1024)}"}\n`, "application/x-ndjson", 400, "Line 1 is longer than 8,388,608 characters"],
      [`title\n"${"x".repeat(9 * 1024 * 1024)}"\n`, "text/csv", 400, "The cell of line 2 is longer than"],
    ];
    for (const [body, type, status, message] of cases) {
      const reply = await upload("books", "", body, type);
      expect([reply.status, reply.body.error]).toEqual([status, expect.stringContaining(message)]);
    }
    expect(await count("books")).toBe(before);
  });

  test("an Excel workbook: its first sheet's header names the columns, dates and numbers keep their types, errors name the sheet's rows", async () => {
    const sheet = workbook([
      ["Name", "Due", "Points", "Done"],
      ["Ship dashboard", new Date(Date.UTC(2026, 11, 24)), 3.5, true],
      [],
      ["Write docs", new Date(Date.UTC(2027, 0, 5)), 2, false],
    ]);
    const make = (query: string, body: Uint8Array<ArrayBuffer>) =>
      fetch(`${server.url}/api/v1/imports?${query}`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": XLSX }, body }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const preview = await make("preview=true", sheet);
    expect(preview.status).toBe(200);
    expect(preview.body.columns.map((column: { name: string; suggestedType: string }) => [column.name, column.suggestedType])).toEqual([["Name", "text"], ["Due", "date"], ["Points", "number"], ["Done", "checkbox"]]);
    expect(preview.body.rows.map((row: { line: number }) => row.line)).toEqual([2, 4]);
    const made = await make("name=Sprint", sheet);
    expect(made.status).toBe(201);
    const rows = (await server.call("GET", "/api/v1/records?baseId=sprint&sort=due&include=none", { key: ws.read })).body.records.map((record: { fields: Record<string, unknown> }) => record.fields);
    expect(rows).toEqual([{ name: "Ship dashboard", due: "2026-12-24", points: 3.5, done: true }, { name: "Write docs", due: "2027-01-05", points: 2, done: false }]);

    // Into a base with fields: a bad value is named by the sheet's row.
    await createBase(server, ws.write, "tally", [{ slug: "name", name: "Name", type: "text" }, { slug: "points", name: "Points", type: "number" }]);
    const bad = await upload("tally", "", workbook([["Name", "Points"], ["A", 1], ["B", "lots"]]), XLSX);
    expect(bad.status).toBe(400);
    expect(bad.body.data.errors).toEqual([expect.objectContaining({ line: 3 })]);
    expect((await upload("tally", "", new TextEncoder().encode("not a zip"), XLSX)).body.error).toBe("The file is not an .xlsx workbook (it is not a zip archive).");
  });

  test("a workbook that would inflate past four times --max-import is refused, counted as it inflates", async () => {
    const small = new TestServerWithImportLimit();
    await small.ready;
    const send = (body: Uint8Array<ArrayBuffer>) => fetch(`${small.server.url}/api/v1/bases/notes/imports?preview=true`, { method: "POST", headers: { authorization: `Bearer ${small.key}`, "content-type": XLSX }, body });
    try {
      const bomb = inflating(64 * 1024);
      expect(bomb.byteLength).toBeLessThan(1024);
      const reply = await send(bomb);
      expect(reply.status).toBe(413);
      expect((await reply.json()).error).toContain("inflates to more than 4096 bytes");
      // The sizes the archive declares are not believed: one that says 100 bytes for 64 KB is refused the same.
      const liar = await send(lying(64 * 1024, 100));
      expect([liar.status, (await liar.json()).error]).toEqual([413, expect.stringContaining("inflates to more than 4096 bytes")]);
    } finally {
      await small.server.stop();
    }
  });

  test("a workbook's rows are counted as they are made: many rows naming one long shared string are refused past --max-import", async () => {
    const small = new TestServerWithImportLimit("8kb");
    await small.ready;
    const send = (body: Uint8Array<ArrayBuffer>) => fetch(`${small.server.url}/api/v1/bases/notes/imports?preview=true`, { method: "POST", headers: { authorization: `Bearer ${small.key}`, "content-type": XLSX }, body });
    try {
      // A few bytes of XML a row, however long the string: 3 KB that would come to 200 KB of rows (a 10 KB one, to a gigabyte).
      const shared = sharing("x".repeat(2000), 100);
      expect(shared.byteLength).toBeLessThan(8 * 1024);
      const reply = await send(shared);
      expect([reply.status, (await reply.json()).error]).toEqual([413, "The workbook's rows come to more than 8192 bytes, the most an import reads (the operator sets it with --max-import)."]);
      const fits = await send(sharing("short", 2));
      expect([fits.status, (await fits.json()).rowCount]).toEqual([200, 2]);
    } finally {
      await small.server.stop();
    }
  });

  test("a workbook whose directory says 1 KB for a 100 MB sheet is refused without inflating it, and the server answers meanwhile", async () => {
    const liar = lying(100 * 1024 * 1024, 1024);
    expect(liar.byteLength).toBeLessThan(150 * 1024);
    const sent = fetch(`${server.url}/api/v1/imports?preview=true`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": XLSX }, body: liar });
    expect((await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).status).toBe(200);
    const reply = await sent;
    expect([reply.status, (await reply.json()).error]).toEqual([413, `The workbook inflates to more than ${32 * 1024 * 1024} bytes, the most an import reads from one.`]);
  });

  test("a file past --max-import is 413, announced or streamed", async () => {
    const small = new TestServerWithImportLimit();
    await small.ready;
    try {
      const big = `title\n${"x".repeat(4096)}\n`;
      const announced = await fetch(`${small.server.url}/api/v1/bases/notes/imports`, { method: "POST", headers: { authorization: `Bearer ${small.key}`, "content-type": "text/csv" }, body: big });
      expect(announced.status).toBe(413);
      const streamed = await fetch(`${small.server.url}/api/v1/bases/notes/imports`, {
        method: "POST",
        headers: { authorization: `Bearer ${small.key}`, "content-type": "text/csv" },
        body: new ReadableStream({ start: (controller) => (controller.enqueue(new TextEncoder().encode(big)), controller.close()) }),
      });
      expect(streamed.status).toBe(413);
      expect((await streamed.json()).error).toContain("--max-import");
    } finally {
      await small.server.stop();
    }
  });
});

/** A server whose imports read at most `maxImport` (1 KB unless told), with a base "notes". */
class TestServerWithImportLimit {
  readonly server: TestServer;
  key = "";
  readonly ready: Promise<void>;
  constructor(maxImport = "1kb") {
    const server = new TestServer({ flags: { "max-import": maxImport } });
    this.server = server;
    this.ready = (async () => {
      const ws = await workspace(server);
      this.key = ws.write;
      await createBase(server, ws.write, "notes", [{ slug: "title", name: "Title", type: "text" }]);
    })();
  }
}
