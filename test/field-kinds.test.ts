import { describe, expect, test } from "bun:test";
import type { FieldDefinition } from "../src/content/fields/kind";
import { FIELD_KINDS } from "../src/content/fields/registry";
import { FIELD_TYPES, type FieldType, isComputed } from "../src/shared/field-types";

const field = (type: FieldType, options: Record<string, unknown> = {}): FieldDefinition => ({ slug: "f", type, required: false, options });

/** A value of each stored type that a file carries as text: exported, then imported again. */
const SAMPLES: Partial<Record<FieldType, [FieldDefinition, unknown]>> = {
  text: [field("text"), "Ada, Lovelace"],
  longtext: [field("longtext"), "two\nlines"],
  markdown: [field("markdown"), "# Title"],
  html: [field("html"), "<p>hi</p>"],
  code: [field("code", { code: { language: "json" } }), '{"a":1}'],
  yaml: [field("yaml"), "a: 1"],
  number: [field("number"), -12.5],
  rating: [field("rating", { max: 5 }), 4],
  checkbox: [field("checkbox"), false],
  date: [field("date"), "2026-02-28T10:00:00Z"],
  select: [field("select", { choices: [{ id: "c1", name: "Done" }] }), "Done"],
  multiselect: [field("multiselect", { choices: [{ id: "a", name: "A" }, { id: "b", name: "B" }] }), ["A", "B"]],
  url: [field("url"), "https://example.com/a?b=1"],
  email: [field("email"), "ada@example.com"],
  phone: [field("phone"), "+44 20 7946 0958"],
  json: [field("json"), { nested: [1, { deep: true }] }],
};

describe("field kinds", () => {
  test("every stored type's value, written to a file's cell and read back by its kind, is the value again", () => {
    for (const [type, [definition, value]] of Object.entries(SAMPLES) as [FieldType, [FieldDefinition, unknown]][]) {
      const kind = FIELD_KINDS[type];
      expect({ type, checked: kind.checkValue(value, definition) }).toEqual({ type, checked: { value } });
      const read = kind.fromText(kind.toText(value, {}), definition);
      expect({ type, read: "value" in read ? kind.checkValue(read.value, definition) : read }).toEqual({ type, read: { value } });
    }
  });

  test("a computed type takes no value from a client, and only the five system types read a column of the record", () => {
    const columns = FIELD_TYPES.filter((type) => FIELD_KINDS[type].column).map((type) => [type, FIELD_KINDS[type].column!.key]);
    expect(columns).toEqual([
      ["created_time", "createdAt"],
      ["updated_time", "updatedAt"],
      ["created_by", "createdBy"],
      ["updated_by", "updatedBy"],
      ["auto_number", "autoNumber"],
    ]);
    for (const [type] of columns) expect(isComputed(type as FieldType)).toBe(true);
  });

  test("a cell that cannot be its field's value says why", () => {
    expect(FIELD_KINDS.number.fromText("twelve", field("number"))).toEqual({ error: '"twelve" is not a number' });
    expect(FIELD_KINDS.checkbox.fromText("maybe", field("checkbox"))).toEqual({ error: '"maybe" is not true or false (true/false, yes/no, 1/0)' });
    expect(FIELD_KINDS.json.fromText("{", field("json"))).toEqual({ error: "is not valid JSON" });
    expect(FIELD_KINDS.relation.fromText(Array.from({ length: 1001 }, (_, i) => `rec_${i}`).join(","), field("relation"))).toEqual({ error: "links at most 1000 records" });
  });
});
