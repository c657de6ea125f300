-- Custom (drizzle-kit generate --custom): the field_values triggers of 0010, made again so that a formula field
-- whose result is a number or true/false sorts an unset value as numbers do (-1.7976931348623157e+308), as
-- `sortableSql` in src/content/field-sql.ts does; a formula's result type never changes (src/content/formulas.ts).
DROP TRIGGER `field_values_after_insert`;
--> statement-breakpoint
CREATE TRIGGER `field_values_after_insert` AFTER INSERT ON `records` BEGIN
	INSERT OR IGNORE INTO `field_values` SELECT f.`id`, NEW.`status`, CASE f.`type` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') OR (f.`type` = 'formula' AND json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean')) THEN -1.7976931348623157e+308 ELSE '' END) END, NEW.`created_at`, NEW.`id`
	FROM `fields` f WHERE f.`base_id` = NEW.`base_id` AND f.`index_state` != 'none';
END;
--> statement-breakpoint
DROP TRIGGER `field_values_after_update`;
--> statement-breakpoint
CREATE TRIGGER `field_values_after_update` AFTER UPDATE OF `data`, `status`, `updated_by` ON `records` BEGIN
	DELETE FROM `field_values` WHERE (`field_id`, `status`, `value`, `created_at`, `record_id`) IN (
		SELECT f.`id`, OLD.`status`, CASE f.`type` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') OR (f.`type` = 'formula' AND json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean')) THEN -1.7976931348623157e+308 ELSE '' END) END, OLD.`created_at`, OLD.`id`
		FROM `fields` f WHERE f.`base_id` = OLD.`base_id` AND f.`index_state` != 'none' AND (OLD.`status` IS NOT NEW.`status` OR CASE f.`type` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') OR (f.`type` = 'formula' AND json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean')) THEN -1.7976931348623157e+308 ELSE '' END) END IS NOT CASE f.`type` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') OR (f.`type` = 'formula' AND json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean')) THEN -1.7976931348623157e+308 ELSE '' END) END));
	INSERT OR IGNORE INTO `field_values` SELECT f.`id`, NEW.`status`, CASE f.`type` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') OR (f.`type` = 'formula' AND json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean')) THEN -1.7976931348623157e+308 ELSE '' END) END, NEW.`created_at`, NEW.`id`
	FROM `fields` f WHERE f.`base_id` = NEW.`base_id` AND f.`index_state` != 'none' AND (OLD.`status` IS NOT NEW.`status` OR CASE f.`type` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') OR (f.`type` = 'formula' AND json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean')) THEN -1.7976931348623157e+308 ELSE '' END) END IS NOT CASE f.`type` WHEN 'auto_number' THEN NEW.`auto_number` WHEN 'created_by' THEN NEW.`created_by` WHEN 'updated_by' THEN NEW.`updated_by` ELSE coalesce(json_extract(NEW.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') OR (f.`type` = 'formula' AND json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean')) THEN -1.7976931348623157e+308 ELSE '' END) END);
END;
--> statement-breakpoint
DROP TRIGGER `field_values_after_delete`;
--> statement-breakpoint
CREATE TRIGGER `field_values_after_delete` AFTER DELETE ON `records` BEGIN
	DELETE FROM `field_values` WHERE (`field_id`, `status`, `value`, `created_at`, `record_id`) IN (
		SELECT f.`id`, OLD.`status`, CASE f.`type` WHEN 'auto_number' THEN OLD.`auto_number` WHEN 'created_by' THEN OLD.`created_by` WHEN 'updated_by' THEN OLD.`updated_by` ELSE coalesce(json_extract(OLD.`data`, '$."' || f.`slug` || '"'), CASE WHEN f.`type` IN ('number', 'checkbox') OR (f.`type` = 'formula' AND json_extract(f.`options`, '$.formula.resultType') IN ('number', 'boolean')) THEN -1.7976931348623157e+308 ELSE '' END) END, OLD.`created_at`, OLD.`id`
		FROM `fields` f WHERE f.`base_id` = OLD.`base_id` AND f.`index_state` != 'none');
END;
