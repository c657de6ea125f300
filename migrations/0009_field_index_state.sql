CREATE TABLE `dropped_fields` (
	`field_id` text PRIMARY KEY NOT NULL,
	`base_id` text NOT NULL,
	`slug` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `fields` ADD `index_state` text DEFAULT 'none' NOT NULL;--> statement-breakpoint
CREATE INDEX `fields_building_idx` ON `fields` (`id`) WHERE "fields"."index_state" = 'building';