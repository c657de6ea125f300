import { Elysia, t } from "elysia";
import type { AppContext } from "../context";
import { access } from "../http/access";
import { answers } from "../http/openapi";
import { VERSION } from "../version";
import guide from "./llms.txt" with { type: "text" };

/** Where an agent with only the base URL starts: the API's front door and the agent guide. */
export function agentRoutes(ctx: AppContext) {
  return new Elysia()
    .use(access(ctx))
    .use(answers)
    .get(
      "/api/v1",
      () => ({
        name: "Basalt",
        version: VERSION,
        links: { docs: "/api/v1/docs", openapi: "/api/v1/openapi.json", llms: "/llms.txt", admin: "/admin", health: "/api/health" },
      }),
      {
        answers: {
          200: t.Object({
            name: t.String(),
            version: t.String(),
            links: t.Object({ docs: t.String(), openapi: t.String(), llms: t.String(), admin: t.String(), health: t.String() }),
          }),
        },
        public: true,
      },
    )
    .get("/api/v1/meta", () => ({ service: "basalt", version: VERSION, timestamp: ctx.clock.now() }), {
      answers: { 200: t.Object({ service: t.Literal("basalt"), version: t.String(), timestamp: t.Integer({ description: "The server's clock, in milliseconds since 1970." }) }) },
      public: true,
    })
    .get("/llms.txt", () => new Response(guide, { headers: { "content-type": "text/plain; charset=utf-8" } }), { public: true, detail: { hide: true } });
}
