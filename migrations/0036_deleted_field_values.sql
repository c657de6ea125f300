CREATE TABLE `deleted_field_values` (
	`field_id` text NOT NULL,
	`record_id` text NOT NULL,
	`value` text NOT NULL,
	PRIMARY KEY(`field_id`, `record_id`),
	FOREIGN KEY (`field_id`) REFERENCES `deleted_fields`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`record_id`) REFERENCES `records`(`id`) ON UPDATE no action ON DELETE cascade
);
