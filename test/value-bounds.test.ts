import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/**
 * One value holds at most 256 KB, whichever way it is made: stored by any route or import, or
 * computed when read (a lookup's linked values) or written (a formula's text). Issue 35, item 2-3.
 */
let server: TestServer;
let ws: Workspace;
const KB = 1024;
const text = (kb: number, letter = "a") => letter.repeat(kb * KB);

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace({ deliveries: false }));
  await createBase(server, ws.write, "people", [
    { slug: "name", name: "Name", type: "text" },
    { slug: "bio", name: "Bio", type: "longtext" },
    { slug: "tags", name: "Tags", type: "json" },
  ]);
  await createBase(server, ws.write, "tasks", [
    { slug: "title", name: "Title", type: "text" },
    { slug: "owners", name: "Owners", type: "relation", options: { targetBaseSlug: "people" } },
    { slug: "title_x4", name: "Title x4", type: "formula", options: { formula: { expression: "{title} & {title} & {title} & {title}" } } },
  ]);
  for (const [slug, rollup] of [["bios", "values"], ["bio_text", "concatenate"]]) {
    const added = await server.call("POST", "/api/v1/bases/tasks/fields", { key: ws.write, body: { slug, name: slug, type: "lookup", options: { lookup: { relationFieldSlug: "owners", targetFieldSlug: "bio", rollup } } } });
    expect(added.status).toBe(200);
  }
});
afterAll(() => server.stop());

const create = (base: string, fields: Record<string, unknown>) => server.call("POST", `/api/v1/bases/${base}/change-requests`, { key: ws.write, body: { fields } });

describe("stored values", () => {
  test("a text or JSON value past 256 KB is a 400 naming the field and the bound; nothing is written", async () => {
    for (const fields of [{ bio: text(257) }, { name: text(130, "é") }, { tags: { list: [text(200), text(100)] } }]) {
      const refused = await create("people", fields);
      expect([refused.status, refused.body.error]).toEqual([400, expect.stringContaining("holds more than 256 KB, the most one value may")]);
    }
    expect((await create("people", { bio: text(255) })).status).toBe(201);
    expect((await server.call("GET", "/api/v1/records/count?baseId=people", { key: ws.read })).body.total).toBe(1);
  });

  test("an import applies the same bound, by line, and imports nothing", async () => {
    const csv = `name,bio\nAda,short\nAlan,${text(300)}\n`;
    const reply = await fetch(`${server.url}/api/v1/bases/people/imports`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": "text/csv" }, body: csv }).then(async (response) => ({ status: response.status, body: await response.json() }));
    expect(reply.status).toBe(400);
    expect(JSON.stringify(reply.body)).toContain("256 KB");
    expect(JSON.stringify(reply.body)).toContain('"line":3');
    expect((await server.call("GET", "/api/v1/records/count?baseId=people", { key: ws.read })).body.total).toBe(1);
  });
});

describe("computed values", () => {
  test("a lookup gathers at most 256 KB of its linked records' values and marks what it left out", async () => {
    const people: string[] = [];
    for (let i = 0; i < 6; i++) people.push((await create("people", { name: `P${i}`, bio: text(200, String.fromCharCode(98 + i)) })).body.id);
    const task = (await create("tasks", { title: "Big", owners: people })).body.id as string;
    const read = (await server.call("GET", `/api/v1/records/${task}`, { key: ws.read })).body;
    expect(read.fields.bios).toEqual([text(200, "b"), "…"]);
    expect(read.fields.bio_text).toBe(`${text(200, "b")}, …`);
    // Fifty tasks linking the same six people: the page reads each person once and answers in bounds.
    for (let i = 0; i < 50; i++) await create("tasks", { title: `T${i}`, owners: people });
    // A page ends early once its values pass 8 MB of text; its cursor walks on to every record.
    const seen: string[] = [];
    let cursor = "";
    let pages = 0;
    do {
      const page = await server.call("GET", `/api/v1/records?baseId=tasks&limit=100${cursor ? `&cursor=${cursor}` : ""}`, { key: ws.read });
      expect(page.status).toBe(200);
      expect(page.text.length).toBeLessThan(2 * 8 * KB * KB + 2 * 410 * KB);
      expect(page.body.records.every((record: { fields: { bios: unknown[] } }) => record.fields.bios.length === 2)).toBe(true);
      seen.push(...page.body.records.map((record: { id: string }) => record.id));
      cursor = page.body.nextCursor ?? "";
      pages++;
    } while (cursor);
    expect([new Set(seen).size, pages]).toEqual([51, 3]);
  });

  test("a formula whose text would pass 256 KB has no value (null), as for any error while it runs; the write is kept", async () => {
    const made = await create("tasks", { title: text(100) });
    expect(made.status).toBe(201);
    const read = (await server.call("GET", `/api/v1/records/${made.body.id}`, { key: ws.read })).body;
    expect([read.fields.title.length, read.fields.title_x4]).toEqual([100 * KB, null]);
    const small = (await server.call("GET", `/api/v1/records/${(await create("tasks", { title: "ab" })).body.id}`, { key: ws.read })).body;
    expect(small.fields.title_x4).toBe("abababab");
  });
});

describe("answers that embed values", () => {
  test("change requests, their pages, activity and a record's change requests embed at most 8 MB of linked names and values; a cursor walks on", async () => {
    await createBase(server, ws.write, "payees", [{ slug: "name", name: "Name", type: "text" }]);
    await createBase(server, ws.write, "invoices", [
      { slug: "title", name: "Title", type: "text" },
      { slug: "payees", name: "Payees", type: "relation", options: { targetBaseSlug: "payees" } },
    ]);
    const payees: string[] = [];
    for (let i = 0; i < 48; i++) payees.push((await create("payees", { name: text(200, String.fromCharCode(65 + (i % 26))) })).body.id);
    const invoice = (await create("invoices", { title: "Linked" })).body.id as string;
    const proposed: string[] = [];
    for (let i = 0; i < 4; i++) {
      const reply = await server.call("POST", `/api/v1/records/${invoice}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: `Take ${i}`, payees }, autoMerge: false } });
      proposed.push(reply.body.id);
    }
    const bound = 9 * KB * KB;
    const seen: string[] = [];
    let cursor = "";
    do {
      const page = await server.call("GET", `/api/v1/change-requests?limit=10&baseId=invoices${cursor ? `&cursor=${cursor}` : ""}`, { key: ws.read });
      expect(page.status).toBe(200);
      expect(page.text.length).toBeLessThan(bound);
      seen.push(...page.body.changeRequests.map((cr: { id: string }) => cr.id));
      cursor = page.body.nextCursor ?? "";
    } while (cursor);
    expect(proposed.every((id) => seen.includes(id))).toBe(true);
    for (const path of ["/api/v1/change-requests/page?pageSize=10&baseId=invoices", "/api/v1/activity/paged?limit=10", `/api/v1/records/${invoice}/change-requests`, `/api/v1/change-requests/${proposed[0]}`, "/api/v1/agent-tasks"]) {
      const reply = await server.call("GET", path, { key: ws.read });
      expect({ path, status: reply.status, bounded: reply.text.length < bound }).toEqual({ path, status: 200, bounded: true });
    }
    // A change request alone names what fits; the names left out are the ids the client shows.
    const one = (await server.call("GET", `/api/v1/change-requests/${proposed[0]}`, { key: ws.read })).body;
    expect(Object.keys(one.linkedRecords).length).toBeGreaterThan(30);
    expect(Object.keys(one.linkedRecords).length).toBeLessThan(48);
  });
});

