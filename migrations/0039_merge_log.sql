CREATE TABLE `instance` (
	`id` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `merge_log` (
	`space_id` text NOT NULL,
	`seq` integer NOT NULL,
	`commit_id` text NOT NULL,
	`change_request_id` text NOT NULL,
	PRIMARY KEY(`space_id`, `seq`),
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `instance` (`id`, `created_at`) VALUES ('ins_' || lower(hex(randomblob(10))), CAST(strftime('%s', 'now') AS INTEGER) * 1000);
