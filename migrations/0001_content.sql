CREATE TABLE `change_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`base_id` text,
	`node_id` text,
	`target_type` text NOT NULL,
	`status` text NOT NULL,
	`submitted_by` text NOT NULL,
	`source_attribution` text NOT NULL,
	`source_meta` text NOT NULL,
	`review_policy_snapshot` text NOT NULL,
	`merge_summary` text NOT NULL,
	`rejected_reason` text,
	`idempotency_key` text,
	`reviewed_at` text,
	`merged_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `change_requests_space_idx` ON `change_requests` (`space_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `change_requests_submitter_idx` ON `change_requests` (`space_id`,`submitted_by`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `change_requests_idempotency_idx` ON `change_requests` (`base_id`,`submitted_by`,`idempotency_key`) WHERE "change_requests"."idempotency_key" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `commits` (
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
	`payload` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `commits_record_idx` ON `commits` (`record_id`,`id`);--> statement-breakpoint
CREATE INDEX `commits_operation_idx` ON `commits` (`operation_id`,`id`);--> statement-breakpoint
CREATE TABLE `operations` (
	`id` text PRIMARY KEY NOT NULL,
	`change_request_id` text NOT NULL,
	`base_id` text,
	`node_id` text,
	`target_type` text NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`target_record_id` text,
	`base_commit_id` text,
	`head_commit_id` text NOT NULL,
	`merged_record_id` text,
	`delete_mode` text,
	`position` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`change_request_id`) REFERENCES `change_requests`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `operations_change_request_idx` ON `operations` (`change_request_id`,`position`);--> statement-breakpoint
CREATE INDEX `operations_record_idx` ON `operations` (`target_record_id`);--> statement-breakpoint
CREATE TABLE `reviews` (
	`id` text PRIMARY KEY NOT NULL,
	`change_request_id` text NOT NULL,
	`reviewer_id` text NOT NULL,
	`verdict` text NOT NULL,
	`reason` text,
	`visible_operation_heads` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`change_request_id`) REFERENCES `change_requests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reviews_reviewer_idx` ON `reviews` (`change_request_id`,`reviewer_id`);--> statement-breakpoint
CREATE TABLE `bases` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`node_id` text NOT NULL,
	`review_policy` text NOT NULL,
	`last_auto_number` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `bases_node_id_unique` ON `bases` (`node_id`);--> statement-breakpoint
CREATE TABLE `fields` (
	`id` text PRIMARY KEY NOT NULL,
	`base_id` text NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`required` integer DEFAULT false NOT NULL,
	`position` integer NOT NULL,
	`options` text DEFAULT '{}' NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `fields_slug_idx` ON `fields` (`base_id`,`slug`);--> statement-breakpoint
CREATE TABLE `records` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`base_id` text NOT NULL,
	`status` text NOT NULL,
	`data` text NOT NULL,
	`auto_number` integer NOT NULL,
	`head_commit_id` text NOT NULL,
	`created_by` text NOT NULL,
	`updated_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`archived_at` text,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `records_created_idx` ON `records` (`base_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `records_updated_idx` ON `records` (`base_id`,`status`,`updated_at`,`id`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`base_id` text,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade
);
