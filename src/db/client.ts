import { Database } from "bun:sqlite";
import { getTableColumns, type InferSelectModel, sql } from "drizzle-orm";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { dirname } from "node:path";
import { databaseFiles, makePrivate, privateDir } from "./files";
import { embeddedMigrations } from "./embedded-migrations" with { type: "macro" };
import { WriteQueue } from "./write-queue";
import * as schema from "./tables";

export type Db = BunSQLiteDatabase<typeof schema>;

export interface Store {
  sqlite: Database;
  db: Db;
  writes: WriteQueue;
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
];

export function openStore(path: string): Store {
  if (path !== ":memory:") privateDir(dirname(path));
  const sqlite = new Database(path, { create: true, strict: true });
  for (const pragma of PRAGMAS) sqlite.run(pragma);
  if (path !== ":memory:") makePrivate(...databaseFiles(path));
  return { sqlite, db: drizzle(sqlite, { schema }), writes: new WriteQueue(sqlite) };
}

const MIGRATIONS = embeddedMigrations();

/** Applies the migrations embedded at build time (or the ones given); returns how many were new. */
export function migrate(store: Store, migrations: typeof MIGRATIONS = MIGRATIONS): number {
  const applied = () => {
    const table = store.sqlite.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
    return table ? (store.sqlite.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number }).n : 0;
  };
  const before = applied();
  // drizzle's own migrate step, fed the embedded files instead of a folder read at run time.
  const internals = store.db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): void }; session: unknown };
  internals.dialect.migrate(migrations, internals.session, { migrationsFolder: "" });
  return applied() - before;
}

export function closeStore(store: Store): void {
  store.sqlite.run("PRAGMA optimize");
  store.sqlite.close();
}

/**
 * Runs `write` in an IMMEDIATE transaction (grouped with others: see `WriteQueue`) and settles
 * once it is committed. bun:sqlite has one connection per handle, so every query made through
 * `ctx.db` inside `write` belongs to the transaction. `write` must stay synchronous.
 */
export function writeTransaction<T>(store: Store, write: () => T): Promise<T> {
  return store.writes.write(write);
}

/**
 * A statement compiled once per database handle. Compiling SQL costs tens of microseconds, far more
 * than running an indexed select, so the per-request queries are prepared this way.
 */
export function preparedFor<T>(build: (db: Db) => T): (db: Db) => T {
  const statements = new WeakMap<Db, T>();
  return (db) => {
    let statement = statements.get(db);
    if (statement === undefined) {
      statement = build(db);
      statements.set(db, statement);
    }
    return statement;
  };
}

const insertStatements = new WeakMap<Db, Map<SQLiteTable, { run(values: Record<string, unknown>): unknown }>>();

/**
 * Inserts one full row (every column given, `null` for none) with a statement built once per
 * table: the write paths insert many small rows, and building each insert costs more than running it.
 */
export function insertRow<T extends SQLiteTable>(db: Db, table: T, row: InferSelectModel<T>): void {
  let byTable = insertStatements.get(db);
  if (!byTable) insertStatements.set(db, (byTable = new Map()));
  let statement = byTable.get(table);
  if (!statement) {
    const placeholders = Object.fromEntries(Object.keys(getTableColumns(table)).map((key) => [key, sql.placeholder(key)]));
    statement = db.insert(table).values(placeholders as never).prepare();
    byTable.set(table, statement);
  }
  statement.run(row as Record<string, unknown>);
}
