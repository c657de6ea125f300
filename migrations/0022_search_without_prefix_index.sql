-- The search index without its prefix indexes or its space column, and written only when a
-- record's searched text or its being active changes (docs/performance.md, "Search"). The space
-- column made every query rank a phrase as large as the space (bm25 counts each phrase's rows:
-- 3.3 ms of a 4 ms search at 200,000 records); a record's space is read from the record, which
-- the query joins anyway. Prefix indexes ('2 3') tripled what each word of a write stored, while
-- a query's words, matched as prefixes, seek the term range of the main index just as well. The update trigger no longer rewrites the entry of a record whose
-- write left the values of its searched fields alone (a number edited, a stored formula recomputed
-- by the upkeep); a field being converted counts as searched, so a conversion to or from a text
-- kind re-indexes each record as the upkeep converts it (a number 5 and a text "5" differ).
DROP TRIGGER `records_search_insert`;
--> statement-breakpoint
DROP TRIGGER `records_search_update`;
--> statement-breakpoint
DROP TRIGGER `records_search_delete`;
--> statement-breakpoint
DROP TABLE `record_search`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `record_search` USING fts5(text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE TRIGGER `records_search_insert` AFTER INSERT ON `records` WHEN NEW.`status` = 'active' BEGIN
  INSERT INTO `record_search`(rowid, text) VALUES (NEW.rowid,
    (SELECT group_concat(json_extract(NEW.`data`, '$."' || `slug` || '"'), ' ') FROM `fields` WHERE `base_id` = NEW.`base_id` AND `type` IN ('text', 'longtext', 'markdown', 'html', 'code', 'yaml', 'email', 'url')));
END;
--> statement-breakpoint
CREATE TRIGGER `records_search_update` AFTER UPDATE OF `data`, `status` ON `records`
WHEN OLD.`status` IS NOT NEW.`status` OR EXISTS (SELECT 1 FROM `fields` WHERE `base_id` = NEW.`base_id`
  AND (`type` IN ('text', 'longtext', 'markdown', 'html', 'code', 'yaml', 'email', 'url') OR `convert_from` IS NOT NULL)
  AND json_extract(OLD.`data`, '$."' || `slug` || '"') IS NOT json_extract(NEW.`data`, '$."' || `slug` || '"'))
BEGIN
  DELETE FROM `record_search` WHERE rowid = OLD.rowid AND OLD.`status` = 'active';
  INSERT INTO `record_search`(rowid, text) SELECT NEW.rowid,
    (SELECT group_concat(json_extract(NEW.`data`, '$."' || `slug` || '"'), ' ') FROM `fields` WHERE `base_id` = NEW.`base_id` AND `type` IN ('text', 'longtext', 'markdown', 'html', 'code', 'yaml', 'email', 'url'))
    WHERE NEW.`status` = 'active';
END;
--> statement-breakpoint
CREATE TRIGGER `records_search_delete` AFTER DELETE ON `records` WHEN OLD.`status` = 'active' BEGIN
  DELETE FROM `record_search` WHERE rowid = OLD.rowid;
END;
--> statement-breakpoint
INSERT INTO `record_search`(rowid, text)
  SELECT r.rowid,
    (SELECT group_concat(json_extract(r.`data`, '$."' || f.`slug` || '"'), ' ') FROM `fields` f WHERE f.`base_id` = r.`base_id` AND f.`type` IN ('text', 'longtext', 'markdown', 'html', 'code', 'yaml', 'email', 'url'))
  FROM `records` r WHERE r.`status` = 'active';
