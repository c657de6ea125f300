import { findAsset } from "../assets/assets";
import { textOfAsset } from "../assets/texts";
import { randomBytes } from "node:crypto";
import { appendFileSync, closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Static, t } from "elysia";
import { Nullable } from "../shared/schemas";
import { iso } from "../shared/clock";
import { type AuditActor, recordAudit } from "../audit/audit";
import type { AppContext, Tx } from "../context";
import { forgetBases } from "../content/bases";
import { removeUnnamed } from "../db/content-files";
import { privateDir } from "../db/files";
import { write } from "../db/tx";
import type { ReadStore } from "../db/client";
import { ApiError, badRequest, conflict, notFound } from "../shared/errors";
import { exported, storeCheckedFile, unusablePassword } from "./dump";
import { DumpLoader, type DumpPeople, DumpRefusal } from "./dump-rows";
import { columnsOf, DUMP_TABLES, dumpTableNamed, heldBySpace, pageOfSpace, removeRootFolder, usersNamed } from "./store";

/**
 * Busabase's dump routes over a space's tables: raw rows a page at a time out, and an import
 * session in. Busabase's table names map to Basalt's; those Basalt keeps no rows for (indexed
 * values, which the triggers rebuild; attachment registries) export nothing and import nothing.
 * `users` (id, e-mail, name: never a password) lets a history's authors be matched by e-mail.
 */
export const DUMP_TABLE_NAMES = {
  nodes: "nodes",
  nodePrincipals: "node_principals",
  bases: "bases",
  baseFields: "fields",
  views: "views",
  records: "records",
  fieldValues: null,
  recordLinks: "record_links",
  attachments: "assets",
  assets: "assets",
  nodeDocuments: "node_documents",
  forms: "forms",
  assetUsages: "node_files",
  assetTexts: "asset_texts",
  commits: "commits",
  changeRequests: "change_requests",
  operations: "operations",
  comments: "comments",
  reviews: "reviews",
  auditEvents: "audit_events",
  deletedFields: "deleted_fields",
  deletedFieldValues: "deleted_field_values",
  webhookRules: "webhook_rules",
  users: "users",
} as const;
export type DumpTableName = keyof typeof DUMP_TABLE_NAMES;
export const DUMP_TABLE_LIST = Object.keys(DUMP_TABLE_NAMES) as DumpTableName[];
/** Import-only pseudo-tables: file bytes by SHA-256 (`storageKey`), and Busabase's doc bodies (`{nodeId, markdown}`, kept as `nodeDocuments` rows). */
export const BLOBS = "attachmentBlobs";
export const DOC_BODIES = "docBodies";
export const MAX_DUMP_ROWS = 2000;

type Row = Record<string, unknown>;

export const DumpRowsSchema = t.Array(t.Record(t.String(), t.Unknown()), {
  description: "Raw rows: the table's columns as stored, by Busabase's camelCase names (JSON columns as text); an import takes them by those names or the stored snake_case ones.",
});

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * What Busabase's clients read of a row beyond its columns: an asset's attachment (here, itself),
 * and the `attachments` table, which Basalt keeps as its assets' bytes (by content hash). An import
 * drops these keys again.
 */
const CONTRACT_EXTRAS: Partial<Record<DumpTableName, (row: Row) => Row>> = {
  assets: (row) => ({ ...row, attachmentId: row.id, storageKey: row.contentHash }),
  attachments: (row) => ({ id: row.id, storageKey: row.contentHash, fileName: row.fileName, mimeType: row.mimeType, sizeBytes: row.size, contentHash: row.contentHash === null ? null : `sha256:${row.contentHash}`, createdAt: row.createdAt }),
  nodePrincipals: (row) => ({ ...row, sourceNodeId: row.nodeId }),
};
const CONTRACT_ONLY: Partial<Record<DumpTableName, string[]>> = { assets: ["attachmentId", "storageKey"], nodePrincipals: ["sourceNodeId"] };

