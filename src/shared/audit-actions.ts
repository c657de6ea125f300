/** Who wrote an audit row: the server (what it did) or a client (`POST /audit-events`: what the client says it did). */
export const AUDIT_SOURCES = ["server", "client"] as const;
export type AuditSource = (typeof AUDIT_SOURCES)[number];

/** What a client may append to the audit trail (`POST /audit-events`): Busabase's names (its contract, §3.5). */
export const CLIENT_AUDIT_ACTIONS = [
  "record.viewed",
  "change_request.created",
  "change_request.updated",
  "change_request.deleted",
  "change_request.reviewed",
  "change_request.merged",
  "base.created",
  "field.created",
  "doc.created",
  "doc.updated",
  "file.created",
  "skill.created",
  "drive.created",
  "airapp.created",
  "asset.deleted",
  "asset.metadata_updated",
  "asset.text_written",
  "asset.text_marked_none",
  "node.metadata_updated",
  "node.purged",
] as const;

/** What the audit trail records: the server's own actions, and those clients append. */
export const AUDIT_ACTIONS = [
  "api_key.created",
  "api_key.updated",
  "api_key.raised",
  "api_key.deleted",
  "device_request.approved",
  "member.added",
  "member.changed",
  "member.removed",
  "space.updated",
  "space.imported",
  "webhook_rule.created",
  "webhook_rule.updated",
  "webhook_rule.deleted",
  "change_request.merged",
  "change_request.closed",
  "node.visibility_changed",
  "node.principal_granted",
  "node.principal_revoked",
  ...CLIENT_AUDIT_ACTIONS.filter((action) => action !== "change_request.merged"),
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
