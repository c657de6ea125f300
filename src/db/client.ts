import { Database, type SQLQueryBindings, type Statement } from "bun:sqlite";
import { Column, getTableName, type InferInsertModel, is, Param, Placeholder, type SQL, sql, type Table } from "drizzle-orm";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { dirname } from "node:path";
import { databaseFiles, makePrivate, privateDir } from "./files";
import { embeddedMigrations } from "./embedded-migrations" with { type: "macro" };
import { unnamedContentRemover } from "./content-files";
import { flushStagedSearch, stagedSearchFlusher } from "./search-index";
import { addFunctions } from "./functions";
import { WriteQueue } from "./write-queue";
import { StatementCache } from "./caches";

/** Drizzle without a schema object: the code builds its queries from the tables it imports, so the store imports no domain (the tables are listed for drizzle-kit by drizzle.config.ts). */
export type Db = BunSQLiteDatabase;

/** The database as requests read it: no insert, update or delete compiles on this handle. */
export type ReadDb = Pick<Db, "select" | "selectDistinct" | "$count">;

/** What the store's write helpers need of a write in progress (`Tx`): the store, and its handle that can write. */
export interface Writing {
  readonly store: Store;
  readonly db: Db;
}

export interface Store {
  sqlite: Database;
  db: Db;
  writes: WriteQueue;
  /** Every statement compiled for this connection (`caches.ts`). */
  statements: StatementCache;
}

/** A connection that only reads: the store's, or one pinned to a moment (`snapshots.ts`). */
export type ReadStore = Pick<Store, "sqlite" | "statements">;

/** Whoever reads: a statement is compiled for its store and run on its handle. */
export interface Reading {
  readonly store: Store;
  readonly db: ReadDb;
}

/** PocketBase's set: wait on locks instead of failing, WAL, NORMAL sync (survives a process crash). */
const PRAGMAS = [
  "PRAGMA busy_timeout = 10000",
  "PRAGMA journal_mode = WAL",
  "PRAGMA synchronous = NORMAL",
  "PRAGMA foreign_keys = ON",
  "PRAGMA temp_store = MEMORY",
  "PRAGMA cache_size = -32000",
  "PRAGMA journal_size_limit = 67108864",
  "PRAGMA wal_autocheckpoint = 1000",
  // ANALYZE (run by PRAGMA optimize) reads a sample of each index, not all of it: milliseconds on any size.
  "PRAGMA analysis_limit = 400",
];

export function openStore(path: string): Store {
  if (path !== ":memory:") privateDir(dirname(path));
  const sqlite = new Database(path, { create: true, strict: true });
  for (const pragma of PRAGMAS) sqlite.run(pragma);
  addFunctions(sqlite);
  if (path !== ":memory:") makePrivate(...databaseFiles(path));
  const dataDir = path === ":memory:" ? null : dirname(path);
  return {
    sqlite,
    db: drizzle({ client: castingLimits(sqlite) }),
    writes: new WriteQueue(sqlite, stagedSearchFlusher(sqlite), dataDir === null ? undefined : unnamedContentRemover(sqlite, dataDir)),
    statements: new StatementCache(),
  };
}

/**
 * What the planner is told about the search index's shadow tables (migrations 0017, 0022): large.
 * ANALYZE on a young database records them as a few rows, and that estimate stays until the next
 * optimize finds them grown tenfold; meanwhile FTS5's own statements on them scan instead of
 * seeking, so each write of a record paid a scan of the whole index. Measured on a new database:
 * creates fell from 6,490/s to 2,937/s within 25 s (~120,000 records) and kept falling; pinned,
 * they stay at ~8,000/s (docs/performance.md, "Search").
 */
const PINNED_STATISTICS = [
  ["record_search_data", null, "1000000"],
  ["record_search_docsize", null, "1000000"],
  ["record_search_idx", "record_search_idx", "1000000 1000 1"],
] as const;

/**
 * `PRAGMA optimize` (by default: re-analyze what has changed tenfold since it was last analyzed),
 * then the pinned statistics in place of what it measured. Runs inside the caller's transaction if
 * there is one.
 */
export function optimizeStatistics(sqlite: Database, pragma = "PRAGMA optimize"): void {
  sqlite.run(pragma);
  // Until something is analyzed there are no statistics, and the planner assumes every table large.
  if (!sqlite.query("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").get()) return;
  const remove = sqlite.query("DELETE FROM sqlite_stat1 WHERE tbl = ?");
  const insert = sqlite.query("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)");
  for (const [table, index, stat] of PINNED_STATISTICS) {
    remove.run(table);
    insert.run(table, index, stat);
  }
  sqlite.run("ANALYZE sqlite_schema");
}