/**
 * How an import takes a row in, null leaving it out. Busabase stores a grant again on every node
 * below the one granted (`sourceNodeId` names that one) and has team grants; Basalt keeps the grant
 * alone, which the nodes below inherit, and has no teams. A grant to the whole space names the
 * space it lands in.
 */
const TAKEN_IN: Partial<Record<DumpTableName, (row: Row, spaceId: string) => Row | null>> = {
  nodePrincipals: (row, spaceId) =>
    row.principalType === "team" || (typeof row.sourceNodeId === "string" && row.sourceNodeId !== row.nodeId) ? null : row.principalType === "space" ? { ...row, principalId: spaceId } : row,
};

/** A stored row as the dump routes send it: Busabase's names, and what its clients read besides. */
const contractRow = (name: DumpTableName, row: Row): Row => {
  const renamed = Object.fromEntries(Object.entries(row).map(([key, value]) => [camel(key), value]));
  return CONTRACT_EXTRAS[name]?.(renamed) ?? renamed;
};

/** A row an import was sent, by the stored column names: camelCase names become snake_case; what only the contract's rows carry is dropped. */
const storedRow = (name: DumpTableName, row: Row): Row => {
  const dropped = CONTRACT_ONLY[name] ?? [];
  return Object.fromEntries(Object.entries(row).filter(([key]) => !dropped.includes(key)).map(([key, value]) => [snake(key), value]));
};

// ---- export ----

/** A page's cursor: the key of the last row it held (`DUMP_TABLES[].key`). */
const cursorOf = (key: string[]) => Buffer.from(JSON.stringify(key)).toString("base64url");
function keyAfter(cursor: string | undefined, length: number): string[] | null {
  if (cursor === undefined) return null;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, "base64url").toString());
  } catch {
    key = null;
  }
  // A key starts with an id; a file's key goes on with its path.
  const fits = (part: unknown, index: number) => typeof part === "string" && (index === 0 ? /^[a-z]{3}_[0-9A-Za-z]+$/.test(part) : part.length <= 1024);
  if (!Array.isArray(key) || key.length !== length || !key.every(fits)) throw badRequest("cursor is not one this route gave.");
  return key;
}

/**
 * One page of a stored table's rows of the space (as stored), in key order, read from `store`, and
 * the cursor of the next (null at the end). A page resumes after the last key through the table's
 * key index: it costs its own rows, whichever page it is.
 */
export function storedPage(store: ReadStore, table: string, spaceId: string, cursor: string | undefined, limit: number): { rows: Row[]; nextCursor: string | null } {
  const spec = dumpTableNamed(table)!;
  const rows = pageOfSpace(store, spec, spaceId, keyAfter(cursor, spec.key.length), limit + 1);
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: rows.length > limit ? cursorOf(spec.key.map((column) => String(page[page.length - 1][column]))) : null };
}

/** One page of the space's people (id, e-mail, name), by id, read from `store`: it costs its own people, whichever page it is. */
export function peoplePage(store: ReadStore, spaceId: string, cursor: string | undefined, limit: number): { rows: Row[]; nextCursor: string | null } {
  const rows = usersNamed(store, spaceId, keyAfter(cursor, 1)?.[0] ?? null, limit + 1);
  const page = rows.slice(0, limit);
  return { rows: page.map((user) => ({ ...user })), nextCursor: rows.length > limit ? cursorOf([page[page.length - 1].id]) : null };
}

/** Busabase's dump export: one page of a table's rows of the space, by its names; webhook rules come without their secrets. */
export function exportTablePage(ctx: AppContext, spaceId: string, name: DumpTableName, cursor: string | undefined, limit: number): { rows: Row[]; nextCursor: string | null } {
  const table = DUMP_TABLE_NAMES[name];
  if (table === null) return { rows: [], nextCursor: null };
  const page = table === "users" ? peoplePage(ctx.store, spaceId, cursor, limit) : storedPage(ctx.store, table, spaceId, cursor, limit);
  return { rows: page.rows.map((row) => contractRow(name, exported(table, row))), nextCursor: page.nextCursor };
}

// ---- import sessions ----

