import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { foldAccents } from "../src/db/functions";
import { findBase } from "../src/content/bases";
import { explainListing } from "../src/content/records/list";
import { dailyUpkeep } from "../src/jobs/schedule";
import { users } from "../src/tables/auth";
import { sql } from "drizzle-orm";
import { approveAndMerge, createBase, deleteField, fillBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;

interface Row {
  id: string;
  title: string | null;
  year: number | null;
  venue: string | number | null;
}
let rows: Row[];

const FIELDS = [
  { slug: "title", name: "Title", type: "text" },
  { slug: "year", name: "Year", type: "number" },
  { slug: "venue", name: "Venue", type: "select", options: { choices: [{ name: "vldb" }, { name: "sigmod" }, { name: "icde" }] } },
  { slug: "notes", name: "Notes", type: "longtext" },
];

/** 300 records with many ties (10 years, 3 venues) and unset values in every field. */
beforeAll(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write, "papers", FIELDS);
  const records = Array.from({ length: 300 }, (_, i) => ({
    title: i % 11 === 0 ? null : `Paper ${String(i % 97).padStart(2, "0")}`,
    year: i % 7 === 0 ? null : 2000 + (i % 10),
    venue: i % 13 === 0 ? null : ["vldb", "sigmod", "icde"][i % 3],
  }));
  await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.write, body: { records } });
  // A saved view filtering by the three fields gives each an index, filled in the background.
  const filters = ["title", "year", "venue"].map((fieldSlug) => ({ fieldSlug, operator: "isNotEmpty" }));
  expect((await server.call("POST", "/api/v1/views/change-requests", { key: ws.write, body: { operation: "create", baseId: "papers", name: "Set", config: { filters } } })).status).toBe(201);
  await server.fieldUpkeep.settled();
  rows = (await everyPage("", 100)).map((record) => ({ id: record.id, ...record.fields }) as Row);
  expect(rows).toHaveLength(300);
});
afterAll(() => server.stop());

async function everyPage(query: string, limit: number, from: string | null = null): Promise<{ id: string; fields: Record<string, unknown> }[]> {
  const seen: { id: string; fields: Record<string, unknown> }[] = [];
  let cursor: string | null = from;
  do {
    const reply: { status: number; body: { records: { id: string; fields: Record<string, unknown> }[]; nextCursor: string | null } } = await server.call(
      "GET",
      `/api/v1/records?baseId=papers&limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ""}`,
      { key: ws.read },
    );
    expect(reply.status).toBe(200);
    seen.push(...reply.body.records);
    cursor = reply.body.nextCursor;
  } while (cursor);
  return seen;
}

/** The plan's first step, which finds the page's ids (the second joins those 50 or so records). */
const pageStep = (plan: string) => plan.split(" / SCAN page")[0];

/** A page read from a field's indexed values (`field_values`, the listing's "v"). */
const WALK = "SEARCH v USING PRIMARY KEY (field_id=? AND status=?";

type Value = string | number | null;
/** The contract's order: by the value (unset first ascending, last descending), ties by id. */
function sorted(list: Row[], slug: "title" | "year", descending: boolean): string[] {
  const key = (value: Value) => (value === null ? (slug === "year" ? Number.NEGATIVE_INFINITY : "") : value);
  const ordered = [...list].sort((a, b) => {
    const x = key(a[slug]);
    const y = key(b[slug]);
    return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : 1;
  });
  return (descending ? ordered.reverse() : ordered).map((row) => row.id);
}

const FILTERS: { operator: string; slug: "year" | "title" | "venue"; value: string; keep: (v: Value) => boolean }[] = [
  { operator: "eq", slug: "year", value: "2003", keep: (v) => v === 2003 },
  { operator: "neq", slug: "year", value: "2003", keep: (v) => v !== 2003 },
  { operator: "gt", slug: "year", value: "2004", keep: (v) => v !== null && (v as number) > 2004 },
  { operator: "gte", slug: "year", value: "2004", keep: (v) => v !== null && (v as number) >= 2004 },
  { operator: "lt", slug: "year", value: "2004", keep: (v) => v !== null && (v as number) < 2004 },
  { operator: "lte", slug: "year", value: "2004", keep: (v) => v !== null && (v as number) <= 2004 },
  { operator: "in", slug: "year", value: "2001,2008", keep: (v) => v === 2001 || v === 2008 },
  { operator: "eq", slug: "venue", value: "sigmod", keep: (v) => v === "sigmod" },
  { operator: "neq", slug: "venue", value: "sigmod", keep: (v) => v !== "sigmod" },
  { operator: "in", slug: "venue", value: "vldb,icde", keep: (v) => v === "vldb" || v === "icde" },
  { operator: "lt", slug: "title", value: "Paper 20", keep: (v) => v !== null && (v as string) < "Paper 20" },
  { operator: "gte", slug: "title", value: "Paper 90", keep: (v) => v !== null && (v as string) >= "Paper 90" },
];

