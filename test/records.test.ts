import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createBase, TestServer, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace()));
afterEach(() => server.stop());

const ALL_TYPES = [
  { slug: "text", name: "Text", type: "text" },
  { slug: "longtext", name: "Long text", type: "longtext" },
  { slug: "markdown", name: "Markdown", type: "markdown" },
  { slug: "html", name: "HTML", type: "html" },
  { slug: "code", name: "Code", type: "code", options: { code: { language: "typescript" } } },
  { slug: "config", name: "Config", type: "code", options: { code: { language: "json" } } },
  { slug: "manifest", name: "Manifest", type: "code", options: { code: { language: "YAML" } } },
  { slug: "yaml", name: "YAML", type: "yaml" },
  { slug: "number", name: "Number", type: "number" },
  { slug: "checkbox", name: "Checkbox", type: "checkbox" },
  { slug: "date", name: "Date", type: "date" },
  { slug: "select", name: "Select", type: "select", options: { choices: [{ id: "c1", name: "red" }, { name: "blue" }] } },
  { slug: "multiselect", name: "Multi", type: "multiselect", options: { choices: [{ name: "a" }, { name: "b" }] } },
  { slug: "url", name: "URL", type: "url" },
  { slug: "email", name: "E-mail", type: "email" },
  { slug: "phone", name: "Phone", type: "phone" },
  { slug: "json", name: "JSON", type: "json" },
  { slug: "created_time", name: "Created", type: "created_time" },
  { slug: "updated_time", name: "Updated", type: "updated_time" },
  { slug: "created_by", name: "Created by", type: "created_by" },
  { slug: "updated_by", name: "Updated by", type: "updated_by" },
  { slug: "auto_number", name: "No.", type: "auto_number" },
];

/** Nine levels of nine aliases: refused by the YAML parser ("Excessive aliasing") rather than expanded. */
const BILLION_LAUGHS = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]", ..."bcdefghi".split("").map((level, i) => `${level}: &${level} [${Array(9).fill(`*${"abcdefghi"[i]}`).join(", ")}]`)].join("\n");

const create = (fields: Record<string, unknown>, key = ws.write, base = "things") => server.call("POST", `/api/v1/bases/${base}/change-requests`, { key, body: { fields } });

