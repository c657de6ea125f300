-- The search index is written once per transaction instead of once per record (docs/performance.md,
-- "Search"). FTS5 writes out what it holds in memory whenever a savepoint begins, and every write of
-- the group commit runs in its own savepoint (as does each statement whose triggers write): each
-- record became a segment of its own. The triggers now only note which records a transaction
-- touched, in `record_search_staged` (an ordinary table, so a write rolled back to its savepoint
-- takes its notes with it), and the transaction brings their entries up to date just before its
-- COMMIT, from the records as they then stand (`src/db/search-index.ts`). `indexed`: whether the
-- index held the record's entry when the transaction first touched it.
CREATE TABLE `record_search_staged` (
	`record_rowid` integer PRIMARY KEY NOT NULL,
	`indexed` integer NOT NULL
);
--> statement-breakpoint
DROP TRIGGER `records_search_insert`;
--> statement-breakpoint
DROP TRIGGER `records_search_update`;
--> statement-breakpoint
DROP TRIGGER `records_search_delete`;
--> statement-breakpoint
CREATE TRIGGER `records_search_insert` AFTER INSERT ON `records` WHEN NEW.`status` = 'active' BEGIN
  INSERT INTO `record_search_staged`(`record_rowid`, `indexed`) VALUES (NEW.rowid, 0) ON CONFLICT DO NOTHING;
END;
--> statement-breakpoint
CREATE TRIGGER `records_search_update` AFTER UPDATE OF `data`, `status` ON `records`
WHEN OLD.`status` IS NOT NEW.`status` OR EXISTS (SELECT 1 FROM `fields` WHERE `base_id` = NEW.`base_id`
  AND (`type` IN ('text', 'longtext', 'markdown', 'html', 'code', 'yaml', 'email', 'url') OR `convert_from` IS NOT NULL)
  AND json_extract(OLD.`data`, '$."' || `slug` || '"') IS NOT json_extract(NEW.`data`, '$."' || `slug` || '"'))
BEGIN
  INSERT INTO `record_search_staged`(`record_rowid`, `indexed`) VALUES (NEW.rowid, OLD.`status` = 'active') ON CONFLICT DO NOTHING;
END;
--> statement-breakpoint
CREATE TRIGGER `records_search_delete` AFTER DELETE ON `records` WHEN OLD.`status` = 'active' BEGIN
  INSERT INTO `record_search_staged`(`record_rowid`, `indexed`) VALUES (OLD.rowid, 1) ON CONFLICT DO NOTHING;
END;
