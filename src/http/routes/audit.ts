import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { access } from "../access";
import { answers } from "../openapi";
import { limitParam } from "../../shared/query-params";
import { AuditEventSchema, listAuditEvents } from "../../audit/audit";

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
    });
}
