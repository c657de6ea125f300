-- drizzle-kit's table, made WITHOUT ROWID by hand (drizzle's schema cannot declare it; the snapshot holds the
-- same columns and keys). The links of relation fields (src/content/links.ts), each stored once under the
-- field that owns the pair: keyed by field and source record, indexed by field and target record.
CREATE TABLE `record_links` (
	`field_id` text NOT NULL,
	`source_record_id` text NOT NULL,
	`target_record_id` text NOT NULL,
	`id` text NOT NULL,
	`space_id` text NOT NULL,
	`base_id` text NOT NULL,
	`target_base_id` text NOT NULL,
	`commit_id` text NOT NULL,
	`position` integer NOT NULL,
	`target_position` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`field_id`, `source_record_id`, `target_record_id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `record_links_target_idx` ON `record_links` (`field_id`,`target_record_id`,`target_position`);