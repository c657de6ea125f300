ALTER TABLE `audit_events` ADD `source` text DEFAULT 'server' NOT NULL;--> statement-breakpoint
-- Rows a client appended before the column: its actions the server never writes, the text actions not about an asset, and merges without the server's own metadata.
UPDATE `audit_events` SET `source` = 'client' WHERE `action` IN ('record.viewed', 'change_request.created', 'change_request.updated', 'change_request.deleted', 'change_request.reviewed', 'base.created', 'field.created', 'doc.created', 'doc.updated', 'file.created', 'skill.created', 'drive.created', 'airapp.created', 'asset.deleted', 'asset.metadata_updated', 'node.metadata_updated', 'node.purged')
  OR (`action` IN ('asset.text_written', 'asset.text_marked_none') AND `target_type` <> 'asset')
  OR (`action` = 'change_request.merged' AND (json_type(`metadata`, '$.operationCount') IS NOT 'integer' OR json_type(`metadata`, '$.recordIds') IS NOT 'array'));
