ALTER TABLE `remotes` ADD `last_sync_at` integer;--> statement-breakpoint
ALTER TABLE `remotes` ADD `next_sync_at` integer;