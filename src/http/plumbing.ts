import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia, ValidationError } from "elysia";
import type { Config } from "../shared/config";
import type { AppContext } from "../context";
import { ApiError, issuesOf } from "../shared/errors";
import { parseJsonBody, readBodyText } from "../shared/json";
import { UploadBody } from "../shared/body-budget";

type Issue = { path: string[]; message: string };

type SchemaNode = { anyOf?: SchemaNode[]; const?: unknown; properties?: Record<string, SchemaNode>; required?: string[] };

/**
 * A union of objects told apart by one literal key (`operation`, `kind`): each variant as
 * `operation "update" (fields, baseCommitId?, …)`, so a client learns what exists and what each needs.
 */
function describeVariants(variants: SchemaNode[]): string | undefined {
  const shapes = variants.map((variant) => {
    const properties = Object.entries(variant.properties ?? {});
    const tag = properties.find(([, property]) => typeof property.const === "string");
    if (!tag) return undefined;
    const rest = properties.filter(([name]) => name !== tag[0]).map(([name]) => (variant.required?.includes(name) ? name : `${name}?`));
    return `${tag[0]} "${tag[1].const}"${rest.length ? ` (${rest.join(", ")})` : ""}`;
  });
  return shapes.every((shape) => shape !== undefined) ? `must be one of: ${shapes.join("; ")}` : undefined;
}

function issueMessage(issue: unknown): string {
  const variants = (issue as { schema?: SchemaNode }).schema?.anyOf;
  if (variants?.every((option) => typeof option.const === "string")) return `must be one of ${variants.map((option) => option.const).join(", ")}`;
  if (variants) {
    const described = describeVariants(variants);
    if (described) return described;
  }
  return "message" in (issue as object) ? String((issue as { message: unknown }).message) : "is not valid";
}

const pathOf = (issue: unknown): string[] => {
  const path = (issue as { path?: unknown }).path;
  return typeof path === "string" ? path.split("/").filter(Boolean) : [];
};

/**
 * The variant of a tagged union a value names by its tag (`operation: "create"`), checked alone:
 * its own problems say what to fix, where the list of variants would not.
 */
function namedVariantIssues(issue: unknown): unknown[] | null {
  const { schema, value } = issue as { schema?: SchemaNode; value?: unknown };
  if (!schema?.anyOf || value === null || typeof value !== "object") return null;
  const named = schema.anyOf.find((variant) =>
    Object.entries(variant.properties ?? {}).some(([key, property]) => typeof property.const === "string" && (value as Record<string, unknown>)[key] === property.const),
  );
  if (!named) return null;
  const prefix = pathOf(issue);
  const errors = [...Value.Errors(named as TSchema, value)];
  return errors.length > 0 ? errors.map((error) => ({ ...error, path: [...prefix, ...pathOf(error)].map((part) => `/${part}`).join("") })) : null;
}

/**
 * The problems of a failed validation, one per path: the first is the one to fix (a missing
 * property is also "not a string"; saying both says nothing more).
 */
function validationIssues(error: ValidationError): Issue[] {
  const where = error.type === "body" ? [] : [error.type];
  const byPath = new Map<string, Issue>();
  for (const issue of error.all.flatMap((one) => namedVariantIssues(one) ?? [one])) {
    const path = pathOf(issue);
    const found = { path: [...where, ...path], message: issueMessage(issue) };
    const key = found.path.join("\u0000");
    if (!byPath.has(key)) byPath.set(key, found);
  }
  return [...byPath.values()];
}


/** The contract's unknown route (API.md section 1): `path` at the top level, where Busabase's clients read it. */
const unknownRoute = (path: string) => ({ error: "Not found", code: "NOT_FOUND", path, data: { path, hint: "GET /api/v1 links to the docs and openapi.json." } });

function envelope(error: ApiError) {
  const data = error.code === "BAD_REQUEST" ? { ...error.data, issues: issuesOf(error) } : error.data;
  return { error: error.message, code: error.code, ...(error.reason ? { reason: error.reason } : {}), ...(data ? { data } : {}) };
}

/**
 * A full disk, however it was met: SQLite's answer (the write rolled back), or the file system's
 * while an upload, an import or a dump's file was written (each removes its temporary file on
 * failure). Nothing else is wrong, and nothing was kept.
 */
