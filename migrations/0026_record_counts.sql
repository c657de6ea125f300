-- How many active and archived records each base holds, kept by triggers on `records` in the
-- write's own transaction (docs/performance.md, "Counts"): an unfiltered count reads one row
-- instead of scanning the base (5.1 ms at 135,000 records, and growing with it). Derived data, like
-- `field_values`: not in a dump, made again by the triggers as a dump's records go in.
CREATE TABLE `base_record_counts` (
	`base_id` text PRIMARY KEY NOT NULL REFERENCES `bases`(`id`) ON DELETE CASCADE,
	`active` integer NOT NULL DEFAULT 0,
	`archived` integer NOT NULL DEFAULT 0
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `base_record_counts`(`base_id`, `active`, `archived`)
  SELECT `base_id`, sum(`status` = 'active'), sum(`status` = 'archived') FROM `records` GROUP BY `base_id`;
--> statement-breakpoint
CREATE TRIGGER `record_counts_after_insert` AFTER INSERT ON `records` BEGIN
  INSERT INTO `base_record_counts`(`base_id`, `active`, `archived`) VALUES (NEW.`base_id`, NEW.`status` = 'active', NEW.`status` = 'archived')
    ON CONFLICT(`base_id`) DO UPDATE SET `active` = `active` + excluded.`active`, `archived` = `archived` + excluded.`archived`;
END;
--> statement-breakpoint
CREATE TRIGGER `record_counts_after_update` AFTER UPDATE OF `status`, `base_id` ON `records`
WHEN OLD.`status` IS NOT NEW.`status` OR OLD.`base_id` IS NOT NEW.`base_id` BEGIN
  UPDATE `base_record_counts` SET `active` = `active` - (OLD.`status` = 'active'), `archived` = `archived` - (OLD.`status` = 'archived') WHERE `base_id` = OLD.`base_id`;
  INSERT INTO `base_record_counts`(`base_id`, `active`, `archived`) VALUES (NEW.`base_id`, NEW.`status` = 'active', NEW.`status` = 'archived')
    ON CONFLICT(`base_id`) DO UPDATE SET `active` = `active` + excluded.`active`, `archived` = `archived` + excluded.`archived`;
END;
--> statement-breakpoint
CREATE TRIGGER `record_counts_after_delete` AFTER DELETE ON `records` BEGIN
  UPDATE `base_record_counts` SET `active` = `active` - (OLD.`status` = 'active'), `archived` = `archived` - (OLD.`status` = 'archived') WHERE `base_id` = OLD.`base_id`;
END;
