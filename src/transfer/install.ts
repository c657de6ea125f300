import { type Static, t } from "elysia";
import { assetUrl, uploadAsset } from "../assets/assets";
import { proposeDoc, proposeFile, proposeFileTree, proposeTreeChanges, type TreeOperation } from "../changes/node-content";
import { type Proposer, proposeFieldChange, proposeNodeChanges, proposeRecords, proposeRecordUpdates, proposeViewChange } from "../changes/proposals";
import type { Proposed } from "../changes/propose";
import { findBase, type NewField } from "../content/bases";
import { MAX_FILES_GIVEN } from "../content/file-trees";
import { listNodes, rootNode } from "../content/nodes";
import type { AppContext } from "../context";
import { badRequest, conflict } from "../shared/errors";
import { CHOICE_COLORS, FIELD_TRAITS, type FieldType, traitsOf } from "../shared/field-types";
import { SLUG_PATTERN, slugFrom } from "../shared/formats";
import { WholeNumber } from "../shared/schemas";
import { SEES_ALL, type Sight } from "../spaces/sight";
import type { ViewConfigInput } from "../content/views";
import { type PackageField, type PackageNode, type PackageTree, walk } from "./package-format";

/**
 * Installing a package (`busabase-package@1`) into a space, as Busabase's `install` does (contract
 * §2.13): a plan first — what would be made, where, which slugs are taken — that writes nothing;
 * then the install, which makes the structure at once (folders, bases, their fields and views) and
 * proposes the content (records, docs, skills, drives, airapps, files) as change requests, merged
 * at once only with `autoMerge`. Base slugs are unique in a space here as names for links; other
 * nodes only among their siblings.
 */

const PLAN_NODE_TYPES = ["folder", "doc", "base", "skill", "airapp", "drive", "file"] as const;
const Count = WholeNumber({ minimum: 0 });

const InstallSourceSchema = t.Union([
  t.Object({ owner: t.String(), repo: t.String(), ref: t.Optional(t.String()), subdir: t.Optional(t.String()) }),
  t.Object({ archive: t.String({ description: "upload: the request's body; or the directory the command line read." }) }),
]);

export const InstallPlanSchema = t.Object({
  package: t.Object({ name: t.String(), description: t.String(), version: t.Optional(t.String()), author: t.Optional(t.String()), license: t.Optional(t.String()), homepage: t.Optional(t.String()), tags: t.Array(t.String()) }),
  source: InstallSourceSchema,
  targetFolderSlug: t.String(),
  nodes: t.Array(
    t.Object({
      path: t.String(),
      slug: t.String(),
      name: t.String(),
      type: t.Union(PLAN_NODE_TYPES.map((type) => t.Literal(type))),
      depth: Count,
      fieldCount: t.Optional(Count),
      recordCount: t.Optional(Count),
      fileCount: t.Optional(Count),
    }),
  ),
  counts: t.Object({ folders: Count, docs: Count, bases: Count, records: Count, skills: Count, airapps: Count, drives: Count, files: Count }),
  collisions: t.Array(t.Object({ kind: t.Union([t.Literal("node"), t.Literal("base")]), slug: t.String(), path: t.String(), renamedTo: t.Optional(t.String()) })),
  warnings: t.Array(t.String()),
  requiresAutoMerge: t.Boolean({ description: "Some record links another: the linked records must exist first, so the content must merge at once." }),
  applicable: t.Boolean({ description: "Whether installing with these options would go through: no unresolved collision, and autoMerge when it is required." }),
});
export type InstallPlan = Static<typeof InstallPlanSchema>;

export const InstallResultSchema = t.Object({
  targetFolderSlug: t.String(),
  targetFolderNodeId: t.String(),
  created: t.Object({ folders: Count, docs: Count, bases: Count, views: Count, records: Count, fileTreeNodes: Count, files: Count }),
  pendingChangeRequests: WholeNumber({ minimum: 0, description: "Change requests left for review (the content, without autoMerge)." }),
  warnings: t.Array(t.String()),
});
type InstallResult = Static<typeof InstallResultSchema>;

export interface InstallOptions {
  intoFolder?: string;
  rename?: boolean;
  autoMerge?: boolean;
}

/** A plan, and the tree it would install: its slugs renamed where `rename` resolved a collision. */
interface Planned {
  plan: InstallPlan;
  tree: PackageTree;
  targetFolderId: string | null;
}

