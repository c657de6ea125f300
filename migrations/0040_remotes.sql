CREATE TABLE `remote_pushes` (
	`remote_id` text NOT NULL,
	`change_request_id` text NOT NULL,
	`remote_change_request_id` text,
	`state` text NOT NULL,
	`reason` text,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`remote_id`, `change_request_id`),
	FOREIGN KEY (`remote_id`) REFERENCES `remotes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `remote_pushes_state_idx` ON `remote_pushes` (`remote_id`,`state`);--> statement-breakpoint
CREATE TABLE `remotes` (
	`id` text PRIMARY KEY NOT NULL,
	`space_id` text NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`remote_space_id` text NOT NULL,
	`remote_instance_id` text NOT NULL,
	`sealed_key` text NOT NULL,
	`pulled_seq` integer NOT NULL,
	`pushed_seq` integer NOT NULL,
	`behind` integer NOT NULL,
	`last_contact_at` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`space_id`) REFERENCES `spaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `remotes_name_idx` ON `remotes` (`space_id`,`name`);--> statement-breakpoint
ALTER TABLE `commits` ADD `origin` text;