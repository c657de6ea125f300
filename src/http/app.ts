import { auditRoutes } from "./routes/audit";
import { openapi } from "@elysiajs/openapi";
import { Elysia, t } from "elysia";
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import swaggerJs from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import { adminRoutes } from "./routes/admin";
import { agentRoutes, mcpRoutes } from "./routes/agents";
import { changeRoutes } from "./routes/changes";
import { syncRoutes } from "./routes/sync";
import { remotesRoutes } from "./routes/remotes";
import { contentRoutes } from "./routes/content";
import { nodeContentRoutes } from "./routes/node-content";
import { formRoutes } from "./routes/forms";
import { sharingRoutes } from "./routes/sharing";
import { authRoutes, rfcDeviceRoutes } from "./routes/auth";
import type { AppContext } from "../context";
import { access, declaredPublic, requireDeclaredAccess } from "./access";
import { answers, completeDocument, type DocumentedRoute, requireDeclaredAnswers, requireDeclaredBodies } from "./openapi";
import { type KnownRoute, plumbing, withoutUnusedHooks } from "./plumbing";
import { searchRoutes } from "./routes/search";
import { transferRoutes } from "./routes/transfer";
import { assetRoutes } from "./routes/assets";
import { spaceRoutes } from "./routes/spaces";
import { VERSION } from "../shared/version";
import { webhookRoutes } from "./routes/webhooks";
import { eventRoutes } from "./routes/events";

const DOCS_ASSETS = "/api/v1/docs/assets";
const GENERATED_SPEC = "/api/v1/openapi.generated.json";

/** The whole HTTP surface, composed once; `serve` listens with it and tests call it over a real port. */
/** Whether the server answers: Basalt's `status` and `version`, with Busabase's `service` and `timestamp`. */
const HealthSchema = t.Object({ status: t.Literal("ok"), service: t.Literal("basalt"), version: t.String(), timestamp: t.String({ format: "date-time" }) });
/** A JSON answer's init as `Response.json` writes it (Bun copies an answer's headers from its init, so one serves all). */
const JSON_INIT = { headers: new Headers({ "content-type": "application/json;charset=utf-8" }) };
/**
 * The health answer, its JSON written once a millisecond: under load many health checks share one
 * (formatting a date was 6% of one, and `Response.json` of the object cost 0.2–0.3 µs more than an
 * answer of its kept text, on the wire).
 */
let writtenAt = Number.NaN;
let written = "";
function health(): Response {
  const now = Date.now();
  if (now !== writtenAt) {
    writtenAt = now;
    written = JSON.stringify({ status: "ok", service: "basalt", version: VERSION, timestamp: new Date(now).toISOString() });
  }
  return new Response(written, JSON_INIT);
}

export function createApp(ctx: AppContext) {
  const known: (KnownRoute & DocumentedRoute)[] = [];
  let document: unknown;
  let handle: (request: Request) => Promise<Response> = () => Promise.reject(new Error("The app is not built yet."));
  const app = new Elysia({ normalize: "typebox" })
    .use(plumbing(ctx, known))
    .use(access(ctx))
    .use(answers)
    .use(
      declaredPublic(
        openapi({
          path: "/api/v1/docs",
          // The plugin's own document, completed by `completeDocument` and served as /api/v1/openapi.json.
          specPath: GENERATED_SPEC,
          provider: "swagger-ui",
          exclude: { paths: [/^\/api\/v1\/docs\/assets\//, "/api/v1/openapi.json", GENERATED_SPEC] },
          // The plugin's default spec URL is relative to the page and misses it; `url` is accepted at run time.
          swagger: { cdn: `${DOCS_ASSETS}/swagger-ui-bundle.js`, theme: `${DOCS_ASSETS}/swagger-ui.css`, autoDarkMode: false, url: "/api/v1/openapi.json" } as never,
          documentation: {
            info: { title: "Basalt API", version: VERSION, description: "Local-first, review-first workspace database." },
            components: {
              securitySchemes: {
                bearerAuth: { type: "http", scheme: "bearer", description: "An API key: bsk_…" },
                sessionCookie: { type: "apiKey", in: "cookie", name: "basalt_session" },
              },
            },
          },
        }),
      ),
    )
    .get(
      "/api/v1/openapi.json",
      async () => (document ??= completeDocument(await (await handle(new Request(`http://localhost${GENERATED_SPEC}`))).json(), known)),
      { public: true, detail: { hide: true } },
    )
    .get(`${DOCS_ASSETS}/swagger-ui-bundle.js`, () => Bun.file(swaggerJs), { public: true, detail: { hide: true } })
    .get(`${DOCS_ASSETS}/swagger-ui.css`, () => Bun.file(swaggerCss), { public: true, detail: { hide: true } })
    .get("/api/health", health, { answers: { 200: HealthSchema }, public: true })
    .get("/api/v1/health", health, { answers: { 200: HealthSchema }, public: true })
    .use(agentRoutes(ctx))
    .use(mcpRoutes(ctx))
    .use(authRoutes(ctx))
    .use(rfcDeviceRoutes(ctx))
    .use(spaceRoutes(ctx))
    .use(contentRoutes(ctx))
    .use(nodeContentRoutes(ctx))
    .use(formRoutes(ctx))
    .use(sharingRoutes(ctx))
    .use(changeRoutes(ctx))
    .use(syncRoutes(ctx))
    .use(remotesRoutes(ctx))
    .use(searchRoutes(ctx))
    .use(transferRoutes(ctx))
    .use(assetRoutes(ctx))
    .use(auditRoutes(ctx))
    .use(webhookRoutes(ctx))
    .use(eventRoutes(ctx))
    .use(adminRoutes(ctx));
  requireDeclaredAccess(app.routes);
  requireDeclaredAnswers(app.routes);
  requireDeclaredBodies(app.routes);
  withoutUnusedHooks(app.routes);
  known.push(...app.routes);
  handle = (request) => app.handle(request);
  return app;
}
