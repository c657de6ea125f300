import { OptionalKind } from "@sinclair/typebox";
import { LEVELS } from "../auth/levels";
import { SUMMARIES } from "./summaries";

/** A route as the app holds it: what the document is completed from. */
export interface DocumentedRoute {
  method: string;
  path: string;
  hooks: { body?: unknown; detail?: Record<string, unknown> };
}

type Operation = Record<string, unknown> & { parameters?: Record<string, unknown>[]; responses?: Record<string, unknown> };
type Document = { paths: Record<string, Record<string, Operation>>; components?: Record<string, Record<string, unknown>>; servers?: unknown[] };

/** Each first path word's domain, the document's tags. */
const DOMAINS: Record<string, string> = {
  setup: "Accounts",
  auth: "Accounts",
  users: "Accounts",
  "api-keys": "API keys",
  device: "Device authorization",
  spaces: "Spaces and members",
  nodes: "Nodes",
  bases: "Bases and fields",
  records: "Records",
  "change-requests": "Change requests",
  operations: "Change requests",
  webhooks: "Webhooks",
};

function domainOf(path: string): string {
  if (path === "/mcp" || path === "/api/v1") return "Agents";
  if (path.startsWith("/api/auth/device")) return "Device authorization";
  if (path === "/api/health") return "Service";
  const word = path.replace(/^\/api\/v1\//, "").split("/")[0];
  return DOMAINS[word] ?? "Service";
}

/** Section 1: 201 for the POSTs that create a resource, 200 for everything else. */
const CREATES = ["/api/v1/api-keys", "/api/v1/users", "/api/v1/spaces", "/api/v1/spaces/:spaceId/members", "/api/v1/webhooks", "/api/v1/bases", "/api/v1/setup"];
const successStatus = (method: string, path: string): string =>
  method === "POST" && (CREATES.includes(path) || path.endsWith("change-requests") || path.endsWith("bulk-change-request")) ? "201" : "200";

const ERROR = { $ref: "#/components/schemas/Error" };
const errorResponse = (description: string) => ({ description, content: { "application/json": { schema: ERROR } } });

/**
 * Completes the document the OpenAPI plugin generates from the routes: the request body schemas
 * (the plugin leaves them out for a custom body parser), a tag per domain, the `x-basalt-space`
 * header where a route acts in the space of section 2.3, and the error envelope on every answer
 * that can fail. It is derived from the same route table the server runs, so it cannot drift.
 */
export function completeDocument(document: Document, routes: DocumentedRoute[]): Document {
  document.servers = [{ url: "/", description: "This server" }];
  document.components ??= {};
  document.components.schemas = {
    ...document.components.schemas,
    Error: {
      type: "object",
      required: ["error", "code"],
      properties: {
        error: { type: "string", description: "What went wrong and what to do, in a sentence." },
        code: { type: "string", description: "Stable upper-case code, e.g. BAD_REQUEST, FORBIDDEN." },
        reason: { type: "string", description: "A finer reason where the contract defines one." },
        data: { type: "object", description: "Machine-readable detail: issues, required/effective levels, allowed methods…" },
      },
    },
  };
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    const operation = document.paths[path]?.[route.method.toLowerCase()];
    if (!operation) continue;
    const access = String(route.hooks.detail?.["x-basalt-access"] ?? "");
    operation.tags = [domainOf(route.path)];
    operation.summary ??= SUMMARIES[`${route.method} ${route.path}`];
    if (access === "public") operation.security = [];
    if (route.hooks.body) {
      const schema = JSON.parse(JSON.stringify(route.hooks.body));
      operation.requestBody = { required: !(OptionalKind in (route.hooks.body as object)), content: { "application/json": { schema } } };
    }
    const inSpace = LEVELS.some((level) => access.startsWith(level)) && !route.path.includes(":spaceId") && route.path !== "/mcp";
    if (inSpace || route.path === "/mcp") {
      operation.parameters = [
        ...(operation.parameters ?? []),
        { name: "x-basalt-space", in: "header", required: false, schema: { type: "string" }, description: "The space (id or slug); needed when the caller belongs to several." },
      ];
    }
    const responses: Record<string, unknown> = { ...(operation.responses ?? {}) };
    const success = successStatus(route.method, route.path);
    responses[success] ??= { description: success === "201" ? "Created" : "Success" };
    if (route.hooks.body || operation.parameters?.length) responses["400"] = errorResponse("Invalid input: data.issues lists each problem.");
    if (access !== "public") {
      responses["401"] = errorResponse("No valid credential.");
      responses["403"] = errorResponse(`Not allowed: this needs ${access}.`);
    }
    if (route.path.includes(":")) responses["404"] = errorResponse("No such resource in this space.");
    operation.responses = responses;
  }
  return document;
}
