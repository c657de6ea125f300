import { OptionalKind, type TSchema } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Refusals } from "./access";
import { ErrorSchema } from "../shared/schemas";
import { SUMMARIES } from "./summaries";

/**
 * What a route answers, declared beside its input schemas: the success status with the schema of
 * its body, and each error status the route itself can give with the `reason` values it carries
 * (`[]` for an error without one). The errors every route of a kind shares (access, validation,
 * size, a full disk) are added by `completeDocument`. Answers are not validated at run time (see
 * docs/decisions.md); the test suite validates every answer it receives against the document.
 */
export type Answers = { [status: number]: TSchema | readonly string[] };

const ANSWERS = "x-basalt-answers";
/** A route that changes state and reads no body says so in the document (`noBody`), so a missing body schema is never a silent gap. */
const NO_BODY = "x-basalt-no-body";
const MEDIA = "x-basalt-media";

/** A success answer sent as other media than JSON alone (a file, a stream): each media type with the schema of its body. */
export const mediaAnswer = (content: Record<string, TSchema>, description: string): TSchema => ({ [MEDIA]: content, description }) as unknown as TSchema;

/**
 * The `answers` macro: every documented route declares one (`requireDeclaredAnswers`). The
 * `noBody` macro: a POST, PUT or PATCH that reads no body declares that instead of a body schema
 * (`requireDeclaredBodies`).
 */
export const answers = new Elysia({ name: "basalt.answers" })
  .macro("answers", (declared: Answers) => ({ detail: { [ANSWERS]: declared } }))
  .macro("noBody", (none: true) => ({ detail: { [NO_BODY]: none } }));

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
  docs: "Docs and files",
  files: "Docs and files",
  "file-trees": "Docs and files",
  forms: "Forms",
  "embed-links": "Sharing",
  embed: "Sharing",
  shared: "Sharing",
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

const ERROR_MEANINGS: Record<number, string> = {
  400: "Invalid input: data.issues lists each problem.",
  401: "No valid credential.",
  403: "Not allowed.",
  404: "No such resource (in this space).",
  409: "Conflicts with the current state; nothing changed.",
  413: "The body is larger than the server accepts.",
  415: "The body is not application/json.",
  429: "Too many attempts; retry-after says when to try again.",
  507: "The server's disk is full; nothing was written.",
};

/** An error answer: the envelope, with the `reason` values this route can give at this status. */
function errorResponse(status: number, reasons: readonly string[], meaning = ERROR_MEANINGS[status] ?? "Error.") {
  const unique = [...new Set(reasons)];
  const schema = unique.length ? { allOf: [{ $ref: "#/components/schemas/Error" }, { properties: { reason: { enum: unique } } }] } : { $ref: "#/components/schemas/Error" };
  const description = unique.length ? `${meaning} reason: ${unique.join(", ")}.` : meaning;
  return { description, content: { "application/json": { schema } } };
}

/**
 * A schema as the document holds it: every sub-schema with an `$id` (the shared objects: Record,
 * Base, ChangeRequest…) moves to `components.schemas` under that name and is referred to there.
 */
function hoisted(schema: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => hoisted(item, components));
  if (schema === null || typeof schema !== "object") return schema;
  const { $id, ...rest } = schema as Record<string, unknown>;
  if (typeof rest.$ref === "string" && !rest.$ref.startsWith("#")) return { $ref: `#/components/schemas/${rest.$ref}` };
  const body = () => Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, hoisted(value, components)]));
  if (typeof $id !== "string") return body();
  if (!Object.hasOwn(components, $id)) components[$id] = body();
  return { $ref: `#/components/schemas/${$id}` };
}

const jsonContent = (schema: unknown) => ({ "application/json": { schema } });

/** Fail-closed documentation: a documented route without a declared success answer stops the app from being built. */
export function requireDeclaredAnswers(routes: DocumentedRoute[]): void {
  const undeclared = routes
    .filter((route) => route.method !== "OPTIONS" && !route.hooks.detail?.hide)
    .filter((route) => !Object.values((route.hooks.detail?.[ANSWERS] ?? {}) as Answers).some((answer) => !Array.isArray(answer)))
    .map((route) => `${route.method} ${route.path}`);
  if (undeclared.length > 0) throw new Error(`Routes without a declared answer: ${undeclared.join(", ")}`);
}

const TAKES_BODY = new Set(["POST", "PUT", "PATCH"]);

/**
 * Fail-closed documentation of bodies: a documented POST, PUT or PATCH declares its body (a schema,
 * or a `requestBody` of other media) or that it takes none (`noBody`), else the app is not built.
 */
