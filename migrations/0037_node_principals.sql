CREATE TABLE `node_principals` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`node_id` text NOT NULL,
	`principal_type` text NOT NULL,
	`principal_id` text NOT NULL,
	`role` text NOT NULL,
	`granted_by` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `node_principals_grant_idx` ON `node_principals` (`node_id`,`principal_type`,`principal_id`);--> statement-breakpoint
CREATE INDEX `node_principals_space_idx` ON `node_principals` (`space_id`);--> statement-breakpoint
ALTER TABLE `nodes` ADD `explicit_visibility` text;--> statement-breakpoint
CREATE INDEX `nodes_private_idx` ON `nodes` (`space_id`) WHERE "nodes"."explicit_visibility" = 'private';