-- Bytes nothing names any more are removed once the write that unnamed them commits
-- (src/db/content-files.ts): an asset row deleted (by itself, or with its space) or given other
-- bytes notes the hash it held, in the write's own transaction; after the COMMIT the store removes
-- each noted file no asset names. Notes a crash left are acted on when `serve` starts.
CREATE TABLE `unnamed_content` (
	`hash` text PRIMARY KEY NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TRIGGER `assets_unnamed_after_delete` AFTER DELETE ON `assets` WHEN OLD.`content_hash` IS NOT NULL BEGIN
  INSERT INTO `unnamed_content`(`hash`) VALUES (OLD.`content_hash`) ON CONFLICT DO NOTHING;
END;
--> statement-breakpoint
CREATE TRIGGER `assets_unnamed_after_update` AFTER UPDATE OF `content_hash` ON `assets`
WHEN OLD.`content_hash` IS NOT NULL AND OLD.`content_hash` IS NOT NEW.`content_hash` BEGIN
  INSERT INTO `unnamed_content`(`hash`) VALUES (OLD.`content_hash`) ON CONFLICT DO NOTHING;
END;
