CREATE TABLE `embed_links` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`node_id` text NOT NULL,
	`created_by` text NOT NULL,
	`token_hash` text NOT NULL,
	`frame_policy` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `embed_links_token_idx` ON `embed_links` (`token_hash`);--> statement-breakpoint
CREATE INDEX `embed_links_space_idx` ON `embed_links` (`space_id`,`node_id`);