/** The first of `slug-2`, `slug-3`, … not taken. */
function freeSlug(slug: string, taken: Set<string>): string {
  for (let suffix = 2; ; suffix++) {
    const candidate = `${slug.slice(0, 60)}-${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** In which pass a field is made: stored values first, then links, then what reads through links, then formulas over all of them. */
const PASSES = { stored: 0, links: 1, lookup: 2, formula: 3 } as const;
const passOf = (type: string): number => PASSES[traitsOf(type).source];
const isLink = (field: PackageField) => passOf(field.type) === 1;

/** Fields whose values a record does not store, or that Basalt has no type for: their values are not installed. */
const valueless = (field: PackageField) => !Object.hasOwn(FIELD_TRAITS, field.type) || traitsOf(field.type).computed || traitsOf(field.type).holdsFiles;

function warningsOf(tree: PackageTree): string[] {
  const warnings: string[] = [];
  for (const { node, path } of walk(tree.nodes)) {
    if (node.type !== "base") continue;
    for (const field of node.fields) if (!Object.hasOwn(FIELD_TRAITS, field.type)) warnings.push(`${path}: the field "${field.slug}" is of type ${field.type}, which Basalt does not have; it is left out.`);
    if (node.fields.some((field) => traitsOf(field.type).holdsFiles)) warnings.push(`${path}: attachment values do not travel in packages; those fields are made empty.`);
  }
  return warnings;
}

const relationValued = (tree: PackageTree) =>
  [...walk(tree.nodes)].some(({ node }) => {
    if (node.type !== "base") return false;
    const links = node.fields.filter(isLink).map((field) => field.slug);
    return links.length > 0 && node.records.some((record) => links.some((slug) => [record.fields[slug]].flat().some((value) => value !== null && value !== undefined && value !== "")));
  });

/**
 * What installing `tree` into the space would make, as the caller sees the space: the target
 * folder (the manifest's name as a slug unless `intoFolder` names one; an existing folder at the
 * top of the tree is installed into), every node with its path and depth, the counts, and each slug
 * already taken — renamed `-2`, `-3`, … when `rename` asks, else making the plan not applicable.
 */
export function planInstall(ctx: AppContext, spaceId: string, sight: Sight, tree: PackageTree, source: InstallPlan["source"], options: InstallOptions): Planned {
  const targetFolderSlug = options.intoFolder ?? slugFrom(tree.manifest.name);
  if (!SLUG_PATTERN.test(targetFolderSlug)) throw badRequest(`intoFolder "${targetFolderSlug.slice(0, 80)}" must be lower-case letters, digits and dashes (1 to 64).`);
  const top = listNodes(ctx, spaceId, sight, { depth: 0 });
  const sameSlug = top.find((node) => node.slug === targetFolderSlug);
  if (sameSlug && sameSlug.type !== "folder") throw conflict(`The top of the space has a ${sameSlug.type} "${targetFolderSlug}"; install into another folder with intoFolder.`, { reason: "SLUG_TAKEN" });
  const siblings = new Set(sameSlug ? listNodes(ctx, spaceId, sight, { parentId: sameSlug.id, depth: 0 }).map((node) => node.slug) : []);
  const baseSlugs = new Set(listNodes(ctx, spaceId, sight, { types: ["base"] }).map((node) => node.slug));
  const seenBases = new Set<string>();
  for (const { node, path } of walk(tree.nodes)) {
    if (node.type !== "base") continue;
    if (seenBases.has(node.slug)) throw badRequest(`The package has two bases with the slug "${node.slug}" (${path}); a base's slug names it in links, so it is one per space.`);
    seenBases.add(node.slug);
  }
  const collisions: InstallPlan["collisions"] = [];
  const baseRenames = new Map<string, string>();
  const renamed = (node: PackageNode, above: string, atTop: boolean): PackageNode => {
    const path = `${above}/${node.slug}`;
    let slug = node.slug;
    const kind = node.type === "base" && baseSlugs.has(slug) ? "base" : atTop && siblings.has(slug) ? "node" : null;
    if (kind) {
      const taken = kind === "base" ? new Set([...baseSlugs, ...seenBases, ...siblings]) : siblings;
      const collision: InstallPlan["collisions"][number] = { kind, slug, path };
      if (options.rename) {
        slug = freeSlug(slug, taken);
        collision.renamedTo = slug;
        if (node.type === "base") baseRenames.set(node.slug, slug);
        taken.add(slug);
      }
      collisions.push(collision);
    }
    return node.type === "folder" ? { ...node, slug, children: node.children.map((child) => renamed(child, path, false)) } : { ...node, slug };
  };
  const nodes = tree.nodes.map((node) => renamed(node, targetFolderSlug, true));
  const retargeted = (node: PackageNode): PackageNode => {
    if (node.type === "folder") return { ...node, children: node.children.map(retargeted) };
    if (node.type !== "base") return node;
    const fields = node.fields.map((field) => {
      const target = field.options.targetBaseSlug;
      return typeof target === "string" && baseRenames.has(target) ? { ...field, options: { ...field.options, targetBaseSlug: baseRenames.get(target) } } : field;
    });
    return { ...node, fields };
  };
  const planned: PackageTree = { ...tree, nodes: nodes.map(retargeted) };

  const counts = { folders: 0, docs: 0, bases: 0, records: 0, skills: 0, airapps: 0, drives: 0, files: planned.assets.length };
  const outline: InstallPlan["nodes"] = [];
  for (const { node, path, depth } of walk(planned.nodes)) {
    const line: InstallPlan["nodes"][number] = { path, slug: node.slug, name: node.name, type: node.type, depth };
    if (node.type === "folder") counts.folders++;
    else if (node.type === "doc") counts.docs++;
    else if (node.type === "file") counts.files++;
    else if (node.type === "base") {
      counts.bases++;
      counts.records += node.records.length;
      Object.assign(line, { fieldCount: node.fields.length, recordCount: node.records.length });
    } else {
      counts[`${node.type}s`]++;
      counts.files += node.files.length;
      line.fileCount = node.files.length;
    }
    outline.push(line);
  }
  const requiresAutoMerge = relationValued(planned);
  const { format: _, ...manifest } = tree.manifest;
  const plan: InstallPlan = {
    package: manifest,
    source,
    targetFolderSlug,
    nodes: outline,
    counts,
    collisions,
    warnings: warningsOf(planned),
    requiresAutoMerge,
    applicable: collisions.every((collision) => collision.renamedTo !== undefined) && (!requiresAutoMerge || options.autoMerge === true),
  };
  return { plan, tree: planned, targetFolderId: sameSlug?.id ?? null };
}

