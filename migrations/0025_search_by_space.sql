-- Each space's words are its own terms in the search index (docs/performance.md, "Search"): every
-- word of a record's entry is written after a tag of its space (`spaceTag` in
-- src/db/search-index.ts), and a query asks for its space's tag before each word, so a search
-- reads the terms and rows of its own space only, however many records other spaces hold. The
-- index is emptied and every active record staged; `migrate` writes their entries (tagged, which
-- SQL cannot do) when it flushes the staged records after the migrations.
INSERT INTO `record_search`(`record_search`) VALUES ('delete-all');
--> statement-breakpoint
DELETE FROM `record_search_staged`;
--> statement-breakpoint
INSERT INTO `record_search_staged`(`record_rowid`, `indexed`) SELECT rowid, 0 FROM `records` WHERE `status` = 'active';
