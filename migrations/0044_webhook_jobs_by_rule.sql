-- The delivery loop reads each rule's due jobs by the rule (a space's index made every read walk the due jobs of the space's rules at their limit: a dead target's whole backlog).
DROP INDEX `webhook_jobs_space_due_idx`;--> statement-breakpoint
CREATE INDEX `webhook_jobs_rule_due_idx` ON `webhook_jobs` (`rule_id`,`due_at`);