/**
 * An import session is a private directory of the data directory: `session.json` (its space, who
 * began it, when, the bytes it holds), each table's rows as JSON lines, and files in `blobs/`.
 * Nothing reaches the database before the commit, which loads it all in one write transaction:
 * an import is whole or absent. `--max-import` bounds what a session holds.
 */
interface Session {
  spaceId: string;
  userId: string;
  createdAt: string;
  bytes: number;
}

const SESSION_ID = /^dmp_[0-9a-f]{48}$/;
/** A session no one committed or aborted is removed after this long: by the hourly prune, or when another begins. */
const SESSION_MINUTES = 60;
const sessionsDir = (ctx: AppContext) => join(ctx.config.dataDir, "dump-imports");
const sessionDir = (ctx: AppContext, id: string) => join(sessionsDir(ctx), id);

/** The space's open session `id`, or the 404 of one that is not (a made-up id never reaches the disk). */
function readSession(ctx: AppContext, spaceId: string, id: string): Session {
  const session = SESSION_ID.test(id) ? readSessionFile(ctx, id) : null;
  if (!session || session.spaceId !== spaceId) throw notFound(`No import session ${id} is open in this space.`);
  return session;
}

const saveSession = (ctx: AppContext, id: string, session: Session) => writeFileSync(join(sessionDir(ctx, id), "session.json"), JSON.stringify(session), { mode: 0o600 });

/** What keeps a space from taking an import, or null: it must hold nothing but its root folder. */
function notEmpty(ctx: Pick<AppContext, "store">, spaceId: string): string | null {
  const held = heldBySpace(ctx.store, spaceId);
  const what = Object.entries(held).filter(([kind, n]) => n > (kind === "nodes" ? 1 : 0));
  return what.length === 0 ? null : `The space holds ${what.map(([kind, n]) => `${kind === "nodes" ? n - 1 : n} ${kind === "nodes" ? "nodes besides its root" : kind}`).join(", ")}: an import keeps the dump's ids, so it goes into an empty space only.`;
}

const spaceNotEmpty = (message: string) => conflict(message, { reason: "SPACE_NOT_EMPTY" });

/**
 * Opens an import session for an empty space. A space holds one at a time (one begun before for it
 * is removed), so what sessions hold is bounded by the spaces, each by `--max-import`.
 */
export function beginDumpImport(ctx: AppContext, spaceId: string, userId: string): { sessionId: string } {
  const refusal = notEmpty(ctx, spaceId);
  if (refusal) throw spaceNotEmpty(refusal);
  pruneImportSessions(ctx, spaceId);
  const sessionId = `dmp_${randomBytes(24).toString("hex")}`;
  privateDir(sessionDir(ctx, sessionId));
  saveSession(ctx, sessionId, { spaceId, userId, createdAt: new Date(ctx.clock.now()).toISOString(), bytes: 0 });
  return { sessionId };
}

/** Removes the sessions begun more than an hour ago (and, with `spaceId`, that space's own); answers how many. Run hourly. */
export function pruneImportSessions(ctx: AppContext, spaceId?: string): number {
  if (!existsSync(sessionsDir(ctx))) return 0;
  const stale = ctx.clock.now() - SESSION_MINUTES * 60_000;
  let removed = 0;
  for (const id of readdirSync(sessionsDir(ctx))) {
    const session = SESSION_ID.test(id) ? readSessionFile(ctx, id) : null;
    if (!session || session.spaceId === spaceId || Date.parse(session.createdAt) < stale) (rmSync(sessionDir(ctx, id), { recursive: true, force: true }), removed++);
  }
  return removed;
}

function readSessionFile(ctx: AppContext, id: string): Session | null {
  try {
    return JSON.parse(readFileSync(join(sessionDir(ctx, id), "session.json"), "utf8")) as Session;
  } catch {
    return null;
  }
}

/** The columns of each table (as SQLite has them), for checking rows before they are kept. */

const USER_KEYS = ["id", "email", "name"];

