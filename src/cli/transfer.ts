import { existsSync, writeSync } from "node:fs";
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
    const { loaded, query } = recordListing(ctx, space.id, { baseId: required(flags, "base"), viewId: flags.view, sort: flags.sort });
    const parts = exportParts(ctx, loaded, query, format, space.id);
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
    const user = findUserByEmail(ctx, required(flags, "as"));
    if (!user) throw new CliError(`No user has the e-mail ${flags.as}.`);
    const membership = findMembership(ctx, user.id, required(flags, "space"));
    if (!membership) throw new CliError(`${flags.as} is not a member of a space ${flags.space}.`);
    const actor: Actor = { user, credential: { type: "operator" }, ceiling: "manage" };
    const who = { scope: scopeOf(ctx, actor, membership), actor, attribution: sourceAttribution(actor, undefined) };
    const file = { format, body: Bun.file(from).stream() };
    const review = { message: flags.message };
    if (flags.name !== undefined) {
      const made = await checkedUpload(ctx, NO_BASE, file, true, (checked, reread) => importNewBase(ctx, who, checked, reread, { name: flags.name! }, review));
      return void console.log(summary(made.imported, findBase(ctx, membership.space.id, made.baseId).node.slug));
    }
    const loaded = findBase(ctx, membership.space.id, flags.base!);
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
