CREATE TABLE `node_shares` (
	`node_id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`scope` text NOT NULL,
	`capability` text NOT NULL,
	`password_hash` text,
	`expires_at` text,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `node_shares_space_idx` ON `node_shares` (`space_id`);