const MIGRATIONS = embeddedMigrations();

/** The newest migration this version knows (its folder time): what a dump says it was made with. */
export const SCHEMA_VERSION = Math.max(0, ...MIGRATIONS.map((migration) => migration.folderMillis));

/**
 * A database migrated by a later version holds migrations this one does not know: drizzle would
 * apply nothing and the server would run against tables it does not understand. It stops instead.
 */
const hasTable = (store: Store, name: string) => store.sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1").get(name) != null;
const hasMigrationsTable = (store: Store) => hasTable(store, "__drizzle_migrations");

function refuseNewerDatabase(store: Store, migrations: typeof MIGRATIONS): void {
  if (!hasMigrationsTable(store)) return;
  const { last } = store.sqlite.query("SELECT max(created_at) AS last FROM __drizzle_migrations").get() as { last: number | null };
  const known = Math.max(0, ...migrations.map((migration) => migration.folderMillis));
  if (last !== null && Number(last) > known) {
    throw new Error(
      `This database was migrated by a newer version of Basalt (a migration of ${new Date(Number(last)).toISOString().slice(0, 10)} that this one does not know); run that version, or restore a backup made with this one.`,
    );
  }
}

/** The one index per field of versions before `field_values` (migrations/0010), named by field: gone once that table holds their values. */
function dropRetiredFieldIndexes(store: Store): void {
  const retired = store.sqlite.query("SELECT name FROM sqlite_schema WHERE type = 'index' AND name GLOB 'records_f_*'").all() as { name: string }[];
  store.sqlite.transaction(() => {
    for (const { name } of retired) store.sqlite.run(`DROP INDEX "${name.replace(/"/g, '""')}"`);
  })();
}

/** The triggers that keep `field_values` and `dropped_fields` (migrations/0010); a migration that rebuilds their table drops them. */
const TRIGGERS = ["field_values_after_insert", "field_values_after_update", "field_values_after_delete", "dropped_fields_after_delete", "record_counts_after_insert", "record_counts_after_update", "record_counts_after_delete", "assets_unnamed_after_delete", "assets_unnamed_after_update"];

function requireTriggers(store: Store): void {
  if (!store.sqlite.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'field_values'").get()) return;
  const present = new Set((store.sqlite.query("SELECT name FROM sqlite_schema WHERE type = 'trigger'").all() as { name: string }[]).map((row) => row.name));
  const missing = TRIGGERS.filter((name) => !present.has(name));
  if (missing.length > 0) throw new Error(`the database lacks the triggers ${missing.join(", ")}: a migration dropped them and must create them again`);
}

/** Applies the migrations embedded at build time (or the ones given); returns how many were new. */
export function migrate(store: Store, migrations: typeof MIGRATIONS = MIGRATIONS): number {
  const applied = () => (hasMigrationsTable(store) ? (store.sqlite.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n : 0);
  const before = applied();
  refuseNewerDatabase(store, migrations);
  // drizzle's own migrate step, fed the embedded files instead of a folder read at run time. It runs
  // them in one transaction, where `PRAGMA foreign_keys` is ignored: foreign keys go off around it,
  // or rebuilding a parent table (drop, then rename the copy) would cascade-delete its children.
  const internals = store.db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): void }; session: unknown };
  store.sqlite.run("PRAGMA foreign_keys = OFF");
  try {
    internals.dialect.migrate(migrations, internals.session, { migrationsFolder: "" });
    // Only what migrations just ran with foreign keys off can have broken one: the check reads every
    // table (1 s at 450,000 records), so a start that applied none skips it.
    const broken = applied() > before ? store.sqlite.query("PRAGMA foreign_key_check").all() : [];
    if (broken.length > 0) throw new Error(`the migrations left ${broken.length} rows whose foreign keys point nowhere`);
  } finally {
    store.sqlite.run("PRAGMA foreign_keys = ON");
  }
  dropRetiredFieldIndexes(store);
  requireTriggers(store);
  // A migration that rewrites records stages their search entries as any write does; they reach the index here.
  if (hasTable(store, "record_search_staged")) store.sqlite.transaction(() => flushStagedSearch(store.sqlite))();
  return applied() - before;
}