/** Why a row cannot be kept, or null. */
function rowError(row: Row, table: string, columns: Set<string>): string | null {
  // A row keyed by what it belongs to (a node's document, a node's file) goes by that id.
  const id = row[dumpTableNamed(table)?.key[0] ?? "id"];
  if (typeof id !== "string" || !/^[a-z]{3}_[0-9A-Za-z]+$/.test(id)) return "has no id of Basalt's form";
  if (table === "users") return USER_KEYS.every((key) => typeof row[key] === "string") && Object.keys(row).every((key) => USER_KEYS.includes(key)) ? null : "is not { id, email, name }";
  for (const [column, value] of Object.entries(row)) {
    if (!columns.has(column)) return `has a column "${column}" the table does not`;
    if (value !== null && !["string", "number", "boolean"].includes(typeof value)) return `holds an object in "${column}" (JSON columns are sent as text)`;
  }
  return null;
}

/** What a session may hold: `--max-import`, unless the operator's own clone (docs/remotes.md) bounds it otherwise. */
const sessionBound = (ctx: AppContext, bound?: number) => bound ?? ctx.config.maxImportBytes;

/** Counts `bytes` more into the session: past its bound, a 413. */
function addToSession(ctx: AppContext, session: Session, bytes: number, bound?: number): void {
  session.bytes += bytes;
  const most = sessionBound(ctx, bound);
  if (session.bytes > most) throw new ApiError(413, "PAYLOAD_TOO_LARGE", `The import session holds more than ${most} bytes, the most an import may (the operator sets it with --max-import).`);
}

/** Keeps a batch of rows (or file bytes) in the session; answers how many rows it took. */
export function stageImportRows(ctx: AppContext, spaceId: string, input: { sessionId: string; table: string; rows: Row[] }, bound?: number): { inserted: number } {
  const session = readSession(ctx, spaceId, input.sessionId);
  const dir = sessionDir(ctx, input.sessionId);
  if (input.table === DOC_BODIES) {
    const at = iso(ctx.clock.now());
    const rows = input.rows.map((row, i) => {
      if (typeof row.nodeId !== "string" || typeof row.markdown !== "string") throw badRequest(`Row ${i} of docBodies is not { nodeId, markdown }.`);
      return { node_id: row.nodeId, body: row.markdown, updated_at: at };
    });
    return stageImportRows(ctx, spaceId, { sessionId: input.sessionId, table: "nodeDocuments", rows }, bound);
  }
  if (input.table === BLOBS) {
    const parts = input.rows.map((row, i) => {
      if (typeof row.storageKey !== "string" || !/^[0-9a-f]{64}$/.test(row.storageKey) || typeof row.base64 !== "string") throw badRequest(`Row ${i} of attachmentBlobs is not { storageKey: the file's SHA-256 in hex, base64 }.`);
      return { hash: row.storageKey, bytes: Buffer.from(row.base64, "base64") };
    });
    for (const part of parts) addToSession(ctx, session, part.bytes.byteLength, bound);
    privateDir(join(dir, "blobs"));
    // Rows of one file are its parts, in order: a file larger than one request is sent in several.
    for (const part of parts) appendFileSync(join(dir, "blobs", part.hash), part.bytes, { mode: 0o600 });
    saveSession(ctx, input.sessionId, session);
    return { inserted: parts.length };
  }
  if (!(DUMP_TABLE_LIST as string[]).includes(input.table)) throw badRequest(`table must be one of ${[...DUMP_TABLE_LIST, BLOBS].join(", ")}.`);
  const name = input.table as DumpTableName;
  const table = DUMP_TABLE_NAMES[name];
  // Busabase's attachments are the assets' bytes here: they come as attachmentBlobs.
  if (table === null || name === "attachments") return { inserted: 0 };
  const rows = input.rows.flatMap((given) => {
    const taken = TAKEN_IN[name] ? TAKEN_IN[name](given, spaceId) : given;
    return taken === null ? [] : [storedRow(name, taken)];
  });
  return stageStored(ctx, session, input.sessionId, table, rows, input.table, bound);
}

