CREATE TABLE `forms` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`node_id` text NOT NULL,
	`target_base_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`bindings` text NOT NULL,
	`page` text NOT NULL,
	`share` text NOT NULL,
	`merge_submissions` integer DEFAULT false NOT NULL,
	`submission_count` integer DEFAULT 0 NOT NULL,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `forms_node_idx` ON `forms` (`node_id`);--> statement-breakpoint
CREATE INDEX `forms_space_idx` ON `forms` (`space_id`,`id`);