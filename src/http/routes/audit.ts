import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { access } from "../access";
import { answers } from "../openapi";
import { limitParam } from "../../shared/query-params";
import { appendAuditEvent, AuditEventSchema, listAuditEvents } from "../../audit/audit";
import { actingAs } from "../../auth/actor";
import { CLIENT_AUDIT_ACTIONS } from "../../shared/audit-actions";
import { Nullable, oneOf } from "../../shared/schemas";

/** The space's audit trail, for its managers. */
export function auditRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/audit-events", ({ space, query }) => listAuditEvents(ctx, space.space.id, { limit: limitParam(query.limit, 50), before: query.before }), {
      answers: { 200: t.Array(AuditEventSchema) },
      level: "manage",
      query: t.Object({
        limit: t.Optional(t.String({ description: "1..100, default 50." })),
        before: t.Optional(t.String({ description: "The id of the last event of the previous answer: the next older ones." })),
      }),
    })
    .post("/audit-events", ({ space, actor, body }) => appendAuditEvent(ctx, space.space.id, actingAs(actor), body), {
      answers: { 200: AuditEventSchema },
      level: "manage",
      body: t.Object({
        action: oneOf(CLIENT_AUDIT_ACTIONS),
        actorId: t.Optional(t.String({ description: "Ignored: the caller is the actor." })),
        baseId: t.Optional(Nullable(t.String({ maxLength: 100 }))),
        recordId: t.Optional(Nullable(t.String({ maxLength: 100 }))),
        changeRequestId: t.Optional(Nullable(t.String({ maxLength: 100 }))),
        operationId: t.Optional(Nullable(t.String({ maxLength: 100 }))),
        commitId: t.Optional(Nullable(t.String({ maxLength: 100 }))),
        metadata: t.Optional(t.Record(t.String(), t.Unknown())),
      }),
    });
}
