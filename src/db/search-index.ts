import type { Database } from "bun:sqlite";

/** The field types whose values a record's search entry holds (the update trigger of migrations/0024 names the same). */
export const SEARCHED_TYPES = ["text", "longtext", "markdown", "html", "code", "yaml", "email", "url"] as const;

const ENTRY_TEXT = `SELECT group_concat(json_extract(r."data", '$."' || f."slug" || '"'), ' ') FROM "fields" f WHERE f."base_id" = r."base_id" AND f."type" IN (${SEARCHED_TYPES.map((type) => `'${type}'`).join(", ")})`;

/**
 * Brings the search entries of the records this transaction touched (noted by the triggers of
 * migrations/0024) up to date, in three statements whatever their number: the entries the index
 * held go, then each touched record that is active now gets its entry from its values as they
 * stand. Runs in the transaction, before its COMMIT and outside any savepoint, so FTS5 writes each
 * transaction's words once, and a record written twice is indexed once: every COMMIT of a write to
 * `records` runs it first (the write queue's, a dump's load, the migrations').
 */
export function flushStagedSearch(sqlite: Database): void {
  if (!sqlite.query(`SELECT 1 FROM "record_search_staged" LIMIT 1`).get()) return;
  sqlite.query(`DELETE FROM "record_search" WHERE rowid IN (SELECT "record_rowid" FROM "record_search_staged" WHERE "indexed")`).run();
  sqlite
    .query(`INSERT INTO "record_search"(rowid, "text") SELECT r.rowid, (${ENTRY_TEXT}) FROM "record_search_staged" s CROSS JOIN "records" r ON r.rowid = s."record_rowid" WHERE r."status" = 'active'`)
    .run();
  sqlite.query(`DELETE FROM "record_search_staged"`).run();
}

/** `flushStagedSearch` for each COMMIT of a store, once its schema has the staging table: a database not migrated yet stages nothing. */
export function stagedSearchFlusher(sqlite: Database): () => void {
  let staging = false;
  return () => {
    staging ||= sqlite.query(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'record_search_staged'`).get() != null;
    if (staging) flushStagedSearch(sqlite);
  };
}