/** The options a package field is made with here: its links by slug, choices with the colours Basalt knows, package-only keys left out. */
function fieldOptions(field: PackageField): Record<string, unknown> {
  const { inverseFieldSlug: _, ai: __, ...options } = field.options;
  const choices = options.choices;
  if (Array.isArray(choices)) {
    options.choices = choices.map((choice: { id?: unknown; name?: unknown; color?: unknown }) => ({
      ...(typeof choice.id === "string" ? { id: choice.id } : {}),
      name: choice.name,
      ...((CHOICE_COLORS as readonly unknown[]).includes(choice.color) ? { color: choice.color } : {}),
    }));
  }
  return options;
}


interface Installing {
  ctx: AppContext;
  who: Proposer;
  autoMerge: boolean;
  warnings: string[];
  pending: number;
  created: InstallResult["created"];
  /** Per base slug: the slugs of the fields made. */
  made: Map<string, Set<string>>;
}

function counted(state: Installing, proposed: Proposed): Proposed {
  if (!proposed.outcome?.merged) state.pending++;
  return proposed;
}

/** The nodes below a node, by slug. */
const childIds = (ctx: AppContext, spaceId: string, parentId: string) => new Map(listNodes(ctx, spaceId, SEES_ALL, { parentId, depth: 0 }).map((node) => [node.slug, node.id]));

