PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_commits` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`base_id` text,
	`node_id` text,
	`operation_id` text,
	`record_id` text,
	`parent_commit_id` text,
	`message` text,
	`author_id` text NOT NULL,
	`target_type` text NOT NULL,
	`kind` text NOT NULL,
	`payload` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_commits`("id", "space_id", "base_id", "node_id", "operation_id", "record_id", "parent_commit_id", "message", "author_id", "target_type", "kind", "payload", "created_at") SELECT "id", "space_id", "base_id", "node_id", "operation_id", "record_id", "parent_commit_id", "message", "author_id", "target_type", "kind", "payload", "created_at" FROM `commits`;--> statement-breakpoint
DROP TABLE `commits`;--> statement-breakpoint
ALTER TABLE `__new_commits` RENAME TO `commits`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `commits_record_idx` ON `commits` (`record_id`,`id`);