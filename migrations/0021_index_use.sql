ALTER TABLE `fields` ADD `index_used_at` text;--> statement-breakpoint
-- Indexes made before this rule count as used now: each has the rule's full time to be needed again.
UPDATE `fields` SET `index_used_at` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE `index_state` != 'none';
