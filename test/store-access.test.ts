import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/**
 * One way to the store (docs/architecture.md, "Caches and the store"): SQL text runs on the
 * connection only in `db/` (the store itself) and in a domain's `store.ts`; everywhere, tables are
 * named through their drizzle declarations, never spelled in SQL by hand; and no module keeps a
 * statement or a cache of the database in a map of its own.
 */
const SRC = resolve(import.meta.dir, "../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry.name) ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((file) => ({ path: relative(SRC, file), text: readFileSync(file, "utf8") }));
const isStore = (path: string) => path.startsWith("db/") || path.endsWith("/store.ts");
const isTables = (path: string) => path.startsWith("tables/");

describe("one way to the store", () => {
  test("SQL text runs on the connection only in db/ and the domains' store modules", () => {
    const found = files.filter(({ path }) => !isStore(path)).flatMap(({ path, text }) => [...text.matchAll(/\bsqlite\s*\.\s*(query|run|prepare|exec)\s*[<(]|\brawStatement\s*[<(]/g)].map((match) => `${path}: ${match[0]}`));
    expect(found).toEqual([]);
  });

  test("outside the store and the tables, SQL names no table by hand", () => {
    const found = files
      .filter(({ path }) => !path.startsWith("db/") && !isTables(path))
      .flatMap(({ path, text }) => {
        // A common table expression the same file declares (`WITH "scored" AS`) is the query's own, not a table.
        const declared = new Set([...text.matchAll(/\bWITH\s+"([a-z_]+)"\s+AS\b/g)].map((match) => match[1]));
        return [...text.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+"((?!sqlite_)[a-z_]+)"/g)].filter((match) => !declared.has(match[1])).map((match) => `${path}: ${match[0]}`);
      });
    expect(found).toEqual([]);
  });

  test("no module keeps its own map of statements or of the database's rows", () => {
    const found = files
      .filter(({ path }) => !path.startsWith("admin/"))
      .flatMap(({ path, text }) => [...text.matchAll(/^(?:export )?const \w+ = new (?:Weak)?Map<(?:Database|[^>]*Store|[^>]*sqlite)/gm)].map((match) => `${path}: ${match[0]}`));
    expect(found).toEqual([]);
  });
});
