import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The layers of `src/`, top first (docs/architecture.md draws them): a file may import a file of
 * its own layer or of one below it, never one above. A layer of several folders holds peers.
 */
const LAYERS: { name: string; holds: string[] }[] = [
  { name: "entry", holds: ["main.ts", "cli/", "jobs/"] },
  { name: "http", holds: ["http/"] },
  { name: "remotes", holds: ["remotes/"] },
  { name: "transfer, webhooks, agents", holds: ["transfer/", "webhooks/", "agents/"] },
  { name: "changes", holds: ["changes/"] },
  { name: "search", holds: ["search/"] },
  { name: "content", holds: ["content/"] },
  { name: "events", holds: ["events/"] },
  { name: "assets", holds: ["assets/"] },
  { name: "spaces", holds: ["spaces/"] },
  { name: "auth", holds: ["auth/"] },
  { name: "audit", holds: ["audit/"] },
  { name: "context", holds: ["context.ts"] },
  { name: "tables", holds: ["tables/"] },
  { name: "shared", holds: ["shared/"] },
  { name: "store", holds: ["db/"] },
];

/** The admin page runs in the browser: it takes values only from its own files and the browser-safe vocabulary, and answer types from the domains. */
const PAGE = "admin/";
const PAGE_MAY_USE = ["admin/", "shared/"];
const PAGE_MAY_TYPE = ["admin/", "shared/", "tables/", ...LAYERS.slice(2).flatMap((layer) => layer.holds)];

const SRC = resolve(import.meta.dir, "../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Every relative import of a file: static, re-exported and dynamic, with whether it brings types alone. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const found: Import[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(import|export)(\s+type)?[^;'"]*?\sfrom\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g)) {
    const spec = match[3] ?? match[4];
    found.push({ from: relative(SRC, file), to: relative(SRC, resolve(dirname(file), spec)), typeOnly: Boolean(match[2]) || (match[4] !== undefined && /typeof\s+$/.test(text.slice(0, match.index))) });
  }
  return found;
}

const inPlace = (path: string, holds: string[]) => holds.some((place) => (place.endsWith("/") ? path.startsWith(place) : path === place || path === place.replace(/\.ts$/, "")));
const layerOf = (path: string) => LAYERS.findIndex((layer) => inPlace(path, layer.holds));

const imports = sourceFiles(SRC).flatMap(importsOf);

describe("the layers of src/ only point down", () => {
  test("every server file stands in a layer", () => {
    const placeless = [...new Set(imports.map((i) => i.from))].filter((path) => !path.startsWith(PAGE) && layerOf(path) === -1 && path !== "assets.d.ts");
    expect(placeless).toEqual([]);
  });

  test("no server file imports a layer above its own", () => {
    const upward = imports
      .filter((i) => !i.from.startsWith(PAGE) && !inPlace(i.to, [PAGE]) && layerOf(i.to) !== -1 && layerOf(i.to) < layerOf(i.from))
      .map((i) => `${i.from} (${LAYERS[layerOf(i.from)].name}) imports ${i.to} (${LAYERS[layerOf(i.to)].name})`);
    expect(upward).toEqual([]);
  });

  test("the page takes values only from browser-safe modules", () => {
    const page = imports.filter((i) => i.from.startsWith(PAGE));
    const unsafe = page.filter((i) => !inPlace(i.to, i.typeOnly ? PAGE_MAY_TYPE : PAGE_MAY_USE)).map((i) => `${i.from} imports ${i.to}${i.typeOnly ? " (types)" : ""}`);
    expect(unsafe).toEqual([]);
  });
});
