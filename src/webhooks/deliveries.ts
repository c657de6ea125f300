import { createHmac } from "node:crypto";
import { checkServerIdentity } from "node:tls";
import type { Static } from "@sinclair/typebox";
import { desc, eq, sql } from "drizzle-orm";
import { t } from "elysia";
import { Webhook } from "standardwebhooks";
import { iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { insertRow, preparedFor, preparedWrite } from "../db/client";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { eventBody, eventOfRule, type OutgoingEvent } from "../shared/event-types";
import { events } from "../tables/events";
import { conflict, notFound } from "../shared/errors";
import { Nullable, oneOf, Timestamp, WholeNumber } from "../shared/schemas";
import { VERSION } from "../shared/version";
import type { RuleRow } from "./rules";
import { DELIVERY_STATUSES, DELIVERY_TRIGGERS, type DeliveryTrigger, webhookDeliveries, webhookRules } from "../tables/webhooks";
import { TargetRefused } from "./ssrf";

export interface AttemptResult {
  ok: boolean;
  httpStatus: number | null;
  detail: string;
  durationMs: number;
  requestUrl: string;
  /** From a 429 or 503's `Retry-After`, capped at an hour. */
  retryAfterMs: number | null;
}

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export const DeliverySchema = t.Object(
  {
    id: t.String(),
    ruleId: t.String(),
    eventId: t.String(),
    eventType: t.String(),
    attempt: WholeNumber({ description: "1 for the first attempt of an event." }),
    trigger: oneOf(DELIVERY_TRIGGERS),
    status: oneOf(DELIVERY_STATUSES),
    httpStatus: Nullable(WholeNumber()),
    detail: t.String({ description: "The start of the answer, or why the attempt failed." }),
    durationMs: WholeNumber(),
    requestUrl: t.String(),
    nextAttemptAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { $id: "Delivery", description: "One attempt to deliver an event to a rule's URL." },
);
export type DeliveryView = Static<typeof DeliverySchema>;

export const deliveryView = (row: DeliveryRow): DeliveryView => ({
  id: row.id,
  ruleId: row.ruleId,
  eventId: row.eventId,
  eventType: row.eventType,
  attempt: row.attempt,
  trigger: row.trigger,
  status: row.status,
  httpStatus: row.httpStatus,
  detail: row.detail,
  durationMs: row.durationMs,
  requestUrl: row.requestUrl,
  nextAttemptAt: row.nextAttemptAt,
  createdAt: row.createdAt,
});

export const ATTEMPT_TIMEOUT_MS = 10_000;
/** What the log keeps of an answer's body: enough to debug a receiver, too little to read a private service back through it. */
export const DETAIL_BYTES = 256;
const RETRY_AFTER_CAP_MS = 3_600_000;

/** An outbox row as it is delivered. */
const eventBySeq = preparedFor((db) => db.select().from(events).where(eq(events.seq, sql.placeholder("seq"))).prepare());

export function outgoingEvent(ctx: AppContext, seq: number): OutgoingEvent | undefined {
  const row = eventBySeq(ctx).get({ seq });
  return row && { seq: row.seq, id: row.id, type: row.type, timestamp: row.createdAt, spaceId: row.spaceId, baseId: row.baseId, data: row.data };
}

/** The signer of a rule's secret: `whsec_…` as Standard Webhooks reads it, any other string as its UTF-8 bytes. */
function signer(secret: string): Webhook {
  return secret.startsWith("whsec_") ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: "raw" });
}

/** The first bytes of an answer, for the log; the rest is not read. */
async function answerStart(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < DETAIL_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, DETAIL_BYTES));
}

function retryAfter(response: Response, now: number): number | null {
  if (response.status !== 429 && response.status !== 503) return null;
  const header = response.headers.get("retry-after");
  if (!header) return null;
  const ms = /^\d+$/.test(header.trim()) ? Number(header) * 1000 : Date.parse(header) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), RETRY_AFTER_CAP_MS) : null;
}

const UNOPENED_SECRET =
  "Not sent: the rule's signing secret cannot be opened with this server's key (BASALT_SECRET_KEY, or secret.key in the data directory, is not the key it was sealed with). Restore that key, or give the rule its secret again.";