const DISK_FULL = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);
const isDiskFull = (error: unknown): boolean => DISK_FULL.has((error as { code?: string } | null)?.code ?? "");

export interface KnownRoute {
  method: string;
  path: string;
}

/** The methods a path takes, from the app's route table (filled once the app is built). */
function allowedMethods(known: KnownRoute[]): (path: string) => string[] {
  let templates: { pattern: RegExp; method: string }[] | null = null;
  return (path) => {
    templates ??= known.map(({ method, path: template }) => ({
      method,
      pattern: new RegExp(`^${template.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*")}$`),
    }));
    return [...new Set(templates.filter((route) => route.pattern.test(path)).map((route) => route.method))].sort();
  };
}

/**
 * CORS for browsers calling the API from other origins. Credentials are not allowed: agents send
 * keys in headers, and the admin page is same-origin, so no other page can ride on its cookie.
 * Only requests with an Origin header pay for it (agents and command lines send none).
 */
const CORS_HEADERS = {
  "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE",
  "access-control-allow-headers": "content-type, authorization, x-api-key, x-basalt-space, x-busabase-space, x-basalt-channel, x-csrf-token",
  "access-control-expose-headers": "retry-after, www-authenticate",
  "access-control-max-age": "600",
};

/**
 * Words the API uses (or Busabase's clients expect) where an id or slug also stands, as in
 * `GET /records/page` beside `GET /records/{recordId}`. A path parameter holding one is never
 * looked up: it is a route, and where Basalt has none, an unknown route.
 */
const ROUTE_WORDS: ReadonlySet<string> = new Set(["page", "favorites", "search", "count", "counts", "get", "reviews", "merge", "change-requests", "deleted", "paged"]);

/** Thrown where a path names no route; answered as Elysia's own unknown route is. */
class UnknownRoute extends Error {}