/** Folders and bases (with their stored fields) in one change request, merged at once. */
async function makeStructure(state: Installing, tree: PackageTree, targetSlug: string, targetFolderId: string | null, description: string): Promise<string> {
  const spaceId = state.who.scope.space.id;
  const changes: Parameters<typeof proposeNodeChanges>[2] = [];
  if (!targetFolderId) changes.push({ kind: "create", ref: "target", nodeType: "folder", slug: targetSlug, name: tree.manifest.name, description });
  const parentOf = (above: string | null) => (above ? { parentNodeRef: above } : targetFolderId ? { parentNodeId: targetFolderId } : { parentNodeRef: "target" });
  for (const { node, path } of walk(tree.nodes)) {
    const parent = parentOf(path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : null);
    if (node.type === "folder") {
      changes.push({ kind: "create", ref: path, ...parent, nodeType: "folder", slug: node.slug, name: node.name, description: node.description });
      state.created.folders++;
    } else if (node.type === "base") {
      const fields: NewField[] = node.fields
        .filter((field) => Object.hasOwn(FIELD_TRAITS, field.type) && passOf(field.type) === 0)
        .map((field) => ({ slug: field.slug, name: field.name, type: field.type as FieldType, required: field.required, options: fieldOptions(field) }));
      changes.push({ kind: "create", ...parent, nodeType: "base", slug: node.slug, name: node.name, description: node.description, fields });
      state.created.bases++;
      state.made.set(node.slug, new Set(fields.map((field) => field.slug)));
    }
  }
  if (changes.length > 0) await proposeNodeChanges(state.ctx, state.who, changes, { message: `Install ${tree.manifest.name}: folders and bases`, autoMerge: true });
  return targetFolderId ?? childIds(state.ctx, spaceId, rootNode(state.ctx, spaceId).id).get(targetSlug)!;
}

/**
 * Links, lookups and formulas, once every base exists. A package carries both sides of a link;
 * Basalt makes a link's other side with it, so the first side is made naming the second's slug and
 * name (`inverseFieldSlug`, `inverseFieldName`), and the second is then there already.
 */
async function makeLinkedFields(state: Installing, bases: Extract<PackageNode, { type: "base" }>[]): Promise<void> {
  const { ctx, who } = state;
  for (const pass of [1, 2, 3]) {
    for (const base of bases) {
      for (const field of base.fields.filter((candidate) => passOf(candidate.type) === pass)) {
        if (state.made.get(base.slug)!.has(field.slug)) continue;
        const options = fieldOptions(field);
        const partner = pass === 1 ? bases.find((candidate) => candidate.slug === field.options.targetBaseSlug)?.fields.find((candidate) => candidate.slug === field.options.inverseFieldSlug && isLink(candidate)) : undefined;
        if (partner) Object.assign(options, { inverseFieldSlug: partner.slug, inverseFieldName: partner.name });
        try {
          await proposeFieldChange(ctx, who, base.slug, { operation: "create", slug: field.slug, name: field.name, type: field.type as FieldType, required: field.required, options }, { message: `Install: the field ${field.name}`, autoMerge: true });
        } catch (error) {
          state.warnings.push(`${base.slug}: the field "${field.slug}" could not be made (${(error as Error).message}).`);
          continue;
        }
        state.made.get(base.slug)!.add(field.slug);
        if (!partner) continue;
        const targetSlug = field.options.targetBaseSlug as string;
        state.made.get(targetSlug)!.add(partner.slug);
        if (partner.options.multiple !== false) continue;
        const inverse = findBase(ctx, who.scope.space.id, targetSlug).fields.find((candidate) => candidate.slug === partner.slug)!;
        await proposeFieldChange(ctx, who, targetSlug, { operation: "update", fieldId: inverse.id, patch: { options: { ...inverse.options, multiple: false } } }, { autoMerge: true });
      }
    }
  }
}

const VIEW_CONFIG_KEYS = ["filters", "sorts", "visibleFieldSlugs", "fieldWidths"] as const;

/** A package view's configuration, as a view here takes it: its fields by slug (the ids it names are another instance's). */
function viewConfig(config: Record<string, unknown>): ViewConfigInput {
  const out: Record<string, unknown> = {};
  for (const key of VIEW_CONFIG_KEYS) if (config[key] !== undefined) out[key] = config[key];
  for (const key of ["filters", "sorts"] as const) if (Array.isArray(out[key])) out[key] = (out[key] as { fieldId?: string }[]).map(({ fieldId: _, ...rest }) => rest);
  return out as ViewConfigInput;
}

