import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { contentPath, filesDir, holdLanding, tmpDir } from "../db/content-files";
import { SCHEMA_VERSION, type Store } from "../db/client";
import { privateDir, writePrivately } from "../db/files";
import { SLUG_PATTERN } from "../shared/formats";
import { DumpLoader, DumpRefusal, secretless } from "./dump-rows";
import { brokenReferences, DUMP_TABLES, fileHashesOf, inLoadTransaction, insertSpaceRow, makeOwner, rowsOfSpace, spaceExists, spaceRow, userIdByEmail, usersNamed } from "./store";

/**
 * A space's dump: gzip of JSON lines. The first line is the header (format, version, the schema it
 * was made with, the space); then the users its rows name (id, e-mail, name: never a password);
 * then each table's rows of the space in an order that satisfies their references; then each file
 * its assets name, in base64 parts. Derived data (indexed values, the search index) is not
 * carried: the triggers make it again as the rows go in.
 */
export const DUMP_FORMAT = "basalt-dump";
export const DUMP_VERSION = 1;

const FILE_PART = 768 * 1024;

/** A row as a dump carries it: a webhook rule without its secret. */
export const exported = (table: string, row: Record<string, unknown>) => (table === "webhook_rules" ? secretless(row) : row);

/** A password no one knows, for the accounts a loaded history names, until an admin gives them one. */
export const unusablePassword = () => Bun.password.hash(randomBytes(24).toString("hex"), { algorithm: "argon2id" });

/** The dump's lines, one string each, read from the database a table at a time. */
function* dumpLines(store: Store, dataDir: string, spaceId: string): Generator<string> {
  const space = spaceRow(store, spaceId);
  yield JSON.stringify({ format: DUMP_FORMAT, version: DUMP_VERSION, schema: SCHEMA_VERSION, space, madeAt: new Date().toISOString() });
  for (const user of usersNamed(store, spaceId)) yield JSON.stringify({ user });
  for (const table of DUMP_TABLES) for (const row of rowsOfSpace(store, table, spaceId)) yield JSON.stringify({ table: table.table, row: exported(table.table, row) });
  for (const hash of fileHashesOf(store, spaceId)) {
    const path = contentPath(dataDir, hash);
    if (!existsSync(path)) continue;
    const fd = openSync(path, "r");
    try {
      const buffer = Buffer.alloc(FILE_PART);
      for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) yield JSON.stringify({ file: hash, data: buffer.subarray(0, read).toString("base64") });
    } finally {
      closeSync(fd);
    }
  }
}

/** Writes a space's dump to `out` (0600, never over a file or through a link, whole or not at all), gzipped as it is made. Answers how many rows and files. */
export async function writeDump(store: Store, dataDir: string, spaceId: string, out: string): Promise<{ lines: number }> {
  let lines = 0;
  const encoder = new TextEncoder();
  const source = dumpLines(store, dataDir, spaceId);
  const body = new ReadableStream<BufferSource>({
    pull(controller) {
      const next = source.next();
      if (next.done) controller.close();
      else (lines++, controller.enqueue(encoder.encode(`${next.value}\n`)));
    },
  }).pipeThrough<Uint8Array>(new CompressionStream("gzip"));
  await writePrivately(out, async (fd) => {
    for await (const chunk of body) for (let written = 0; written < chunk.byteLength; ) written += writeSync(fd, chunk, written);
  });
  return { lines };
}

/**
 * Moves a file written to the store's temporary directory to its place, if its bytes have the
 * SHA-256 `hash`; answers null when they had not, else the release of its hold (`holdLanding`),
 * called once the load that names it has settled.
 */
export async function storeCheckedFile(dataDir: string, tmp: string, hash: string): Promise<(() => void) | null> {
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(tmp).stream()) hasher.update(chunk);
  if (hasher.digest("hex") !== hash) return null;
  const landed = holdLanding(hash);
  privateDir(join(filesDir(dataDir), hash.slice(0, 2)));
  if (existsSync(contentPath(dataDir, hash))) rmSync(tmp);
  else renameSync(tmp, contentPath(dataDir, hash));
  return landed;
}

/** What a dump may unpack to: a bound against a file that inflates without end (a "zip bomb"). */
const inflationBound = (compressed: number) => Math.max(1 << 30, compressed * 100);
const LINE_MAX = 64 << 20;

/** The dump's lines, decompressed as read, each checked against the bounds. */
async function* readLines(path: string): AsyncGenerator<string> {
  const bound = inflationBound(statSync(path).size);
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let total = 0;
  let rest = "";
  try {
    for await (const chunk of Bun.file(path).stream().pipeThrough(new DecompressionStream("gzip"))) {
      total += chunk.byteLength;
      if (total > bound) throw new Error(`${path} unpacks to more than ${bound} bytes; it is not loaded.`);
      const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
      rest = lines.pop()!;
      if (rest.length > LINE_MAX) throw new Error(`${path} has a line longer than ${LINE_MAX} bytes; it is not a Basalt dump.`);
      yield* lines;
    }
  } catch (error) {
    if (error instanceof Error && error.message.startsWith(path)) throw error;
    throw new Error(`${path} is not a gzip of UTF-8 text: it is not a Basalt dump (${(error as Error).message}).`);
  }
  if (rest !== "") yield rest;
}

