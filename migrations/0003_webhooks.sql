CREATE TABLE `outbox_cursor` (
	`name` text PRIMARY KEY NOT NULL,
	`seq` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`rule_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_seq` integer,
	`event_type` text NOT NULL,
	`attempt` integer NOT NULL,
	`trigger` text NOT NULL,
	`status` text NOT NULL,
	`http_status` integer,
	`detail` text NOT NULL,
	`duration_ms` integer NOT NULL,
	`request_url` text NOT NULL,
	`next_attempt_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`rule_id`) REFERENCES `webhook_rules`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_rule_idx` ON `webhook_deliveries` (`rule_id`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`rule_id` text NOT NULL,
	`event_seq` integer NOT NULL,
	`attempt` integer NOT NULL,
	`due_at` integer NOT NULL,
	FOREIGN KEY (`rule_id`) REFERENCES `webhook_rules`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_jobs_due_idx` ON `webhook_jobs` (`due_at`);--> statement-breakpoint
CREATE TABLE `webhook_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`base_id` text,
	`name` text NOT NULL,
	`event_type` text NOT NULL,
	`action_kind` text NOT NULL,
	`target_url` text NOT NULL,
	`secret_sealed` text,
	`headers` text NOT NULL,
	`enabled` integer NOT NULL,
	`disabled_reason` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`last_triggered_at` text,
	`last_status` text,
	`failures_in_row` integer DEFAULT 0 NOT NULL,
	`failing_since` text,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_rules_space_idx` ON `webhook_rules` (`space_id`,`enabled`);