async function makeViews(state: Installing, bases: Extract<PackageNode, { type: "base" }>[]): Promise<void> {
  for (const base of bases) {
    const baseId = findBase(state.ctx, state.who.scope.space.id, base.slug).base.id;
    for (const view of base.views) {
      try {
        await proposeViewChange(state.ctx, state.who, { operation: "create", baseId, slug: view.slug, name: view.name, description: view.description, config: viewConfig(view.config) }, { autoMerge: true });
        state.created.views++;
      } catch (error) {
        state.warnings.push(`${base.slug}: the view "${view.slug}" could not be made (${(error as Error).message}).`);
      }
    }
  }
}

const RECORD_BATCH = 1000;

/**
 * Records, a change request per 1,000, with the values they store. With
 * `autoMerge` the links follow once every record exists, as updates naming the new records.
 */
async function makeRecords(state: Installing, bases: Extract<PackageNode, { type: "base" }>[]): Promise<void> {
  const { ctx, who, autoMerge } = state;
  const idsByKey = new Map<string, string>();
  const linkFields = new Map<string, PackageField[]>();
  for (const base of bases) {
    const made = state.made.get(base.slug)!;
    const stored = base.fields.filter((field) => !valueless(field) && !isLink(field) && made.has(field.slug));
    linkFields.set(base.slug, base.fields.filter((field) => isLink(field) && made.has(field.slug)));
    for (let start = 0; start < base.records.length; start += RECORD_BATCH) {
      const batch = base.records.slice(start, start + RECORD_BATCH);
      const records = batch.map((record) => ({ fields: Object.fromEntries(stored.filter((field) => record.fields[field.slug] !== undefined).map((field) => [field.slug, record.fields[field.slug]])) }));
      const proposed = counted(state, await proposeRecords(ctx, who, base.slug, records, { message: `Install: ${base.name} records ${start + 1}–${start + batch.length}`, autoMerge }));
      state.created.records += batch.length;
      if (proposed.outcome?.merged) batch.forEach((record, index) => idsByKey.set(record.key, proposed.outcome!.merged ? proposed.outcome!.recordIds[index] : ""));
    }
  }
  if (!autoMerge) return;
  for (const base of bases) {
    const links = linkFields.get(base.slug)!;
    if (links.length === 0) continue;
    const updates = base.records.flatMap((record) => {
      const fields: Record<string, unknown> = {};
      for (const field of links) {
        const keys = [record.fields[field.slug]].flat().filter((key): key is string => typeof key === "string" && key !== "");
        if (keys.length === 0) continue;
        const ids = keys.map((key) => idsByKey.get(key)).filter((id): id is string => id !== undefined);
        if (ids.length < keys.length) state.warnings.push(`${base.slug}: record "${record.key}" links ${keys.length - ids.length} record(s) the package does not hold; those links are left out.`);
        fields[field.slug] = field.options.multiple === false ? (ids[0] ?? null) : ids;
      }
      return Object.keys(fields).length ? [{ recordId: idsByKey.get(record.key)!, fields }] : [];
    });
    for (let start = 0; start < updates.length; start += RECORD_BATCH) {
      counted(state, await proposeRecordUpdates(ctx, who, base.slug, updates.slice(start, start + RECORD_BATCH), { message: `Install: ${base.name} links`, autoMerge: true }));
    }
  }
}

/** The bytes of a package file as an asset of the space. */
async function stored(state: Installing, fileName: string, bytes: Uint8Array, mimeType?: string): Promise<string> {
  const type = mimeType ?? (Bun.file(fileName).type.split(";")[0] || "application/octet-stream");
  return (await uploadAsset(state.ctx, state.who.scope.space.id, state.who.actor.user.id, { fileName, declaredType: type, body: new Blob([bytes as Uint8Array<ArrayBuffer>]) })).id;
}

