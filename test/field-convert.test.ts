import { FieldUpkeep } from "../src/content/field-upkeep";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { approveAndMerge, createBase, deleteField, freshWorkspace, type TestServer, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
let ids: string[];
beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write, "people", [{ slug: "name", name: "Name", type: "text" }]);
  await createBase(server, ws.write, "things", [
    { slug: "name", name: "Name", type: "text" },
    { slug: "size", name: "Size", type: "text" },
    { slug: "colour", name: "Colour", type: "text" },
  ]);
  ids = [];
  for (const fields of [
    { name: "a", size: "12", colour: "red" },
    { name: "b", size: " 3.5 ", colour: "blue" },
    { name: "c", size: "large", colour: "red" },
    { name: "d" },
  ]) {
    ids.push((await server.call("POST", "/api/v1/bases/things/change-requests", { key: ws.write, body: { fields } })).body.id);
  }
});
afterEach(() => server.stop());

const fieldId = async (slug: string) => (await server.call("GET", "/api/v1/bases/things", { key: ws.read })).body.fields.find((f: { slug: string }) => f.slug === slug);
const values = async (slug: string) => (await server.call("GET", "/api/v1/records?baseId=things&sort=name&include=none", { key: ws.read })).body.records.map((r: { fields: Record<string, unknown> }) => r.fields[slug]);
const convert = async (body: Record<string, unknown>) => {
  const proposed = await server.call("POST", "/api/v1/bases/things/fields/change-requests", { key: ws.write, body: { operation: "convert", ...body } });
  if (proposed.status !== 201) return proposed;
  await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
  const merged = await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/merge`, { key: ws.write });
  await server.fieldUpkeep.settled();
  return merged;
};

describe("converting a field's type", () => {
  test("the preview counts what converts and names what would be lost, changing nothing", async () => {
    const size = await fieldId("size");
    const preview = await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body: { fieldId: size.id, newType: "number" } });
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({ totalCount: 4, convertibleCount: 2, nullCount: 2, keptCount: 1, changedCount: 1, lostCount: 1, conflicts: [{ recordId: ids[2], currentValue: "large" }] });
    expect((await fieldId("size")).type).toBe("text");
  });

  test("a conversion always waits for review; merged, values convert and the lost ones become null", async () => {
    const size = await fieldId("size");
    const proposed = await server.call("POST", "/api/v1/bases/things/fields/change-requests", { key: ws.write, body: { operation: "convert", fieldId: size.id, newType: "number" } });
    expect(proposed.body).toMatchObject({ status: "in_review", operations: [{ operation: "base_convert_field" }] });
    expect((await fieldId("size")).type).toBe("text");
    await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    expect((await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/merge`, { key: ws.write })).status).toBe(200);
    await server.fieldUpkeep.settled();
    expect((await fieldId("size")).type).toBe("number");
    expect(await values("size")).toEqual([12, 3.5, null, null]);
    const stored = server.ctx.store.sqlite.query("SELECT json_extract(data, '$.size') AS size FROM records ORDER BY json_extract(data, '$.name')").all();
    expect(stored).toEqual([{ size: 12 }, { size: 3.5 }, { size: null }, { size: null }]);
    const sorted = (await server.call("GET", "/api/v1/records?baseId=things&sort=-size&filters[0][fieldSlug]=size&filters[0][operator]=gt&filters[0][value]=1", { key: ws.read })).body.records;
    expect(sorted.map((r: { fields: { name: string } }) => r.fields.name)).toEqual(["a", "b"]);
    // And back: numbers become their text.
    expect((await convert({ fieldId: size.id, newType: "text" })).status).toBe(200);
    expect(await values("size")).toEqual(["12", "3.5", null, null]);
  });

  test("search follows a conversion both ways: a text field's words leave it, and come back as text", async () => {
    const found = async (query: string) => (await server.call("GET", `/api/v1/search?query=${query}&sources=records`, { key: ws.read })).body.results.map((hit: { id: string }) => hit.id);
    expect(await found("12")).toEqual([ids[0]]);
    const size = await fieldId("size");
    expect((await convert({ fieldId: size.id, newType: "number" })).status).toBe(200);
    expect(await found("12")).toEqual([]);
    expect(await found("red")).toEqual([ids[0], ids[2]].sort());
    expect((await convert({ fieldId: size.id, newType: "text" })).status).toBe(200);
    expect(await found("12")).toEqual([ids[0]]);
  });

  test("to a select: values its choices lack become null, or become choices with auto_create", async () => {
    const colour = await fieldId("colour");
    expect((await convert({ fieldId: colour.id, newType: "select", selectChoiceMode: "auto_create" })).status).toBe(200);
    const field = await fieldId("colour");
    expect(field).toMatchObject({ type: "select", options: { choices: [{ name: "red" }, { name: "blue" }] } });
    expect(await values("colour")).toEqual(["red", "blue", "red", null]);
    expect((await convert({ fieldId: colour.id, newType: "multiselect" })).status).toBe(200);
    expect(await values("colour")).toEqual([["red"], ["blue"], ["red"], null]);
    // Busabase's default, null_on_missing, onto a select without choices: the preview (which takes no mode) counts every value lost.
    const name = await fieldId("name");
    const preview = await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body: { fieldId: name.id, newType: "select" } });
    expect(preview.status).toBe(200);
    expect(preview.body.convertibleCount).toBe(0);
    expect(preview.body.nullCount).toBe(preview.body.totalCount);
    expect(preview.body.conflicts.length).toBeGreaterThan(0);
    // A multiselect back to a select keeps its choices, and each one-choice value.
    expect((await convert({ fieldId: colour.id, newType: "select" })).status).toBe(200);
    expect(await values("colour")).toEqual(["red", "blue", "red", null]);
  });

  test("a single select's choice stays one choice in a multiple select, commas and all", async () => {
    const colour = await fieldId("colour");
    expect((await convert({ fieldId: colour.id, newType: "select", selectChoiceMode: "auto_create" })).status).toBe(200);
    const tagged = (await server.call("POST", "/api/v1/bases/things/change-requests", { key: ws.write, body: { fields: { name: "e", colour: "red" } } })).body.id;
    await server.call("POST", "/api/v1/bases/things/fields/change-requests", {
      key: ws.write,
      body: { operation: "update", fieldId: colour.id, patch: { options: { choices: [{ name: "red" }, { name: "blue" }, { name: "infra, p1" }] } } },
    });
    expect((await server.call("POST", `/api/v1/records/${tagged}/change-requests`, { key: ws.write, body: { operation: "update", fields: { colour: "infra, p1" } } })).status).toBe(201);
    const preview = (await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body: { fieldId: colour.id, newType: "multiselect" } })).body;
    expect(preview).toMatchObject({ totalCount: 5, convertibleCount: 4, keptCount: 4, changedCount: 0, lostCount: 0, conflicts: [] });
    expect((await convert({ fieldId: colour.id, newType: "multiselect" })).status).toBe(200);
    expect((await fieldId("colour")).options.choices.map((choice: { name: string }) => choice.name)).toEqual(["red", "blue", "infra, p1"]);
    expect((await server.call("GET", `/api/v1/records/${tagged}`, { key: ws.read })).body.fields.colour).toEqual(["infra, p1"]);
  });

  test("text becomes one choice a value; split on its commas only when asked", async () => {
    await server.call("POST", "/api/v1/bases/things/change-requests", { key: ws.write, body: { fields: { name: "e", size: "infra, p1" } } });
    const size = await fieldId("size");
    const asOne = (await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body: { fieldId: size.id, newType: "multiselect", selectChoiceMode: "auto_create" } })).body;
    expect(asOne).toMatchObject({ convertibleCount: 4, lostCount: 0 });
    const split = await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body: { fieldId: size.id, newType: "multiselect", selectChoiceMode: "auto_create", splitText: true } });
    expect(split.status).toBe(200);
    expect((await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body: { fieldId: size.id, newType: "number", splitText: true } })).status).toBe(400);
    expect((await convert({ fieldId: size.id, newType: "multiselect", selectChoiceMode: "auto_create", splitText: true })).status).toBe(200);
    expect(await values("size")).toEqual([["12"], ["3.5"], ["large"], null, ["infra", "p1"]]);
    const colour = await fieldId("colour");
    expect((await convert({ fieldId: colour.id, newType: "multiselect", selectChoiceMode: "auto_create" })).status).toBe(200);
    expect(await values("colour")).toEqual([["red"], ["blue"], ["red"], null, null]);
  });

  test("the change request keeps what the proposer was shown: the field's name, its types, and the records that keep, change and lose a value", async () => {
    const size = await fieldId("size");
    const proposed = (await server.call("POST", "/api/v1/bases/things/fields/change-requests", { key: ws.propose, body: { operation: "convert", fieldId: size.id, newType: "number" } })).body;
    const read = (await server.call("GET", `/api/v1/change-requests/${proposed.id}`, { key: ws.read })).body;
    expect(read.operations[0].headCommit.payload).toEqual({
      fieldId: size.id,
      newType: "number",
      preview: { fieldName: "Size", fromType: "text", toType: "number", counts: { totalCount: 4, keptCount: 1, changedCount: 1, lostCount: 1 }, lost: [{ recordId: ids[2], currentValue: "large" }] },
    });
    const deletion = (await server.call("POST", "/api/v1/bases/things/fields/change-requests", { key: ws.propose, body: { operation: "delete", fieldId: (await fieldId("colour")).id } })).body;
    expect(deletion.operations[0].headCommit.payload.preview).toEqual({ fieldName: "Colour", type: "text", totalCount: 4, lostCount: 3 });
  });

  test("while the upkeep converts the records, reads show converted values and listings refuse to filter by the field", async () => {
    await server.fieldUpkeep.stop();
    const size = await fieldId("size");
    const proposed = await server.call("POST", "/api/v1/bases/things/fields/change-requests", { key: ws.write, body: { operation: "convert", fieldId: size.id, newType: "number" } });
    await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/merge`, { key: ws.write });
    expect(await values("size")).toEqual([12, 3.5, null, null]);
    expect((await server.call("GET", `/api/v1/records/${ids[0]}`, { key: ws.read })).body.fields.size).toBe(12);
    const filtered = await server.call("GET", "/api/v1/records?baseId=things&filters[0][fieldSlug]=size&filters[0][operator]=gt&filters[0][value]=1", { key: ws.read });
    expect(filtered.status).toBe(409);
    expect(filtered.body).toMatchObject({ data: { reason: "FIELD_CONVERTING" } });
    const again = await server.call("POST", "/api/v1/bases/things/fields/change-requests", { key: ws.write, body: { operation: "convert", fieldId: size.id, newType: "text" } });
    expect(again.status).toBe(409);
    const upkeep = new FieldUpkeep().start(server.ctx);
    await upkeep.settled();
    await upkeep.stop();
    expect((await server.call("GET", "/api/v1/records?baseId=things&filters[0][fieldSlug]=size&filters[0][operator]=gt&filters[0][value]=1", { key: ws.read })).body.records).toHaveLength(2);
  });

  test("what cannot convert is a clear 400 before anything is proposed", async () => {
    const size = await fieldId("size");
    await server.call("POST", "/api/v1/bases/things/fields", { key: ws.write, body: { slug: "double", name: "Double", type: "formula", options: { formula: { expression: "LEN({size})" } } } });
    const read = await server.call("POST", "/api/v1/bases/things/fields/change-requests", { key: ws.write, body: { operation: "convert", fieldId: size.id, newType: "number" } });
    expect(read.status).toBe(400);
    expect(read.body.error).toContain('formula "double"');
    const name = await fieldId("name");
    for (const body of [{ fieldId: name.id, newType: "text" }, { fieldId: name.id, newType: "relation" }, { fieldId: "nope", newType: "number" }]) {
      const reply = await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body });
      expect([400, 404]).toContain(reply.status);
    }
    const changeRequests = (await server.call("GET", "/api/v1/change-requests?status=in_review", { key: ws.read })).body.changeRequests;
    expect(changeRequests).toEqual([]);
  });
});

describe("converting names to links", () => {
  /** People made in the base "people", by name: their ids, in order. */
  const peopleNamed = async (...names: string[]) => {
    const made: string[] = [];
    for (const name of names) made.push((await server.call("POST", "/api/v1/bases/people/change-requests", { key: ws.write, body: { fields: { name } } })).body.id);
    return made;
  };
  /** The text a record of "things" holds in its colour field, which these tests fill with people's names. */
  const colourOf = (recordId: string, text: string) => server.call("POST", `/api/v1/records/${recordId}/change-requests`, { key: ws.write, body: { operation: "update", fields: { colour: text } } });

  test("each name links the record of the target base it names (case and accents folded); the rest are counted and shown before the merge", async () => {
    const people = await peopleNamed("Zoë Müller", "Grace Hopper", "Ada Lovelace");
    const colour = await fieldId("colour");
    // "things" names people in its colour field for this test: two match, one matches some, one none.
    for (const [i, owner] of [["0", "ZOE MULLER"], ["1", "grace hopper, Nobody"], ["2", "Someone Else"]] as const) {
      await colourOf(ids[Number(i)], owner);
    }
    await colourOf(ids[3], "Zoë Müller");
    const body = { fieldId: colour.id, newType: "relation", targetBaseId: "people", splitText: true };
    const preview = await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body });
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({
      totalCount: 4,
      convertibleCount: 3,
      nullCount: 1,
      keptCount: 2,
      changedCount: 1,
      lostCount: 1,
      conflicts: [{ recordId: ids[2], currentValue: "Someone Else" }],
      unmatched: { count: 2, examples: ["Nobody", "Someone Else"] },
      ambiguous: { count: 0, examples: [] },
    });
    expect((await fieldId("colour")).type).toBe("text");
    const proposed = (await server.call("POST", "/api/v1/bases/things/fields/change-requests", { key: ws.propose, body: { operation: "convert", ...body } })).body;
    expect(proposed.status).toBe("in_review");
    const read = (await server.call("GET", `/api/v1/change-requests/${proposed.id}`, { key: ws.read })).body;
    expect(read.operations[0].headCommit.payload.preview).toEqual({
      fieldName: "Colour",
      fromType: "text",
      toType: "relation",
      counts: { totalCount: 4, keptCount: 2, changedCount: 1, lostCount: 1 },
      lost: [{ recordId: ids[2], currentValue: "Someone Else" }],
      unmatched: { count: 2, examples: ["Nobody", "Someone Else"] },
      ambiguous: { count: 0, examples: [] },
    });
    expect((await approveAndMerge(server, ws.write, proposed.id)).status).toBe(200);
    await server.fieldUpkeep.settled();
    const field = await fieldId("colour");
    expect(field).toMatchObject({ type: "relation", options: { targetBaseId: expect.stringMatching(/^bse_/), multiple: true } });
    const byId = async (id: string) => (await server.call("GET", `/api/v1/records/${id}`, { key: ws.read })).body.fields.colour;
    expect(await byId(ids[0])).toEqual([people[0]]);
    expect(await byId(ids[1])).toEqual([people[1]]);
    expect(await byId(ids[2])).toEqual([]);
    expect(await byId(ids[3])).toEqual([people[0]]);
    // The text left the records, their index and search with them.
    expect(server.ctx.store.sqlite.query("SELECT count(*) AS n FROM records WHERE json_type(data, '$.colour') IS NOT NULL").get()).toEqual({ n: 0 });
    expect(server.ctx.store.sqlite.query("SELECT count(*) AS n FROM field_values WHERE field_id = ?1 AND value IS NOT NULL").get(colour.id)).toEqual({ n: 0 });
    expect((await server.call("GET", "/api/v1/search?query=Someone&sources=records", { key: ws.read })).body.results).toEqual([]);
    // The other side links back.
    const inverse = (await server.call("GET", "/api/v1/bases/people", { key: ws.read })).body.fields.find((f: { type: string }) => f.type === "relation");
    expect((await server.call("GET", `/api/v1/records/${people[0]}`, { key: ws.read })).body.fields[inverse.slug].sort()).toEqual([ids[0], ids[3]].sort());
  });

  test("a name two records of the target base bear links neither: the preview and the change request count it with examples, as unmatched names are, and the merge drops it", async () => {
    const people = await peopleNamed("Ada Lovelace", "Grace Hopper", "ADA LOVELACE");
    const colour = await fieldId("colour");
    // Only a shared name; a shared name beside one that names a single record; that one alone.
    for (const [i, named] of [[0, "ada lovelace"], [1, "Grace Hopper, Ada Lovelace"], [2, "grace hopper"]] as const) {
      await colourOf(ids[i], named);
    }
    const body = { fieldId: colour.id, newType: "relation", targetBaseId: "people", splitText: true };
    const preview = await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body });
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({
      totalCount: 4,
      convertibleCount: 2,
      nullCount: 2,
      keptCount: 1,
      changedCount: 1,
      lostCount: 1,
      conflicts: [{ recordId: ids[0], currentValue: "ada lovelace" }],
      unmatched: { count: 0, examples: [] },
      ambiguous: { count: 1, examples: ["ada lovelace"] },
    });
    const proposed = (await server.call("POST", "/api/v1/bases/things/fields/change-requests", { key: ws.propose, body: { operation: "convert", ...body } })).body;
    const read = (await server.call("GET", `/api/v1/change-requests/${proposed.id}`, { key: ws.read })).body;
    expect(read.operations[0].headCommit.payload.preview).toMatchObject({
      counts: { totalCount: 4, keptCount: 1, changedCount: 1, lostCount: 1 },
      lost: [{ recordId: ids[0], currentValue: "ada lovelace" }],
      ambiguous: { count: 1, examples: ["ada lovelace"] },
    });
    expect((await approveAndMerge(server, ws.write, proposed.id)).status).toBe(200);
    await server.fieldUpkeep.settled();
    const byId = async (id: string) => (await server.call("GET", `/api/v1/records/${id}`, { key: ws.read })).body.fields.colour;
    expect(await byId(ids[0])).toEqual([]);
    expect(await byId(ids[1])).toEqual([people[1]]);
    expect(await byId(ids[2])).toEqual([people[1]]);
  });

  test("names are matched to a base's records as a paste into a link column asks: case and accents folded, none for a name no record has or several have", async () => {
    const [zoe] = await peopleNamed("Zoë Müller", "Ada Lovelace", "ada lovelace");
    const reply = await server.call("POST", "/api/v1/bases/people/records/match", { key: ws.read, body: { names: ["ZOE MULLER", "zoë müller", "Nobody", "ADA LOVELACE"] } });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      matches: [
        { name: "ZOE MULLER", recordId: zoe, recordCount: 1 },
        { name: "zoë müller", recordId: zoe, recordCount: 1 },
        { name: "Nobody", recordId: null, recordCount: 0 },
        { name: "ADA LOVELACE", recordId: null, recordCount: 2 },
      ],
    });
    expect((await server.call("POST", "/api/v1/bases/people/records/match", { key: ws.read, body: { names: "Zoë" } })).status).toBe(400);
  });

  test("a conversion to links names its target base, another base of the space with a text field", async () => {
    const colour = await fieldId("colour");
    for (const [body, path] of [
      [{ fieldId: colour.id, newType: "relation" }, "targetBaseId"],
      [{ fieldId: colour.id, newType: "relation", targetBaseId: "things" }, "targetBaseId"],
      [{ fieldId: colour.id, newType: "number", targetBaseId: "people" }, "targetBaseId"],
    ] as const) {
      const reply = await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body });
      expect(reply.status).toBe(400);
      expect(reply.body.data.issues[0].path).toEqual([path]);
    }
    // A base the space lacks is not found, as a hidden one is (docs/visibility.md).
    const nowhere = await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body: { fieldId: colour.id, newType: "relation", targetBaseId: "nowhere" } });
    expect([nowhere.status, nowhere.body.error]).toEqual([404, 'No base "nowhere" in this space.']);
    await createBase(server, ws.write, "counts", [{ slug: "n", name: "N", type: "number" }]);
    const reply = await server.call("POST", "/api/v1/bases/things/fields/convert/preview", { key: ws.read, body: { fieldId: colour.id, newType: "relation", targetBaseId: "counts" } });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toContain("no text field");
  });
});

describe("deleted fields", () => {
  test("a deleted field is listed as it was, the latest first; another base's are not", async () => {
    const colour = await fieldId("colour");
    const size = await fieldId("size");
    for (const field of [colour, size]) await deleteField(server, ws.write, "things", field.id);
    server.clock.advance(1000);
    const deleted = (await server.call("GET", "/api/v1/bases/things/fields/deleted", { key: ws.read })).body;
    expect(deleted.map((f: { slug: string }) => f.slug).sort()).toEqual(["colour", "size"]);
    expect(deleted[0]).toMatchObject({ baseId: colour.baseId, type: "text", deletedAt: expect.any(String) });
    expect((await fieldId("colour"))).toBeUndefined();
    await createBase(server, ws.write, "other", [{ slug: "x", name: "X", type: "text" }]);
    expect((await server.call("GET", "/api/v1/bases/other/fields/deleted", { key: ws.read })).body).toEqual([]);
  });
});
