ALTER TABLE `fields` ADD `convert_from` text;--> statement-breakpoint
CREATE INDEX `fields_converting_idx` ON `fields` (`id`) WHERE "fields"."convert_from" IS NOT NULL;