/**
 * Where the checkpoint worker's code is. The executable holds it as an entry point of its own, found
 * by its path from `src/` (the entry points' common root); `import.meta.url` there is the path the
 * source had at build time, which the machine running the executable does not have. From source,
 * it is beside this file.
 */
const CHECKPOINTER = Bun.main.startsWith("/$bunfs/") ? "./db/checkpointer.ts" : new URL("./checkpointer.ts", import.meta.url).href;

/**
 * Moves WAL checkpoints off the event loop (see `checkpointer.ts`): a worker thread checkpoints on
 * its own connection, and this connection stops checkpointing inside its COMMITs.
 */
export function startCheckpointer(store: Store, path: string, log: { error(line: string): void }): { stop(): void } {
  let running = true;
  const worker = new Worker(CHECKPOINTER);
  worker.onmessage = ({ data }: MessageEvent<{ error: string }>) => log.error(`checkpoint: ${data.error}`);
  // A worker that died checkpoints nothing: the commits take checkpoints back, so the WAL stays bounded.
  worker.onerror = (event) => {
    log.error(`checkpoint worker: ${event.message}; checkpoints run in the server's commits instead`);
    if (running) store.sqlite.run("PRAGMA wal_autocheckpoint = 1000");
  };
  worker.postMessage({ path });
  store.sqlite.run("PRAGMA wal_autocheckpoint = 0");
  return {
    stop() {
      running = false;
      worker.terminate();
      store.sqlite.run("PRAGMA wal_autocheckpoint = 1000");
    },
  };
}

/** Lets every queued write settle, then closes the database. */
export async function closeStore(store: Store): Promise<void> {
  await store.writes.drain();
  optimizeStatistics(store.sqlite);
  store.sqlite.close();
}

/**
 * A read statement compiled once per store. Compiling SQL costs tens of microseconds, far more
 * than running an indexed select, so the per-request queries are prepared this way.
 */
export const preparedFor =
  <T>(build: (db: ReadDb) => T): ((reader: Reading) => T) =>
  ({ store, db }) =>
    store.statements.find<T>(build) ?? store.statements.keep(build, build(db));

/** A write statement compiled once per store; it runs only inside a write (`tx`). */
export const preparedWrite =
  <T>(build: (db: Db) => T): ((tx: Writing) => T) =>
  ({ store, db }) =>
    store.statements.find<T>(build) ?? store.statements.keep(build, build(db));

/** How one parameter of compiled drizzle SQL gets its value: a placeholder's, encoded as its column wants. */
function binder(param: unknown): (values: Record<string, unknown>) => unknown {
  if (param instanceof Placeholder) return (values) => values[param.name];
  if (param instanceof Param && param.value instanceof Placeholder) {
    const { name } = param.value;
    const encoder = param.encoder as { mapToDriverValue(value: unknown): unknown } | undefined;
    return encoder ? (values) => (values[name] === null || values[name] === undefined ? null : encoder.mapToDriverValue(values[name])) : (values) => values[name];
  }
  return () => param;
}

/**
 * SQL as the store prepares it: a LIMIT or OFFSET that is a bare bound parameter (`limit ?`, as
 * drizzle writes `.limit()`, or `LIMIT ?2`) is cast. Bound bare, SQLite (3.53, Bun's) plans with
 * its value, marks it, and prepares the statement again whenever it is bound, so at every run: a
 * listing page's statement ran 163 µs with `limit ?4` and 115 µs with `limit cast(?4 as integer)`,
 * least of 30 rounds (docs/performance.md, "fourth round: listing pages"). The value is the same
 * whole number either way.
 */
const BARE_BOUND_LIMIT = /\b(limit|offset) (\?\d*)/gi;
export const withCastLimits = (text: string): string => text.replace(BARE_BOUND_LIMIT, "$1 cast($2 as integer)");

/**
 * The connection as drizzle sees it: what it prepares (its `.prepare()`d statements and its queries
 * run once) has its LIMIT and OFFSET cast as the store's own statements do. Only `prepare`, `exec`
 * and `transaction` are what drizzle's session calls.
 */
function castingLimits(sqlite: Database): Database {
  return {
    prepare: (text: string) => sqlite.prepare(withCastLimits(text)),
    exec: (text: string) => sqlite.exec(text),
    transaction: (work: () => unknown) => sqlite.transaction(work),
  } as unknown as Database;
}

