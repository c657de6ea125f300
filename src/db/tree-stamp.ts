import type { Database } from "bun:sqlite";

/**
 * What a member sees depends on the tree (nodes' parents, visibility, bases) and the grants. These
 * triggers, kept on this connection only (TEMP: no migration, nothing stored), count every write
 * that may change it, by whatever path it comes (a move, a restore, a structure sync, an import, a
 * merge). Another connection's commit is seen through `data_version`, as `StampedCache` sees it.
 */
const WATCHED = [
  "INSERT ON main.nodes",
  "UPDATE OF parent_id, explicit_visibility, status ON main.nodes",
  "DELETE ON main.nodes",
  "INSERT ON main.bases",
  "UPDATE OF node_id ON main.bases",
  "DELETE ON main.bases",
  "INSERT ON main.node_principals",
  "UPDATE ON main.node_principals",
  "DELETE ON main.node_principals",
];

/** Counts the tree's writes on this connection from now on (once the schema is migrated). */
export function watchTree(sqlite: Database): void {
  sqlite.run("CREATE TEMP TABLE IF NOT EXISTS tree_writes (n INTEGER NOT NULL)");
  if (sqlite.query("SELECT 1 FROM temp.tree_writes").get() === null) sqlite.run("INSERT INTO temp.tree_writes (n) VALUES (0)");
  WATCHED.forEach((on, i) => sqlite.run(`CREATE TEMP TRIGGER IF NOT EXISTS tree_write_${i} AFTER ${on} BEGIN UPDATE temp.tree_writes SET n = n + 1; END`));
}

/**
 * A stamp that differs whenever a space's tree or grants may have changed since it was taken: the
 * count of this connection's tree writes and the database's `data_version` (another connection's
 * commit, which may have changed it too). Two small reads; equal stamps mean the same tree.
 */
export function treeStamp(sqlite: Database): () => string {
  const writes = sqlite.query<{ n: number }, []>("SELECT n FROM temp.tree_writes");
  const version = sqlite.query<{ data_version: number }, []>("PRAGMA data_version");
  return () => `${writes.get()!.n} ${version.get()!.data_version}`;
}
