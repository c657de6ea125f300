-- The people a space's rows name as actors (authors, reviewers, creators), kept by the triggers below (each inserts only a pair not yet there: an upsert's own conflict rule would override an OR IGNORE inside its trigger): a dump's users list reads them by the space's key, at the cost of its people, never of its rows.
CREATE TABLE `space_people` (
	`space_id` text NOT NULL REFERENCES `spaces`(`id`) ON DELETE CASCADE,
	`user_id` text NOT NULL,
	PRIMARY KEY(`space_id`, `user_id`)
) WITHOUT ROWID;--> statement-breakpoint
CREATE TRIGGER `space_people_views_created_by_after_insert` AFTER INSERT ON `views` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_views_created_by_after_update` AFTER UPDATE OF `created_by` ON `views` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_assets_created_by_after_insert` AFTER INSERT ON `assets` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_assets_created_by_after_update` AFTER UPDATE OF `created_by` ON `assets` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_forms_created_by_after_insert` AFTER INSERT ON `forms` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_forms_created_by_after_update` AFTER UPDATE OF `created_by` ON `forms` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_node_principals_granted_by_after_insert` AFTER INSERT ON `node_principals` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`granted_by` WHERE NEW.`granted_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`granted_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_node_principals_granted_by_after_update` AFTER UPDATE OF `granted_by` ON `node_principals` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`granted_by` WHERE NEW.`granted_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`granted_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_records_created_by_after_insert` AFTER INSERT ON `records` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_records_created_by_after_update` AFTER UPDATE OF `created_by` ON `records` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_records_updated_by_after_insert` AFTER INSERT ON `records` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`updated_by` WHERE NEW.`updated_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`updated_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_records_updated_by_after_update` AFTER UPDATE OF `updated_by` ON `records` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`updated_by` WHERE NEW.`updated_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`updated_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_commits_author_id_after_insert` AFTER INSERT ON `commits` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`author_id` WHERE NEW.`author_id` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`author_id`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_commits_author_id_after_update` AFTER UPDATE OF `author_id` ON `commits` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`author_id` WHERE NEW.`author_id` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`author_id`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_change_requests_submitted_by_after_insert` AFTER INSERT ON `change_requests` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`submitted_by` WHERE NEW.`submitted_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`submitted_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_change_requests_submitted_by_after_update` AFTER UPDATE OF `submitted_by` ON `change_requests` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`submitted_by` WHERE NEW.`submitted_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`submitted_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_reviews_reviewer_id_after_insert` AFTER INSERT ON `reviews` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT `space_id`, NEW.`reviewer_id` FROM `change_requests` WHERE `id` = NEW.`change_request_id` AND NEW.`reviewer_id` IS NOT NULL AND `space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` AS `known` WHERE `known`.`space_id` = `change_requests`.`space_id` AND `known`.`user_id` = NEW.`reviewer_id`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_reviews_reviewer_id_after_update` AFTER UPDATE OF `reviewer_id` ON `reviews` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT `space_id`, NEW.`reviewer_id` FROM `change_requests` WHERE `id` = NEW.`change_request_id` AND NEW.`reviewer_id` IS NOT NULL AND `space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` AS `known` WHERE `known`.`space_id` = `change_requests`.`space_id` AND `known`.`user_id` = NEW.`reviewer_id`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_comments_author_id_after_insert` AFTER INSERT ON `comments` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`author_id` WHERE NEW.`author_id` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`author_id`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_comments_author_id_after_update` AFTER UPDATE OF `author_id` ON `comments` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`author_id` WHERE NEW.`author_id` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`author_id`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_audit_events_actor_id_after_insert` AFTER INSERT ON `audit_events` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`actor_id` WHERE NEW.`actor_id` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`actor_id`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_audit_events_actor_id_after_update` AFTER UPDATE OF `actor_id` ON `audit_events` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`actor_id` WHERE NEW.`actor_id` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`actor_id`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_webhook_rules_created_by_after_insert` AFTER INSERT ON `webhook_rules` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
CREATE TRIGGER `space_people_webhook_rules_created_by_after_update` AFTER UPDATE OF `created_by` ON `webhook_rules` BEGIN
	INSERT INTO `space_people` (`space_id`, `user_id`) SELECT NEW.`space_id`, NEW.`created_by` WHERE NEW.`created_by` IS NOT NULL AND NEW.`space_id` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `space_people` WHERE `space_id` = NEW.`space_id` AND `user_id` = NEW.`created_by`);
END;--> statement-breakpoint
INSERT OR IGNORE INTO `space_people` (`space_id`, `user_id`)
SELECT `space_id`, `created_by` FROM `views` WHERE `created_by` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT `space_id`, `created_by` FROM `assets` WHERE `created_by` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT `space_id`, `created_by` FROM `forms` WHERE `created_by` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT `space_id`, `granted_by` FROM `node_principals` WHERE `granted_by` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT `space_id`, `created_by` FROM `records` WHERE `created_by` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT `space_id`, `updated_by` FROM `records` WHERE `updated_by` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT `space_id`, `author_id` FROM `commits` WHERE `author_id` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT `space_id`, `submitted_by` FROM `change_requests` WHERE `submitted_by` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT p.`space_id`, t.`reviewer_id` FROM `reviews` t JOIN `change_requests` p ON p.`id` = t.`change_request_id` WHERE t.`reviewer_id` IS NOT NULL
UNION SELECT `space_id`, `author_id` FROM `comments` WHERE `author_id` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT `space_id`, `actor_id` FROM `audit_events` WHERE `actor_id` IS NOT NULL AND `space_id` IS NOT NULL
UNION SELECT `space_id`, `created_by` FROM `webhook_rules` WHERE `created_by` IS NOT NULL AND `space_id` IS NOT NULL;