/** Docs, file trees and file nodes, each a change request; the images docs embed become assets of the space first, and the docs name them. */
async function makeContent(state: Installing, tree: PackageTree, targetFolderId: string): Promise<void> {
  const { ctx, who, autoMerge } = state;
  const spaceId = who.scope.space.id;
  const images = new Map<string, string>();
  for (const asset of tree.assets) {
    images.set(asset.assetId, await stored(state, asset.fileName, asset.bytes, asset.mimeType));
    state.created.files++;
  }
  const review = (name: string) => ({ message: `Install: ${name}`, autoMerge });
  const folderIds = new Map<string, string>([["", targetFolderId]]);
  for (const { node, path } of walk(tree.nodes)) {
    const above = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
    if (!folderIds.has(above)) {
      const grand = above.includes("/") ? above.slice(0, above.lastIndexOf("/")) : "";
      folderIds.set(above, childIds(ctx, spaceId, folderIds.get(grand)!).get(above.slice(above.lastIndexOf("/") + 1))!);
    }
    const place = { parentNodeId: folderIds.get(above)!, slug: node.slug, name: node.name, description: node.description };
    if (node.type === "doc") {
      let body = node.body;
      for (const [old, id] of images) body = body.replace(new RegExp(`(?:https?://[^\\s)"']*)?/api(?:/v1)?/assets/${old.replace(/[^A-Za-z0-9_-]/g, "")}/(?:raw|content)`, "g"), assetUrl(id));
      counted(state, await proposeDoc(ctx, who, { ...place, body }, review(node.name)));
      state.created.docs++;
    } else if (node.type === "file") {
      counted(state, await proposeFile(ctx, who, { ...place, assetId: await stored(state, node.fileName, node.bytes) }, review(node.name)));
      state.created.files++;
    } else if (node.type === "skill" || node.type === "drive" || node.type === "airapp") {
      const files = [];
      for (const file of node.files) files.push({ path: file.path, assetId: await stored(state, file.path.slice(file.path.lastIndexOf("/") + 1), file.bytes) });
      const first = files.slice(0, MAX_FILES_GIVEN);
      const made = await proposeFileTree(ctx, who, { type: node.type, ...place, files: first, mergeMode: "replace" }, review(node.name));
      counted(state, made.proposed);
      for (let start = MAX_FILES_GIVEN; start < files.length && made.proposed.outcome?.merged; start += MAX_FILES_GIVEN) {
        const more: TreeOperation[] = files.slice(start, start + MAX_FILES_GIVEN).map((file) => ({ kind: "create", ...file }));
        counted(state, await proposeTreeChanges(ctx, who, childIds(ctx, spaceId, place.parentNodeId).get(node.slug)!, node.type, more, review(node.name)));
      }
      if (files.length > MAX_FILES_GIVEN && !made.proposed.outcome?.merged) state.warnings.push(`${path}: only its first ${MAX_FILES_GIVEN} files are proposed; the rest follow when it is installed with autoMerge.`);
      state.created.fileTreeNodes++;
      state.created.files += node.files.length;
    }
  }
}

/**
 * Installs a planned package: refused (409 `INSTALL_NOT_APPLICABLE`) when the plan says it would
 * not go through. The plan has checked the whole package, so what can fail after the first write
 * is a value a base refuses; what was made then stays, and the error says what.
 */
export async function install(ctx: AppContext, who: Proposer, planned: Planned, options: InstallOptions): Promise<InstallResult> {
  const { plan, tree } = planned;
  if (!plan.applicable) {
    const unresolved = plan.collisions.filter((collision) => collision.renamedTo === undefined);
    throw conflict(
      unresolved.length > 0
        ? `These slugs are taken: ${unresolved.map((collision) => `${collision.slug} (${collision.kind})`).join(", ")}. Install with rename: true, or into another folder with intoFolder.`
        : "Some records of the package link others, and links can only be made between records that exist: install with autoMerge: true.",
      { reason: "INSTALL_NOT_APPLICABLE" },
    );
  }
  const state: Installing = { ctx, who, autoMerge: options.autoMerge === true, warnings: [...plan.warnings], pending: 0, created: { folders: 0, docs: 0, bases: 0, views: 0, records: 0, fileTreeNodes: 0, files: 0 }, made: new Map() };
  const targetFolderId = await makeStructure(state, tree, plan.targetFolderSlug, planned.targetFolderId, tree.manifest.description);
  if (!planned.targetFolderId) state.created.folders++;
  const bases = [...walk(tree.nodes)].map(({ node }) => node).filter((node): node is Extract<PackageNode, { type: "base" }> => node.type === "base");
  await makeLinkedFields(state, bases);
  await makeViews(state, bases);
  await makeRecords(state, bases);
  await makeContent(state, tree, targetFolderId);
  return { targetFolderSlug: plan.targetFolderSlug, targetFolderNodeId: targetFolderId, created: state.created, pendingChangeRequests: state.pending, warnings: state.warnings };
}
