import type { Static } from "@sinclair/typebox";
import { and, desc, eq, inArray, isNull, lt, or, type SQL } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext, Tx } from "../context";
import { insertRow } from "../db/client";
import { newId } from "../db/ids";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import { members } from "../tables/spaces";
import { AUDIT_ACTIONS, type AuditAction } from "../shared/audit-actions";
import { auditEvents } from "../tables/audit";

/** Who acted: the user, and the API key they used (null for a session or the command line). */
export interface AuditActor {
  userId: string;
  keyId: string | null;
}

export const AuditEventSchema = t.Object(
  {
    id: t.String(),
    action: oneOf(AUDIT_ACTIONS),
    actorId: t.String(),
    actorKeyId: Nullable(t.String({ description: "The API key used; null for a session or the command line." })),
    spaceId: Nullable(t.String({ description: "Null for an account's own action (its keys, its device approvals)." })),
    baseId: Nullable(t.String()),
    targetType: t.String({ description: "api_key, device_request, member, space, webhook_rule or change_request." }),
    targetId: t.String(),
    metadata: t.Record(t.String(), t.Unknown(), { description: "What changed (names, levels, roles, statuses), never a secret." }),
    createdAt: Timestamp,
  },
  { $id: "AuditEvent" },
);
export type AuditEventView = Static<typeof AuditEventSchema>;

export interface AuditEntry {
  action: AuditAction;
  actor: AuditActor;
  spaceId: string | null;
  targetType: string;
  targetId: string;
  baseId?: string | null;
  metadata?: Record<string, unknown>;
}

/** Writes one audit row inside the caller's transaction, so it exists exactly when the change does. */
export function recordAudit(tx: Tx, entry: AuditEntry): void {
  insertRow(tx, auditEvents, {
    id: newId("aud"),
    spaceId: entry.spaceId,
    actorId: entry.actor.userId,
    actorKeyId: entry.actor.keyId,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    baseId: entry.baseId ?? null,
    metadata: entry.metadata ?? {},
    createdAt: new Date(tx.clock.now()).toISOString(),
  });
}

/** A space's audit trail: its own rows, and the account rows (keys, device approvals) of its members. */
export const visibleIn = (ctx: AppContext, spaceId: string): SQL =>
  or(eq(auditEvents.spaceId, spaceId), and(isNull(auditEvents.spaceId), inArray(auditEvents.actorId, ctx.db.select({ id: members.userId }).from(members).where(eq(members.spaceId, spaceId)))))!;

/** `GET /audit-events`: newest first, `before` an id of the previous answer. */
export function listAuditEvents(ctx: AppContext, spaceId: string, query: { limit: number; before?: string }): AuditEventView[] {
  const where = [visibleIn(ctx, spaceId), ...(query.before ? [lt(auditEvents.id, query.before)] : [])];
  return ctx.db
    .select()
    .from(auditEvents)
    .where(and(...where))
    .orderBy(desc(auditEvents.id))
    .limit(query.limit)
    .all();
}
