import { z } from "zod";
import { badRequest } from "../shared/errors";
import { SLUG_PATTERN } from "../shared/formats";

/**
 * Busabase's package format, `busabase-package@1` (what `busabase-cli export` writes): a
 * `busabase.json` manifest and a `content/` tree read by layout — a directory with `_node.json` is
 * a skill, drive or airapp carried verbatim; one with `base.json` a base (`records.ndjson` beside
 * it); any other directory a folder (`_folder.json` optional); `*.md` a doc with YAML front matter;
 * any other file a file node (`<name>.node.json` optional). `assets/` carries the images docs embed.
 * Everything is checked here, before an install writes anything.
 */

const PACKAGE_FORMAT = "busabase-package@1";

/** What one package may hold (Busabase's bounds). */
export const PACKAGE_LIMITS = { files: 5000, fileBytes: 25 * 1024 * 1024, totalBytes: 250 * 1024 * 1024, recordsPerBase: 50_000 } as const;

/** A package's files by path (`content/faq.md`), as an archive or a directory gives them. */
export type PackageFiles = Map<string, Uint8Array>;

const Manifest = z.object({
  format: z.literal(PACKAGE_FORMAT),
  name: z.string().min(1),
  description: z.string().default(""),
  version: z.string().optional(),
  author: z.string().optional(),
  license: z.string().optional(),
  homepage: z.string().optional(),
  tags: z.array(z.string()).default([]),
});
type PackageManifest = z.infer<typeof Manifest>;

const Position = z.number().int().optional();
const FolderMeta = z.object({ name: z.string().min(1).optional(), description: z.string().default(""), position: Position });
const TreeMeta = z.object({ type: z.enum(["skill", "airapp", "drive"]), name: z.string().min(1), description: z.string().default(""), position: Position });
const DocFrontMatter = z.object({ name: z.string().min(1), description: z.string().default(""), position: Position });
const AssetMeta = z.object({ assetId: z.string().min(1), fileName: z.string().min(1), mimeType: z.string().min(1) });

const PackageField = z.object({
  slug: z.string().min(1),
  name: z.string().min(1),
  type: z.string().min(1),
  required: z.boolean().default(false),
  position: z.number().int().optional(),
  options: z.record(z.string(), z.unknown()).default({}),
});
export type PackageField = z.infer<typeof PackageField>;

const PackageView = z.object({
  slug: z.string().min(1),
  name: z.string().min(1),
  description: z.string().default(""),
  type: z.string().default("table"),
  config: z.record(z.string(), z.unknown()).default({}),
});
type PackageView = z.infer<typeof PackageView>;

const BaseFile = z.object({
  name: z.string().min(1),
  description: z.string().default(""),
  position: Position,
  fields: z.array(PackageField).max(500).default([]),
  views: z.array(PackageView).max(200).default([]),
});

const RecordLine = z.object({ key: z.string().min(1), fields: z.record(z.string(), z.unknown()).default({}) });
type PackageRecord = z.infer<typeof RecordLine>;

interface PackageFile {
  path: string;
  bytes: Uint8Array;
}

interface NodeCommon {
  slug: string;
  name: string;
  description: string;
  position?: number;
}

export type PackageNode =
  | (NodeCommon & { type: "folder"; children: PackageNode[] })
  | (NodeCommon & { type: "doc"; body: string })
  | (NodeCommon & { type: "base"; fields: PackageField[]; views: PackageView[]; records: PackageRecord[] })
  | (NodeCommon & { type: "skill" | "airapp" | "drive"; files: PackageFile[] })
  | (NodeCommon & { type: "file"; fileName: string; bytes: Uint8Array });

interface PackageAsset {
  assetId: string;
  fileName: string;
  mimeType: string;
  bytes: Uint8Array;
}

export interface PackageTree {
  manifest: PackageManifest;
  nodes: PackageNode[];
  assets: PackageAsset[];
}

const text = (bytes: Uint8Array, path: string): string => {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw badRequest(`${path} is not UTF-8 text.`);
  }
};

function parsed<T>(schema: z.ZodType<T>, value: unknown, path: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 5).map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
  throw badRequest(`${path} does not match ${PACKAGE_FORMAT}: ${issues.join("; ")}.`);
}