/** Keeps rows of a table, by its stored name and columns, in the session (a clone's snapshot pages come so). */
export function stageStoredRows(ctx: AppContext, spaceId: string, sessionId: string, table: string, rows: Row[], bound?: number): { inserted: number } {
  if (table !== "users" && !dumpTableNamed(table)) throw badRequest(`No table ${table} is loaded by an import.`);
  return stageStored(ctx, readSession(ctx, spaceId, sessionId), sessionId, table, rows, table, bound);
}

function stageStored(ctx: AppContext, session: Session, sessionId: string, table: string, rows: Row[], named: string, bound?: number): { inserted: number } {
  const columns = columnsOf(ctx.store, table);
  const lines = rows.map((row, i) => {
    const error = rowError(row, table, columns);
    if (error) throw badRequest(`Row ${i} of ${named} ${error}.`);
    return `${JSON.stringify(row)}\n`;
  });
  const text = lines.join("");
  addToSession(ctx, session, Buffer.byteLength(text), bound);
  appendFileSync(join(sessionDir(ctx, sessionId), `${table}.jsonl`), text, { mode: 0o600 });
  saveSession(ctx, sessionId, session);
  return { inserted: lines.length };
}

/** A staged table's rows, read a part of the file at a time. */
function* stagedRows(dir: string, table: string): Generator<Row> {
  const path = join(dir, `${table}.jsonl`);
  if (!existsSync(path)) return;
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(1 << 20);
    let rest = "";
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
      const lines = (rest + buffer.toString("utf8", 0, read)).split("\n");
      rest = lines.pop()!;
      for (const line of lines) yield JSON.parse(line) as Row;
    }
  } finally {
    closeSync(fd);
  }
}

/** The nodes with each parent before its children (a node moved under a folder made after it has the larger id). */
function parentsFirst(rows: Row[]): Row[] {
  const byId = new Map(rows.map((row) => [row.id as string, row]));
  const placed = new Set<string>();
  const out: Row[] = [];
  const place = (row: Row, depth: number) => {
    if (placed.has(row.id as string) || depth > rows.length) return;
    const parent = byId.get(row.parent_id as string);
    if (parent) place(parent, depth + 1);
    placed.add(row.id as string);
    out.push(row);
  };
  for (const row of rows) place(row, 0);
  return out;
}

/** The 400 or 409 of a row SQLite refused, naming the row, never SQL. */
function refusedRow(error: unknown, table: string, row: Row): ApiError {
  const code = (error as { code?: string }).code ?? "";
  if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") return conflict(`The ${table} row ${row.id} is here already: a dump loads once.`, { reason: "ALREADY_LOADED" });
  if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") return badRequest(`The ${table} row ${row.id} names a row the import does not hold (send its tables in full).`);
  if (code.startsWith("SQLITE_CONSTRAINT")) return badRequest(`The ${table} row ${row.id} lacks a value its table requires, or holds one it refuses.`);
  return badRequest(`The ${table} row ${row.id} cannot be loaded: ${code || "a value of the wrong kind"}.`);
}

/**
 * Loads the session's rows into the space, in one write, through the one validator of dump rows
 * (`dump-rows.ts`): the root folder becomes the dump's, ids are kept, and the dump's people are
 * matched to accounts only when an instance admin imports it.
 */
