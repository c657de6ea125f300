CREATE TABLE `comments` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`subject_type` text NOT NULL,
	`subject_id` text NOT NULL,
	`record_id` text,
	`change_request_id` text,
	`operation_id` text,
	`commit_id` text,
	`author_id` text NOT NULL,
	`body` text NOT NULL,
	`mentions_ai` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `comments_subject_idx` ON `comments` (`space_id`,`subject_type`,`subject_id`,`id`);--> statement-breakpoint
CREATE INDEX `comments_change_request_idx` ON `comments` (`change_request_id`,`id`) WHERE "comments"."change_request_id" IS NOT NULL;