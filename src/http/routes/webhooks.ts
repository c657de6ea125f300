import { actingAs } from "../../auth/actor";
import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { write } from "../../db/tx";
import { access } from "../access";
import { limitParam } from "../../shared/query-params";
import { Name, oneOf, Success } from "../../shared/schemas";
import { answers } from "../openapi";
import { DeliverySchema, listDeliveries, redeliver, testFire } from "../../webhooks/deliveries";
import { RULE_EVENT_TYPES } from "../../shared/event-types";
import { ACTION_KINDS, createRule, deleteRule, findRule, listRules, ruleView, updateRule, WebhookRuleSchema } from "../../webhooks/rules";

const Rule = t.Object({
  name: Name,
  eventType: oneOf(RULE_EVENT_TYPES),
  actionKind: oneOf(ACTION_KINDS, { description: "webhook and notify_agent are delivered as a signed POST; run_function is refused (Basalt runs no client code)." }),
  config: t.Object({
    targetUrl: t.Optional(t.String({ minLength: 1, maxLength: 2048, description: "Required for webhook and notify_agent." })),
    secret: t.Optional(t.Union([t.String({ maxLength: 512 }), t.Null()])),
    headers: t.Optional(t.Record(t.String({ maxLength: 256 }), t.String({ maxLength: 4096 }), { maxProperties: 50 })),
    code: t.Optional(t.String({ maxLength: 20_000, description: "run_function's; refused." })),
    timeoutMs: t.Optional(t.Integer({ minimum: 100, maximum: 5000 })),
  }),
  baseId: t.Optional(t.Union([t.String({ minLength: 1 }), t.Null()])),
  enabled: t.Optional(t.Boolean()),
});

/** Webhook rules and their delivery log (section 8): all need `manage` in the space. */
export function webhookRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/webhooks", ({ space }) => listRules(ctx, space.space.id), { answers: { 200: t.Array(WebhookRuleSchema) }, level: "manage" })
    .post(
      "/webhooks",
      ({ space, actor, body, set }) => {
        set.status = 201;
        return createRule(ctx, space, actingAs(actor), body);
      },
      { answers: { 201: WebhookRuleSchema, 400: ["TARGET_NOT_ALLOWED", "ACTION_NOT_SUPPORTED"], 409: ["RULE_LIMIT_REACHED"] }, level: "manage", body: Rule },
    )
    .get("/webhooks/:ruleId", ({ space, params }) => ruleView(findRule(ctx, space.space.id, params.ruleId)), { answers: { 200: WebhookRuleSchema }, level: "manage" })
    .put("/webhooks/:ruleId", ({ space, actor, params, body }) => updateRule(ctx, space, params.ruleId, body, actingAs(actor)), {
      answers: { 200: WebhookRuleSchema, 400: ["TARGET_NOT_ALLOWED", "ACTION_NOT_SUPPORTED"] },
      level: "manage",
      body: Rule,
    })
    .delete("/webhooks/:ruleId", ({ space, actor, params }) => write(ctx, (tx) => deleteRule(tx, space.space.id, params.ruleId, actingAs(actor))), { answers: { 200: Success }, level: "manage" })
    .get("/webhooks/:ruleId/deliveries", ({ space, params, query }) => listDeliveries(ctx, findRule(ctx, space.space.id, params.ruleId).id, limitParam(query.limit, 20)), {
      answers: { 200: t.Array(DeliverySchema) },
      level: "manage",
      query: t.Object({ limit: t.Optional(t.String()) }),
    })
    .post("/webhooks/:ruleId/test-fire", ({ space, params }) => testFire(ctx, findRule(ctx, space.space.id, params.ruleId)), { answers: { 200: DeliverySchema, 429: [] }, level: "manage", noBody: true })
    .post(
      "/webhooks/:ruleId/deliveries/:deliveryId/redeliver",
      ({ space, params }) => redeliver(ctx, findRule(ctx, space.space.id, params.ruleId), params.deliveryId),
      { answers: { 200: DeliverySchema, 409: ["EVENT_GONE"], 429: [] }, level: "manage", noBody: true },
    );
}