/**
 * One attempt: the target resolved and checked by the SSRF guard, then a POST to the very address
 * that was checked (with the original Host and TLS name), Standard Webhooks headers, a 10 s limit
 * and no redirect followed. Any 2xx is a success; everything else, a failure with its reason: it
 * never throws, so every attempt is logged and retried on its schedule.
 */
export async function attemptDelivery(ctx: AppContext, rule: RuleRow, event: OutgoingEvent): Promise<AttemptResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const body = eventBody(event);
  const sentAt = new Date(ctx.clock.now());
  const headers: Record<string, string> = {
    ...rule.headers,
    "content-type": "application/json",
    "user-agent": `Basalt-Webhooks/${VERSION}`,
    "webhook-id": event.id,
    "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
  };
  const failed = (detail: string, httpStatus: number | null = null): AttemptResult => ({ ok: false, httpStatus, detail, durationMs: took(), requestUrl: rule.targetUrl, retryAfterMs: null });
  if (rule.secretSealed) {
    try {
      const secret = ctx.secretBox.open(rule.secretSealed);
      headers["webhook-signature"] = signer(secret).sign(event.id, sentAt, body);
      // Busabase's signature: lowercase hex HMAC-SHA256 of the raw body, keyed with the secret as given.
      headers["x-busabase-signature"] = createHmac("sha256", secret).update(body).digest("hex");
    } catch {
      return failed(UNOPENED_SECRET);
    }
  }
  let target;
  try {
    target = await ctx.webhookTargets.resolve(rule.targetUrl);
  } catch (error) {
    return failed(error instanceof TargetRefused ? `Not sent: ${error.message}` : `Not sent: ${(error as Error).message}`);
  }
  const pinned = new URL(target.url);
  pinned.hostname = target.address.includes(":") ? `[${target.address}]` : target.address;
  headers.host = target.url.host;
  const hostname = target.url.hostname;
  try {
    const response = await fetch(pinned, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      ...(target.url.protocol === "https:" ? { tls: { serverName: hostname, checkServerIdentity: (_: string, cert: never) => checkServerIdentity(hostname, cert) } } : {}),
    });
    const answer = await answerStart(response);
    const redirect = response.status >= 300 && response.status < 400;
    return {
      ok: response.status >= 200 && response.status < 300,
      httpStatus: response.status,
      detail: redirect ? `A redirect (to ${response.headers.get("location") ?? "nowhere"}) is not followed.` : answer,
      durationMs: took(),
      requestUrl: rule.targetUrl,
      retryAfterMs: retryAfter(response, ctx.clock.now()),
    };
  } catch (error) {
    const name = (error as Error).name;
    return failed(name === "TimeoutError" || name === "AbortError" ? `No answer within ${ATTEMPT_TIMEOUT_MS / 1000} s.` : `Could not connect: ${(error as Error).message}`);
  }
}

const DAY_MS = 86_400_000;
const FAILURES_TO_DISABLE = 20;

/** The common case, prepared once: an event delivered, its rule's run of failures over. */
const markSucceeded = preparedWrite((db) =>
  db
    .update(webhookRules)
    .set({ lastTriggeredAt: sql`${sql.placeholder("at")}`, lastStatus: "success", failuresInRow: 0, failingSince: null })
    .where(eq(webhookRules.id, sql.placeholder("id")))
    .prepare(),
);

/**
 * Writes the log record of an attempt and what it means for its rule: the rule's last trigger and
 * status follow its newest attempt; an event delivery that fails counts toward disabling it (410 at
 * once; 20 failures in a row spread over more than 24 h), one that succeeds clears the count.
 */
