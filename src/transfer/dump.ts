import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { contentPath, filesDir } from "../assets/storage";
import type { Store } from "../db/client";
import { SCHEMA_VERSION } from "../db/client";
import { makePrivate, privateDir } from "../db/files";
import { flushStagedSearch } from "../db/search-index";
import { newId } from "../db/ids";

/**
 * A space's dump: gzip of JSON lines. The first line is the header (format, version, the schema it
 * was made with, the space); then the users its rows name (id, e-mail, name: never a password);
 * then each table's rows of the space in an order that satisfies their references; then each file
 * its assets name, in base64 parts. Derived data (indexed values, the search index) is not
 * carried: the triggers make it again as the rows go in.
 */
export const DUMP_FORMAT = "basalt-dump";
export const DUMP_VERSION = 1;

/**
 * Each table of a space, in an order that satisfies their references, and where its rows are
 * (`t` is the table; `?1` is the space id). Webhook rules travel without a secret: the sealed
 * secret is left out and header values emptied, and a loaded rule waits, disabled, for its secret.
 */
export const DUMP_TABLES: { table: string; from: string }[] = [
  { table: "spaces", from: `"spaces" t WHERE t."id" = ?1` },
  { table: "nodes", from: `"nodes" t WHERE t."space_id" = ?1` },
  { table: "bases", from: `"bases" t WHERE t."space_id" = ?1` },
  { table: "fields", from: `"fields" t JOIN "bases" b ON b."id" = t."base_id" WHERE b."space_id" = ?1` },
  { table: "deleted_fields", from: `"deleted_fields" t JOIN "bases" b ON b."id" = t."base_id" WHERE b."space_id" = ?1` },
  { table: "views", from: `"views" t WHERE t."space_id" = ?1` },
  { table: "assets", from: `"assets" t WHERE t."space_id" = ?1` },
  { table: "records", from: `"records" t WHERE t."space_id" = ?1` },
  { table: "commits", from: `"commits" t WHERE t."space_id" = ?1` },
  { table: "record_links", from: `"record_links" t WHERE t."space_id" = ?1` },
  { table: "change_requests", from: `"change_requests" t WHERE t."space_id" = ?1` },
  { table: "operations", from: `"operations" t JOIN "change_requests" c ON c."id" = t."change_request_id" WHERE c."space_id" = ?1` },
  { table: "reviews", from: `"reviews" t JOIN "change_requests" c ON c."id" = t."change_request_id" WHERE c."space_id" = ?1` },
  { table: "comments", from: `"comments" t WHERE t."space_id" = ?1` },
  { table: "audit_events", from: `"audit_events" t WHERE t."space_id" = ?1` },
  { table: "webhook_rules", from: `"webhook_rules" t WHERE t."space_id" = ?1` },
];
const everyRow = (from: string) => `SELECT t.* FROM ${from}`;

const USER_ID = /^usr_[0-9A-Za-z]+$/;
const FILE_PART = 768 * 1024;

/** The user ids a row names, anywhere in it (JSON columns included). */
function userIds(value: unknown, into: Set<string>): void {
  if (typeof value === "string") {
    if (USER_ID.test(value)) into.add(value);
    else if (value.startsWith("{") || value.startsWith("[")) for (const id of value.match(/usr_[0-9A-Za-z]+/g) ?? []) into.add(id);
  }
}

export const withoutSecrets = (table: string, row: Record<string, unknown>) =>
  table !== "webhook_rules"
    ? row
    : { ...row, secret_sealed: null, enabled: 0, disabled_reason: "Loaded from a dump: enter the secret again (PATCH the rule) and enable it.", headers: JSON.stringify(Object.fromEntries(Object.keys(JSON.parse(String(row.headers))).map((name) => [name, ""]))) };

export type DumpUser = { id: string; email: string; name: string };