describe("field types", () => {
  const valid: Record<string, unknown[]> = {
    text: ["hello", ""],
    longtext: ["many\nlines"],
    markdown: ["# Title\n\n- a *list*"],
    html: ['<img src=x onerror="alert(1)"><b>bold</b>'],
    code: ["const x = {", "  indented\n"],
    config: ['{"a": [1, 2]}', "3"],
    manifest: ["name: basalt\nports: [8787]"],
    yaml: ["a: 1\nb: [x, y]", "just text"],
    number: [0, -3.5, 1e9],
    checkbox: [true, false],
    date: ["2026-11-21", "2026-11-21T13:05:00.123Z", "2026-11-21T13:05:00+02:00", "2028-02-29", "2026-12-31T23:59:59Z"],
    select: ["red", "c1", "blue"],
    multiselect: [["a"], ["a", "b"], []],
    url: ["https://example.com/x?y=1", "http://localhost:3000"],
    email: ["ada@example.com"],
    phone: ["+1 (555) 010-9999", "555 0100"],
    json: [{ nested: [1, 2] }, [1], "text", 3, true],
  };
  const invalid: Record<string, unknown[]> = {
    text: [5, true, ["x"]],
    longtext: [{}],
    markdown: [5],
    html: [["<p>"]],
    code: [{ source: "x" }],
    config: ["{a: 1}", "[1, 2"],
    manifest: ["a: [1, 2\nb: :"],
    yaml: ["a: [1, 2\nb: :", 5, BILLION_LAUGHS],
    number: ["5", true, { value: 5 }],
    checkbox: ["true", 1],
    date: ["yesterday", "2026-13-45", 20261121, "2026-02-30", "2025-02-29", "2026-11-21T25:00:00Z", "2026-11-21T12:60:00Z"],
    select: ["green", ["red"]],
    multiselect: ["a", ["c"], [1]],
    url: ["example.com", "ftp://example.com", "javascript:alert(1)"],
    email: ["not an address", 5],
    phone: ["12", "call me"],
  };

  beforeEach(async () => {
    await createBase(server, ws.write, "things", ALL_TYPES);
  });

  test("every valid value is stored and read back; select stores the choice name", async () => {
    for (const [slug, values] of Object.entries(valid)) {
      for (const value of values) {
        const reply = await create({ [slug]: value });
        expect(reply.status).toBe(201);
        const expected = slug === "select" && value === "c1" ? "red" : value;
        expect(reply.body.fields[slug]).toEqual(expected);
      }
    }
  });

  test("every invalid value is a 400 naming the field, and nothing is created", async () => {
    for (const [slug, values] of Object.entries(invalid)) {
      for (const value of values) {
        const reply = await create({ [slug]: value });
        expect(reply.status).toBe(400);
        expect(reply.body.data.errors).toEqual([expect.objectContaining({ slug, type: ALL_TYPES.find((f) => f.slug === slug)!.type })]);
      }
    }
    expect((await server.call("GET", "/api/v1/records/count?baseId=things", { key: ws.read })).body.total).toBe(0);
  });

  test("a code field's options name its language; a malformed one is a 400 and no field is made", async () => {
    for (const options of [{ code: "json" }, { code: { language: 5 } }, { code: { language: "a language with spaces" } }, { code: [] }]) {
      const reply = await server.call("POST", "/api/v1/bases/things/fields", { key: ws.write, body: { slug: "snippet", name: "Snippet", type: "code", options } });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toContain("options.code");
    }
    const base = await server.call("GET", "/api/v1/bases/things", { key: ws.read });
    expect(base.body.fields.some((field: { slug: string }) => field.slug === "snippet")).toBe(false);
    const invalidJson = await create({ config: "{a: 1}" });
    expect(invalidJson.body.data.errors[0].message).toStartWith("config must be valid JSON");
  });

  test("a record has every field; unset ones are null; computed fields come from the server", async () => {
    const reply = await create({ text: "x", created_by: "usr_fake", auto_number: 99, created_time: "1999-01-01" });
    const fields = reply.body.fields;
    expect(Object.keys(fields).sort()).toEqual(ALL_TYPES.map((f) => f.slug).sort());
    expect(fields).toMatchObject({ text: "x", number: null, select: null, json: null, created_by: ws.owner.id, updated_by: ws.owner.id, auto_number: 1, created_time: reply.body.createdAt });
    const second = await create({ text: "y" });
    expect(second.body.fields.auto_number).toBe(2);
    server.clock.advance(60_000);
    const updated = await server.call("POST", `/api/v1/records/${reply.body.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { number: 7 } } });
    expect(updated.body.fields).toMatchObject({ number: 7, text: "x", updated_time: new Date(server.clock.now()).toISOString(), created_time: reply.body.createdAt });
    expect(updated.body.headCommit.payload).toEqual(updated.body.fields);
  });

  test("required fields may not be empty: null, empty string or empty array", async () => {
    await createBase(server, ws.write, "strict", [
      { slug: "name", name: "Name", type: "text", required: true },
      { slug: "tags", name: "Tags", type: "multiselect", required: true, options: { choices: [{ name: "a" }] } },
    ]);
    for (const fields of [{}, { name: null, tags: ["a"] }, { name: "", tags: ["a"] }, { name: "x", tags: [] }]) {
      expect((await create(fields, ws.write, "strict")).status).toBe(400);
    }
    const ok = await create({ name: "x", tags: ["a"] }, ws.write, "strict");
    expect(ok.status).toBe(201);
    const clearing = await server.call("POST", `/api/v1/records/${ok.body.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { name: null } } });
    expect(clearing.status).toBe(400);
  });

  test("a field definition is checked: slug, type and choices", async () => {
    const bad = [
      { slug: "Bad Slug", name: "x", type: "text" },
      { slug: "x", name: "x", type: "colour" },
      { slug: "x", name: "x", type: "select" },
      { slug: "x", name: "x", type: "select", options: { choices: [{ name: "a" }, { name: "a" }] } },
    ];
    for (const field of bad) expect((await server.call("POST", "/api/v1/bases/things/fields", { key: ws.write, body: field })).status).toBe(400);
    expect((await server.call("POST", "/api/v1/bases/things/fields", { key: ws.write, body: { slug: "text", name: "Again", type: "text" } })).status).toBe(400);
  });
});