export function recordAttempt(
  tx: Tx,
  rule: RuleRow,
  event: OutgoingEvent,
  result: AttemptResult,
  meta: { attempt: number; trigger: DeliveryTrigger; nextAttemptAt: number | null },
): DeliveryView {
  const now = tx.clock.now();
  const at = iso(now);
  const row: DeliveryRow = {
    id: newId("whd"),
    ruleId: rule.id,
    eventId: event.id,
    eventSeq: event.seq,
    eventType: event.type,
    attempt: meta.attempt,
    trigger: meta.trigger,
    status: result.ok ? "success" : "failed",
    httpStatus: result.httpStatus,
    detail: result.detail,
    durationMs: result.durationMs,
    requestUrl: result.requestUrl,
    nextAttemptAt: meta.nextAttemptAt === null ? null : iso(meta.nextAttemptAt),
    createdAt: at,
  };
  insertRow(tx, webhookDeliveries, row);
  if (meta.trigger === "event" && result.ok) {
    markSucceeded(tx).run({ id: rule.id, at });
    return deliveryView(row);
  }
  const changes: Partial<RuleRow> = { lastTriggeredAt: at, lastStatus: row.status };
  if (meta.trigger === "event") {
    const current = tx.db.select({ failuresInRow: webhookRules.failuresInRow, failingSince: webhookRules.failingSince }).from(webhookRules).where(eq(webhookRules.id, rule.id)).get();
    const failuresInRow = (current?.failuresInRow ?? 0) + 1;
    const failingSince = current?.failingSince ?? at;
    Object.assign(changes, { failuresInRow, failingSince });
    if (result.httpStatus === 410) Object.assign(changes, { enabled: false, disabledReason: `The target answered 410 Gone at ${at}.` });
    else if (failuresInRow >= FAILURES_TO_DISABLE && now - Date.parse(failingSince) > DAY_MS) {
      Object.assign(changes, { enabled: false, disabledReason: `${failuresInRow} attempts failed in a row since ${failingSince}.` });
    }
  }
  tx.db.update(webhookRules).set(changes).where(eq(webhookRules.id, rule.id)).run();
  return deliveryView(row);
}

/**
 * `POST /webhooks/{id}/test-fire`: one attempt with a synthetic event of the rule's type (`data.test`),
 * disabled rules too, made in the space's turn of the delivery pool (429 while 32 already wait).
 */
export async function testFire(ctx: AppContext, rule: RuleRow): Promise<DeliveryView> {
  const event: OutgoingEvent = {
    seq: null,
    id: newId("evt"),
    type: rule.eventType === "*" ? "record.created" : eventOfRule(rule.eventType),
    timestamp: iso(ctx.clock.now()),
    spaceId: rule.spaceId,
    baseId: rule.baseId,
    data: { test: true },
  };
  const result = await ctx.deliveries.inTurn(rule.spaceId, () => attemptDelivery(ctx, rule, event));
  return write(ctx, (tx) => recordAttempt(tx, rule, event, result, { attempt: 1, trigger: "test", nextAttemptAt: null }));
}

/** One new attempt of a delivery's event, with the same `webhook-id`. */
export async function redeliver(ctx: AppContext, rule: RuleRow, deliveryId: string): Promise<DeliveryView> {
  const delivery = findDelivery(ctx, rule.id, deliveryId);
  const event =
    delivery.eventSeq === null
      ? { seq: null, id: delivery.eventId, type: delivery.eventType, timestamp: delivery.createdAt, spaceId: rule.spaceId, baseId: rule.baseId, data: { test: true } }
      : outgoingEvent(ctx, delivery.eventSeq);
  if (!event) throw conflict("This delivery's event is no longer kept, so it cannot be sent again.", { reason: "EVENT_GONE" });
  const result = await ctx.deliveries.inTurn(rule.spaceId, () => attemptDelivery(ctx, rule, event));
  return write(ctx, (tx) => recordAttempt(tx, rule, event, result, { attempt: 1, trigger: "redeliver", nextAttemptAt: null }));
}

export function listDeliveries(ctx: AppContext, ruleId: string, limit: number): DeliveryView[] {
  return ctx.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.ruleId, ruleId)).orderBy(desc(webhookDeliveries.id)).limit(limit).all().map(deliveryView);
}

export function findDelivery(ctx: AppContext, ruleId: string, deliveryId: string): DeliveryRow {
  const row = ctx.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get();
  if (!row || row.ruleId !== ruleId) throw notFound("No such delivery for this rule.");
  return row;
}