describe("indexed filters and sorts", () => {
  test("every operator, in both directions of two sorts, pages through its records exactly once, in order", async () => {
    for (const filter of FILTERS) {
      const expected = rows.filter((row) => filter.keep(row[filter.slug]));
      for (const sort of ["year", "-year", "title", "-title"]) {
        const slug = sort.replace("-", "") as "year" | "title";
        const query = `&sort=${sort}&filters[0][fieldSlug]=${filter.slug}&filters[0][operator]=${filter.operator}&filters[0][value]=${encodeURIComponent(filter.value)}`;
        const ids = (await everyPage(query, 23)).map((record) => record.id);
        expect(ids, `${filter.slug} ${filter.operator} ${filter.value}, sort ${sort}`).toEqual(sorted(expected, slug, sort.startsWith("-")));
      }
    }
  });

  test("cursors stay exact when records are created between pages", async () => {
    const first = await server.call("GET", "/api/v1/records?baseId=papers&limit=40&sort=year", { key: ws.read });
    const seen = first.body.records.map((record: { id: string }) => record.id);
    // New records both before the cursor (year 2000) and after it (year 2009).
    const added = await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", {
      key: ws.write,
      body: { records: [{ year: 2000, title: "late early" }, { year: 2009, title: "late late" }] },
    });
    const rest = await everyPage("&sort=year", 40, first.body.nextCursor);
    const all = [...seen, ...rest.map((record) => record.id)];
    expect(new Set(all).size).toBe(all.length);
    for (const row of rows) expect(all).toContain(row.id);
    const lateLate = added.body.operations[1].mergedRecordId;
    expect(all).toContain(lateLate);
    rows.push({ id: added.body.operations[0].mergedRecordId, title: "late early", year: 2000, venue: null }, { id: lateLate, title: "late late", year: 2009, venue: null });
  });

  test("filters and sorts on a field are answered from its indexed values, in order: nothing is sorted", () => {
    const loaded = findBase(server.ctx, ws.space.id, "papers");
    const plan = (query: Record<string, unknown>) => explainListing(server.ctx, loaded, { status: "active", filters: [], limit: 50, ...query }).join(" / ");
    for (const sort of ["year", "-title"]) {
      expect(pageStep(plan({ sort }))).toStartWith(WALK);
      expect(pageStep(plan({ sort }))).not.toContain("TEMP B-TREE");
    }
    for (const operator of ["eq", "gt", "gte", "lt", "lte"]) {
      const page = pageStep(plan({ sort: "year", filters: [{ fieldSlug: "year", operator, value: "2004" }] }));
      expect(page, operator).toStartWith(WALK);
      expect(page, operator).toContain("value");
      expect(page, operator).not.toContain("TEMP B-TREE");
    }
    expect(pageStep(plan({ sort: "-year", filters: [{ fieldSlug: "year", operator: "gt", value: "2004" }] }))).not.toContain("TEMP B-TREE");
    // A selective filter on another field: its matches are read from its values, then sorted.
    expect(pageStep(plan({ sort: "year", filters: [{ fieldSlug: "venue", operator: "in", value: "vldb,icde" }] }))).toStartWith(WALK);
  });

  test("an eq filter in the default order (newest first) reads its field's values in that order: nothing is sorted", () => {
    const loaded = findBase(server.ctx, ws.space.id, "papers");
    const plan = (cursor?: string) =>
      explainListing(server.ctx, loaded, { status: "active", filters: [{ fieldSlug: "venue", operator: "eq", value: "vldb" }], limit: 50, cursor }).join(" / ");
    expect(pageStep(plan())).toStartWith(`${WALK} AND value=?)`);
    expect(pageStep(plan())).not.toContain("TEMP B-TREE");
    const cursor = Buffer.from(JSON.stringify(["2026-11-21T12:00:00.000Z", "rec_0"])).toString("base64url");
    expect(pageStep(plan(cursor))).not.toContain("TEMP B-TREE");
  });

  test("a page walked in its order is read with its head commits by the statement that walks it; a page sorted after reads its ids first", () => {
    const loaded = findBase(server.ctx, ws.space.id, "papers");
    const plan = (query: Record<string, unknown>) => explainListing(server.ctx, loaded, { status: "active", filters: [], limit: 50, ...query }).join(" / ");
    const walked = [{}, { sort: "updatedAt" }, { sort: "-year" }, { filters: [{ fieldSlug: "venue", operator: "eq", value: "vldb" }] }];
    for (const query of walked) {
      expect(plan(query), JSON.stringify(query)).toContain("SEARCH commits");
      expect(plan(query), JSON.stringify(query)).not.toContain("TEMP B-TREE");
    }
    // Notes are not indexed: their order is sorted, of the page's ids only.
    expect(plan({ sort: "notes" })).toContain("TEMP B-TREE");
    expect(plan({ sort: "notes" })).not.toContain("commits");
  });

  /** The SQL texts the store's connection prepares while `work` runs. */
  async function preparedDuring(work: () => unknown): Promise<string[]> {
    const { sqlite } = server.ctx.store;
    const prepared: string[] = [];
    const prepare = sqlite.prepare;
    sqlite.prepare = ((text: string, ...rest: unknown[]) => {
      prepared.push(text);
      return prepare.call(sqlite, text, ...(rest as []));
    }) as typeof sqlite.prepare;
    try {
      await work();
    } finally {
      sqlite.prepare = prepare;
    }
    return prepared;
  }
  const bareLimits = (texts: string[]) => texts.filter((text) => /\b(limit|offset) \?/i.test(text));

  test("a page's statements bind no bare LIMIT or OFFSET, which SQLite would prepare again at every run", async () => {
    const prepared = await preparedDuring(async () => {
      // Shapes no other test asks, so that their statements are compiled now: a walk, a sort after, a cursor's page, a numbered page.
      for (const query of ["&limit=7&sort=-title&filters[0][fieldSlug]=year&filters[0][operator]=gte&filters[0][value]=2003", "&limit=7&sort=notes&status=archived"]) {
        const first = await server.call("GET", `/api/v1/records?baseId=papers${query}`, { key: ws.read });
        expect(first.status).toBe(200);
        if (first.body.nextCursor) expect((await server.call("GET", `/api/v1/records?baseId=papers${query}&cursor=${first.body.nextCursor}`, { key: ws.read })).status).toBe(200);
      }
      expect((await server.call("GET", "/api/v1/records/page?baseId=papers&page=3&pageSize=9&sort=title&filters[0][fieldSlug]=notes&filters[0][operator]=isEmpty", { key: ws.read })).status).toBe(200);
    });
    expect(prepared.some((text) => /\blimit cast\(/i.test(text))).toBe(true);
    expect(prepared.some((text) => /\boffset cast\(/i.test(text))).toBe(true);
    expect(bareLimits(prepared)).toEqual([]);
  });

  test("nor do drizzle's own statements on the store: those it prepares once and those it runs once", async () => {
    const { db } = server.ctx.store;
    const prepared = await preparedDuring(() => {
      expect(db.select({ id: users.id }).from(users).limit(1).offset(0).all().length).toBe(1);
      const statement = db.select({ id: users.id }).from(users).orderBy(users.id).limit(sql.placeholder("n")).prepare();
      expect(statement.all({ n: 1 }).length).toBe(1);
    });
    expect(prepared.length).toBe(2);
    expect(bareLimits(prepared)).toEqual([]);
  });

  test("the schema does not grow with fields: no index per field, one table of values; a deleted field's values are removed in the background", async () => {
    const loaded = findBase(server.ctx, ws.space.id, "papers");
    const venue = loaded.fields.find((field) => field.slug === "venue")!;
    const schemaObjects = () => (server.ctx.store.sqlite.query("SELECT count(*) AS n FROM sqlite_schema").get() as { n: number }).n;
    const valuesOf = (fieldId: string) => (server.ctx.store.sqlite.query("SELECT count(*) AS n FROM field_values WHERE field_id = ?").get(fieldId) as { n: number }).n;
    const before = schemaObjects();
    expect(valuesOf(venue.id)).toBe(rows.length);
    const removed = await deleteField(server, ws.write, "papers", venue.id);
    expect(removed.body.changeRequest.status).toBe("merged");
    await server.fieldUpkeep.settled();
    expect(valuesOf(venue.id)).toBe(0);
    expect(schemaObjects()).toBe(before);
    expect(server.ctx.store.sqlite.query("SELECT name FROM sqlite_schema WHERE name GLOB 'records_f_*'").all()).toEqual([]);
    const refused = await server.call("GET", "/api/v1/records?baseId=papers&filters[0][fieldSlug]=venue&filters[0][operator]=eq&filters[0][value]=vldb", { key: ws.read });
    expect(refused.status).toBe(400);
    const ids = (await everyPage("&sort=-year&filters[0][fieldSlug]=year&filters[0][operator]=gte&filters[0][value]=2005", 19)).map((record) => record.id);
    expect(ids).toEqual(sorted(rows.filter((row) => row.year !== null && row.year >= 2005), "year", true));
  });

  test("a field added is not indexed until listings keep asking for it; then it is filled in the background, and listings are exact before and after", async () => {
    const added = await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug: "pages", name: "Pages", type: "number" } });
    const pages = added.body.fields.find((field: { slug: string }) => field.slug === "pages");
    const state = () => (server.ctx.store.sqlite.query("SELECT index_state AS state FROM fields WHERE id = ?").get(pages.id) as { state: string }).state;
    expect(state()).toBe("none");
    for (let i = 0; i < 2; i++) expect((await server.call("GET", "/api/v1/records?baseId=papers&sort=pages&limit=10", { key: ws.read })).status).toBe(200);
    await Bun.sleep(10);
    expect(state()).toBe("none");
    // The third listing sorted by it asks for its index.
    expect(await everyPage("&sort=pages", 50)).toHaveLength(rows.length);
    await Bun.sleep(10);
    await server.fieldUpkeep.settled();
    expect(state()).toBe("ready");
    expect((server.ctx.store.sqlite.query("SELECT count(*) AS n FROM field_values WHERE field_id = ?").get(pages.id) as { n: number }).n).toBe(rows.length);
    const loaded = findBase(server.ctx, ws.space.id, "papers");
    expect(pageStep(explainListing(server.ctx, loaded, { status: "active", filters: [], sort: "pages", limit: 50 }).join(" / "))).toStartWith(WALK);
    expect(await everyPage("&sort=pages", 50)).toHaveLength(rows.length);
  });

  test("a field deleted and created again under its slug with another type starts empty, and its filters and sorts page exactly", async () => {
    // "venue" was a select holding "vldb", "sigmod" and "icde" until the test above deleted it.
    await server.fieldUpkeep.settled();
    const added = await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug: "venue", name: "Venue", type: "number" } });
    expect(added.status).toBe(200);
    const all = await everyPage("", 100);
    expect(all).toHaveLength(rows.length);
    expect(all.every((record) => record.fields.venue === null)).toBe(true);
    const numbered = rows.slice(0, 30).map((row, i) => ({ ...row, venue: i % 4 === 0 ? null : i % 6 }));
    for (const row of numbered) {
      if (row.venue === null) continue;
      const updated = await server.call("POST", `/api/v1/records/${row.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { venue: row.venue }, autoMerge: true } });
      expect(updated.status).toBe(201);
    }
    rows = rows.map((row) => numbered.find((n) => n.id === row.id) ?? { ...row, venue: null });
    const gt = await everyPage("&sort=-year&filters[0][fieldSlug]=venue&filters[0][operator]=gt&filters[0][value]=2", 7);
    expect(gt.map((record) => record.id)).toEqual(sorted(rows.filter((row) => row.venue !== null && (row.venue as number) > 2), "year", true));
    const count = await server.call("GET", "/api/v1/records/count?baseId=papers&filters[0][fieldSlug]=venue&filters[0][operator]=isEmpty", { key: ws.read });
    expect(count.body.total).toBe(rows.filter((row) => row.venue === null).length);
    const bySort = await everyPage("&sort=venue", 11);
    expect(bySort.map((record) => record.fields.venue)).toEqual([...rows.map((row) => row.venue as number | null)].sort((a, b) => (a ?? -1) - (b ?? -1)));
  });
});

describe("a dense eq filter", () => {
  test("past 2,000 matches the sort's order is walked instead, and pages stay exact", async () => {
    const { server: dense, ws: owner } = await freshWorkspace();
    try {
      await createBase(dense, owner.write, "many", [{ slug: "kind", name: "Kind", type: "text" }, { slug: "n", name: "N", type: "number" }]);
      for (let made = 0; made < 3000; made += 1000) {
        const records = Array.from({ length: 1000 }, (_, i) => ({ kind: (made + i) % 10 === 0 ? "rare" : "common", n: made + i }));
        await dense.call("POST", "/api/v1/bases/many/records/bulk-change-request", { key: owner.write, body: { records } });
      }
      const view = { operation: "create", baseId: "many", name: "By kind", config: { filters: [{ fieldSlug: "kind", operator: "eq", value: "rare" }], sorts: [{ fieldSlug: "n", direction: "desc" }] } };
      expect((await dense.call("POST", "/api/v1/views/change-requests", { key: owner.write, body: view })).status).toBe(201);
      await dense.fieldUpkeep.settled();
      const loaded = findBase(dense.ctx, owner.space.id, "many");
      const planOf = (value: string) => explainListing(dense.ctx, loaded, { status: "active", sort: "-n", filters: [{ fieldSlug: "kind", operator: "eq", value }], limit: 50 }).join(" / ");
      const kindValues = `${WALK} AND value=?)`;
      expect(planOf("rare")).toStartWith(kindValues);
      expect(planOf("common")).not.toStartWith(kindValues);
      expect(pageStep(planOf("common"))).toStartWith(WALK);
      expect(pageStep(planOf("common"))).not.toContain("TEMP B-TREE");
      let cursor: string | null = null;
      const seen: number[] = [];
      do {
        const page: { body: { records: { fields: { n: number } }[]; nextCursor: string | null } } = await dense.call(
          "GET",
          `/api/v1/records?baseId=many&sort=-n&limit=100&filters[0][fieldSlug]=kind&filters[0][operator]=eq&filters[0][value]=common${cursor ? `&cursor=${cursor}` : ""}`,
          { key: owner.read },
        );
        seen.push(...page.body.records.map((record) => record.fields.n));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(Array.from({ length: 3000 }, (_, i) => 2999 - i).filter((n) => n % 10 !== 0));

      // In the default order, the filter's own index holds the matches newest first, however many.
      const newestFirst = explainListing(dense.ctx, loaded, { status: "active", filters: [{ fieldSlug: "kind", operator: "eq", value: "common" }], limit: 50 }).join(" / ");
      expect(pageStep(newestFirst)).toStartWith(kindValues);
      expect(pageStep(newestFirst)).not.toContain("TEMP B-TREE");
      const inDefaultOrder: number[] = [];
      do {
        const page: { body: { records: { fields: { n: number } }[]; nextCursor: string | null } } = await dense.call(
          "GET",
          `/api/v1/records?baseId=many&limit=100&filters[0][fieldSlug]=kind&filters[0][operator]=eq&filters[0][value]=common${cursor ? `&cursor=${cursor}` : ""}`,
          { key: owner.read },
        );
        inDefaultOrder.push(...page.body.records.map((record) => record.fields.n));
        cursor = page.body.nextCursor;
      } while (cursor);
      // One instant for every record (the test clock stands still): ties by id, which is creation order.
      expect(inDefaultOrder).toEqual(seen);
    } finally {
      await dense.stop();
    }
  }, 60_000);
});

describe("indexes follow the queries", () => {
  test("no field is indexed until a view or repeated listings ask; an index nothing used for 30 days is dropped, but a view's is kept", async () => {
    const { server: fresh, ws: owner } = await freshWorkspace();
    try {
      await createBase(fresh, owner.write, "notes", [{ slug: "kind", name: "Kind", type: "text" }, { slug: "n", name: "N", type: "number" }, { slug: "tag", name: "Tag", type: "text" }]);
      const records = Array.from({ length: 200 }, (_, i) => ({ kind: i % 2 ? "odd" : "even", n: i, tag: `t${i % 5}` }));
      await fresh.call("POST", "/api/v1/bases/notes/records/bulk-change-request", { key: owner.write, body: { records } });
      const states = () => Object.fromEntries((fresh.ctx.store.sqlite.query("SELECT slug, index_state AS state FROM fields ORDER BY position").all() as { slug: string; state: string }[]).map((row) => [row.slug, row.state]));
      const indexed = () => (fresh.ctx.store.sqlite.query("SELECT count(*) AS n FROM field_values").get() as { n: number }).n;
      expect(states()).toEqual({ kind: "none", n: "none", tag: "none" });
      expect(indexed()).toBe(0);

      const reader = await fresh.key(owner.owner.id, "read", "never");
      const list = async (query: string) => {
        const reply = await fresh.call("GET", `/api/v1/records?baseId=notes&limit=5${query}`, { key: reader });
        expect(reply.status).toBe(200);
        return reply.body.records.map((record: { fields: { n: number } }) => record.fields.n);
      };
      // Two listings, then the window passes: the third alone asks for nothing.
      for (let i = 0; i < 2; i++) expect(await list("&filters[0][fieldSlug]=tag&filters[0][operator]=eq&filters[0][value]=t3")).toEqual([198, 193, 188, 183, 178]);
      fresh.clock.advance(11 * 60_000);
      await list("&filters[0][fieldSlug]=tag&filters[0][operator]=eq&filters[0][value]=t3");
      await Bun.sleep(10);
      await fresh.fieldUpkeep.settled();
      expect(states().tag).toBe("none");
      // Three sorted listings within ten minutes: n is indexed, and its pages are the same.
      for (let i = 0; i < 3; i++) expect(await list("&sort=-n")).toEqual([199, 198, 197, 196, 195]);
      await Bun.sleep(10);
      await fresh.fieldUpkeep.settled();
      expect(states().n).toBe("ready");
      expect(await list("&sort=-n")).toEqual([199, 198, 197, 196, 195]);
      // A view filtering by kind indexes it at its merge.
      const view = { operation: "create", baseId: "notes", name: "Odd", config: { filters: [{ fieldSlug: "kind", operator: "eq", value: "odd" }] } };
      expect((await fresh.call("POST", "/api/v1/views/change-requests", { key: owner.write, body: view })).status).toBe(201);
      await fresh.fieldUpkeep.settled();
      expect(states()).toEqual({ kind: "ready", n: "ready", tag: "none" });

      fresh.clock.advance(31 * 24 * 60 * 60_000);
      await dailyUpkeep(fresh.ctx);
      await fresh.fieldUpkeep.settled();
      expect(states()).toEqual({ kind: "ready", n: "none", tag: "none" });
      expect(indexed()).toBe(200);
      expect(await list("&sort=-n")).toEqual([199, 198, 197, 196, 195]);
    } finally {
      await fresh.stop();
    }
  });
});

describe("an index asked for under load", () => {
  test("a listing that finds its sort's index being filled waits for it (bounded), then reads it: it is answered from a ready index", async () => {
    const { server: busy, ws: own } = await freshWorkspace({ deliveries: false });
    try {
      await createBase(busy, own.write, "big", [{ slug: "n", name: "N", type: "number" }]);
      await fillBase(busy, own.write, "big", 30_000, (i) => ({ n: i % 977 }));
      const state = () => (busy.ctx.store.sqlite.query("SELECT index_state AS s FROM fields WHERE slug = 'n'").get() as { s: string }).s;
      const sorted = () => busy.call("GET", "/api/v1/records?baseId=big&sort=-n&limit=5", { key: own.read });
      // Three listings ask for the index; the fourth finds it being filled.
      for (let i = 0; i < 3; i++) expect((await sorted()).status).toBe(200);
      const fourth = await sorted();
      expect([fourth.status, state()]).toEqual([200, "ready"]);
      expect(fourth.body.records.map((record: { fields: { n: number } }) => record.fields.n)).toEqual([976, 976, 976, 976, 976]);
    } finally {
      await busy.stop();
    }
  }, 60_000);
});

describe("a count of records containing a text", () => {
  test("is exact before its field is indexed, asks for the index when repeated, and is the same read from the index; a numbered page says the same total", async () => {
    const { server: fresh, ws: owner } = await freshWorkspace();
    try {
      await createBase(fresh, owner.write, "memos", [{ slug: "body", name: "Body", type: "longtext" }, { slug: "n", name: "N", type: "number" }]);
      const bodies = (i: number) => (i % 9 === 0 ? null : i % 4 === 0 ? `A note about the CAFÉ ${i}` : i % 3 === 0 ? `café au lait ${i}` : `Nothing to see ${i}`);
      const records = Array.from({ length: 120 }, (_, i) => ({ body: bodies(i), n: i }));
      await fresh.call("POST", "/api/v1/bases/memos/records/bulk-change-request", { key: owner.write, body: { records } });
      // Contains folds case and accents ("e 1" is in "CAFÉ 1…").
      const expected = (needle: string) => records.filter((record) => record.body !== null && foldAccents(record.body).includes(foldAccents(needle))).length;
      const state = () => (fresh.ctx.store.sqlite.query("SELECT index_state AS s FROM fields WHERE slug = 'body'").get() as { s: string }).s;
      const count = async (needle: string) => {
        const reply = await fresh.call("GET", `/api/v1/records/count?baseId=memos&filters[0][fieldSlug]=body&filters[0][operator]=contains&filters[0][value]=${encodeURIComponent(needle)}`, { key: owner.read });
        expect(reply.status).toBe(200);
        return reply.body.total;
      };
      const needles = ["café", "CAFÉ", "note", "e 1", "absent"];
      expect(await count("café")).toBe(expected("café"));
      expect(state()).toBe("none");
      for (const needle of needles) expect(await count(needle)).toBe(expected(needle));
      await Bun.sleep(10);
      await fresh.fieldUpkeep.settled();
      expect(state()).toBe("ready");
      for (const needle of needles) expect(await count(needle)).toBe(expected(needle));

      const page = await fresh.call("GET", "/api/v1/records/page?baseId=memos&page=2&pageSize=10&filters[0][fieldSlug]=body&filters[0][operator]=contains&filters[0][value]=caf", { key: owner.read });
      expect(page.status).toBe(200);
      expect([page.body.total, page.body.totalPages, page.body.records.length]).toEqual([expected("caf"), Math.ceil(expected("caf") / 10), 10]);
      expect(page.body.records.every((record: { fields: { body: string } }) => record.fields.body.toLowerCase().includes("caf"))).toBe(true);
    } finally {
      await fresh.stop();
    }
  });

  test("is never older than the last write: a record created, changed or archived moves the count asked again", async () => {
    const { server: fresh, ws: owner } = await freshWorkspace();
    try {
      await createBase(fresh, owner.write, "memos", [{ slug: "body", name: "Body", type: "text" }]);
      const path = "/api/v1/records/count?baseId=memos&filters[0][fieldSlug]=body&filters[0][operator]=contains&filters[0][value]=plum";
      const count = async () => (await fresh.call("GET", path, { key: owner.read })).body.total;
      const create = async (body: string) => (await fresh.call("POST", "/api/v1/bases/memos/change-requests", { key: owner.write, body: { fields: { body } } })).body;
      await create("plum tart");
      expect(await count()).toBe(1);
      expect(await count()).toBe(1);
      const pear = await create("pear tart");
      expect(await count()).toBe(1);
      expect((await fresh.call("POST", `/api/v1/records/${pear.id}/change-requests`, { key: owner.write, body: { operation: "update", fields: { body: "plum and pear" } } })).body.materialized).toBe(true);
      expect(await count()).toBe(2);
      const deletion = await fresh.call("POST", `/api/v1/records/${pear.id}/change-requests`, { key: owner.write, body: { operation: "delete" } });
      expect((await approveAndMerge(fresh, owner.write, deletion.body.id)).status).toBe(200);
      expect(await count()).toBe(1);
    } finally {
      await fresh.stop();
    }
  });
});
