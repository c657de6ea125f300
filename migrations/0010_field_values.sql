-- Custom (drizzle-kit generate --custom): drizzle's schema cannot declare a WITHOUT ROWID table or triggers.
-- One table holds the sortable value of every indexed field of every record, keyed by field, instead of one
-- partial expression index per field on `records` (docs/performance.md, "One table of field values").
-- Its values are written by the triggers below, in the statement that changes the record. A value is the
-- field's sortable form as listings compare it (`sortableSql` in src/content/field-sql.ts): the column of a
-- computed field, else the stored value, unset as -1.7976931348623157e+308 (numbers, checkboxes) or ''.
-- A migration that rebuilds `records` or `fields` drops their triggers: it must create them again
-- (`migrate` refuses to finish without them).
CREATE TABLE `field_values` (
	`field_id` text NOT NULL,
	`status` text NOT NULL,
	`value` blob NOT NULL,
	`created_at` integer NOT NULL,
	`record_id` text NOT NULL,
	PRIMARY KEY (`field_id`, `status`, `value`, `created_at`, `record_id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TRIGGER `field_values_after_insert` AFTER INSERT ON `records` BEGIN
	INSERT OR IGNORE INTO `field_values` SELECT f.`id`, NEW.`status`, CASE f.`type` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') THEN -1.7976931348623157e+308 ELSE '' END) END, NEW.`created_at`, NEW.`id`
	FROM `fields` f WHERE f.`base_id` = NEW.`base_id` AND f.`index_state` != 'none';
END;
--> statement-breakpoint
CREATE TRIGGER `field_values_after_update` AFTER UPDATE OF `data`, `status`, `updated_by` ON `records` BEGIN
	DELETE FROM `field_values` WHERE (`field_id`, `status`, `value`, `created_at`, `record_id`) IN (
		SELECT f.`id`, OLD.`status`, CASE f.`type` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') THEN -1.7976931348623157e+308 ELSE '' END) END, OLD.`created_at`, OLD.`id`
		FROM `fields` f WHERE f.`base_id` = OLD.`base_id` AND f.`index_state` != 'none' AND (OLD.`status` IS NOT NEW.`status` OR CASE f.`type` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') THEN -1.7976931348623157e+308 ELSE '' END) END IS NOT CASE f.`type` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') THEN -1.7976931348623157e+308 ELSE '' END) END));
	INSERT OR IGNORE INTO `field_values` SELECT f.`id`, NEW.`status`, CASE f.`type` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') THEN -1.7976931348623157e+308 ELSE '' END) END, NEW.`created_at`, NEW.`id`
	FROM `fields` f WHERE f.`base_id` = NEW.`base_id` AND f.`index_state` != 'none' AND (OLD.`status` IS NOT NEW.`status` OR CASE f.`type` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') THEN -1.7976931348623157e+308 ELSE '' END) END IS NOT CASE f.`type` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') THEN -1.7976931348623157e+308 ELSE '' END) END);
END;
--> statement-breakpoint
CREATE TRIGGER `field_values_after_delete` AFTER DELETE ON `records` BEGIN
	DELETE FROM `field_values` WHERE (`field_id`, `status`, `value`, `created_at`, `record_id`) IN (
		SELECT f.`id`, OLD.`status`, CASE f.`type` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') THEN -1.7976931348623157e+308 ELSE '' END) END, OLD.`created_at`, OLD.`id`
		FROM `fields` f WHERE f.`base_id` = OLD.`base_id` AND f.`index_state` != 'none');
END;
--> statement-breakpoint
CREATE TRIGGER `dropped_fields_after_delete` AFTER DELETE ON `fields` BEGIN
	INSERT OR IGNORE INTO `dropped_fields` (`field_id`, `base_id`, `slug`) VALUES (OLD.`id`, OLD.`base_id`, OLD.`slug`);
END;
--> statement-breakpoint
-- The fields of a database made before: every field a listing can filter and sort by is filled here, at once
-- (the server is not serving yet), and is ready.
UPDATE `fields` SET `index_state` = 'ready' WHERE `type` NOT IN ('multiselect', 'json', 'created_time', 'updated_time');
--> statement-breakpoint
INSERT OR IGNORE INTO `field_values` SELECT f.`id`, r.`status`, CASE f.`type` WHEN 'auto_number' THEN r.`auto_number` WHEN 'created_by' THEN r.`created_by` WHEN 'updated_by' THEN r.`updated_by` ELSE coalesce(json_extract(r.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') THEN -1.7976931348623157e+308 ELSE '' END) END, r.`created_at`, r.`id`
FROM `fields` f JOIN `records` r ON r.`base_id` = f.`base_id` WHERE f.`index_state` != 'none';
