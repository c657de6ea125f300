import { resolve } from "node:path";
import { closeStore } from "../db/client";
import { recordListing } from "../content/routes";
import { listSpacesWithOwners } from "../spaces/spaces";
import { EXPORT_FORMATS, type ExportFormat, exportParts } from "../transfer/export";
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
    const sink = flags.out ? Bun.file(resolve(flags.out)).writer() : Bun.stdout.writer();
    for (const parts = exportParts(ctx, loaded, query, format, space.id); ; ) {
      const part = parts.next();
      if (part.done) break;
      sink.write(part.value);
      await sink.flush();
    }
    await sink.end();
    if (flags.out) console.error(`Wrote the records of ${loaded.node.slug} as ${format} to ${resolve(flags.out)}.`);
  } finally {
    await closeStore(ctx.store);
  }
}
