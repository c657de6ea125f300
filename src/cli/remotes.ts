import { findUserByEmail } from "../auth/users";
import type { AppContext } from "../context";
import { closeStore } from "../db/client";
import { addRemote, cloneSpace, findRemote, listRemotes, pull, type PullResult, push, remoteStatus, removeRemote, type RemoteView } from "../remotes/remotes";
import { ApiError } from "../shared/errors";
import { listSpacesWithOwners } from "../spaces/spaces";
import { CliError, openContext, parseCommand, printTable, required } from "./common";

/**
 * The commands of remotes (docs/remotes.md): `clone`, `remote add|list|remove`, `pull`, `push` and
 * `status`, on a data directory, as the Remotes screen does them on a running server. A remote's
 * key comes from --key or BASALT_REMOTE_KEY (kept out of the shell's history), and is stored sealed.
 */

function localSpace(ctx: AppContext, ref: string): string {
  const space = listSpacesWithOwners(ctx).find((candidate) => candidate.id === ref || candidate.slug === ref);
  if (!space) throw new CliError(`No space here has the id or slug ${ref}.`);
  return space.id;
}

const keyOf = (values: Record<string, unknown>): string => {
  const key = typeof values.key === "string" ? values.key : process.env.BASALT_REMOTE_KEY;
  if (!key) throw new CliError("Give the remote's API key with --key, or in BASALT_REMOTE_KEY.");
  return key;
};

/** Runs a command on the data directory's store, closing it after; a refusal of the domain is printed as its sentence. */
async function withContext(dataDir: string | undefined, work: (ctx: AppContext) => Promise<void>): Promise<void> {
  const ctx = openContext(dataDir);
  try {
    await work(ctx);
  } catch (error) {
    if (error instanceof ApiError) throw new CliError(error.message);
    throw error;
  } finally {
    ctx.snapshots.closeAll();
    await closeStore(ctx.store);
  }
}

/** `basalt clone URL --space S --as E`: a local space from the remote's space S, owned by the local user E. */
export async function cloneCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(args, { space: { type: "string" }, key: { type: "string" }, as: { type: "string" }, slug: { type: "string" } });
  const [url] = positionals;
  if (!url || positionals.length > 1) throw new CliError("Usage: basalt clone URL --space S --as E [--key K] [--slug SLUG]");
  const key = keyOf(values);
  await withContext(values["data-dir"], async (ctx) => {
    const email = required(values, "as");
    const owner = findUserByEmail(ctx, email);
    if (!owner) throw new CliError(`No user has the e-mail ${email}.`);
    const started = performance.now();
    const cloned = await cloneSpace(ctx, { url, key, remoteSpace: required(values, "space"), owner, actor: { userId: owner.id, keyId: null }, slug: values.slug });
    console.log(`Cloned ${url} into the space ${cloned.slug} (${cloned.spaceId}) in ${((performance.now() - started) / 1000).toFixed(1)} s; it follows the remote "${cloned.remote.name}".`);
    for (const warning of cloned.warnings) console.error(`warning: ${warning}`);
  });
}

const printRemotes = (remotes: RemoteView[]) =>
  printTable(
    ["NAME", "URL", "BEHIND", "AHEAD", "PENDING", "REFUSED", "CONFLICTS", "LAST SYNC", "NEXT SYNC", "LAST CONTACT", "LAST ERROR"],
    remotes.map((remote) => [remote.name, remote.url, String(remote.behind), String(remote.ahead), String(remote.pending), String(remote.refused), String(remote.conflicts), remote.lastSyncAt, remote.nextSyncAt, remote.lastContactAt, remote.lastError]),
  );

/** `basalt remote add NAME URL --space S --remote-space R`, `remote list --space S`, `remote remove NAME --space S`. */
export async function remoteCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(args, { space: { type: "string" }, key: { type: "string" }, "remote-space": { type: "string" }, "from-seq": { type: "string" } });
  const [action, name, url] = positionals;
  await withContext(values["data-dir"], async (ctx) => {
    const spaceId = localSpace(ctx, required(values, "space"));
    if (action === "list") return printRemotes(listRemotes(ctx, spaceId));
    if (action === "remove" && name) {
      await removeRemote(ctx, spaceId, name);
      return void console.log(`The space no longer follows ${name}.`);
    }
    if (action === "add" && name && url) {
      const fromSeq = values["from-seq"] === undefined ? undefined : Number(values["from-seq"]);
      if (fromSeq !== undefined && !(Number.isSafeInteger(fromSeq) && fromSeq >= 0)) throw new CliError("--from-seq is a whole number.");
      const added = await addRemote(ctx, spaceId, { name, url, key: keyOf(values), remoteSpace: required(values, "remote-space"), fromSeq });
      return void console.log(`The space follows ${added.name} (${added.url}) from its seq ${added.pulledSeq}.`);
    }
    throw new CliError("Usage: basalt remote add NAME URL --space S --remote-space R [--key K] [--from-seq N] | remote list --space S | remote remove NAME --space S");
  });
}

const pulledLine = (result: PullResult) =>
  `${result.applied} applied, ${result.merged} merged with local changes, ${result.conflicts} in conflict (see the Inbox), ${result.known} already here, ${result.notFollowed} not followed; ${result.landed} pushed change(s) landed, ${result.refused} refused.`;

/** `basalt pull --space S [--remote NAME]`. */
export async function pullCommand(args: string[]): Promise<void> {
  const { values } = parseCommand(args, { space: { type: "string" }, remote: { type: "string" } });
  await withContext(values["data-dir"], async (ctx) => {
    const spaceId = localSpace(ctx, required(values, "space"));
    const result = await pull(ctx, spaceId, values.remote);
    console.log(`Pulled from ${findRemote(ctx, spaceId, values.remote).name}: ${pulledLine(result)}`);
    for (const warning of result.warnings) console.error(`warning: ${warning}`);
  });
}

/** `basalt push --space S [--remote NAME]`. */
export async function pushCommand(args: string[]): Promise<void> {
  const { values } = parseCommand(args, { space: { type: "string" }, remote: { type: "string" } });
  await withContext(values["data-dir"], async (ctx) => {
    const spaceId = localSpace(ctx, required(values, "space"));
    const result = await push(ctx, spaceId, values.remote);
    console.log(`Pulled first: ${pulledLine(result.pull)}`);
    console.log(`Pushed: ${result.landed} merged on the remote, ${result.pending} waiting in its Inbox, ${result.refused.length} refused.${result.waiting ? ` ${result.waiting} held here until the conflicts in the Inbox are decided.` : ""}`);
    for (const refused of result.refused) console.error(`refused: ${refused.changeRequestId}: ${refused.reason}`);
  });
}

/** `basalt status --space S`: each remote, behind and ahead, what waits (pending there, conflicts here), when it last synced and when `serve` syncs it next. */
export async function statusCommand(args: string[]): Promise<void> {
  const { values } = parseCommand(args, { space: { type: "string" } });
  await withContext(values["data-dir"], async (ctx) => printRemotes(await remoteStatus(ctx, localSpace(ctx, required(values, "space")))));
}