/** Compiles drizzle-built SQL once and binds its placeholders by name at every run. */
function compile(store: Store, query: { toSQL(): { sql: string; params: unknown[] } }) {
  const { sql: built, params } = query.toSQL();
  const text = withCastLimits(built);
  const statement = store.sqlite.prepare<unknown[], SQLQueryBindings[]>(text);
  const binders = params.map(binder);
  // A loop, not `map` with a closure over `values`: every insert of every write binds through here.
  const bind = (values: Record<string, unknown>) => {
    const bound = new Array<SQLQueryBindings>(binders.length);
    for (let i = 0; i < binders.length; i++) bound[i] = binders[i](values) as SQLQueryBindings;
    return bound;
  };
  return { statement, bind };
}

/** SQLite's plan for a query built as `compiledRows` builds its queries: which indexes answer it. */
export function queryPlan(store: Store, query: { toSQL(): { sql: string; params: unknown[] } }, values: Record<string, unknown>): string[] {
  const { sql: text, params } = query.toSQL();
  const bound = params.map(binder).map((bind) => bind(values)) as SQLQueryBindings[];
  // Prepared and finalized here: a cached EXPLAIN statement stays active and would lock the schema (DROP INDEX fails).
  const statement = store.sqlite.prepare(`EXPLAIN QUERY PLAN ${withCastLimits(text)}`);
  try {
    return (statement.all(...bound) as { detail: string }[]).map((row) => row.detail);
  } finally {
    statement.finalize();
  }
}

/**
 * Inserts one row with a statement built once per table, from the columns of the first row (every
 * row of a table is given the same columns: all of them, `null` for none, but those SQLite
 * assigns). The write paths insert many small rows: building each insert, or letting drizzle bind
 * its parameters, costs more than running it. Answers the row's rowid (an event's `seq`).
 */
export function insertRow<T extends SQLiteTable>(tx: Writing, table: T, row: InferInsertModel<T>): number {
  type Insert = (values: Record<string, unknown>) => number;
  let insert = tx.store.statements.find<Insert>(table);
  if (!insert) {
    const placeholders = Object.fromEntries(Object.keys(row).map((key) => [key, sql.placeholder(key)]));
    const { statement, bind } = compile(tx.store, tx.db.insert(table).values(placeholders as never));
    insert = tx.store.statements.keep<Insert>(table, (values) => Number(statement.run(...bind(values)).lastInsertRowid));
  }
  return insert(row as Record<string, unknown>);
}

/** A select built with drizzle, run as compiled SQL returning rows as arrays of driver values. */
export type RowsOf = (params: Record<string, unknown>) => unknown[][];

/**
 * A select built once per `key` with drizzle, compiled once, and run through bun:sqlite returning
 * arrays. For reads of many rows: drizzle's own row mapping measured about 6 µs a row on a 51-row
 * page with two joins, three times the query itself; `decodeRow` maps a row for the price of the
 * columns' own decoders. Bounded, since keys may come from clients' query shapes.
 */
export function compiledRows(store: Store, key: string, build: () => { toSQL(): { sql: string; params: unknown[] } }): RowsOf {
  const kept = store.statements.find<RowsOf>(key);
  if (kept) return kept;
  const { statement, bind } = compile(store, build());
  return store.statements.keep<RowsOf>(key, (values) => statement.values(...bind(values)) as unknown[][]);
}

/** Maps `columns.length` values of a row, from `offset`, to an object, decoding each as drizzle would. */
export function decodeRow<T>(row: unknown[], offset: number, columns: readonly (readonly [string, Column])[]): T {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) {
    const value = row[offset + i];
    out[columns[i][0]] = value === null ? null : columns[i][1].mapFromDriverValue(value);
  }
  return out as T;
}

/** A table's or a column's name as SQL writes it (quoted), from its drizzle declaration: raw SQL spells no name by hand. */
export const named = (item: Table | Column): string => `"${is(item, Column) ? item.name : getTableName(item as Table)}"`;

/** A column with its table's name (`"records"."id"`): what drizzle leaves out of a select's own SQL fields. */
export const qualified = (column: Column): SQL => sql.raw(`${named(column.table)}.${named(column)}`);

/**
 * Raw SQL (its names from `named`), compiled once per store through its statement cache. For
 * what drizzle cannot build or builds too slowly for a hot path; only a domain's store module
 * (`<domain>/store.ts`) writes it.
 */
export const rawStatement = <R = unknown, P extends SQLQueryBindings[] = SQLQueryBindings[]>(store: ReadStore, text: string): Statement<R, P> =>
  store.statements.find<Statement<R, P>>(text) ?? store.statements.keep(text, store.sqlite.prepare(withCastLimits(text)) as unknown as Statement<R, P>);