export function requireDeclaredBodies(routes: DocumentedRoute[]): void {
  const undeclared = routes
    .filter((route) => TAKES_BODY.has(route.method) && !route.hooks.detail?.hide)
    .filter((route) => !route.hooks.body && !route.hooks.detail?.requestBody && !route.hooks.detail?.[NO_BODY])
    .map((route) => `${route.method} ${route.path}`);
  if (undeclared.length > 0) throw new Error(`Routes that neither document a body nor say they take none: ${undeclared.join(", ")}`);
}

/**
 * Completes the document the OpenAPI plugin generates from the routes: the request body schemas
 * (the plugin leaves them out for a custom body parser), the declared answers and the errors every
 * route of its kind shares, a tag per domain, and the `x-basalt-space` header where a route acts in
 * the space of section 2.3. It is derived from the same route table the server runs, so it cannot drift.
 */
export function completeDocument(document: Document, routes: DocumentedRoute[]): Document {
  document.servers = [{ url: "/", description: "This server" }];
  document.components ??= {};
  const components: Record<string, unknown> = { ...document.components.schemas };
  hoisted(ErrorSchema, components);
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    const operation = document.paths[path]?.[route.method.toLowerCase()];
    if (!operation) continue;
    const detail = route.hooks.detail ?? {};
    const access = String(detail["x-basalt-access"] ?? "");
    const refusals = (detail["x-basalt-refusals"] ?? {}) as Partial<Refusals>;
    const declared = (detail[ANSWERS] ?? {}) as Answers;
    delete operation[ANSWERS];
    delete operation["x-basalt-refusals"];
    delete operation["x-basalt-space-header"];
    delete operation["x-basalt-needs"];
    operation.description = [operation.description, detail["x-basalt-needs"], detail[NO_BODY] ? "Takes no body." : undefined].filter(Boolean).join("\n\n");
    operation.tags = [domainOf(route.path)];
    operation.summary ??= SUMMARIES[`${route.method} ${route.path}`];
    if (access === "public") operation.security = [];
    if (route.hooks.body) {
      const schema = hoisted(JSON.parse(JSON.stringify(route.hooks.body)), components);
      operation.requestBody = { required: !(OptionalKind in (route.hooks.body as object)), content: jsonContent(schema) };
    }
    if (detail["x-basalt-space-header"] || route.path === "/mcp") {
      operation.parameters = [
        ...(operation.parameters ?? []),
        { name: "x-basalt-space", in: "header", required: false, schema: { type: "string" }, description: "The space (id or slug); needed when the caller belongs to several." },
      ];
    }
    const errors = new Map<number, string[]>();
    const addError = (status: number, reasons: readonly string[] = []) => errors.set(status, [...(errors.get(status) ?? []), ...reasons]);
    const responses: Record<string, unknown> = {};
    for (const [status, answer] of Object.entries(declared)) {
      if (Array.isArray(answer)) addError(Number(status), answer);
      else if (MEDIA in answer) {
        const media = Object.entries(answer[MEDIA] as Record<string, TSchema>).map(([type, schema]) => [type, { schema: hoisted(JSON.parse(JSON.stringify(schema)), components) }]);
        responses[status] = { description: answer.description, content: Object.fromEntries(media) };
      } else responses[status] = { description: Number(status) === 201 ? "Created" : "Success", content: jsonContent(hoisted(JSON.parse(JSON.stringify(answer)), components)) };
    }
    // Any request that changes state may carry a body: it is parsed (400), measured (413) and typed (415) before anything else.
    const sendsBody = route.method !== "GET";
    if (sendsBody || operation.parameters?.length) addError(400);
    if (refusals[400]) addError(400, refusals[400]);
    if (access !== "public") {
      addError(401);
      addError(403, [...(refusals[403] ?? []), ...(route.method === "GET" ? [] : ["CSRF_TOKEN_INVALID"])]);
    }
    // A path parameter, or an id in a space route's query or body, may name nothing in the space.
    if (route.path.includes(":") || detail["x-basalt-space-header"]) addError(404);
    if (sendsBody) {
      addError(413);
      addError(415);
    }
    if (route.method !== "GET") addError(507);
    for (const [status, reasons] of [...errors].sort(([a], [b]) => a - b)) responses[status] = errorResponse(status, reasons, status === 403 ? `Not allowed: this needs ${access}.` : undefined);
    operation.responses = responses;
  }
  document.components.schemas = components;
  return document;
}
