CREATE TABLE `assets` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`status` text NOT NULL,
	`file_name` text NOT NULL,
	`declared_type` text NOT NULL,
	`mime_type` text NOT NULL,
	`size` integer NOT NULL,
	`content_hash` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `assets_space_idx` ON `assets` (`space_id`,`id`);--> statement-breakpoint
CREATE INDEX `assets_hash_idx` ON `assets` (`content_hash`);