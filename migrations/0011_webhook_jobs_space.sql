-- Pending webhook jobs carry their rule's space: the delivery loop shares its slots between spaces
-- and reads each space's due jobs through (space_id, due_at), never past another space's backlog
-- (src/webhooks/worker.ts). Existing jobs take their space from their rule.
CREATE TABLE `__new_webhook_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`rule_id` text NOT NULL,
	`space_id` text NOT NULL,
	`event_seq` integer NOT NULL,
	`attempt` integer NOT NULL,
	`due_at` integer NOT NULL,
	FOREIGN KEY (`rule_id`) REFERENCES `webhook_rules`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_webhook_jobs` (`id`, `rule_id`, `space_id`, `event_seq`, `attempt`, `due_at`)
  SELECT j.`id`, j.`rule_id`, r.`space_id`, j.`event_seq`, j.`attempt`, j.`due_at`
  FROM `webhook_jobs` j JOIN `webhook_rules` r ON r.`id` = j.`rule_id`;--> statement-breakpoint
DROP TABLE `webhook_jobs`;--> statement-breakpoint
ALTER TABLE `__new_webhook_jobs` RENAME TO `webhook_jobs`;--> statement-breakpoint
CREATE INDEX `webhook_jobs_space_due_idx` ON `webhook_jobs` (`space_id`,`due_at`);--> statement-breakpoint
CREATE INDEX `webhook_jobs_due_idx` ON `webhook_jobs` (`due_at`);
