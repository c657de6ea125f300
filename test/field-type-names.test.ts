import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { FIELD_TYPES } from "../src/shared/field-types";

/**
 * A rule about a field type lives in its kind (`src/content/fields/`), its page kind
 * (`src/admin/app/kinds/`) or its browser-safe traits (`src/shared/field-types.ts`). Anywhere else, code asks them: it never compares a field's type
 * with a type's name, switches over a type's name, or lists type names.
 */
const SRC = resolve(import.meta.dir, "../src");
const MAY_NAME = ["content/fields/", "shared/field-types.ts", "admin/app/kinds/"];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

const NAME = `["'\`](?:${FIELD_TYPES.join("|")})["'\`]`;
const PATTERNS: { what: string; pattern: RegExp }[] = [
  { what: "a type compared with a name", pattern: new RegExp(`\\btype\\s*[!=]==?\\s*${NAME}|${NAME}\\s*[!=]==?\\s*[\\w.]*\\btype\\b`, "g") },
  { what: "a type compared in SQL", pattern: new RegExp(`\\((?:fields\\.)?type,\\s*${NAME}|type\\W{0,2}\\s*(?:=|!=|<>)\\s*${NAME}`, "g") },
  { what: "a list of type names", pattern: new RegExp(`${NAME}\\s*,\\s*${NAME}`, "g") },
];

/** The `case "<name>":` lines inside a `switch` over something's `type`. */
function switchedNames(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/switch\s*\(\s*[\w.]*\btype\s*\)\s*\{/g)) {
    let depth = 1;
    let end = match.index + match[0].length;
    while (depth > 0 && end < text.length) depth += text[end] === "{" ? 1 : text[end] === "}" ? -1 : 0, end++;
    for (const name of text.slice(match.index, end).matchAll(new RegExp(`case\\s+${NAME}`, "g"))) found.push(name[0]);
  }
  return found;
}

describe("field type names", () => {
  test("no file outside the field kinds and their traits compares a field type's name", () => {
    const offences: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const path = relative(SRC, file);
      if (MAY_NAME.some((place) => path.startsWith(place))) continue;
      const text = readFileSync(file, "utf8");
      for (const { what, pattern } of PATTERNS) for (const match of text.matchAll(pattern)) offences.push(`${path}: ${what}: ${match[0]}`);
      for (const name of switchedNames(text)) offences.push(`${path}: a switch over a type: ${name}`);
    }
    expect(offences).toEqual([]);
  });
});