function json(files: PackageFiles, path: string): unknown {
  try {
    return JSON.parse(text(files.get(path) ?? new Uint8Array(), path));
  } catch (error) {
    if (error instanceof SyntaxError) throw badRequest(`${path} is not valid JSON: ${error.message}`);
    throw error;
  }
}

function checkSlug(slug: string, where: string): string {
  if (!SLUG_PATTERN.test(slug)) throw badRequest(`${where}: the slug "${slug.slice(0, 80)}" must be lower-case letters, digits and dashes (1 to 64).`);
  return slug;
}

/** `getting-started` → `Getting Started`: a folder's name when its `_folder.json` gives none. */
const humanized = (slug: string) =>
  slug
    .split("-")
    .filter(Boolean)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join(" ");

/** The front matter of a doc (`---` YAML `---`) and its body, line ends made LF, blank lines around it dropped. */
function frontMatter(source: string, path: string): { data: Record<string, unknown>; body: string } {
  const normalized = source.replaceAll("\r\n", "\n");
  const trim = (body: string) => body.replace(/^\n+/, "").replace(/\n+$/, "");
  if (!normalized.startsWith("---\n")) return { data: {}, body: trim(normalized) };
  const end = normalized.indexOf("\n---", 3);
  if (end === -1) throw badRequest(`${path} opens its front matter with --- and never closes it.`);
  let data: unknown;
  try {
    data = Bun.YAML.parse(normalized.slice(4, end));
  } catch (error) {
    throw badRequest(`${path} has front matter that is not YAML: ${(error as Error).message}`);
  }
  if (data !== null && data !== undefined && (typeof data !== "object" || Array.isArray(data))) throw badRequest(`${path}: front matter must be key: value lines.`);
  return { data: (data ?? {}) as Record<string, unknown>, body: trim(normalized.slice(end + 4)) };
}

/** The direct children of a directory (`dir` ends in `/`): its files and its subdirectories, sorted. */
function listing(files: PackageFiles, dir: string): { files: string[]; dirs: string[] } {
  const names = new Set<string>();
  const dirs = new Set<string>();
  for (const path of files.keys()) {
    if (!path.startsWith(dir)) continue;
    const rest = path.slice(dir.length);
    const slash = rest.indexOf("/");
    if (slash === -1) names.add(rest);
    else dirs.add(rest.slice(0, slash));
  }
  return { files: [...names].sort(), dirs: [...dirs].sort() };
}

const byPosition = (a: NodeCommon, b: NodeCommon) => (a.position ?? Number.MAX_SAFE_INTEGER) - (b.position ?? Number.MAX_SAFE_INTEGER) || a.slug.localeCompare(b.slug, "en");

const RESERVED = new Set(["busabase.json", "_node.json", "_folder.json", "base.json", "records.ndjson"]);

function readNodes(files: PackageFiles, dir: string): PackageNode[] {
  const { files: names, dirs } = listing(files, dir);
  const nodes: PackageNode[] = dirs.map((name) => readDirectory(files, `${dir}${name}/`, name));
  for (const name of names) {
    if (RESERVED.has(name) || name.endsWith(".node.json")) continue;
    const bytes = files.get(`${dir}${name}`) as Uint8Array;
    if (name.toLowerCase().endsWith(".md")) {
      const path = `${dir}${name}`;
      const { data, body } = frontMatter(text(bytes, path), path);
      const meta = parsed(DocFrontMatter, { name: humanized(name.slice(0, -3)), ...data }, `${path} front matter`);
      nodes.push({ type: "doc", slug: checkSlug(name.slice(0, -3), path), ...meta, body });
      continue;
    }
    const dot = name.lastIndexOf(".");
    const slug = checkSlug(dot > 0 ? name.slice(0, dot) : name, `${dir}${name}`);
    const sidecar = `${dir}${name}.node.json`;
    const meta = files.has(sidecar) ? parsed(FolderMeta, json(files, sidecar), sidecar) : FolderMeta.parse({});
    nodes.push({ type: "file", slug, name: meta.name ?? name, description: meta.description, position: meta.position, fileName: name, bytes });
  }
  return nodes.sort(byPosition);
}

