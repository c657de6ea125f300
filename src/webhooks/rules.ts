import { type AuditActor, recordAudit } from "../audit/audit";
import type { Static } from "@sinclair/typebox";
import { and, count, desc, eq } from "drizzle-orm";
import { t } from "elysia";
import { iso } from "../shared/clock";
import { findBase } from "../content/bases";
import type { AppContext, Tx } from "../context";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import type { RuleEventType } from "../shared/event-types";
import { checkName } from "../shared/formats";
import { conflict, invalid, notFound } from "../shared/errors";
import { Nullable, oneOf, Timestamp } from "../shared/schemas";
import type { SpaceScope } from "../spaces/resolve";
import { DELIVERED_KINDS, type DeliveredKind, DELIVERY_STATUSES, webhookRules } from "../tables/webhooks";
import { TargetRefused } from "./ssrf";

export type RuleRow = typeof webhookRules.$inferSelect;

export const MAX_RULES_PER_SPACE = 50;

/** Busabase's action kinds: the two delivered here, and `run_function`, which would run a client's code on the server. */
export const ACTION_KINDS = [...DELIVERED_KINDS, "run_function"] as const;

export interface RuleInput {
  name: string;
  eventType: RuleEventType;
  actionKind: (typeof ACTION_KINDS)[number];
  config: { targetUrl?: string; secret?: string | null; headers?: Record<string, string>; code?: string; timeoutMs?: number };
  baseId?: string | null;
  enabled?: boolean;
}

export const WebhookRuleSchema = t.Object(
  {
    id: t.String(),
    spaceId: t.String(),
    baseId: Nullable(t.String({ description: "Only this base's events; null for the whole space." })),
    name: t.String(),
    eventType: t.String({ description: "An event type, or * for all, as the rule was given it (Busabase's names changes_requested and ai_mention included)." }),
    enabled: t.Boolean(),
    disabledReason: Nullable(t.String({ description: "Why the server disabled the rule (410 Gone, 20 failures in a row)." })),
    createdBy: t.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    lastTriggeredAt: Nullable(Timestamp),
    lastStatus: Nullable(oneOf(DELIVERY_STATUSES)),
    actionKind: oneOf(DELIVERED_KINDS, { description: "Both are delivered as a signed POST to the target." }),
    config: t.Object({
      targetUrl: t.String(),
      hasSecret: t.Boolean({ description: "The secret itself is write-only." }),
      headers: t.Record(t.String(), t.String()),
    }),
  },
  { $id: "WebhookRule" },
);
export type RuleView = Static<typeof WebhookRuleSchema>;

export const ruleView = (row: RuleRow): RuleView => ({
  id: row.id,
  spaceId: row.spaceId,
  baseId: row.baseId,
  name: row.name,
  eventType: row.eventType,
  enabled: row.enabled,
  disabledReason: row.disabledReason,
  createdBy: row.createdBy,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
  lastTriggeredAt: row.lastTriggeredAt,
  lastStatus: row.lastStatus,
  actionKind: row.actionKind,
  config: { targetUrl: row.targetUrl, hasSecret: row.secretSealed !== null, headers: row.headers },
});

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;

/** Extra headers: valid names and values, and none that would override what a delivery must send. */
function checkHeaders(headers: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) throw invalid(["config", "headers", name], `"${name}" is not a header name.`);
    if (lower === "content-type" || lower.startsWith("webhook-") || lower === "host" || lower === "content-length") {
      throw invalid(["config", "headers", name], `config.headers may not set ${name}: Basalt sends it itself.`);
    }
    if (/[\r\n\0]/.test(value)) throw invalid(["config", "headers", name], `The value of header ${name} may not hold line breaks.`);
    out[lower] = value;
  }
  return out;
}

/** `whsec_` + base64 of 24..64 bytes (the Standard Webhooks form), or any other string of 16..256 characters. */
function checkSecret(secret: string): string {
  if (secret.startsWith("whsec_")) {
    const bytes = Buffer.from(secret.slice(6), "base64");
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secret.slice(6)) || bytes.length < 24 || bytes.length > 64) {
      throw invalid(["config", "secret"], "A whsec_ secret must be the base64 of 24 to 64 random bytes.");
    }
    return secret;
  }
  if (secret.length < 1 || secret.length > 256) throw invalid(["config", "secret"], "config.secret must be whsec_ + base64, or a string of 1 to 256 characters.");
  return secret;
}

/** Checks a rule's fields and its target (the SSRF guard resolves it now, and again at every attempt). */
async function checkRule(ctx: AppContext, scope: SpaceScope, input: RuleInput) {
  if (input.actionKind === "run_function") {
    throw invalid(["actionKind"], "actionKind run_function would run code on the server, and Basalt runs none of its clients' code: deliver the event to your own endpoint (actionKind webhook) and run it there.", { reason: "ACTION_NOT_SUPPORTED" });
  }
  const actionKind: DeliveredKind = input.actionKind;
  const targetUrl = input.config.targetUrl;
  if (targetUrl === undefined) throw invalid(["config", "targetUrl"], `A ${actionKind} rule needs config.targetUrl: where its events are POSTed.`);
  const name = checkName(input.name);
  const eventType = input.eventType;
  const headers = checkHeaders(input.config.headers);
  const baseId = input.baseId ? findBase(ctx, scope.space.id, input.baseId, { archived: true }).base.id : null;
  try {
    await ctx.webhookTargets.resolve(targetUrl);
  } catch (error) {
    if (error instanceof TargetRefused) throw invalid(["config", "targetUrl"], error.message, { reason: "TARGET_NOT_ALLOWED" });
    throw error;
  }
  const secret = input.config.secret === undefined || input.config.secret === null ? input.config.secret : checkSecret(input.config.secret);
  return { name, eventType, headers, baseId, secret, actionKind, targetUrl };
}