describe("records", () => {
  beforeEach(async () => {
    await createBase(server, ws.write);
  });

  test("direct create with write is materialized; changeRequest waits; autoMerge false forces review", async () => {
    const direct = await create({ title: "A" }, ws.write, "papers");
    expect(direct.status).toBe(201);
    expect(direct.body).toMatchObject({ materialized: true, status: "active", baseId: expect.stringMatching(/^bse_/) });
    expect(direct.body.id).toMatch(/^rec_/);
    const proposed = await create({ title: "B" }, ws.propose, "papers");
    expect(proposed.body).toMatchObject({ materialized: false, status: "in_review" });
    const forced = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "C" }, autoMerge: false } });
    expect(forced.body).toMatchObject({ materialized: false, status: "in_review" });
    const quiet = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "D" }, autoMerge: true } });
    expect(quiet.body).toMatchObject({ materialized: false, status: "in_review" });
  });

  test("a direct create stores its values once; its first commit, its change request and its merge summary still show them after an update", async () => {
    const created = (await create({ title: "First", year: 1999 }, ws.write, "papers")).body;
    const [crId] = (await server.call("GET", `/api/v1/records/${created.id}/change-requests`, { key: ws.read })).body.map((cr: { id: string }) => cr.id);
    const stored = () => new Database(server.dbPath, { readonly: true }).query("SELECT payload FROM commits WHERE record_id = ? ORDER BY id").all(created.id);
    expect(stored()).toEqual([{ payload: null }]);
    const before = (await server.call("GET", `/api/v1/change-requests/${crId}`, { key: ws.read })).body;
    expect(before.operations[0].headCommit.payload).toEqual({ title: "First", year: 1999 });
    expect(before.mergeSummary).toEqual({ mergedAt: before.mergedAt, operationCount: 1, recordIds: [created.id] });

    const updated = await server.call("POST", `/api/v1/records/${created.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { year: 2001 } } });
    expect(updated.body.fields).toMatchObject({ title: "First", year: 2001 });
    expect(stored()[0]).toEqual({ payload: JSON.stringify({ title: "First", year: 1999 }) });
    const history = (await server.call("GET", `/api/v1/records/${created.id}/history`, { key: ws.read })).body;
    expect(history.map((commit: { payload: unknown }) => commit.payload)).toEqual([updated.body.fields, { title: "First", year: 1999 }]);
    const after = (await server.call("GET", `/api/v1/change-requests/${crId}`, { key: ws.read })).body;
    expect(after.operations[0].headCommit.payload).toEqual({ title: "First", year: 1999 });
    expect(after.mergeSummary).toEqual(before.mergeSummary);
  });

  test("an idempotency key (per base and user) answers the first result and creates nothing", async () => {
    const first = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Once" }, idempotencyKey: "k-1" } });
    const again = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Twice?" }, idempotencyKey: "k-1" } });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.fields.title).toBe("Once");
    expect((await server.call("GET", "/api/v1/records/count?baseId=papers", { key: ws.read })).body.total).toBe(1);
    const proposal = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "P" }, idempotencyKey: "k-2" } });
    const replay = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "P" }, idempotencyKey: "k-2" } });
    expect(replay.body.id).toBe(proposal.body.id);
    expect((await server.call("GET", "/api/v1/change-requests?status=in_review", { key: ws.read })).body.changeRequests).toHaveLength(1);
  });

  test("bulk: one change request with one operation per record, 1 to 1000", async () => {
    const records = Array.from({ length: 1000 }, (_, i) => ({ fields: { title: `Paper ${i}`, year: 1000 + i } }));
    const bulk = await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.propose, body: { records } });
    expect(bulk.status).toBe(201);
    expect(bulk.body.operationCount).toBe(1000);
    expect(bulk.body.operations.every((op: { operation: string }) => op.operation === "record_create")).toBe(true);
    expect((await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.propose, body: { records: [] } })).status).toBe(400);
    expect((await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.propose, body: { records: [...records, records[0]] } })).status).toBe(400);
    const invalid = await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.propose, body: { records: [{ fields: { title: "ok" } }, { fields: { year: "x" } }] } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.data.errors).toEqual([
      { index: 1, slug: "title", type: "text", message: "title is required." },
      { index: 1, slug: "year", type: "number", message: "year must be a finite number." },
    ]);
    await server.call("POST", `/api/v1/change-requests/${bulk.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    const merged = await server.call("POST", `/api/v1/change-requests/${bulk.body.id}/merge`, { key: ws.write });
    expect(merged.body.changeRequest.status).toBe("merged");
    expect((await server.call("GET", "/api/v1/records/count?baseId=papers", { key: ws.read })).body.total).toBe(1000);
  });

  test("delete archives and restore reactivates, both through review", async () => {
    const record = (await create({ title: "A" }, ws.write, "papers")).body;
    const deletion = await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "delete" } });
    expect(deletion.body).toMatchObject({ materialized: false, status: "in_review" });
    expect(deletion.body.operations[0]).toMatchObject({ operation: "record_delete", deleteMode: "archive", targetRecordId: record.id });
    await server.call("POST", `/api/v1/change-requests/${deletion.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    const merged = await server.call("POST", `/api/v1/change-requests/${deletion.body.id}/merge`, { key: ws.write });
    expect(merged.body.changeRequest.operations[0].status).toBe("archived");
    const archived = await server.call("GET", `/api/v1/records/${record.id}`, { key: ws.read });
    expect(archived.body).toMatchObject({ status: "archived", archivedAt: expect.any(String) });
    expect((await server.call("GET", "/api/v1/records?baseId=papers", { key: ws.read })).body.records).toHaveLength(0);
    expect((await server.call("GET", "/api/v1/records?baseId=papers&status=archived", { key: ws.read })).body.records).toHaveLength(1);
    // The kept counts follow the archive: what a scan of the base finds.
    const counted = async (status: string) => (await server.call("GET", `/api/v1/records/count?baseId=papers&status=${status}`, { key: ws.read })).body.total;
    const scanned = (status: string) => (server.ctx.store.sqlite.query("SELECT count(*) AS n FROM records r JOIN bases b ON b.id = r.base_id JOIN nodes n ON n.id = b.node_id WHERE n.slug = 'papers' AND n.space_id = ?1 AND r.status = ?2").get(ws.space.id, status) as { n: number }).n;
    expect([await counted("active"), await counted("archived")]).toEqual([scanned("active"), scanned("archived")]);
    expect(await counted("archived")).toBe(1);

    const restore = await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "restore" } });
    await server.call("POST", `/api/v1/change-requests/${restore.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    await server.call("POST", `/api/v1/change-requests/${restore.body.id}/merge`, { key: ws.write });
    expect((await server.call("GET", `/api/v1/records/get?recordId=${record.id}`, { key: ws.read })).body).toMatchObject({ status: "active", archivedAt: null });
    expect([await counted("active"), await counted("archived")]).toEqual([scanned("active"), 0]);
    const related = await server.call("GET", `/api/v1/records/${record.id}/change-requests`, { key: ws.read });
    expect(related.body.map((cr: { id: string }) => cr.id)).toEqual([restore.body.id, deletion.body.id, expect.stringMatching(/^crq_/)]);
    const history = await server.call("GET", `/api/v1/records/${record.id}/history`, { key: ws.read });
    expect(history.body.map((c: { operation: string }) => c.operation)).toEqual(["record_restore", "record_delete", "record_create"]);
  });

  test("records of another space are not found", async () => {
    const record = (await create({ title: "Mine" }, ws.write, "papers")).body;
    const eve = await server.user("Eve");
    await server.space(eve.id, "Elsewhere");
    const key = await server.key(eve.id, "manage");
    expect((await server.call("GET", `/api/v1/records/${record.id}`, { key })).status).toBe(404);
  });
});