function readDirectory(files: PackageFiles, dir: string, slug: string): PackageNode {
  checkSlug(slug, dir);
  if (files.has(`${dir}_node.json`)) {
    const meta = parsed(TreeMeta, json(files, `${dir}_node.json`), `${dir}_node.json`);
    const inside = [...files.entries()].filter(([path]) => path.startsWith(dir) && path !== `${dir}_node.json`).map(([path, bytes]) => ({ path: path.slice(dir.length), bytes }));
    return { ...meta, slug, files: inside.sort((a, b) => a.path.localeCompare(b.path, "en")) };
  }
  if (files.has(`${dir}base.json`)) {
    const base = parsed(BaseFile, json(files, `${dir}base.json`), `${dir}base.json`);
    return { type: "base", slug, name: base.name, description: base.description, position: base.position, fields: base.fields, views: base.views, records: readRecords(files, `${dir}records.ndjson`) };
  }
  const metaPath = `${dir}_folder.json`;
  const meta = files.has(metaPath) ? parsed(FolderMeta, json(files, metaPath), metaPath) : FolderMeta.parse({});
  return { type: "folder", slug, name: meta.name ?? humanized(slug), description: meta.description, position: meta.position, children: readNodes(files, dir) };
}

function readRecords(files: PackageFiles, path: string): PackageRecord[] {
  const bytes = files.get(path);
  if (!bytes) return [];
  const lines = text(bytes, path).split("\n");
  const records: PackageRecord[] = [];
  const keys = new Set<string>();
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    if (records.length === PACKAGE_LIMITS.recordsPerBase) throw badRequest(`${path} holds more than ${PACKAGE_LIMITS.recordsPerBase} records.`);
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw badRequest(`${path} line ${index + 1} is not JSON: ${(error as Error).message}`);
    }
    const record = parsed(RecordLine, value, `${path} line ${index + 1}`);
    if (keys.has(record.key)) throw badRequest(`${path} line ${index + 1} repeats the record key "${record.key.slice(0, 80)}".`);
    keys.add(record.key);
    records.push(record);
  });
  return records;
}

function readAssets(files: PackageFiles): PackageAsset[] {
  const assets: PackageAsset[] = [];
  for (const path of [...files.keys()].sort()) {
    if (!path.startsWith("assets/") || !path.endsWith(".asset.json")) continue;
    const meta = parsed(AssetMeta, json(files, path), path);
    const bytes = files.get(path.slice(0, -".asset.json".length));
    if (!bytes) throw badRequest(`${path} describes an image whose bytes are missing; the package is incomplete.`);
    assets.push({ ...meta, bytes });
  }
  return assets;
}

/** A package's tree, checked whole: its manifest, every sidecar, slug and record line. */
export function readPackage(files: PackageFiles): PackageTree {
  if (!files.has("busabase.json")) {
    const nested = [...files.keys()].filter((path) => path.endsWith("/busabase.json")).slice(0, 5);
    throw badRequest(`Not a Busabase package: there is no busabase.json at its root.${nested.length ? ` Packages were found at: ${nested.map((path) => path.slice(0, -"/busabase.json".length)).join(", ")}.` : ""}`);
  }
  const raw = json(files, "busabase.json") as { format?: unknown };
  if (typeof raw?.format === "string" && raw.format !== PACKAGE_FORMAT) throw badRequest(`busabase.json declares the format "${raw.format.slice(0, 40)}"; this Basalt reads ${PACKAGE_FORMAT}.`);
  return { manifest: parsed(Manifest, raw, "busabase.json"), nodes: readNodes(files, "content/"), assets: readAssets(files) };
}

/** Every node of the tree, parents before their children, with its path of slugs. */
export function* walk(nodes: PackageNode[], above = ""): Generator<{ node: PackageNode; path: string; depth: number }> {
  for (const node of nodes) {
    const path = above ? `${above}/${node.slug}` : node.slug;
    yield { node, path, depth: above ? above.split("/").length : 0 };
    if (node.type === "folder") yield* walk(node.children, path);
  }
}
