CREATE TABLE `deleted_fields` (
	`id` text PRIMARY KEY NOT NULL,
	`base_id` text NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`required` integer NOT NULL,
	`position` integer NOT NULL,
	`options` text NOT NULL,
	`created_at` text NOT NULL,
	`deleted_at` text NOT NULL,
	FOREIGN KEY (`base_id`) REFERENCES `bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deleted_fields_base_idx` ON `deleted_fields` (`base_id`,`deleted_at`);