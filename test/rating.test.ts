import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fieldKindRows } from "../src/content/fields/registry";
import { createBase, fillBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/**
 * `rating` was added as one kind (`src/content/fields/rating.ts`), one registry line and its
 * traits: values, listings (with and without the field's index), import, export, the page's cells
 * and conversions follow from them.
 */
let server: TestServer;
let ws: Workspace;

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write, "films", [
    { slug: "title", name: "Title", type: "text", required: true },
    { slug: "stars", name: "Stars", type: "rating", options: { max: 5 } },
    { slug: "note", name: "Note", type: "text" },
  ]);
});
afterAll(() => server.stop());

const list = async (query: string) => {
  const reply = await server.call("GET", `/api/v1/records?baseId=films&limit=100${query}`, { key: ws.read });
  expect(reply.status).toBe(200);
  return reply.body.records.map((record: { fields: { title: string } }) => record.fields.title) as string[];
};

describe("a rating field", () => {
  test("takes a whole number of stars from 1 to its max, and refuses anything else with a 400 naming the field", async () => {
    const made = await server.call("POST", "/api/v1/bases/films/fields", { key: ws.write, body: { slug: "mood", name: "Mood", type: "rating" } });
    expect(made.status).toBe(200);
    expect(made.body.fields.find((field: { slug: string }) => field.slug === "mood").options).toEqual({ max: 5 });
    const tooMany = await server.call("POST", "/api/v1/bases/films/fields", { key: ws.write, body: { slug: "big", name: "Big", type: "rating", options: { max: 11 } } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.text).toContain("options.max");
    for (const stars of [0, 6, 2.5, "3"]) {
      const refused = await server.call("POST", "/api/v1/bases/films/change-requests", { key: ws.write, body: { fields: { title: "Bad", stars }, autoMerge: true } });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain("stars");
    }
    expect(await list("")).toEqual([]);
  });

  test("sorts and filters as a number, unset values below every rating, the same before and after its index is filled", async () => {
    const stars = [3, null, 5, 1, null, 4, 2, 5, 1, 3];
    await fillBase(server, ws.write, "films", stars.length, (i) => ({ title: `film ${i}`, stars: stars[i] }));
    const expected = stars
      .map((value, i) => ({ title: `film ${i}`, value: value ?? -Infinity, i }))
      .sort((a, b) => b.value - a.value || b.i - a.i)
      .map((film) => film.title);
    const unindexed = await list("&sort=-stars");
    expect(unindexed).toEqual(expected);
    const atLeastFour = await list("&filters[0][fieldSlug]=stars&filters[0][operator]=gte&filters[0][value]=4&sort=stars");
    expect(atLeastFour).toEqual(["film 5", "film 2", "film 7"]);
    // Listings that keep asking for the field have its index filled; the answers do not change.
    await list("&sort=-stars");
    await server.fieldUpkeep.settled();
    const state = server.ctx.store.sqlite.query("SELECT index_state AS state FROM fields WHERE slug = 'stars'").get() as { state: string };
    expect(state.state).toBe("ready");
    expect(await list("&sort=-stars")).toEqual(expected);
    expect(await list("&filters[0][fieldSlug]=stars&filters[0][operator]=lt&filters[0][value]=2")).toEqual(["film 8", "film 3"]);
    const text = await server.call("GET", "/api/v1/records?baseId=films&filters[0][fieldSlug]=stars&filters[0][operator]=eq&filters[0][value]=many", { key: ws.read });
    expect(text.status).toBe(400);
  });

  test("a file's cells may hold digits or stars; an export writes the digits; search does not read it", async () => {
    const csv = "title,stars\nStar cells,★★★★\nDigit cells,2\n";
    const imported = await fetch(`${server.url}/api/v1/bases/films/imports`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": "text/csv" }, body: csv });
    expect(imported.status).toBe(201);
    const rows = (await server.call("GET", "/api/v1/records?baseId=films&filters[0][fieldSlug]=title&filters[0][operator]=contains&filters[0][value]=cells&sort=stars", { key: ws.read })).body.records;
    expect(rows.map((record: { fields: { stars: number } }) => record.fields.stars)).toEqual([2, 4]);
    const refused = await fetch(`${server.url}/api/v1/bases/films/imports`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": "text/csv" }, body: "title,stars\nToo bright,★★★★★★\n" });
    expect(refused.status).toBe(400);
    const exported = await server.call("GET", "/api/v1/bases/films/export?format=csv&filters[0][fieldSlug]=title&filters[0][operator]=eq&filters[0][value]=Star%20cells", { key: ws.read });
    expect(exported.text.trim().split(/\r?\n/)[1]).toContain(",4,");
    const search = await server.call("GET", "/api/v1/search?query=4&sources=records", { key: ws.read });
    expect(search.body.results.map((hit: { title: string }) => hit.title)).toEqual(["film 4"]);
  });

  test("converts from a number (rounded) and to text; values it cannot hold become empty", async () => {
    await createBase(server, ws.write, "scores", [
      { slug: "name", name: "Name", type: "text" },
      { slug: "score", name: "Score", type: "number" },
    ]);
    await fillBase(server, ws.write, "scores", 3, (i) => ({ name: `s${i}`, score: [2.6, 9, -1][i] }));
    const base = (await server.call("GET", "/api/v1/bases/scores", { key: ws.read })).body;
    const score = base.fields.find((field: { slug: string }) => field.slug === "score");
    const preview = await server.call("POST", `/api/v1/bases/${base.id}/fields/convert/preview`, { key: ws.write, body: { fieldId: score.id, newType: "rating" } });
    expect(preview.status).toBe(200);
    expect({ convertible: preview.body.convertibleCount, empty: preview.body.nullCount }).toEqual({ convertible: 1, empty: 2 });
  });

  test("the database's triggers know each kind from the field_kinds table, which the server writes from its registry; no trigger names a type", () => {
    const stored = server.ctx.store.sqlite.query("SELECT type, record_column AS recordColumn, numeric, searched FROM field_kinds ORDER BY type").all() as { type: string; recordColumn: string | null; numeric: number; searched: number }[];
    const expected = fieldKindRows()
      .map((row) => ({ ...row, numeric: Number(row.numeric), searched: Number(row.searched) }))
      .sort((a, b) => a.type.localeCompare(b.type));
    expect(stored).toEqual(expected);
    expect(stored.find((row) => row.type === "rating")).toEqual({ type: "rating", recordColumn: null, numeric: 1, searched: 0 });
    const triggers = server.ctx.store.sqlite.query("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all() as { name: string; sql: string }[];
    expect(triggers.filter((trigger) => /`type`\s+IN\b|`type`\s*=\s*'|CASE f\.`type`/.test(trigger.sql)).map((trigger) => trigger.name)).toEqual([]);
  });
});
