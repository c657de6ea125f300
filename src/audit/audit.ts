import type { Static } from "@sinclair/typebox";
import { and, desc, eq, inArray, isNull, lt, or, type SQL } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext, Tx } from "../context";
import { insertRow } from "../db/client";
import { newId } from "../db/ids";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import { members } from "../tables/spaces";
import { AUDIT_ACTIONS, AUDIT_SOURCES, type AuditAction, type AuditSource, CLIENT_AUDIT_ACTIONS } from "../shared/audit-actions";
import { users } from "../tables/auth";
import { changeRequests } from "../tables/changes";
import { bases, records } from "../tables/content";
import { write } from "../db/tx";
import { notFound } from "../shared/errors";
import { checkMetadata } from "../shared/json";
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
    targetType: t.String({ description: "api_key, device_request, member, space, webhook_rule, change_request, record, base or asset." }),
    targetId: t.String(),
    metadata: t.Record(t.String(), t.Unknown(), { description: "What changed (names, levels, roles, statuses), never a secret." }),
    source: oneOf(AUDIT_SOURCES, {
      description: "Who wrote the event: server, for what the server did (only it writes these); client, for what a client appended through POST /audit-events (what the client says it did, under its actor).",
    }),
    actor: Nullable(t.Object({ id: t.String(), name: t.String(), email: t.String(), image: t.Null() }), { description: "Busabase's: who acted; null when the account is gone." }),
    recordId: Nullable(t.String({ description: "Busabase's: the record it is about, if any." })),
    changeRequestId: Nullable(t.String({ description: "Busabase's: the change request it is about, if any." })),
    operationId: Nullable(t.String()),
    commitId: Nullable(t.String()),
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
  /** `client` only for what a client appends; everything else is the server's own. */
  source?: AuditSource;
}

/** Writes one audit row inside the caller's transaction, so it exists exactly when the change does; answers its id. */
export function recordAudit(tx: Tx, entry: AuditEntry): string {
  const id = newId("aud");
  insertRow(tx, auditEvents, {
    id,
    spaceId: entry.spaceId,
    actorId: entry.actor.userId,
    actorKeyId: entry.actor.keyId,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    baseId: entry.baseId ?? null,
    metadata: entry.metadata ?? {},
    source: entry.source ?? "server",
    createdAt: new Date(tx.clock.now()).toISOString(),
  });
  return id;
}

/** A space's audit trail: its own rows, and the account rows (keys, device approvals) of its members. */
export const visibleIn = (ctx: AppContext, spaceId: string): SQL =>
  or(eq(auditEvents.spaceId, spaceId), and(isNull(auditEvents.spaceId), inArray(auditEvents.actorId, ctx.db.select({ id: members.userId }).from(members).where(eq(members.spaceId, spaceId)))))!;

type AuditRow = typeof auditEvents.$inferSelect;

const idIn = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** Rows as the API shows them: with who acted, and Busabase's ids of what each is about (its target, or what a client named in its metadata). */
function auditViews(ctx: AppContext, rows: AuditRow[]): AuditEventView[] {
  const ids = [...new Set(rows.map((row) => row.actorId))];
  const people = new Map((ids.length === 0 ? [] : ctx.db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(inArray(users.id, ids)).all()).map((user) => [user.id, { ...user, image: null }]));
  return rows.map((row) => ({
    ...row,
    actor: people.get(row.actorId) ?? null,
    recordId: row.targetType === "record" ? row.targetId : idIn(row.metadata.recordId),
    changeRequestId: row.targetType === "change_request" ? row.targetId : idIn(row.metadata.changeRequestId),
    operationId: idIn(row.metadata.operationId),
    commitId: idIn(row.metadata.commitId),
  }));
}

/** `GET /audit-events`: newest first, `before` an id of the previous answer. */
export function listAuditEvents(ctx: AppContext, spaceId: string, query: { limit: number; before?: string }): AuditEventView[] {
  const where = [visibleIn(ctx, spaceId), ...(query.before ? [lt(auditEvents.id, query.before)] : [])];
  return auditViews(ctx, ctx.db.select().from(auditEvents).where(and(...where)).orderBy(desc(auditEvents.id)).limit(query.limit).all());
}

/** What a client appends to the trail (Busabase's `POST /audit-events`): an action of its own, and what it is about. */
export interface ClientAuditEvent {
  action: (typeof CLIENT_AUDIT_ACTIONS)[number];
  baseId?: string | null;
  recordId?: string | null;
  changeRequestId?: string | null;
  operationId?: string | null;
  commitId?: string | null;
  metadata?: Record<string, unknown>;
}

/**
 * `POST /audit-events`: an event a client appends, acted by the caller (whatever `actorId` it
 * sends) and marked `source: "client"`, so it never passes for one the server wrote. A record, base or change request it names must be the space's own (else 404); its
 * target is the most particular of them, and the operation and commit it names are kept in its metadata.
 */
export function appendAuditEvent(ctx: AppContext, spaceId: string, actor: AuditActor, input: ClientAuditEvent): Promise<AuditEventView> {
  return write(ctx, (tx) => {
    const owned = (table: typeof records | typeof bases | typeof changeRequests, id: string | null | undefined, what: string) => {
      if (!id) return null;
      if (!tx.db.select({ id: table.id }).from(table).where(and(eq(table.id, id), eq(table.spaceId, spaceId))).get()) throw notFound(`No ${what} ${id} in this space.`);
      return id;
    };
    const recordId = owned(records, input.recordId, "record");
    const baseId = owned(bases, input.baseId, "base");
    const changeRequestId = owned(changeRequests, input.changeRequestId, "change request");
    checkMetadata(tx.config.limits, input.metadata ?? {});
    const [targetType, targetId] = recordId ? ["record", recordId] : changeRequestId ? ["change_request", changeRequestId] : baseId ? ["base", baseId] : ["space", spaceId];
    const metadata = { ...input.metadata, ...(input.operationId ? { operationId: input.operationId } : {}), ...(input.commitId ? { commitId: input.commitId } : {}), ...(recordId && changeRequestId ? { changeRequestId } : {}) };
    const id = recordAudit(tx, { action: input.action, actor, spaceId, targetType, targetId, baseId, metadata, source: "client" });
    return auditViews(tx, [tx.db.select().from(auditEvents).where(eq(auditEvents.id, id)).get()!])[0];
  });
}
