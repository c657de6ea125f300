CREATE TABLE `asset_texts` (
	`asset_id` text PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`text` text,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`asset_id`) REFERENCES `assets`(`id`) ON UPDATE no action ON DELETE cascade
);
