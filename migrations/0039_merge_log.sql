CREATE TABLE `instance` (
	`id` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `merge_log` (
	`seq` integer PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`commit_id` text NOT NULL,
	`change_request_id` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `merge_log_space_idx` ON `merge_log` (`space_id`,`seq`);--> statement-breakpoint
INSERT INTO `instance` (`id`, `created_at`) VALUES ('ins_' || lower(hex(randomblob(10))), CAST(strftime('%s', 'now') AS INTEGER) * 1000);
