-- Full-text search over records (src/search/search.ts). An FTS5 table keyed by the record's rowid
-- that keeps no copy of the text (contentless, deletable): `space` holds the space id without its
-- prefix (so a query seeks its own space's entries), `text` the record's values of the searched
-- field types (SEARCHED_TYPES in src/content/field-types.ts; test/search.test.ts checks both lists
-- agree). Triggers keep it in the transaction of every write of a record, whatever the path:
-- only active records are indexed.
CREATE VIRTUAL TABLE `record_search` USING fts5(space, text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', prefix='2 3');
--> statement-breakpoint
CREATE TRIGGER `records_search_insert` AFTER INSERT ON `records` WHEN NEW.`status` = 'active' BEGIN
  INSERT INTO `record_search`(rowid, space, text) VALUES (NEW.rowid, substr(NEW.`space_id`, 5),
    (SELECT group_concat(json_extract(NEW.`data`, '$."' || `slug` || '"'), ' ') FROM `fields` WHERE `base_id` = NEW.`base_id` AND `type` IN ('text', 'longtext', 'markdown', 'html', 'code', 'yaml', 'email', 'url')));
END;
--> statement-breakpoint
CREATE TRIGGER `records_search_update` AFTER UPDATE OF `data`, `status` ON `records` BEGIN
  DELETE FROM `record_search` WHERE rowid = OLD.rowid AND OLD.`status` = 'active';
  INSERT INTO `record_search`(rowid, space, text) SELECT NEW.rowid, substr(NEW.`space_id`, 5),
    (SELECT group_concat(json_extract(NEW.`data`, '$."' || `slug` || '"'), ' ') FROM `fields` WHERE `base_id` = NEW.`base_id` AND `type` IN ('text', 'longtext', 'markdown', 'html', 'code', 'yaml', 'email', 'url'))
    WHERE NEW.`status` = 'active';
END;
--> statement-breakpoint
CREATE TRIGGER `records_search_delete` AFTER DELETE ON `records` WHEN OLD.`status` = 'active' BEGIN
  DELETE FROM `record_search` WHERE rowid = OLD.rowid;
END;
--> statement-breakpoint
INSERT INTO `record_search`(rowid, space, text)
  SELECT r.rowid, substr(r.`space_id`, 5),
    (SELECT group_concat(json_extract(r.`data`, '$."' || f.`slug` || '"'), ' ') FROM `fields` f WHERE f.`base_id` = r.`base_id` AND f.`type` IN ('text', 'longtext', 'markdown', 'html', 'code', 'yaml', 'email', 'url'))
  FROM `records` r WHERE r.`status` = 'active';