/** A route word in a path parameter's place: an unknown route. A wildcard's rest (`/admin/*`, the page's own addresses such as /admin/search) is not an id. */
function refuseRouteWords({ params }: { params: Record<string, string | undefined> }): void {
  for (const name in params) if (name !== "*" && ROUTE_WORDS.has(params[name] ?? "")) throw new UnknownRoute();
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Routes whose body is a file the route reads itself as it arrives (an import, an upload): bounded
 * by their own limit instead of `--max-body`, and never parsed as JSON here. Their body is an
 * `UploadBody`, counted against the upload budget once the caller is known (`access`): `memory`
 * routes hold the whole file while they read it, `disk` ones stream it to a temporary file.
 */
const UPLOADS: { method: string; path: RegExp; limit: (config: Config) => number; flag: string; held: "memory" | "disk" }[] = [
  { method: "POST", path: /^\/api\/v1\/bases\/[^/]+\/imports$/, limit: (config) => config.maxImportBytes, flag: "--max-import", held: "memory" },
  { method: "POST", path: /^\/api\/v1\/imports$/, limit: (config) => config.maxImportBytes, flag: "--max-import", held: "memory" },
  { method: "POST", path: /^\/api\/v1\/install\/archive(\/plan)?$/, limit: (config) => config.maxImportBytes, flag: "--max-import", held: "memory" },
  { method: "POST", path: /^\/api\/v1\/assets$/, limit: (config) => config.maxFileBytes, flag: "--max-file", held: "disk" },
  { method: "PUT", path: /^\/api\/v1\/assets\/[^/]+\/upload$/, limit: (config) => config.maxFileBytes, flag: "--max-file", held: "disk" },
  { method: "PUT", path: /^\/api\/v1\/assets\/uploads\/[^/]+$/, limit: (config) => config.maxFileBytes, flag: "--max-file", held: "disk" },
  { method: "PUT", path: /^\/api\/v1\/sync\/assets\/[^/]+$/, limit: (config) => config.maxFileBytes, flag: "--max-file", held: "disk" },
];
/**
 * JSON bodies that may pass `--max-body`: a batch of a space's rows sent to an import session
 * (Busabase's CLI sends a table's rows in batches of its own size), bounded by `--max-import`.
 */
const LARGE_JSON: { method: string; path: string; limit: (config: Config) => number; flag: string }[] = [
  { method: "POST", path: "/api/v1/dump/import/tables", limit: (config) => config.maxImportBytes, flag: "--max-import" },
];
/** The path of a request's URL, without parsing the whole URL (this runs for every request with a body). */
const urlPath = (url: string) => {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const query = url.indexOf("?", start);
  return url.slice(start, query < 0 ? undefined : query);
};
/** The upload route a request with a body goes to, if any (loops: every request with a body asks, and `find` made a closure each time). */
function uploadOf(method: string, path: string) {
  if (method !== "POST" && method !== "PUT") return undefined;
  for (const upload of UPLOADS) if (upload.method === method && upload.path.test(path)) return upload;
  return undefined;
}

function largeJsonOf(method: string, path: string) {
  for (const route of LARGE_JSON) if (route.method === method && route.path === path) return route;
  return undefined;
}

export type ServerLike = { requestIP(request: Request): { address: string } | null } | null;
/** The address a request came from, for the rate limits of what can be guessed or abused without a key. */
/**
 * Who a request comes from, as the rate limits count it: an IPv4 address, or an IPv6 address's
 * /64 (what one subscriber is given: its 2^64 addresses are one client, not 2^64 of them).
 */
export function clientAddress(server: ServerLike, request: Request): string {
  const address = server?.requestIP(request)?.address;
  if (!address) return "unknown";
  if (!address.includes(":")) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  const [head, tail = ""] = address.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = address.includes("::") && tail ? tail.split(":") : [];
  const groups = [...headGroups, ...Array(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill("0"), ...tailGroups];
  return `${groups.slice(0, 4).map((group) => Number.parseInt(group, 16).toString(16)).join(":")}::/64`;
}

/** The end of a log line after the whole milliseconds: ".00ms" to ".99ms". */
const HUNDREDTHS = Array.from({ length: 100 }, (_, hundredths) => `.${String(hundredths).padStart(2, "0")}ms`);

/**
 * A request's log line: its start (method, path, status) and its duration in milliseconds to the
 * hundredth ("GET /api/health 200 1.25ms"), made as one concatenation of three parts: `toFixed`
 * cost a tenth of a health check's own work, and a template of the line's seven parts half a
 * microsecond.
 */
function logLine(start: string, ms: number): string {
  const hundredths = Math.round(ms * 100);
  const fraction = hundredths % 100;
  return start + (hundredths - fraction) / 100 + HUNDREDTHS[fraction];
}

/**
 * The start of a route's log lines, kept per route handler the wrap is given. A route that Bun's
 * own router answers by a path without parameters only ever answers that path, so its path is
 * known from the first request and its URL is never read again for the log: Bun builds a request's
 * URL only when first read, about 0.8 µs on the wire (docs/performance.md, 2026-11-29, fourth
 * round). Any other request (a path with parameters, the app's own router: unknown routes,
 * preflights, `app.handle`) reads its path from its URL.
 */
type LineStart = { path: string | null; method: string; status: number; text: string };

function lineStarts(known: KnownRoute[]) {
  let fixedPaths: ReadonlySet<string> | null = null;
  const starts = new WeakMap<object, LineStart>();
  /** The request's path when its route answers that path only: a request of Bun's router (it has `params`) with none, to a route path without any. */
  const fixedPath = (request: Request): string | null => {
    const params = (request as { params?: object }).params;
    if (params === undefined || Object.keys(params).length > 0) return null;
    fixedPaths ??= new Set(known.map((route) => route.path).filter((path) => !/[:*]/.test(path)));
    const path = urlPath(request.url);
    return fixedPaths.has(path) ? path : null;
  };
  return (route: object, request: Request, status: number): string => {
    let start = starts.get(route);
    if (start === undefined) starts.set(route, (start = { path: fixedPath(request), method: "", status: 0, text: "" }));
    const method = request.method;
    if (start.path === null) return `${method} ${urlPath(request.url)} ${status} `;
    if (start.method !== method || start.status !== status) {
      start.method = method;
      start.status = status;
      start.text = `${method} ${start.path} ${status} `;
    }
    return start.text;
  };
}

/**
 * What every request goes through before and after its route: CORS, the body limit and JSON
 * parsing, the one error envelope, and one log line (method, path, status, duration — never a
 * header, so never a key).
 */
export function plumbing(ctx: AppContext, known: KnownRoute[]) {
  const methodsOf = allowedMethods(known);
  const maxBody = ctx.config.maxBodyBytes;
  const tooLarge = () => new ApiError(413, "PAYLOAD_TOO_LARGE", `The request body is larger than ${maxBody} bytes.`);
  const largeTooLarge = (large: (typeof LARGE_JSON)[number]) => new ApiError(413, "PAYLOAD_TOO_LARGE", `The request body is larger than ${large.limit(ctx.config)} bytes, the most this route reads (the operator sets it with ${large.flag}).`);

  const lineStart = lineStarts(known);
  /**
   * A request is out of flight once its answer is handed back: an event stream's answer is handed
   * back at once, so an open stream, which lasts as long as its client reads, is never counted
   * among the requests long work gives way to. `route` is what the wrap was given for it.
   */
  function answered(route: object, request: Request, start: number, origin: string | null, response: Response): Response {
    ctx.requests.inFlight--;
    ctx.bodies.uploads.giveBack(request);
    ctx.log.info(logLine(lineStart(route, request, response.status), performance.now() - start));
    return origin === null ? response : withHeaders(response, corsHeaders(origin));
  }
  function failed(request: Request): void {
    ctx.requests.inFlight--;
    ctx.bodies.uploads.giveBack(request);
  }

  let server: ServerLike = null;
  const plumbing = new Elysia({ name: "basalt.plumbing", seed: ctx.instanceId })
    .onError({ as: "global" }, ({ error, code, set, path, request }) => {
      let failure: ApiError;
      // Elysia wraps what a parser throws; the parser's own ApiError (413, 415) is the cause.
      const cause = code === "PARSE" ? (error as Error).cause : undefined;
      if (error instanceof ApiError) failure = error;
      else if (cause instanceof ApiError) failure = cause;
      else if (error instanceof UnknownRoute) {
        // A route word where another method has a route of its own (GET /views/change-requests): 405 naming it.
        const allowed = [...new Set(known.filter((route) => route.path === path).map((route) => route.method))].sort();
        if (allowed.length === 0) {
          set.status = 404;
          return unknownRoute(path);
        }
        failure = new ApiError(405, "METHOD_NOT_ALLOWED", `${path} does not take ${request.method}; it takes ${allowed.join(", ")}.`, { allowed }, { allow: allowed.join(", ") });
      } else if (error instanceof ValidationError) {
        const issues = validationIssues(error);
        // The issues are in `data.issues` only: Busabase's SDK and CLI each print them after the message, so a message that also held them showed each three times.
        failure = new ApiError(400, "BAD_REQUEST", `Invalid request: ${issues.length === 1 ? "1 problem" : `${issues.length} problems`}, each in data.issues.`, { issues });
      } else if (code === "PARSE") failure = new ApiError(400, "BAD_REQUEST", "The body is not valid JSON.");
      else if (isDiskFull(error)) {
        ctx.log.error(`disk full on ${path}: the write was rolled back`);
        failure = new ApiError(507, "INSUFFICIENT_STORAGE", "The server's disk is full: nothing was written. Try again once space is freed.");
      } else if (code === "NOT_FOUND") {
        const allowed = methodsOf(path);
        if (allowed.length === 0) {
          set.status = 404;
          return unknownRoute(path);
        }
        failure = new ApiError(405, "METHOD_NOT_ALLOWED", `${path} does not take ${request.method}; it takes ${allowed.join(", ")}.`, { allowed }, { allow: allowed.join(", ") });
      } else {
        ctx.log.error(`unhandled error on ${path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        failure = new ApiError(500, "INTERNAL_SERVER_ERROR", "Something went wrong on the server.");
      }
      set.status = failure.status;
      if (failure.headers) Object.assign(set.headers, failure.headers);
      return envelope(failure);
    })
    // Before the access macro's own transform: a route word is no credential's business.
    .onTransform({ as: "global" }, refuseRouteWords)
    // The server, for a body's client address: read from the app once it listens, not from each
    // request's context (a hook that names `server` makes Elysia define it on every request's).
    .onStart((app) => {
      server = app.server;
    })
    // Only requests with a body come here (Elysia parses none for GET or HEAD), before the access
    // check: an announced length over the route's limit is refused before a byte is read.
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      if (!request.body) return undefined;
      const path = urlPath(request.url);
      const upload = uploadOf(request.method, path);
      const large = upload ? undefined : largeJsonOf(request.method, path);
      const limit = upload ? upload.limit(ctx.config) : large ? large.limit(ctx.config) : maxBody;
      const announced = request.headers.get("content-length");
      if (Number(announced ?? 0) > limit) {
        throw upload ? new ApiError(413, "PAYLOAD_TOO_LARGE", `The file is larger than ${limit} bytes, the most this route reads (the operator sets it with ${upload.flag}).`) : large ? largeTooLarge(large) : tooLarge();
      }
      // What the body will hold while read: counted before a byte is read, so slow bodies cannot pile up.
      const held = announced === null ? limit : Number(announced);
      if (upload) return new UploadBody(upload.held === "memory" ? held : 0);
      const release = ctx.bodies.json.take(clientAddress(server, request), held);
      let text: string;
      try {
        text = await readBodyText(request, limit, large ? () => largeTooLarge(large) : tooLarge);
      } finally {
        release();
      }
      if (text.length === 0) return undefined;
      if (!JSON_TYPE.test(contentType ?? "")) {
        throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json.");
      }
      return parseJsonBody(text);
    })
    // Around every request, the router's own included (unknown routes, preflights): counted in
    // flight, answered with CORS headers when it has an Origin, and logged once answered. A wrap
    // rather than request and after-response hooks: those cost every request a context hook and a
    // deferred task, measured as a fifth of a health check (docs/performance.md, 2026-11-29).
    .wrap(((handle: (request: Request) => Response | Promise<Response>) => (request: Request) => {
      const start = performance.now();
      const origin = request.headers.get("origin");
      ctx.requests.inFlight++;
      if (origin !== null && request.method === "OPTIONS") return answered(handle, request, start, origin, new Response(null, { status: 204 }));
      let response: Response | Promise<Response>;
      try {
        response = handle(request);
      } catch (error) {
        failed(request);
        throw error;
      }
      return response instanceof Promise
        ? response.then(
            (done) => answered(handle, request, start, origin, done),
            (error) => {
              failed(request);
              throw error;
            },
          )
        : answered(handle, request, start, origin, response);
    }) as never);
  return plumbing;
}

/**
 * The global hooks above, dropped from the routes they never serve once every route is added,
 * before any is compiled (each hook left is a call in the route's compiled handler per request):
 * - GET and HEAD routes read no body, so the parser never runs for them; but Elysia compiles
 *   every route that has a parse hook as an async function, a promise and a turn of the microtask
 *   queue per request;
 * - a route without path parameters has no place a route word could stand in.
 */
export function withoutUnusedHooks(routes: { method: string; path: string; hooks: { parse?: unknown; transform?: { fn: unknown }[] } }[]): void {
  for (const route of routes) {
    if (route.method === "GET" || route.method === "HEAD") delete route.hooks.parse;
    if (!route.path.includes(":") && route.hooks.transform) route.hooks.transform = route.hooks.transform.filter((hook) => hook.fn !== refuseRouteWords);
  }
}

/** The CORS headers of an answer to `origin`. */
const corsHeaders = (origin: string): Record<string, string> => ({ ...CORS_HEADERS, "access-control-allow-origin": origin, vary: "Origin" });

/** An answer with `headers` set; one whose headers are immutable (a redirect, a fetched response) is copied first. */
function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const name in headers) response.headers.set(name, headers[name]);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const name in headers) copy.headers.set(name, headers[name]);
    return copy;
  }
}

/**
 * How the app listens, for `serve` and the tests alike. Bun's own body limit is lifted so that
 * every oversized body, however large, gets the 413 envelope from `plumbing` (which refuses an
 * announced length before reading and stops reading a streamed body at the limit). Elysia asks
 * for SO_REUSEPORT by default, which would let a second server share the port: refused here.
 */
export const listenOptions = (port: number, hostname: string) => ({ port, hostname, reusePort: false, maxRequestBodySize: Number.MAX_SAFE_INTEGER });
