import { Database } from "bun:sqlite";
import { type InferInsertModel, sql } from "drizzle-orm";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { dirname } from "node:path";
import { databaseFiles, makePrivate, privateDir } from "./files";
import { embeddedMigrations } from "./embedded-migrations" with { type: "macro" };
import type { ReadDb, Tx } from "./tx";
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

/** Lets every queued write settle, then closes the database. */
export async function closeStore(store: Store): Promise<void> {
  await store.writes.drain();
  store.sqlite.run("PRAGMA optimize");
  store.sqlite.close();
}

function compiledOnce<D extends object, T>(build: (db: D) => T): (db: D) => T {
  const statements = new WeakMap<D, T>();
  return (db) => {
    let statement = statements.get(db);
    if (statement === undefined) {
      statement = build(db);
      statements.set(db, statement);
    }
    return statement;
  };
}

/**
 * A read statement compiled once per database handle. Compiling SQL costs tens of microseconds,
 * far more than running an indexed select, so the per-request queries are prepared this way.
 */
export const preparedFor = <T>(build: (db: ReadDb) => T): ((db: ReadDb) => T) => compiledOnce(build);

/** A write statement compiled once per database handle; it runs only inside a write (`tx`). */
export function preparedWrite<T>(build: (db: Db) => T): (tx: Tx) => T {
  const compiled = compiledOnce(build);
  return (tx) => compiled(tx.db);
}

const insertStatements = new WeakMap<Db, Map<SQLiteTable, { run(values: Record<string, unknown>): unknown }>>();

/**
 * Inserts one row with a statement built once per table, from the columns of the first row (every
 * row of a table is given the same columns: all of them, `null` for none, but those SQLite
 * assigns). The write paths insert many small rows, and building each insert costs more than
 * running it.
 */
export function insertRow<T extends SQLiteTable>(tx: Tx, table: T, row: InferInsertModel<T>): void {
  const db = tx.db;
  let byTable = insertStatements.get(db);
  if (!byTable) insertStatements.set(db, (byTable = new Map()));
  let statement = byTable.get(table);
  if (!statement) {
    const placeholders = Object.fromEntries(Object.keys(row).map((key) => [key, sql.placeholder(key)]));
    statement = db.insert(table).values(placeholders as never).prepare();
    byTable.set(table, statement);
  }
  statement.run(row as Record<string, unknown>);
}