/** The users the space's rows name anywhere (authors, reviewers, members of its history): id, e-mail and name, never a password. */
export function usersNamed(store: Store, spaceId: string): DumpUser[] {
  const named = new Set<string>();
  for (const { from } of DUMP_TABLES) for (const row of store.sqlite.query(everyRow(from)).iterate(spaceId) as Iterable<Record<string, unknown>>) for (const value of Object.values(row)) userIds(value, named);
  return store.sqlite.query<DumpUser, [string]>(`SELECT "id", "email", "name" FROM "users" WHERE "id" IN (SELECT "value" FROM json_each(?1)) ORDER BY "id"`).all(JSON.stringify([...named]));
}

/** A password no one knows, for the accounts a loaded history names, until an admin gives them one. */
export const unusablePassword = () => Bun.password.hash(randomBytes(24).toString("hex"), { algorithm: "argon2id" });

/**
 * The users of a dump matched to this instance's: the user of the same e-mail here, or one made
 * (with `password`, which no one knows) under the dump's id, or a new one when that id is taken.
 * `remap` rewrites the user ids a value names.
 */
export function userMatcher(sqlite: Store["sqlite"], password: string, now: string) {
  const userMap = new Map<string, string>();
  return {
    add(user: DumpUser): void {
      const here = sqlite.query(`SELECT "id" FROM "users" WHERE "email" = ?1`).get(user.email) as { id: string } | null;
      if (here) return void userMap.set(user.id, here.id);
      const id = sqlite.query(`SELECT 1 FROM "users" WHERE "id" = ?1`).get(user.id) ? newId("usr") : user.id;
      sqlite.query(`INSERT INTO "users" ("id", "email", "name", "password_hash", "admin", "banned", "created_at", "updated_at") VALUES (?1, ?2, ?3, ?4, 0, 0, ?5, ?5)`).run(id, user.email, user.name, password, now);
      userMap.set(user.id, id);
    },
    remap(value: unknown): unknown {
      if (typeof value !== "string" || userMap.size === 0) return value;
      if (USER_ID.test(value)) return userMap.get(value) ?? value;
      return value.startsWith("{") || value.startsWith("[") ? value.replace(/usr_[0-9A-Za-z]+/g, (id) => userMap.get(id) ?? id) : value;
    },
  };
}

/** Inserts one row of a dump's table as it is (ids kept), its values passed through `remap`. */
export function insertDumpRow(sqlite: Store["sqlite"], table: string, row: Record<string, unknown>, remap: (value: unknown) => unknown): void {
  const columns = Object.keys(row);
  sqlite.query(`INSERT INTO "${table}" (${columns.map((column) => `"${column.replace(/"/g, "")}"`).join(", ")}) VALUES (${columns.map((_, i) => `?${i + 1}`).join(", ")})`).run(...(columns.map((column) => remap(row[column])) as never[]));
}

