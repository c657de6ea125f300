CREATE TABLE `field_kinds` (
	`type` text PRIMARY KEY NOT NULL,
	`record_column` text,
	`numeric` integer DEFAULT false NOT NULL,
	`searched` integer DEFAULT false NOT NULL
);--> statement-breakpoint
-- The kinds as this version knows them; the server writes them again from its registry when it starts.
INSERT INTO `field_kinds` (`type`, `record_column`, `numeric`, `searched`) VALUES
  ('text', NULL, 0, 1),
  ('longtext', NULL, 0, 1),
  ('markdown', NULL, 0, 1),
  ('html', NULL, 0, 1),
  ('code', NULL, 0, 1),
  ('yaml', NULL, 0, 1),
  ('number', NULL, 1, 0),
  ('rating', NULL, 1, 0),
  ('checkbox', NULL, 1, 0),
  ('date', NULL, 0, 0),
  ('select', NULL, 0, 0),
  ('multiselect', NULL, 0, 0),
  ('url', NULL, 0, 1),
  ('email', NULL, 0, 1),
  ('phone', NULL, 0, 0),
  ('json', NULL, 0, 0),
  ('relation', NULL, 0, 0),
  ('attachment', NULL, 0, 0),
  ('created_time', 'created_at', 0, 0),
  ('updated_time', 'updated_at', 0, 0),
  ('created_by', 'created_by', 0, 0),
  ('updated_by', 'updated_by', 0, 0),
  ('auto_number', 'auto_number', 0, 0),
  ('lookup', NULL, 0, 0),
  ('formula', NULL, 0, 0);--> statement-breakpoint
DROP TRIGGER `field_values_after_insert`;--> statement-breakpoint
CREATE TRIGGER `field_values_after_insert` AFTER INSERT ON `records` BEGIN
	INSERT OR IGNORE INTO `field_values` SELECT f.`id`, NEW.`status`, CASE k.`record_column` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN k.`numeric` OR json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean') THEN -1.7976931348623157e+308 ELSE '' END) END, NEW.`created_at`, NEW.`id`
	FROM `fields` f LEFT JOIN `field_kinds` k ON k.`type` = f.`type` WHERE f.`base_id` = NEW.`base_id` AND f.`index_state` != 'none';
END;--> statement-breakpoint
DROP TRIGGER `field_values_after_update`;--> statement-breakpoint
CREATE TRIGGER `field_values_after_update` AFTER UPDATE OF `data`, `status`, `updated_by` ON `records` BEGIN
	DELETE FROM `field_values` WHERE (`field_id`, `status`, `value`, `created_at`, `record_id`) IN (
		SELECT f.`id`, OLD.`status`, CASE k.`record_column` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN k.`numeric` OR json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean') THEN -1.7976931348623157e+308 ELSE '' END) END, OLD.`created_at`, OLD.`id`
		FROM `fields` f LEFT JOIN `field_kinds` k ON k.`type` = f.`type` WHERE f.`base_id` = OLD.`base_id` AND f.`index_state` != 'none' AND (OLD.`status` IS NOT NEW.`status` OR CASE k.`record_column` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN k.`numeric` OR json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean') THEN -1.7976931348623157e+308 ELSE '' END) END IS NOT CASE k.`record_column` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN k.`numeric` OR json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean') THEN -1.7976931348623157e+308 ELSE '' END) END));
	INSERT OR IGNORE INTO `field_values` SELECT f.`id`, NEW.`status`, CASE k.`record_column` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN k.`numeric` OR json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean') THEN -1.7976931348623157e+308 ELSE '' END) END, NEW.`created_at`, NEW.`id`
	FROM `fields` f LEFT JOIN `field_kinds` k ON k.`type` = f.`type` WHERE f.`base_id` = NEW.`base_id` AND f.`index_state` != 'none' AND (OLD.`status` IS NOT NEW.`status` OR CASE k.`record_column` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN k.`numeric` OR json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean') THEN -1.7976931348623157e+308 ELSE '' END) END IS NOT CASE k.`record_column` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN k.`numeric` OR json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean') THEN -1.7976931348623157e+308 ELSE '' END) END);
END;--> statement-breakpoint
DROP TRIGGER `field_values_after_delete`;--> statement-breakpoint
CREATE TRIGGER `field_values_after_delete` AFTER DELETE ON `records` BEGIN
	DELETE FROM `field_values` WHERE (`field_id`, `status`, `value`, `created_at`, `record_id`) IN (
		SELECT f.`id`, OLD.`status`, CASE k.`record_column` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN k.`numeric` OR json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean') THEN -1.7976931348623157e+308 ELSE '' END) END, OLD.`created_at`, OLD.`id`
		FROM `fields` f LEFT JOIN `field_kinds` k ON k.`type` = f.`type` WHERE f.`base_id` = OLD.`base_id` AND f.`index_state` != 'none');
END;--> statement-breakpoint
DROP TRIGGER `records_search_update`;--> statement-breakpoint
CREATE TRIGGER `records_search_update` AFTER UPDATE OF `data`, `status` ON `records`
WHEN OLD.`status` IS NOT NEW.`status` OR EXISTS (SELECT 1 FROM `fields` f LEFT JOIN `field_kinds` k ON k.`type` = f.`type` WHERE f.`base_id` = NEW.`base_id`
  AND (k.`searched` OR f.`convert_from` IS NOT NULL)
  AND json_extract(OLD.`data`, '$."' || f.`slug` || '"') IS NOT json_extract(NEW.`data`, '$."' || f.`slug` || '"'))
BEGIN
  INSERT INTO `record_search_staged`(`record_rowid`, `indexed`) VALUES (NEW.rowid, OLD.`status` = 'active') ON CONFLICT DO NOTHING;
END;