function loadStaged(tx: Tx, spaceId: string, dir: string, people: DumpPeople, actor: AuditActor, sentFiles: Set<string>): { warnings: string[] } {
  const refusal = notEmpty(tx, spaceId);
  if (refusal) throw spaceNotEmpty(refusal);
  const loader = new DumpLoader(tx.store, spaceId, people, new Date(tx.clock.now()).toISOString(), actor.userId, tx.config.limits);
  let rules = 0;
  let unsent = 0;
  try {
    for (const user of stagedRows(dir, "users")) loader.addUser(user);
    const nodes = parentsFirst([...stagedRows(dir, "nodes")]);
    if (nodes.some((node) => node.parent_id === null || node.parent_id === undefined)) removeRootFolder(tx.store, spaceId);
    for (const { table } of DUMP_TABLES) {
      if (table === "spaces") continue;
      for (const row of table === "nodes" ? nodes : stagedRows(dir, table)) {
        try {
          loader.addRow(table, row);
        } catch (error) {
          throw error instanceof DumpRefusal ? error : refusedRow(error, table, row);
        }
        if (table === "webhook_rules") rules++;
      }
    }
    unsent = loader.finish(sentFiles);
  } catch (error) {
    throw error instanceof DumpRefusal ? badRequest(`${error.message} The import loads nothing.`) : error;
  }
  forgetBases(tx);
  recordAudit(tx, { action: "space.imported", actor, spaceId, targetType: "space", targetId: spaceId, metadata: { rows: loader.rows } });
  const warnings = [
    ...(rules > 0 ? [`${rules} webhook rule(s) loaded disabled, without their secrets: enter each secret again and enable the rule.`] : []),
    ...(unsent > 0 ? [`${unsent} file(s) were not sent (attachmentBlobs): they wait, pending, for their bytes.`] : []),
    ...(loader.unlistedPeople > 0 ? [`The dump has no users list: the ${loader.unlistedPeople} mention(s) of a person in its rows are the importer's.`] : []),
  ];
  return { warnings };
}

/** Commits a session: its files checked against their hashes and stored, then its rows loaded in one transaction. The session ends either way: a refused import is begun again. */
export async function commitDumpImport(ctx: AppContext, spaceId: string, sessionId: string, actor: AuditActor, user: { id: string; email: string; admin: boolean }): Promise<{ ok: boolean; warnings: string[] }> {
  readSession(ctx, spaceId, sessionId);
  const dir = sessionDir(ctx, sessionId);
  const blobs = existsSync(join(dir, "blobs")) ? readdirSync(join(dir, "blobs")) : [];
  const holds: (() => void)[] = [];
  let loaded = false;
  try {
    for (const hash of blobs) {
      const landed = await storeCheckedFile(ctx.config.dataDir, join(dir, "blobs", hash), hash);
      if (!landed) throw badRequest(`The bytes sent for ${hash} do not have that SHA-256: the import loads nothing (begin again).`);
      holds.push(landed);
    }
    const people: DumpPeople = user.admin ? { accounts: true, password: await unusablePassword() } : { accounts: false, self: user };
    const { warnings } = await write(ctx, (tx) => loadStaged(tx, spaceId, dir, people, actor, new Set(blobs)));
    loaded = true;
    return { ok: true, warnings };
  } finally {
    for (const release of holds) release();
    // A refused import keeps none of the bytes it stored that no asset names.
    if (!loaded) removeUnnamed(ctx.store.sqlite, ctx.config.dataDir, blobs);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Removes a session and what it holds. */
export function abortDumpImport(ctx: AppContext, spaceId: string, sessionId: string): { ok: boolean } {
  readSession(ctx, spaceId, sessionId);
  rmSync(sessionDir(ctx, sessionId), { recursive: true, force: true });
  return { ok: true };
}

export const AssetTextSchema = t.Object(
  {
    assetId: t.String(),
    textStorageKey: t.String({ description: "Empty: the text travels with its asset (a text file's own bytes) or in its assetTexts row." }),
    downloadUrl: t.Null({ description: "Null: nothing to download apart." }),
    textContentHash: Nullable(t.String()),
    byteCount: t.Integer({ minimum: 0 }),
  },
  { description: "Busabase's asset text. Basalt keeps a text in its assetTexts row, or has a text file's own bytes; an asset with neither has none (404)." },
);

/** Busabase's `GET /dump/export/asset-texts/{assetId}/content`: where an asset's text travels; here always with the asset or its row, never apart. */
export async function assetText(ctx: AppContext, spaceId: string, assetId: string): Promise<Static<typeof AssetTextSchema>> {
  const { text } = await textOfAsset(ctx, findAsset(ctx, spaceId, assetId));
  if (text === null) throw notFound(`Asset text not found: ${assetId}`);
  return { assetId, textStorageKey: "", downloadUrl: null, textContentHash: `sha256:${new Bun.CryptoHasher("sha256").update(text).digest("hex")}`, byteCount: Buffer.byteLength(text) };
}