/** The dump's lines, one string each, read from the database a table at a time. */
function* dumpLines(store: Store, dataDir: string, spaceId: string): Generator<string> {
  const sqlite = store.sqlite;
  const space = sqlite.query(`SELECT * FROM "spaces" WHERE "id" = ?1`).get(spaceId);
  yield JSON.stringify({ format: DUMP_FORMAT, version: DUMP_VERSION, schema: SCHEMA_VERSION, space, madeAt: new Date().toISOString() });
  for (const user of usersNamed(store, spaceId)) yield JSON.stringify({ user });
  for (const { table, from } of DUMP_TABLES) for (const row of sqlite.query(everyRow(from)).iterate(spaceId) as Iterable<Record<string, unknown>>) yield JSON.stringify({ table, row: withoutSecrets(table, row) });
  const hashes = sqlite.query(`SELECT DISTINCT "content_hash" AS hash FROM "assets" WHERE "space_id" = ?1 AND "content_hash" IS NOT NULL`).all(spaceId) as { hash: string }[];
  for (const { hash } of hashes) {
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

/** Writes a space's dump to `out` (0600), gzipped as it is made. Answers how many rows and files. */
export async function writeDump(store: Store, dataDir: string, spaceId: string, out: string): Promise<{ lines: number }> {
  if (existsSync(out)) throw new Error(`${out} already exists; a dump never overwrites a file.`);
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
  const fd = openSync(out, "wx", 0o600);
  try {
    for await (const chunk of body) for (let written = 0; written < chunk.byteLength; ) written += writeSync(fd, chunk, written);
  } catch (error) {
    closeSync(fd);
    rmSync(out, { force: true });
    throw error;
  }
  closeSync(fd);
  makePrivate(out);
  return { lines };
}

/** Moves a file written to the store's temporary directory to its place, if its bytes have the SHA-256 `hash`; answers whether they had. */
export async function storeCheckedFile(dataDir: string, tmp: string, hash: string): Promise<boolean> {
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(tmp).stream()) hasher.update(chunk);
  if (hasher.digest("hex") !== hash) return false;
  privateDir(join(filesDir(dataDir), hash.slice(0, 2)));
  if (existsSync(contentPath(dataDir, hash))) rmSync(tmp);
  else renameSync(tmp, contentPath(dataDir, hash));
  return true;
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
  const sqlite = store.sqlite;
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
  if (sqlite.query(`SELECT 1 FROM "spaces" WHERE "id" = ?1`).get(spaceId)) throw new Error(`The space ${header.space.slug} (${spaceId}) is here already: a dump loads once.`);
  const ownerRow = sqlite.query(`SELECT "id" FROM "users" WHERE "email" = ?1`).get(owner.email.trim().toLowerCase()) as { id: string } | null;
  if (!ownerRow) throw new Error(`No user has the e-mail ${owner.email}.`);

  const files = new Map<string, { path: string; fd: number }>();
  const now = new Date().toISOString();
  const users = userMatcher(sqlite, await unusablePassword(), now);
  let rows = 0;
  sqlite.run("PRAGMA foreign_keys = OFF");
  sqlite.run("BEGIN IMMEDIATE");
  try {
    for await (const line of lines) {
      if (line === "") continue;
      const entry = JSON.parse(line) as { user?: { id: string; email: string; name: string }; table?: string; row?: Record<string, unknown>; file?: string; data?: string };
      if (entry.user) users.add(entry.user);
      else if (entry.table && entry.row) {
        if (!DUMP_TABLES.some(({ table }) => table === entry.table)) throw new Error(`${path} holds rows of a table "${entry.table}" this version does not load.`);
        insertDumpRow(sqlite, entry.table, entry.table === "spaces" && slug ? { ...entry.row, slug } : entry.row, users.remap);
        rows++;
      } else if (entry.file && entry.data !== undefined && /^[0-9a-f]{64}$/.test(entry.file)) {
        let file = files.get(entry.file);
        if (!file) {
          privateDir(join(filesDir(dataDir), "tmp"));
          const tmp = join(filesDir(dataDir), "tmp", randomBytes(12).toString("hex"));
          file = { path: tmp, fd: openSync(tmp, "w", 0o600) };
          files.set(entry.file, file);
        }
        const bytes = Buffer.from(entry.data, "base64");
        for (let written = 0; written < bytes.byteLength; ) written += writeSync(file.fd, bytes, written);
      }
    }
    sqlite.query(`INSERT INTO "members" ("space_id", "user_id", "role", "created_at") VALUES (?1, ?2, 'owner', ?3) ON CONFLICT DO UPDATE SET "role" = 'owner'`).run(spaceId, ownerRow.id, now);
    for (const [hash, file] of files) {
      closeSync(file.fd);
      file.fd = -1;
      if (!(await storeCheckedFile(dataDir, file.path, hash))) throw new Error(`${path} holds a file whose bytes do not match its hash ${hash}; it is not loaded.`);
    }
    const broken = sqlite.query("PRAGMA foreign_key_check").all();
    if (broken.length > 0) throw new Error(`${path} holds rows whose references are missing (${broken.length}); it is not loaded.`);
    flushStagedSearch(sqlite);
    sqlite.run("COMMIT");
  } catch (error) {
    sqlite.run("ROLLBACK");
    for (const file of files.values()) {
      if (file.fd >= 0) closeSync(file.fd);
      rmSync(file.path, { force: true });
    }
    throw error instanceof SyntaxError ? new Error(`${path} holds a line that is not JSON; it is not loaded.`) : error;
  } finally {
    sqlite.run("PRAGMA foreign_keys = ON");
  }
  return { spaceId, rows, files: files.size };
}
