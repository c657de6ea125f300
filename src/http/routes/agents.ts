import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Elysia, t } from "elysia";
import { toolsFor } from "../../agents/mcp";
import type { AppContext } from "../../context";
import { access, grantedSpace, spaceHeader } from "../access";
import { badRequest } from "../../shared/errors";
import { answers } from "../openapi";
import { VERSION } from "../../shared/version";
import guide from "../../agents/llms.txt" with { type: "text" };

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

/**
 * The MCP server at `POST /mcp` (streamable HTTP, stateless): the route declares the credential;
 * the tools (`agents/mcp.ts`) resolve the space from `x-basalt-space` and require their levels.
 */
export function mcpRoutes(ctx: AppContext) {
  return new Elysia().use(access(ctx)).use(answers).post(
    "/mcp",
    async ({ actor, request, body }) => {
      if (Array.isArray(body) && body.length > MAX_BATCH) throw badRequest(`A JSON-RPC batch holds at most ${MAX_BATCH} messages; this one holds ${body.length}.`);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const named = spaceHeader(request);
      const caller = { actor, spaceRef: named?.ref, spaceHeader: named?.header, stillReads: (spaceId: string) => grantedSpace(ctx, request, "read").space.space.id === spaceId };
      await toolsFor(ctx, caller).connect(transport);
      return inEnvelope(await transport.handleRequest(request, { parsedBody: body }));
    },
    {
      body: t.Union([JsonRpcMessage, t.Array(JsonRpcMessage, { minItems: 1, description: `A batch: at most ${MAX_BATCH} messages.` })]),
      answers: { 200: t.Object({ jsonrpc: t.Literal("2.0") }, { additionalProperties: true, description: "A JSON-RPC 2.0 answer." }), 406: [] },
      account: "signedIn",
      detail: { summary: "Model Context Protocol server (streamable HTTP, JSON-RPC)" },
    },
  );
}

/**
 * One JSON-RPC 2.0 message as MCP sends it: a request (`method` with an `id`), a notification
 * (`method` without one) or a response to the server (`result` or `error`).
 */
const JsonRpcMessage = t.Object(
  {
    jsonrpc: t.Literal("2.0"),
    id: t.Optional(t.Union([t.String(), t.Number(), t.Null()])),
    method: t.Optional(t.String({ description: "e.g. initialize, tools/list, tools/call" })),
    params: t.Optional(t.Record(t.String(), t.Unknown())),
    result: t.Optional(t.Unknown()),
    error: t.Optional(t.Unknown()),
  },
  { additionalProperties: true, $id: "JsonRpcMessage", description: "A JSON-RPC 2.0 message (Model Context Protocol)." },
);

/** A batch is capped: every call in it is as much work as a request of its own. */
const MAX_BATCH = 10;

const CODES: Record<number, string> = { 400: "BAD_REQUEST", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 406: "NOT_ACCEPTABLE", 415: "UNSUPPORTED_MEDIA_TYPE" };

/**
 * A transport-level refusal (wrong Accept header, a body that is no JSON-RPC message) in the API's
 * envelope, with the JSON-RPC error kept in `data.jsonrpc`. Answers to JSON-RPC calls, errors of
 * tools included, go out as they are.
 */
async function inEnvelope(response: Response): Promise<Response> {
  if (response.ok) return response;
  const text = await response.text();
  let jsonrpc: unknown = text;
  try {
    jsonrpc = JSON.parse(text);
  } catch {}
  const message = (jsonrpc as { error?: { message?: string } })?.error?.message ?? (text || response.statusText);
  return Response.json({ error: message, code: CODES[response.status] ?? "BAD_REQUEST", data: { jsonrpc } }, { status: response.status });
}