/**
 * Loads a dump into a database, as one transaction: the space (renamed to `slug` when given), its
 * rows with their ids kept, `owner` its owner. A user a row names is the user of the same e-mail
 * here, or is made (with no usable password) to keep the history's names. Refused whole when the
 * dump is not one, was made by a newer Basalt, or its space (any of its ids) is here already, so
 * loading twice never duplicates. Files are written to the store before the rows are committed.
 */
export async function loadDump(store: Store, dataDir: string, path: string, owner: { email: string }, slug?: string): Promise<{ spaceId: string; rows: number; files: number }> {
  const lines = readLines(path);
  const first = await lines.next();
  let header: { format?: string; version?: number; schema?: number; space?: { id: string; slug: string } };
  try {
    header = JSON.parse(first.done ? "" : first.value);
  } catch {
    throw new Error(`${path} is not a Basalt dump.`);
  }
  if (header.format !== DUMP_FORMAT || !header.space) throw new Error(`${path} is not a Basalt dump.`);
  if ((header.version ?? 0) > DUMP_VERSION || (header.schema ?? 0) > SCHEMA_VERSION) throw new Error(`${path} was made by a newer version of Basalt; load it with that version.`);
  const spaceId = header.space.id;
  if (spaceExists(store, spaceId)) throw new Error(`The space ${header.space.slug} (${spaceId}) is here already: a dump loads once.`);
  const ownerId = userIdByEmail(store, owner.email.trim().toLowerCase());
  if (!ownerId) throw new Error(`No user has the e-mail ${owner.email}.`);

  const files = new Map<string, { path: string; fd: number }>();
  const now = new Date().toISOString();
  const loader = new DumpLoader(store, spaceId, { accounts: true, password: await unusablePassword() }, now);
  try {
    await inLoadTransaction(store, async () => {
    for await (const line of lines) {
      if (line === "") continue;
      const entry = JSON.parse(line) as { user?: unknown; table?: string; row?: Record<string, unknown>; file?: string; data?: string };
      if (entry.user) loader.addUser(entry.user);
      else if (entry.table === "spaces" && entry.row) insertSpace(store, spaceId, entry.row, slug, now);
      else if (entry.table && entry.row) loader.addRow(entry.table, entry.row);
      else if (entry.file && entry.data !== undefined && /^[0-9a-f]{64}$/.test(entry.file)) {
        let file = files.get(entry.file);
        if (!file) {
          privateDir(tmpDir(dataDir));
          const tmp = join(tmpDir(dataDir), randomBytes(12).toString("hex"));
          file = { path: tmp, fd: openSync(tmp, "w", 0o600) };
          files.set(entry.file, file);
        }
        const bytes = Buffer.from(entry.data, "base64");
        for (let written = 0; written < bytes.byteLength; ) written += writeSync(file.fd, bytes, written);
      }
    }
    loader.finish(new Set(files.keys()));
    makeOwner(store, spaceId, ownerId, now);
    for (const [hash, file] of files) {
      closeSync(file.fd);
      file.fd = -1;
      const landed = await storeCheckedFile(dataDir, file.path, hash);
      if (!landed) throw new Error(`${path} holds a file whose bytes do not match its hash ${hash}; it is not loaded.`);
      // This command is the only writer of its store: the bytes are kept from here on, until the sweep finds them unnamed.
      landed();
    }
    const broken = brokenReferences(store);
    if (broken > 0) throw new Error(`${path} holds rows whose references are missing (${broken}); it is not loaded.`);
    });
  } catch (error) {
    for (const file of files.values()) {
      if (file.fd >= 0) closeSync(file.fd);
      rmSync(file.path, { force: true });
    }
    if (error instanceof SyntaxError) throw new Error(`${path} holds a line that is not JSON; it is not loaded.`);
    throw error instanceof DumpRefusal ? new Error(`${path} is not loaded: ${error.message}`) : error;
  }
  return { spaceId, rows: loader.rows, files: files.size };
}

/** The dump's space row, under the id its header gives and the slug asked for: its name and slug, nothing else. */
function insertSpace(store: Store, spaceId: string, row: Record<string, unknown>, slug: string | undefined, now: string): void {
  const name = typeof row.name === "string" && row.name !== "" ? row.name : "Loaded space";
  const chosen = slug ?? (typeof row.slug === "string" ? row.slug : "");
  if (!SLUG_PATTERN.test(chosen)) throw new DumpRefusal(`The space's slug ${JSON.stringify(chosen)} is not one a space may have; choose one with --slug.`);
  insertSpaceRow(store, spaceId, name, chosen, now);
}
