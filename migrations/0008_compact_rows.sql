-- The tables that grow with every record, made smaller (docs/performance.md, "Bytes per record"):
-- moments as milliseconds since the epoch (src/db/columns.ts: instant); a change request's attribution
-- as [displayName, ownerName, channel] and its review policy as the approvals it requires; no
-- operations.merged_record_id (a landed operation's target); a direct create's commit holds its change
-- request's attribution and policy and stands for it (src/changes/direct.ts). migrate() turns foreign
-- keys off around migrations, so dropping the old change_requests cascades nothing.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_change_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`base_id` text,
	`node_id` text,
	`target_type` text NOT NULL,
	`status` text NOT NULL,
	`submitted_by` text NOT NULL,
	`source_attribution` text NOT NULL,
	`source_meta` text NOT NULL,
	`review_policy_snapshot` integer NOT NULL,
	`merge_summary` text NOT NULL,
	`rejected_reason` text,
	`idempotency_key` text,
	`reviewed_at` integer,
	`merged_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
INSERT INTO `__new_change_requests`("id", "space_id", "base_id", "node_id", "target_type", "status", "submitted_by", "source_attribution", "source_meta", "review_policy_snapshot", "merge_summary", "rejected_reason", "idempotency_key", "reviewed_at", "merged_at", "created_at", "updated_at") SELECT "id", "space_id", "base_id", "node_id", "target_type", "status", "submitted_by", json_array(json_extract("source_attribution", '$.displayName'), json_extract("source_attribution", '$.ownerName'), json_extract("source_attribution", '$.channel')), "source_meta", coalesce(json_extract("review_policy_snapshot", '$.requiredApprovals'), 1), "merge_summary", "rejected_reason", "idempotency_key", CAST(round(unixepoch("reviewed_at", 'subsec') * 1000) AS INTEGER), CAST(round(unixepoch("merged_at", 'subsec') * 1000) AS INTEGER), CAST(round(unixepoch("created_at", 'subsec') * 1000) AS INTEGER), CAST(round(unixepoch("updated_at", 'subsec') * 1000) AS INTEGER) FROM `change_requests`;--> statement-breakpoint
DROP TABLE `change_requests`;--> statement-breakpoint
ALTER TABLE `__new_change_requests` RENAME TO `change_requests`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `change_requests_space_idx` ON `change_requests` (`space_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `change_requests_newest_idx` ON `change_requests` (`space_id`,`id`);--> statement-breakpoint
CREATE INDEX `change_requests_submitter_idx` ON `change_requests` (`space_id`,`submitted_by`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `change_requests_idempotency_idx` ON `change_requests` (`base_id`,`submitted_by`,`idempotency_key`) WHERE "change_requests"."idempotency_key" IS NOT NULL;--> statement-breakpoint
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
	`source_attribution` text,
	`review_policy_snapshot` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_commits`("id", "space_id", "base_id", "node_id", "operation_id", "record_id", "parent_commit_id", "message", "author_id", "target_type", "kind", "payload", "source_attribution", "review_policy_snapshot", "created_at") SELECT "id", "space_id", "base_id", "node_id", "operation_id", "record_id", "parent_commit_id", "message", "author_id", "target_type", "kind", "payload", NULL, NULL, CAST(round(unixepoch("created_at", 'subsec') * 1000) AS INTEGER) FROM `commits`;--> statement-breakpoint
DROP TABLE `commits`;--> statement-breakpoint
ALTER TABLE `__new_commits` RENAME TO `commits`;--> statement-breakpoint
CREATE INDEX `commits_record_idx` ON `commits` (`record_id`,`id`);--> statement-breakpoint
CREATE INDEX `commits_direct_idx` ON `commits` (`space_id`,`id`) WHERE "commits"."source_attribution" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `commits_direct_author_idx` ON `commits` (`space_id`,`author_id`,`id`) WHERE "commits"."source_attribution" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `__new_operations` (
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
	`delete_mode` text,
	`position` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`change_request_id`) REFERENCES `change_requests`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
INSERT INTO `__new_operations`("id", "change_request_id", "base_id", "node_id", "target_type", "kind", "status", "target_record_id", "base_commit_id", "head_commit_id", "delete_mode", "position", "created_at", "updated_at") SELECT "id", "change_request_id", "base_id", "node_id", "target_type", "kind", "status", "target_record_id", "base_commit_id", "head_commit_id", "delete_mode", "position", CAST(round(unixepoch("created_at", 'subsec') * 1000) AS INTEGER), CAST(round(unixepoch("updated_at", 'subsec') * 1000) AS INTEGER) FROM `operations`;--> statement-breakpoint
DROP TABLE `operations`;--> statement-breakpoint
ALTER TABLE `__new_operations` RENAME TO `operations`;--> statement-breakpoint
CREATE INDEX `operations_change_request_idx` ON `operations` (`change_request_id`,`position`);--> statement-breakpoint
CREATE INDEX `operations_record_idx` ON `operations` (`target_record_id`);--> statement-breakpoint
CREATE TABLE `__new_records` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`base_id` text NOT NULL,
	`status` text NOT NULL,
	`data` text NOT NULL,
	`auto_number` integer NOT NULL,
	`head_commit_id` text NOT NULL,
	`created_by` text NOT NULL,
	`updated_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`archived_at` integer,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_records`("id", "space_id", "base_id", "status", "data", "auto_number", "head_commit_id", "created_by", "updated_by", "created_at", "updated_at", "archived_at") SELECT "id", "space_id", "base_id", "status", "data", "auto_number", "head_commit_id", "created_by", "updated_by", CAST(round(unixepoch("created_at", 'subsec') * 1000) AS INTEGER), CAST(round(unixepoch("updated_at", 'subsec') * 1000) AS INTEGER), CAST(round(unixepoch("archived_at", 'subsec') * 1000) AS INTEGER) FROM `records`;--> statement-breakpoint
DROP TABLE `records`;--> statement-breakpoint
ALTER TABLE `__new_records` RENAME TO `records`;--> statement-breakpoint
CREATE INDEX `records_created_idx` ON `records` (`base_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `records_updated_idx` ON `records` (`base_id`,`status`,`updated_at`,`id`);