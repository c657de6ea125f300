CREATE TABLE `node_favorites` (
	`user_id` text NOT NULL,
	`node_id` text NOT NULL,
	`space_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `node_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`node_id`) REFERENCES `nodes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `node_favorites_user_idx` ON `node_favorites` (`user_id`,`space_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `node_favorites_node_idx` ON `node_favorites` (`node_id`);--> statement-breakpoint
CREATE INDEX `node_favorites_space_idx` ON `node_favorites` (`space_id`);