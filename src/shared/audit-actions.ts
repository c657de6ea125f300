/** What the audit trail records. */
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
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
