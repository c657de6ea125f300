CREATE TABLE `audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text,
	`actor_id` text NOT NULL,
	`actor_key_id` text,
	`action` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text NOT NULL,
	`base_id` text,
	`metadata` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_events_space_idx` ON `audit_events` (`space_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_events_account_idx` ON `audit_events` (`actor_id`,`id`) WHERE "audit_events"."space_id" IS NULL;--> statement-breakpoint
CREATE INDEX `commits_activity_idx` ON `commits` (`space_id`,`id`) WHERE "commits"."parent_commit_id" IS NOT NULL;