describe("listing", () => {
  beforeEach(async () => {
    await createBase(server, ws.write, "papers", [
      { slug: "title", name: "Title", type: "text" },
      { slug: "year", name: "Year", type: "number" },
      { slug: "tags", name: "Tags", type: "multiselect", options: { choices: [{ name: "ml" }, { name: "db" }] } },
      { slug: "done", name: "Done", type: "checkbox" },
    ]);
    const records = Array.from({ length: 125 }, (_, i) => ({ fields: { title: `Paper ${String(i).padStart(3, "0")}`, year: 1900 + (i % 50), tags: i % 2 ? ["ml"] : ["db"], done: i % 5 === 0 } }));
    const bulk = await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.write, body: { records } });
    expect(bulk.body.status).toBe("merged");
  });

  async function everyPage(query: string, limit: number) {
    const ids: string[] = [];
    const titles: string[] = [];
    let cursor: string | null = null;
    do {
      const reply: { body: { records: { id: string; fields: { title: string } }[]; nextCursor: string | null } } = await server.call("GET", `/api/v1/records?baseId=papers&limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ""}`, { key: ws.read });
      ids.push(...reply.body.records.map((r) => r.id));
      titles.push(...reply.body.records.map((r) => r.fields.title));
      cursor = reply.body.nextCursor;
    } while (cursor);
    return { ids, titles };
  }

  test("keyset pages visit every record exactly once, in every sort", async () => {
    for (const sort of ["", "&sort=title", "&sort=-year", "&sort=year", "&sort=createdAt", "&sort=-done"]) {
      const { ids } = await everyPage(sort, 17);
      expect(ids).toHaveLength(125);
      expect(new Set(ids).size).toBe(125);
    }
    const byTitle = await everyPage("&sort=-title", 30);
    expect(byTitle.titles[0]).toBe("Paper 124");
    expect(byTitle.titles.at(-1)).toBe("Paper 000");
  });

  test("records with empty sort values are paged like the rest", async () => {
    const blanks = Array.from({ length: 30 }, (_, i) => ({ fields: { title: i % 2 ? null : `Blank ${i}` } }));
    await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.write, body: { records: blanks } });
    for (const sort of ["&sort=year", "&sort=-year", "&sort=title", "&sort=-title"]) {
      const { ids } = await everyPage(sort, 16);
      expect(ids).toHaveLength(155);
      expect(new Set(ids).size).toBe(155);
    }
  });

  test("filters combine with AND and read values by the field's type", async () => {
    const count = async (filters: string) => (await server.call("GET", `/api/v1/records/count?baseId=papers${filters}`, { key: ws.read })).body.total;
    expect(await count("&filters[0][fieldSlug]=year&filters[0][operator]=gte&filters[0][value]=1940")).toBe(20);
    expect(await count("&filters[0][fieldSlug]=year&filters[0][operator]=lt&filters[0][value]=1905")).toBe(15);
    expect(await count("&filters[0][fieldSlug]=year&filters[0][operator]=eq&filters[0][value]=1900")).toBe(3);
    expect(await count("&filters[0][fieldSlug]=year&filters[0][operator]=in&filters[0][value][0]=1900&filters[0][value][1]=1901")).toBe(6);
    expect(await count("&filters[0][fieldSlug]=year&filters[0][operator]=in&filters[0][value]=1900,1901")).toBe(6);
    expect(await count("&filters[0][fieldSlug]=tags&filters[0][operator]=contains&filters[0][value]=ml")).toBe(62);
    expect(await count("&filters[0][fieldSlug]=title&filters[0][operator]=contains&filters[0][value]=paper 12")).toBe(5);
    expect(await count("&filters[0][fieldSlug]=done&filters[0][operator]=eq&filters[0][value]=true")).toBe(25);
    expect(await count("&filters[0][fieldSlug]=done&filters[0][operator]=eq&filters[0][value]=true&filters[1][fieldSlug]=tags&filters[1][operator]=contains&filters[1][value]=ml")).toBe(12);
    expect(await count("&filters[0][fieldSlug]=year&filters[0][operator]=neq&filters[0][value]=1900")).toBe(122);
    expect(await count("&filters[0][fieldSlug]=title&filters[0][operator]=isEmpty")).toBe(0);
    expect(await count("&filters[0][fieldSlug]=title&filters[0][operator]=isNotEmpty")).toBe(125);
    const page = await server.call("GET", "/api/v1/records?baseId=papers&filters[0][fieldSlug]=year&filters[0][operator]=eq&filters[0][value]=1900", { key: ws.read });
    expect(page.body.records.map((r: { fields: { year: number } }) => r.fields.year)).toEqual([1900, 1900, 1900]);
  });

  test("a numbered page (Busabase's /records/page) shows page n of the same listing, with the total, filters and sort applied", async () => {
    const numbered = async (query: string) => (await server.call("GET", `/api/v1/records/page?baseId=papers${query}`, { key: ws.read })).body;
    const first = await numbered("&pageSize=40&sort=title");
    expect(first).toMatchObject({ total: 125, totalPages: 4, page: 1, pageSize: 40 });
    expect(first.records.map((r: any) => r.fields.title).slice(0, 2)).toEqual(["Paper 000", "Paper 001"]);
    const all: string[] = [];
    for (let page = 1; page <= 4; page++) all.push(...(await numbered(`&pageSize=40&sort=title&page=${page}`)).records.map((r: any) => r.id));
    expect(all).toEqual((await everyPage("&sort=title", 40)).ids);
    expect((await numbered("&pageSize=40&page=5")).records).toEqual([]);
    const filtered = await numbered("&page=2&pageSize=2&sort=-title&filters[0][fieldSlug]=year&filters[0][operator]=eq&filters[0][value]=1900");
    expect(filtered).toMatchObject({ total: 3, totalPages: 2, page: 2, pageSize: 2 });
    expect(filtered.records.map((r: any) => r.fields.title)).toEqual(["Paper 000"]);
    expect(await numbered("")).toMatchObject({ page: 1, pageSize: 50, totalPages: 3 });

    for (const query of ["&page=0", "&pageSize=101", "&page=x", "&page=1001&pageSize=100", "&page=1&page=2", ""]) {
      const reply = await server.call("GET", `/api/v1/records/page?${query === "" ? "" : "baseId=papers"}${query}`, { key: ws.read });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe("BAD_REQUEST");
    }
    expect((await server.call("GET", "/api/v1/records/page?baseId=papers&page=1001&pageSize=100", { key: ws.read })).body.error).toContain("nextCursor");
    expect((await server.call("GET", "/api/v1/records/page?baseId=papers&viewId=viw_1", { key: ws.read })).body.code).toBe("NOT_FOUND");
  });

  test("the lean shape: include= names what to add to the values, fields= picks slugs; the full shape stays the default", async () => {
    const [, second] = (await server.call("GET", "/api/v1/records?baseId=papers&limit=2", { key: ws.read })).body.records;
    const edit = await server.call("POST", `/api/v1/records/${second.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { tags: ["ml", "db"] } } });
    expect(edit.status).toBe(201);
    const full = (await server.call("GET", "/api/v1/records?baseId=papers&limit=20", { key: ws.read })).body;
    const lean = (await server.call("GET", "/api/v1/records?baseId=papers&limit=20&include=none", { key: ws.read })).body;
    expect(full.records[0].base.slug).toBe("papers");
    expect(full.records[0].headCommit.payload).toEqual(full.records[0].fields);
    expect(lean.nextCursor).toBe(full.nextCursor);
    expect(lean.records).toEqual(full.records.map(({ base: _, headCommit: __, ...rest }: Record<string, unknown>) => rest));
    // The edited record shows its head's parent in either shape.
    expect(lean.records[1]).toMatchObject({ id: second.id, parentCommitId: second.headCommitId });
    expect(JSON.stringify(lean).length * 4).toBeLessThan(JSON.stringify(full).length);

    const picked = (await server.call("GET", "/api/v1/records?baseId=papers&limit=2&sort=title&include=headCommit&fields=title,year", { key: ws.read })).body.records;
    expect(picked[0].fields).toEqual({ title: "Paper 000", year: 1900 });
    expect(picked[0].base).toBeUndefined();
    expect(picked[0].headCommit.id).toBe(picked[0].headCommitId);
    const one = (await server.call("GET", `/api/v1/records/${picked[0].id}?include=base&fields=done`, { key: ws.read })).body;
    expect(one).toMatchObject({ fields: { done: true }, base: { slug: "papers" } });
    expect(one.headCommit).toBeUndefined();
    const page = (await server.call("GET", "/api/v1/records/page?baseId=papers&pageSize=3&include=none&fields=title", { key: ws.read })).body;
    expect(page.records.map((r: Record<string, unknown>) => Object.keys(r.fields as object))).toEqual([["title"], ["title"], ["title"]]);
    for (const query of ["include=owner", "fields=colour", "include=base&include=headCommit"]) {
      const reply = await server.call("GET", `/api/v1/records?baseId=papers&${query}`, { key: ws.read });
      expect(reply.status).toBe(400);
    }
    expect((await server.call("GET", `/api/v1/records/${picked[0].id}?fields=colour`, { key: ws.read })).status).toBe(400);
  });

  test("a page's JSON holds the shared base whole in every record, and every key of the answer", async () => {
    const full = await server.call("GET", "/api/v1/records?baseId=papers&limit=3", { key: ws.read });
    expect(full.text).toBe(JSON.stringify(JSON.parse(full.text)));
    expect(Object.keys(full.body)).toEqual(["records", "nextCursor"]);
    const [base] = (await server.call("GET", "/api/v1/bases", { key: ws.read })).body.filter((b: { slug: string }) => b.slug === "papers");
    for (const record of full.body.records) expect(record.base).toEqual(full.body.records[0].base);
    expect(full.body.records[0].base).toMatchObject({ id: base.id, slug: "papers", fields: base.fields });
    const numbered = await server.call("GET", "/api/v1/records/page?baseId=papers&pageSize=2&linkedNames=true", { key: ws.read });
    expect(numbered.text).toBe(JSON.stringify(JSON.parse(numbered.text)));
    expect(Object.keys(numbered.body)).toEqual(["records", "total", "totalPages", "page", "pageSize", "linkedRecords"]);
    expect(numbered.body.records.map((record: { base: { slug: string } }) => record.base.slug)).toEqual(["papers", "papers"]);
    const empty = await server.call("GET", "/api/v1/records/page?baseId=papers&page=1000&pageSize=100", { key: ws.read });
    expect(empty.body).toMatchObject({ records: [], page: 1000 });
  });

  test("bad queries are 400: unknown field, operator, number, cursor, limit, missing base id", async () => {
    for (const query of [
      "baseId=papers&filters[0][fieldSlug]=nope&filters[0][operator]=eq&filters[0][value]=1",
      "baseId=papers&filters[0][fieldSlug]=year&filters[0][operator]=like&filters[0][value]=1",
      "baseId=papers&filters[0][fieldSlug]=year&filters[0][operator]=gt&filters[0][value]=abc",
      "baseId=papers&filters[0][fieldSlug]=year&filters[0][operator]=gt",
      "baseId=papers&cursor=garbage",
      "baseId=papers&limit=0",
      "baseId=papers&limit=101",
      "baseId=papers&sort=tags",
      "baseId=papers&status=deleted",
      "limit=5",
    ]) {
      const reply = await server.call("GET", `/api/v1/records?${query}`, { key: ws.read });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe("BAD_REQUEST");
    }
    expect((await server.call("GET", "/api/v1/records?baseId=nothing", { key: ws.read })).status).toBe(404);
  });

  test("what one listing may ask is bounded: 1,000 values of an in filter and 50 filters, a 400 naming the cap beyond (list and count)", async () => {
    const years = (n: number) => Array.from({ length: n }, (_, i) => 1900 + (i % 60)).join(",");
    for (const route of ["/api/v1/records", "/api/v1/records/count"]) {
      const atCap = await server.call("GET", `${route}?baseId=papers&filters[0][fieldSlug]=year&filters[0][operator]=in&filters[0][value]=${years(1000)}`, { key: ws.read });
      expect(atCap.status).toBe(200);
      const over = await server.call("GET", `${route}?baseId=papers&filters[0][fieldSlug]=year&filters[0][operator]=in&filters[0][value]=${years(1001)}`, { key: ws.read });
      expect([over.status, over.body.error]).toEqual([400, "An in filter takes at most 1000 values; the one on year has 1001."]);
      const filters = (n: number) => Array.from({ length: n }, (_, i) => `&filters[${i}][fieldSlug]=year&filters[${i}][operator]=gte&filters[${i}][value]=1900`).join("");
      expect((await server.call("GET", `${route}?baseId=papers${filters(50)}`, { key: ws.read })).status).toBe(200);
      const tooMany = await server.call("GET", `${route}?baseId=papers${filters(51)}`, { key: ws.read });
      expect([tooMany.status, tooMany.body.error]).toEqual([400, "A listing takes at most 50 filters; this one has 51."]);
    }
    const page = await server.call("GET", `/api/v1/records/count?baseId=papers&filters[0][fieldSlug]=year&filters[0][operator]=in&filters[0][value]=${years(1000)}`, { key: ws.read });
    expect(page.body.total).toBe(125);
  });
});
