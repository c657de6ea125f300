CREATE TABLE `imports` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`base_id` text NOT NULL,
	`created_by` text NOT NULL,
	`idempotency_key` text NOT NULL,
	`status` text NOT NULL,
	`row_count` integer NOT NULL,
	`rows_merged` integer NOT NULL,
	`change_requests` text NOT NULL,
	`reason` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `imports_key_idx` ON `imports` (`base_id`,`created_by`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `imports_base_idx` ON `imports` (`base_id`,`id`);--> statement-breakpoint
CREATE INDEX `imports_running_idx` ON `imports` (`id`) WHERE "imports"."status" = 'running';