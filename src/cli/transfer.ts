import { existsSync, statSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import type { Actor } from "../auth/actor";
import { findUserByEmail } from "../auth/users";
import { sourceAttribution } from "../changes/propose";
import { findBase } from "../content/bases";
import { closeStore } from "../db/client";
import { writePrivately } from "../db/files";
import { recordListing } from "../content/records/grammar";
import { scopeOf } from "../spaces/resolve";
import { findMembership, listSpacesWithOwners } from "../spaces/spaces";
import { loadDump, writeDump } from "../transfer/dump";
import { EXPORT_FORMATS, type ExportFormat, exportParts } from "../transfer/export";
import { commitImport, importNewBase, NO_BASE } from "../transfer/import";
import { checkedUpload, type ImportResult, previewImport } from "../transfer/import-plan";
import { formatOf, IMPORT_FORMATS, type ImportFormat } from "../shared/import-formats";
import { CliError, openContext, parseFlags, required } from "./common";
import { SEES_ALL } from "../spaces/sight";
import type { AppContext } from "../context";
import type { Proposer } from "../changes/proposals";
import { install, type InstallPlan, planInstall } from "../transfer/install";
import { type PackageFiles, readPackage } from "../transfer/package-format";
import { directoryPackage, githubPackage, parseGithubUrl, unpackArchive } from "../transfer/package-source";

/** `basalt export`: a base's records (optionally through a view) to a file or standard output, as the API's export writes them. */
export async function exportCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, { space: { type: "string" }, base: { type: "string" }, view: { type: "string" }, sort: { type: "string" }, format: { type: "string" }, out: { type: "string" } });
  const format = (flags.format ?? "csv") as ExportFormat;
  if (!EXPORT_FORMATS.includes(format)) throw new CliError(`--format must be one of ${EXPORT_FORMATS.join(", ")}.`);
  const spaceRef = required(flags, "space");
  const ctx = openContext(flags["data-dir"]);
  try {
    const space = listSpacesWithOwners(ctx).find((candidate) => candidate.id === spaceRef || candidate.slug === spaceRef);
    if (!space) throw new CliError(`No space has the id or slug ${spaceRef}.`);
    const { loaded, query } = recordListing(ctx, space.id, SEES_ALL, { baseId: required(flags, "base"), viewId: flags.view, sort: flags.sort });
    const parts = exportParts(ctx, loaded, query, format, space.id, SEES_ALL);
    if (flags.out) {
      // Like every file a command writes: new, 0600, never over a file or through a link, whole or not at all.
      await writePrivately(resolve(flags.out), async (fd) => {
        for (let part = parts.next(); !part.done; part = parts.next()) for (let bytes = Buffer.from(part.value), written = 0; written < bytes.byteLength; ) written += writeSync(fd, bytes, written);
      });
    } else {
      const sink = Bun.stdout.writer();
      for (let part = parts.next(); !part.done; part = parts.next()) {
        sink.write(part.value);
        await sink.flush();
      }
      await sink.end();
    }
    if (flags.out) console.error(`Wrote the records of ${loaded.node.slug} as ${format} to ${resolve(flags.out)}.`);
  } finally {
    await closeStore(ctx.store);
  }
}

/** The user `email` names, proposing in the space `spaceRef` names as their role there allows, shown as the command line. */
function proposerAs(ctx: AppContext, email: string, spaceRef: string): Proposer {
  const user = findUserByEmail(ctx, email);
  if (!user) throw new CliError(`No user has the e-mail ${email}.`);
  const membership = findMembership(ctx, user.id, spaceRef);
  if (!membership) throw new CliError(`${email} is not a member of a space ${spaceRef}.`);
  const actor: Actor = { user, credential: { type: "operator" }, ceiling: "manage" };
  return { scope: scopeOf(ctx, actor, membership), actor, attribution: sourceAttribution(actor, undefined) };
}

/**
 * `basalt import`: a file into a base (`--base`) or a new base (`--name`), as the API's import does
 * it, proposed as the user `--as` names (their role in the space sets what merges at once), shown
 * to reviewers as coming from the command line.
 */
