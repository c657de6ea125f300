import type { Database } from "bun:sqlite";

/** A record's search entry: the values of its fields whose kind search reads (`field_kinds`, as the update trigger of migrations/0029 reads it). */
const ENTRY_TEXT = `SELECT group_concat(json_extract(r."data", '$."' || f."slug" || '"'), ' ') FROM "fields" f CROSS JOIN "field_kinds" k ON k."type" = f."type" WHERE f."base_id" = r."base_id" AND k."searched"`;

/**
 * The tag a space's words carry in the index: a fixed-length hash of its id, so that a space's
 * terms are a range of their own and a query reads only its space's terms and rows (FTS5 cannot be
 * told which rows to look in; it can be asked for terms). Two spaces sharing a tag would only read
 * each other's terms; which records a search answers is decided by the query's join on the space.
 */
export const spaceTag = (spaceId: string): string => `s${Bun.hash.wyhash(spaceId).toString(36).padStart(13, "0")}`;

/** A word as FTS5's unicode61 tokenizer finds words: letters, digits and private-use characters. */
const WORD = /[\p{L}\p{N}\p{Co}]+/gu;

/** Text as the index holds it: each word after its space's tag. */
const tagged = (text: string, tag: string): string => text.normalize("NFKC").replace(WORD, `${tag}$&`);

/** Notes every record of a base holding a field of `type` as touched, for `flushStagedSearch` to index again: what search reads of that type changed. */
export function stageRecordsWithFieldType(sqlite: Database, type: string): void {
  sqlite.query(`INSERT INTO "record_search_staged"("record_rowid", "indexed") SELECT r.rowid, r."status" = 'active' FROM "records" r WHERE r."base_id" IN (SELECT "base_id" FROM "fields" WHERE "type" = ?) ON CONFLICT DO NOTHING`).run(type);
}

/**
 * Brings the search entries of the records this transaction touched (noted by the triggers of
 * migrations/0024) up to date, whatever their number: the entries the index held go (one
 * statement), then each touched record that is active now gets its entry from its values as they
 * stand, its words tagged with its space (`spaceTag`). Runs in the transaction, before its COMMIT and outside any savepoint, so FTS5 writes each
 * transaction's words once, and a record written twice is indexed once: every COMMIT of a write to
 * `records` runs it first (the write queue's, a dump's load, the migrations').
 */
export function flushStagedSearch(sqlite: Database): void {
  if (!sqlite.query(`SELECT 1 FROM "record_search_staged" LIMIT 1`).get()) return;
  sqlite.query(`DELETE FROM "record_search" WHERE rowid IN (SELECT "record_rowid" FROM "record_search_staged" WHERE "indexed")`).run();
  const entries = sqlite.query(`SELECT r.rowid, r."space_id", (${ENTRY_TEXT}) FROM "record_search_staged" s CROSS JOIN "records" r ON r.rowid = s."record_rowid" WHERE r."status" = 'active'`).values() as [number, string, string | null][];
  if (entries.length > 0) {
    const insert = sqlite.query<unknown, [number, string | null]>(`INSERT INTO "record_search"(rowid, "text") VALUES (?1, ?2)`);
    const tags = new Map<string, string>();
    for (const [rowid, spaceId, text] of entries) {
      let tag = tags.get(spaceId);
      if (tag === undefined) tags.set(spaceId, (tag = spaceTag(spaceId)));
      insert.run(rowid, text === null ? null : tagged(text, tag));
    }
    // A large write (an import's part, a bulk request, a load) leaves many segments: merge a bounded step of them in the same write.
    if (entries.length >= BULK_ENTRIES) mergeSearchIndex(sqlite, BULK_MERGE_PAGES);
  }
  sqlite.query(`DELETE FROM "record_search_staged"`).run();
}

/** `flushStagedSearch` for each COMMIT of a store, once its schema has the staging table and the field kinds: a database not migrated yet stages nothing. */
export function stagedSearchFlusher(sqlite: Database): () => void {
  let staging = false;
  return () => {
    staging ||= (sqlite.query(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('record_search_staged', 'field_kinds')`).get() as { n: number }).n === 2;
    if (staging) flushStagedSearch(sqlite);
  };
}

/** A write that indexes this many records also merges `BULK_MERGE_PAGES` pages of the index's segments. */
const BULK_ENTRIES = 1000;
const BULK_MERGE_PAGES = 256;

/**
 * One bounded step of merging the search index's segments (FTS5's `merge`, about `pages` pages of
 * work): an index grown by many writes holds many small segments, and every word looked up seeks
 * each of them, in every space (a search in a small space beside 100,000 records elsewhere: 152 µs,
 * 92 µs merged). Answers whether the step found work. Run by the daily upkeep, a step a write.
 */
export function mergeSearchIndex(sqlite: Database, pages = 500): boolean {
  const before = sqlite.query<{ n: number }, []>(`SELECT total_changes() AS "n"`).get()!.n;
  sqlite.query(`INSERT INTO "record_search"("record_search", "rank") VALUES ('merge', ?1)`).run(pages);
  return sqlite.query<{ n: number }, []>(`SELECT total_changes() AS "n"`).get()!.n > before + 1;
}