export function findRule(ctx: AppContext, spaceId: string, ruleId: string): RuleRow {
  const row = ctx.db.select().from(webhookRules).where(and(eq(webhookRules.id, ruleId), eq(webhookRules.spaceId, spaceId))).get();
  if (!row) throw notFound("No such webhook rule in this space.");
  return row;
}

export function listRules(ctx: AppContext, spaceId: string): RuleView[] {
  return ctx.db.select().from(webhookRules).where(eq(webhookRules.spaceId, spaceId)).orderBy(desc(webhookRules.id)).all().map(ruleView);
}

/** Creates a rule, checked first outside the transaction (resolving the target takes a DNS lookup). */
/** What the audit trail keeps of a rule: never its secret, its headers' values or its URL's path and query (which may hold a token). */
const auditedRule = (row: Pick<RuleRow, "name" | "eventType" | "baseId" | "enabled" | "targetUrl" | "headers">) => ({
  name: row.name,
  eventType: row.eventType,
  baseId: row.baseId,
  enabled: row.enabled,
  targetOrigin: new URL(row.targetUrl).origin,
  headerNames: Object.keys(row.headers),
});

export async function createRule(ctx: AppContext, scope: SpaceScope, actor: AuditActor, input: RuleInput): Promise<RuleView> {
  const checked = await checkRule(ctx, scope, input);
  const sealed = checked.secret ? ctx.secretBox.seal(checked.secret) : null;
  return write(ctx, (tx) => {
    const rules = tx.db.select({ n: count() }).from(webhookRules).where(eq(webhookRules.spaceId, scope.space.id)).get()!.n;
    if (rules >= MAX_RULES_PER_SPACE) throw conflict(`A space holds at most ${MAX_RULES_PER_SPACE} webhook rules.`, { reason: "RULE_LIMIT_REACHED", limit: MAX_RULES_PER_SPACE });
    const at = iso(tx.clock.now());
    const row: RuleRow = {
      id: newId("whk"),
      spaceId: scope.space.id,
      baseId: checked.baseId,
      name: checked.name,
      eventType: checked.eventType,
      actionKind: checked.actionKind,
      targetUrl: checked.targetUrl,
      secretSealed: sealed,
      headers: checked.headers,
      enabled: input.enabled ?? true,
      disabledReason: null,
      createdBy: actor.userId,
      createdAt: at,
      updatedAt: at,
      lastTriggeredAt: null,
      lastStatus: null,
      failuresInRow: 0,
      failingSince: null,
    };
    tx.db.insert(webhookRules).values(row).run();
    recordAudit(tx, { action: "webhook_rule.created", actor, spaceId: row.spaceId, baseId: row.baseId, targetType: "webhook_rule", targetId: row.id, metadata: auditedRule(row) });
    return ruleView(row);
  });
}

/**
 * Replaces a rule's settings. An omitted `config.secret` keeps the stored one, `null` removes it.
 * Enabling a rule clears why it was disabled and its run of failures.
 */
export async function updateRule(ctx: AppContext, scope: SpaceScope, ruleId: string, input: RuleInput, actor: AuditActor): Promise<RuleView> {
  findRule(ctx, scope.space.id, ruleId);
  const checked = await checkRule(ctx, scope, input);
  const sealed = checked.secret ? ctx.secretBox.seal(checked.secret) : checked.secret;
  return write(ctx, (tx) => {
    const current = findRule(tx, scope.space.id, ruleId);
    const enabled = input.enabled ?? current.enabled;
    const reenabled = enabled && !current.enabled;
    const changes: Partial<RuleRow> = {
      name: checked.name,
      eventType: checked.eventType,
      actionKind: checked.actionKind,
      targetUrl: checked.targetUrl,
      headers: checked.headers,
      baseId: checked.baseId,
      enabled,
      updatedAt: iso(tx.clock.now()),
      ...(sealed === undefined ? {} : { secretSealed: sealed }),
      ...(reenabled ? { disabledReason: null, failuresInRow: 0, failingSince: null } : {}),
    };
    tx.db.update(webhookRules).set(changes).where(eq(webhookRules.id, ruleId)).run();
    const updated = { ...current, ...changes };
    const metadata = { before: auditedRule(current), after: auditedRule(updated), secretChanged: sealed !== undefined };
    recordAudit(tx, { action: "webhook_rule.updated", actor, spaceId: current.spaceId, baseId: updated.baseId, targetType: "webhook_rule", targetId: ruleId, metadata });
    return ruleView(updated);
  });
}

export function deleteRule(tx: Tx, spaceId: string, ruleId: string, actor: AuditActor): { success: boolean } {
  const [deleted] = tx.db.delete(webhookRules).where(and(eq(webhookRules.id, ruleId), eq(webhookRules.spaceId, spaceId))).returning().all();
  if (deleted) recordAudit(tx, { action: "webhook_rule.deleted", actor, spaceId, baseId: deleted.baseId, targetType: "webhook_rule", targetId: ruleId, metadata: auditedRule(deleted) });
  return { success: deleted !== undefined };
}