export async function importCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, {
    space: { type: "string" },
    as: { type: "string" },
    base: { type: "string" },
    name: { type: "string" },
    from: { type: "string" },
    format: { type: "string" },
    message: { type: "string" },
    "create-fields": { type: "boolean" },
    preview: { type: "boolean" },
  });
  const from = resolve(required(flags, "from"));
  if (!existsSync(from)) throw new CliError(`There is no file at ${from}.`);
  const format = (flags.format ?? formatOf("", from)) as ImportFormat | null;
  if (!format || !IMPORT_FORMATS.includes(format)) throw new CliError(`Say how to read ${from} with --format ${IMPORT_FORMATS.join("|")}.`);
  if ((flags.base === undefined) === (flags.name === undefined)) throw new CliError("Name the base to import into with --base, or a new base to make with --name.");
  const ctx = openContext(flags["data-dir"]);
  try {
    const who = proposerAs(ctx, required(flags, "as"), required(flags, "space"));
    const file = { format, body: Bun.file(from).stream() };
    const review = { message: flags.message };
    if (flags.name !== undefined) {
      const made = await checkedUpload(ctx, NO_BASE, file, true, (checked, reread) => importNewBase(ctx, who, checked, reread, { name: flags.name! }, review));
      return void console.log(summary(made.imported, findBase(ctx, who.scope.space.id, made.baseId).node.slug));
    }
    const loaded = findBase(ctx, who.scope.space.id, flags.base!);
    if (flags.preview) return void console.log(JSON.stringify(await previewImport(ctx, loaded, file, flags["create-fields"] === true), null, 2));
    const imported = await checkedUpload(ctx, loaded, file, flags["create-fields"] === true, (checked, reread) => commitImport(ctx, who, checked, reread, loaded.base.id, review));
    console.log(summary(imported, loaded.node.slug));
  } finally {
    await closeStore(ctx.store);
  }
}

const summary = (result: ImportResult, slug: string) =>
  `Imported ${result.rowCount.toLocaleString("en")} row(s) into ${slug} in ${result.changeRequests.length} change request(s): ${[...new Set(result.changeRequests.map((part) => part.status))].join(", ")} (${result.changeRequests.map((part) => part.id).join(", ")}).`;

/** `basalt dump`: a space, with its history, reviews, comments, views, webhook rules (no secrets) and files, into one file. */
export async function dumpCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, { space: { type: "string" }, out: { type: "string" } });
  const spaceRef = required(flags, "space");
  const out = resolve(required(flags, "out"));
  const ctx = openContext(flags["data-dir"]);
  try {
    const space = listSpacesWithOwners(ctx).find((candidate) => candidate.id === spaceRef || candidate.slug === spaceRef);
    if (!space) throw new CliError(`No space has the id or slug ${spaceRef}.`);
    const { lines } = await writeDump(ctx.store, ctx.config.dataDir, space.id, out);
    console.log(`Wrote the space ${space.slug} to ${out} (${lines.toLocaleString("en")} entries).`);
  } finally {
    await closeStore(ctx.store);
  }
}

/** `basalt load`: a dump into this data directory, with its ids kept, owned by `--owner`. */
export async function loadCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, { from: { type: "string" }, owner: { type: "string" }, slug: { type: "string" } });
  const from = resolve(required(flags, "from"));
  if (!existsSync(from)) throw new CliError(`There is no file at ${from}.`);
  const ctx = openContext(flags["data-dir"]);
  try {
    const loaded = await loadDump(ctx.store, ctx.config.dataDir, from, { email: required(flags, "owner") }, flags.slug);
    console.log(`Loaded the space ${loaded.spaceId} from ${from}: ${loaded.rows.toLocaleString("en")} rows and ${loaded.files} file(s). Webhook rules wait, disabled, for their secrets.`);
  } finally {
    await closeStore(ctx.store);
  }
}

/**
 * `basalt install`: a package (busabase-package@1) from a directory, a .tar or .tar.gz, or a GitHub
 * repository's address, into a space as the user `--as` names; `--dry-run` prints the plan.
 */
export async function installCommand(args: string[]): Promise<void> {
  const flags = parseFlags(args, { space: { type: "string" }, as: { type: "string" }, from: { type: "string" }, "into-folder": { type: "string" }, rename: { type: "boolean" }, "auto-merge": { type: "boolean" }, "dry-run": { type: "boolean" } });
  const from = required(flags, "from");
  const ctx = openContext(flags["data-dir"]);
  try {
    const who = proposerAs(ctx, required(flags, "as"), required(flags, "space"));
    const options = { intoFolder: flags["into-folder"], rename: flags.rename === true, autoMerge: flags["auto-merge"] === true };
    let files: PackageFiles;
    let source: InstallPlan["source"];
    if (/^https?:\/\//.test(from)) {
      const github = parseGithubUrl(from);
      files = await githubPackage(ctx.config.githubArchiveUrl, github);
      source = github;
    } else {
      const path = resolve(from);
      if (!existsSync(path)) throw new CliError(`There is nothing at ${path}.`);
      files = statSync(path).isDirectory() ? directoryPackage(path) : await unpackArchive(await Bun.file(path).bytes());
      source = { archive: path };
    }
    const planned = planInstall(ctx, who.scope.space.id, who.scope.sight, readPackage(files), source, options);
    if (flags["dry-run"]) return void console.log(JSON.stringify(planned.plan, null, 2));
    const result = await install(ctx, who, planned, options);
    const made = Object.entries(result.created).filter(([, count]) => count > 0).map(([what, count]) => `${count} ${what}`);
    console.log(`Installed ${planned.plan.package.name} into the folder ${result.targetFolderSlug}: ${made.join(", ")}.${result.pendingChangeRequests ? ` ${result.pendingChangeRequests} change request(s) wait for review.` : ""}`);
    for (const warning of result.warnings) console.error(`warning: ${warning}`);
  } finally {
    await closeStore(ctx.store);
  }
}
