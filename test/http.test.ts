import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { createApp } from "../src/http/app";
import { FIELD_TYPES } from "../src/shared/field-types";
import { requireDeclaredAccess } from "../src/http/access";
import { answers, requireDeclaredAnswers, requireDeclaredBodies } from "../src/http/openapi";
import { VERSION } from "../src/shared/version";
import { join } from "node:path";
import { Contract } from "./contract";
import { createBase, eventually, REPO, TestServer } from "./helpers";

let server: TestServer;
let owner: { id: string };
let key: string;

beforeAll(async () => {
  server = new TestServer({ maxBody: "2kb" });
  owner = await server.user("Ada", { admin: true });
  await server.space(owner.id, "Research");
  key = await server.key(owner.id, "manage");
});
afterAll(() => server.stop());

describe("section 1: conventions", () => {
  test("GET /api/health (and Busabase's GET /api/v1/health) answers without a credential", async () => {
    for (const path of ["/api/health", "/api/v1/health"]) {
      const reply = await server.call("GET", path);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ status: "ok", service: "basalt", version: VERSION, timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
      expect(reply.headers.get("content-type")).toBe("application/json;charset=utf-8");
    }
    // Its answers share one init: the CORS headers of one answer are not in the next.
    const fromPage = await server.call("GET", "/api/health", { headers: { origin: "http://localhost:3000" } });
    expect(fromPage.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    const fromAgent = await server.call("GET", "/api/health");
    expect([fromAgent.headers.get("access-control-allow-origin"), fromAgent.headers.get("vary")]).toEqual([null, null]);
  });

  test("an unknown route answers 404 in the envelope with its path", async () => {
    const reply = await server.call("GET", "/api/v1/no-such-thing");
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({
      error: "Not found",
      code: "NOT_FOUND",
      path: "/api/v1/no-such-thing",
      data: { path: "/api/v1/no-such-thing", hint: "GET /api/v1 links to the docs and openapi.json." },
    });
  });

  test("a route word is never read as an id: /records/favorites, /nodes/page, /bases/page are unknown routes, with or without a key; /records/page is its own route", async () => {
    expect((await server.call("GET", "/api/v1/records/page", {})).status).toBe(401);
    expect((await server.call("GET", "/api/v1/records/page", { key })).body).toMatchObject({ code: "BAD_REQUEST", error: "The query parameter baseId (or viewId) is required." });
    for (const path of ["/api/v1/records/favorites", "/api/v1/nodes/page", "/api/v1/bases/page", "/api/v1/change-requests/favorites", "/api/v1/bases/deleted", "/api/v1/views/paged"]) {
      for (const caller of [{ key }, {}]) {
        const reply = await server.call("GET", path, caller);
        expect(reply.status).toBe(404);
        expect(reply.body).toMatchObject({ error: "Not found", code: "NOT_FOUND", path });
      }
    }
    const record = await server.call("GET", "/api/v1/records/rec_missing", { key });
    expect(record.body).toMatchObject({ code: "NOT_FOUND", error: `No record "rec_missing" in this space.` });
  });

  test("a validation failure lists one issue per path: a missing property is not also 'not a string'", async () => {
    const reply = await server.call("POST", "/api/v1/webhooks", { key, body: { eventType: "record.created", actionKind: "webhook", config: { headers: "none" } } });
    expect(reply.status).toBe(400);
    expect(reply.body.data.issues).toEqual([
      { path: ["name"], message: "Expected required property" },
      { path: ["config", "headers"], message: "Expected object" },
    ]);
    // The sentence does not repeat them: Busabase's SDK and CLI each print data.issues after it.
    expect(reply.body.error).toBe("Invalid request: 2 problems, each in data.issues.");
  });

  test("a method a known path does not support answers 405 in the envelope, listing what it takes", async () => {
    const reply = await server.call("DELETE", "/api/health");
    expect(reply.status).toBe(405);
    expect(reply.body).toMatchObject({ code: "METHOD_NOT_ALLOWED", data: { allowed: ["GET"] } });
    expect(reply.headers.get("allow")).toBe("GET");
    const param = await server.call("PUT", "/api/v1/records/rec_x", { key });
    expect(param.body.data.allowed).toEqual(["GET"]);
  });

  test("GET /api/v1 links an agent to the docs, the document, the guide and the admin page; /llms.txt is the guide", async () => {
    const front = await server.call("GET", "/api/v1");
    expect(front.body.links).toEqual({ docs: "/api/v1/docs", openapi: "/api/v1/openapi.json", llms: "/llms.txt", admin: "/admin", health: "/api/health" });
    const guide = await server.call("GET", "/llms.txt");
    expect(guide.headers.get("content-type")).toContain("text/plain");
    for (const step of ["/api/v1/device/code", "x-basalt-space", "/change-requests", "/merge"]) expect(guide.text).toContain(step);
    expect((await server.call("GET", "/api/v1/meta")).body).toEqual({ service: "basalt", version: front.body.version, timestamp: server.clock.now() });
  });

  test("errors an agent can act on: a union names its variants, once; a missing space says how to get one", async () => {
    const lonely = await server.user("Lonely");
    const reply = await server.call("GET", "/api/v1/nodes", { key: await server.key(lonely.id, "read") });
    expect(reply.body.error).toContain("POST /api/v1/spaces");
    const union = await server.call("POST", "/api/v1/nodes/change-requests", { key, body: { operations: [{ kind: "grow" }] } });
    expect(union.status).toBe(400);
    const described = union.body.data.issues.map((issue: { message: string }) => issue.message).join(" ");
    expect(described).toContain('kind "create"');
    expect(described).toContain('kind "move" (nodeId');
    const messages = union.body.data.issues.map((issue: { path: string[]; message: string }) => `${issue.path.join(".")} ${issue.message}`);
    expect(new Set(messages).size).toBe(messages.length);
  });

  test("malformed JSON is a 400 that does not echo internals", async () => {
    const reply = await server.call("POST", "/api/v1/auth/login", { rawBody: '{"email": ', headers: { "content-type": "application/json" } });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: "The body is not valid JSON.", code: "BAD_REQUEST", data: { issues: [{ path: [], message: "The body is not valid JSON." }] } });
  });

  test("a validation failure lists issues with paths", async () => {
    const reply = await server.call("POST", "/api/v1/spaces", { key, body: { slug: 5 } });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("BAD_REQUEST");
    const paths = reply.body.data.issues.map((issue: { path: string[] }) => issue.path.join("."));
    expect(paths).toContain("name");
    expect(paths).toContain("slug");
  });

  test("a refusal found past the schema (a field the base lacks, a value its type refuses, a bad query parameter) names its path in data.issues too", async () => {
    await createBase(server, key, "issues", [{ slug: "title", name: "Title", type: "text" }, { slug: "count", name: "Count", type: "number" }]);
    const issues = async (method: string, path: string, body?: unknown) => {
      const reply = await server.call(method, path, { key, ...(body === undefined ? {} : { body }) });
      expect([reply.status, reply.body.code]).toEqual([400, "BAD_REQUEST"]);
      return reply.body.data.issues.map((issue: { path: unknown[] }) => issue.path);
    };
    const view = (config: unknown) => issues("POST", "/api/v1/views/change-requests", { operation: "create", baseId: "issues", name: "V", type: "table", config });
    expect(await view({ filters: [{ fieldSlug: "title", operator: "eq", value: "a" }, { fieldSlug: "missing", operator: "eq", value: "a" }] })).toEqual([["config", "filters", 1, "fieldSlug"]]);
    expect(await view({ sorts: [{ fieldSlug: "missing" }] })).toEqual([["config", "sorts", 0, "fieldSlug"]]);
    expect(await issues("POST", "/api/v1/bases/issues/change-requests", { fields: { count: "many" } })).toEqual([["fields", "count"]]);
    expect(await issues("POST", "/api/v1/bases/issues/records/bulk-change-request", { records: [{ title: "ok" }, { count: "many" }] })).toEqual([["records", 1, "fields", "count"]]);
    expect(await issues("GET", "/api/v1/records?baseId=issues&limit=100000")).toEqual([["limit"]]);
    // An item of a list is named by its place in the body.
    const fields = [{ slug: "fine", name: "Fine", type: "text" }, { slug: "Not A Slug", name: "Bad", type: "text" }];
    expect(await issues("POST", "/api/v1/bases", { slug: "more", name: "More", fields })).toEqual([["fields", 1, "slug"]]);
    const create = (slug: string) => ({ kind: "create", nodeType: "folder", slug, name: slug });
    expect(await issues("POST", "/api/v1/nodes/change-requests", { operations: [create("fine"), create("Not A Slug")] })).toEqual([["operations", 1, "slug"]]);
    // A refusal of the request as a whole names no field: its path is empty.
    expect(await issues("GET", "/api/v1/records")).toEqual([[]]);
  });

  test("access is decided before validation: no credential is a 401, too low a level a 403", async () => {
    const anonymous = await server.call("POST", "/api/v1/spaces", { body: { slug: 5 } });
    expect(anonymous.status).toBe(401);
    const reader = await server.call("POST", "/api/v1/spaces", { key: await server.key(owner.id, "read"), body: { slug: 5 } });
    expect(reader.status).toBe(403);
  });

  test("a value of the wrong type is rejected, never coerced", async () => {
    const session = await server.signIn("ada@example.com");
    for (const level of [3, true, ["read"], { level: "read" }]) {
      const reply = await server.call("POST", "/api/v1/api-keys", { session, body: { name: "x", level } });
      expect(reply.status).toBe(400);
    }
    const stringly = await server.call("PATCH", `/api/v1/users/${owner.id}`, { key, body: { banned: "false" } });
    expect(stringly.status).toBe(400);
  });

  test("unknown fields in a body are ignored", async () => {
    const reply = await server.call("POST", "/api/v1/spaces", { key, body: { name: "Extra", slug: "extra", color: "red" } });
    expect(reply.status).toBe(201);
    expect(reply.body).not.toHaveProperty("color");
  });

  test("a body that is not JSON is a 415", async () => {
    const reply = await server.call("POST", "/api/v1/auth/login", { rawBody: "email=a", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(reply.status).toBe(415);
    expect(reply.body.code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  test("a body over the limit is a 413, with or without a declared length", async () => {
    const big = JSON.stringify({ name: "x".repeat(4000) });
    const declared = await server.call("POST", "/api/v1/spaces", { key, rawBody: big, headers: { "content-type": "application/json" } });
    expect(declared.status).toBe(413);
    expect(declared.body.code).toBe("PAYLOAD_TOO_LARGE");
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const chunked = await fetch(`${server.url}/api/v1/spaces`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: stream });
    expect(chunked.status).toBe(413);
    expect((await chunked.json()).code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("a thrown error is a 500 with no stack or SQL in the body", async () => {
    const app = createApp(server.ctx).get("/api/v1/explode", () => {
      throw new Error("SQLITE_ERROR: near SELECT * FROM users");
    });
    const reply = await app.handle(new Request("http://localhost/api/v1/explode"));
    expect(reply.status).toBe(500);
    const text = await reply.text();
    expect(JSON.parse(text)).toEqual({ error: "Something went wrong on the server.", code: "INTERNAL_SERVER_ERROR" });
    expect(text).not.toContain("SELECT");
  });

  test("CORS preflight answers 204 and allows the contract's headers", async () => {
    const reply = await server.call("OPTIONS", "/api/v1/auth", {
      headers: { origin: "http://localhost:3000", "access-control-request-method": "POST", "access-control-request-headers": "authorization, x-basalt-space" },
    });
    expect(reply.status).toBe(204);
    const allowed = reply.headers.get("access-control-allow-headers")!;
    for (const header of ["content-type", "authorization", "x-api-key", "x-basalt-space", "x-busabase-space", "x-basalt-channel"]) expect(allowed).toContain(header);
    expect(reply.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
  });

  test("a request from another origin gets the CORS headers, and nothing it or a preflight did stays counted in flight", async () => {
    const before = server.ctx.requests.inFlight;
    const origin = { origin: "http://localhost:3000" };
    for (let i = 0; i < 3; i++) expect((await server.call("OPTIONS", "/api/v1/records", { headers: { ...origin, "access-control-request-method": "GET" } })).status).toBe(204);
    const answered = await server.call("GET", "/api/v1/auth", { key, headers: origin });
    expect(answered.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    expect(answered.headers.get("vary")).toBe("Origin");
    const refused = await server.call("GET", "/api/v1/auth", { headers: origin });
    expect([refused.status, refused.headers.get("access-control-allow-origin")]).toEqual([401, "http://localhost:3000"]);
    expect(server.ctx.requests.inFlight).toBe(before);
  });

  test("the server's log writes request lines in batches, in order with its errors, and those pending when the process exits", () => {
    const script = `const { consoleLogger } = await import(${JSON.stringify(join(REPO, "src/context.ts"))});
consoleLogger.info("GET /a 200 1.00ms");
consoleLogger.error("unhandled error on /b");
consoleLogger.info("GET /c 200 2.00ms");
consoleLogger.info("GET /d 404 0.50ms");
process.exit(0);`;
    const run = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    expect(run.stdout.toString()).toBe("GET /a 200 1.00ms\nGET /c 200 2.00ms\nGET /d 404 0.50ms\n");
    expect(run.stderr.toString()).toBe("unhandled error on /b\n");
  });

  test("a read is compiled as a plain function: no body parser (Elysia makes a route with one async), no server looked up per request, no route-word check where no parameter is", () => {
    const app = createApp(server.ctx);
    for (const path of ["/api/health", "/api/v1/health"]) {
      const health = app.routes.find((route) => route.method === "GET" && route.path === path)!;
      expect(health.hooks.parse).toBeUndefined();
      const compiled = health.compile();
      expect(compiled.constructor.name).toBe("Function");
      expect(String(compiled)).not.toContain("getServer");
      expect(String(compiled)).not.toContain("transform");
    }
    const record = app.routes.find((route) => route.method === "GET" && route.path === "/api/v1/records/:recordId")!;
    expect(record.hooks.transform).toHaveLength(2);
    const create = app.routes.find((route) => route.method === "POST" && route.path === "/api/v1/bases/:baseId/change-requests")!;
    expect(create.hooks.parse).toBeDefined();
  });

  test("the executable is built without minifying: Elysia tells sync handlers from async ones by their source, and whitespace-less source reads as async", async () => {
    const { scripts } = await Bun.file(join(REPO, "package.json")).json();
    expect(scripts.build).toStartWith("bun build --compile");
    expect(scripts.build).not.toContain("--minify");
  });

  test("every request is logged once: method, path, status, duration, never a key", async () => {
    server.logs.length = 0;
    await server.call("GET", "/api/v1/auth?token=abc", { key });
    await server.call("GET", "/api/v1/auth", { headers: { "x-api-key": key } });
    await eventually(() => server.logs.length >= 2);
    expect(server.logs).toHaveLength(2);
    expect(server.logs[0]).toMatch(/^GET \/api\/v1\/auth 200 \d+\.\d\dms$/);
    expect(server.logs.join("\n")).not.toContain(key);
  });

  test("each line names the path asked for and the status answered, whichever route answered it", async () => {
    await server.call("GET", "/api/v1"); // the first call of a run also reads the document its answers are checked against
    server.logs.length = 0;
    // A route without parameters keeps its line's start (read once from its first request), yet still follows its status and method.
    const asked: [string, string, { key?: string; headers?: Record<string, string> }?][] = [
      ["GET", "/api/v1/auth", { key }],
      ["GET", "/api/v1/auth"],
      ["GET", "/api/v1/auth?x=1", { key }],
      ["HEAD", "/api/health"],
      ["GET", "/api/health"],
      ["GET", "/api/v1/health"],
      ["GET", "/api/v1/records/rec_missing", { key, headers: { "x-basalt-space": "research" } }],
      ["GET", "/api/v1/records/rec_other?include=none", { key, headers: { "x-basalt-space": "research" } }],
      ["GET", "/api/v1/no-such-route"],
      ["OPTIONS", "/api/v1/auth", { headers: { origin: "http://localhost:3000", "access-control-request-method": "GET" } }],
    ];
    for (const [method, path, options] of asked) await server.call(method, path, options);
    await eventually(() => server.logs.length >= asked.length);
    expect(server.logs.map((line) => line.replace(/ \d+\.\d\dms$/, ""))).toEqual([
      "GET /api/v1/auth 200",
      "GET /api/v1/auth 401",
      "GET /api/v1/auth 200",
      "HEAD /api/health 200",
      "GET /api/health 200",
      "GET /api/v1/health 200",
      "GET /api/v1/records/rec_missing 404",
      "GET /api/v1/records/rec_other 404",
      "GET /api/v1/no-such-route 404",
      "OPTIONS /api/v1/auth 204",
    ]);
  });
});

describe("OpenAPI and docs", () => {
  test("openapi.json is public and lists every /api/v1 route with absolute paths", async () => {
    const reply = await server.call("GET", "/api/v1/openapi.json");
    expect(reply.status).toBe(200);
    const paths = Object.keys(reply.body.paths);
    for (const path of ["/api/v1/auth", "/api/v1/api-keys", "/api/v1/device/finalize", "/api/v1/spaces/{spaceId}/members", "/api/v1/nodes", "/api/health"]) {
      expect(paths).toContain(path);
    }
    expect(paths.every((path) => path.startsWith("/api/") || path === "/mcp")).toBe(true);
  });

  test("every route declares its access, hidden ones included, and the document shows it", async () => {
    const app = createApp(server.ctx);
    const hidden = app.routes.filter((route) => (route.hooks.detail as { hide?: boolean } | undefined)?.hide);
    expect(hidden.map((route) => route.path)).toContain("/api/v1/openapi.json");
    for (const route of app.routes) expect((route.hooks.detail as Record<string, unknown>)?.["x-basalt-access"], `${route.method} ${route.path}`).toBeString();
    const document = (await server.call("GET", "/api/v1/openapi.json")).body;
    expect(document.paths["/api/v1/api-keys"].post["x-basalt-access"]).toBe("session");
    expect(document.paths["/api/v1/nodes"].get["x-basalt-access"]).toBe("read");
    expect(document.paths["/api/v1/users"].get["x-basalt-access"]).toBe("admin");
    expect(document.paths["/api/v1/bases/{baseId}"].patch["x-basalt-access"]).toBe("write, manage to change reviewPolicy");
    expect(document.paths["/api/v1/spaces/{spaceId}"].delete["x-basalt-access"]).toBe("manage, owner role");
  });

  test("the document carries each body's schema, a tag per domain, the space header and the error envelope", async () => {
    const document = (await server.call("GET", "/api/v1/openapi.json")).body;
    const app = createApp(server.ctx);
    for (const route of app.routes.filter((r) => r.hooks.body && !(r.hooks.detail as { hide?: boolean })?.hide)) {
      const operation = document.paths[route.path.replace(/:(\w+)/g, "{$1}")][route.method.toLowerCase()];
      expect(operation.requestBody.content["application/json"].schema, `${route.method} ${route.path}`).toBeObject();
    }
    const update = document.paths["/api/v1/records/{recordId}/change-requests"].post;
    expect(update.tags).toEqual(["Records"]);
    expect(update.parameters.map((p: { name: string }) => p.name)).toContain("x-basalt-space");
    expect(update.requestBody.content["application/json"].schema.anyOf.map((v: { properties: { operation: { const: string } } }) => v.properties.operation.const)).toEqual(["update", "delete", "restore"]);
    expect(update.responses["403"].content["application/json"].schema.allOf[0]).toEqual({ $ref: "#/components/schemas/Error" });
    expect(update.responses["409"].content["application/json"].schema.allOf[1].properties.reason.enum).toContain("MERGE_CONFLICT");
    expect(document.components.schemas.Error.required).toEqual(["error", "code"]);
    // A field's type is a string enum of every type, where a field is answered and where one is created.
    expect(document.components.schemas.Field.properties.type).toMatchObject({ type: "string", enum: [...FIELD_TYPES] });
    expect(document.paths["/api/v1/bases/{baseId}/fields"].post.requestBody.content["application/json"].schema.properties.type.enum).toEqual([...FIELD_TYPES]);
    expect(document.paths["/api/v1/spaces/{spaceId}"].get.parameters.map((p: { name: string }) => p.name)).not.toContain("x-basalt-space");
  });

  test("every operation has a success schema; the shared objects are components", async () => {
    const document = (await server.call("GET", "/api/v1/openapi.json")).body;
    for (const [path, operations] of Object.entries<Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const success = Object.keys(operation.responses).filter((status) => status.startsWith("2"));
        expect(success.length, `${method} ${path}`).toBeGreaterThanOrEqual(1);
        // JSON for everything but a file's bytes, which are documented as their own media type.
        for (const status of success) expect(Object.values(operation.responses[status].content ?? {})[0]?.schema, `${method} ${path} ${status}`).toBeObject();
      }
    }
    for (const name of ["Record", "Base", "Field", "Node", "ChangeRequest", "Operation", "Commit", "Review", "ApiKey", "User", "WebhookRule", "Delivery", "Error"]) {
      expect(document.components.schemas[name], name).toBeObject();
    }
    expect(document.paths["/api/v1/records/{recordId}"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Record" });
    expect(document.components.schemas.Node.properties.children.items).toEqual({ $ref: "#/components/schemas/Node" });
    expect(document.paths["/api/v1/auth/login"].post.responses["429"]).toBeObject();
    expect(document.paths["/api/v1/bases/{baseId}/fields"].post.responses["507"]).toBeObject();
  });

  test("an answer the document does not describe fails the test that received it", async () => {
    const contract = new Contract((await server.call("GET", "/api/v1/openapi.json")).body);
    const health = { status: "ok", service: "basalt", version: "1.0.0", timestamp: "2026-01-01T00:00:00.000Z" };
    expect(() => contract.check("GET", "/api/health", 200, health, "application/json")).not.toThrow();
    expect(() => contract.check("GET", "/api/health", 200, { status: "ok", service: "basalt", timestamp: health.timestamp }, "application/json")).toThrow("must have required property 'version'");
    expect(() => contract.check("GET", "/api/health", 418, health, "application/json")).toThrow("does not document");
    expect(() => contract.check("GET", "/api/v1/nowhere", 404, { message: "no" }, "application/json")).toThrow("must have required property 'error'");
  });

  test("the document passes a standard OpenAPI linter (Redocly's recommended rules) with no error", async () => {
    const file = join(server.dir, "openapi.json");
    await Bun.write(file, (await server.call("GET", "/api/v1/openapi.json")).text);
    const lint = Bun.spawnSync(["node", join(REPO, "node_modules/@redocly/cli/bin/cli.js"), "lint", file, "--format=stylish"], {
      cwd: server.dir,
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    });
    expect(lint.stdout.toString() + lint.stderr.toString()).toContain("Your API description is valid");
    expect(lint.exitCode).toBe(0);
  }, 60_000);

  test("building the app fails for a route without an access declaration", () => {
    expect(() => requireDeclaredAccess(new Elysia().get("/api/v1/forgotten", () => "oops").routes)).toThrow("GET /api/v1/forgotten");
    expect(() => requireDeclaredAccess(new Elysia().get("/hidden", () => "oops", { detail: { hide: true } }).routes)).toThrow("GET /hidden");
  });

  test("building the app fails for a documented route without a declared answer", () => {
    expect(() => requireDeclaredAnswers(new Elysia().get("/api/v1/forgotten", () => "oops").routes)).toThrow("GET /api/v1/forgotten");
    expect(() => requireDeclaredAnswers(new Elysia().use(answers).get("/api/v1/listed", () => [], { answers: { 200: t.Array(t.String()) } }).routes)).not.toThrow();
  });

  test("every POST, PUT and PATCH documents its body, or says it takes none", async () => {
    const document = (await server.call("GET", "/api/v1/openapi.json")).body;
    const silent: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, { requestBody?: { content: Record<string, { schema: unknown }> }; "x-basalt-no-body"?: boolean; description?: string }>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!["post", "put", "patch"].includes(method)) continue;
        if (operation["x-basalt-no-body"]) expect(operation.description, `${method} ${path}`).toContain("Takes no body.");
        else if (!operation.requestBody || Object.values(operation.requestBody.content).some((media) => typeof media.schema !== "object")) silent.push(`${method} ${path}`);
      }
    }
    expect(silent).toEqual([]);
    for (const path of ["/api/v1/invitations/{token}/join", "/api/v1/sync/snapshots", "/api/v1/remotes/status", "/api/v1/remotes/{remoteId}/pull", "/api/v1/remotes/{remoteId}/push"]) expect(document.paths[path].post["x-basalt-no-body"], path).toBe(true);
    for (const path of ["/api/v1/install/archive/plan", "/api/v1/install/archive"]) expect(Object.keys(document.paths[path].post.requestBody.content)).toEqual(["application/gzip", "application/x-tar"]);
  });

  test("building the app fails for a route that changes state without declaring its body or none", () => {
    expect(() => requireDeclaredBodies(new Elysia().post("/api/v1/forgotten", () => "oops").routes)).toThrow("POST /api/v1/forgotten");
    expect(() => requireDeclaredBodies(new Elysia().patch("/api/v1/forgotten/:id", () => "oops").routes)).toThrow("PATCH /api/v1/forgotten/:id");
    expect(() => requireDeclaredBodies(new Elysia().use(answers).post("/api/v1/ping", () => "pong", { noBody: true }).routes)).not.toThrow();
    expect(() => requireDeclaredBodies(new Elysia().post("/api/v1/named", () => "ok", { body: t.Object({ name: t.String() }) }).routes)).not.toThrow();
  });

  test("the docs page loads its assets from this server, not a CDN", async () => {
    const page = await server.call("GET", "/api/v1/docs");
    expect(page.status).toBe(200);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect(source.startsWith("/")).toBe(true);
    for (const source of sources) expect((await server.call("GET", source)).status).toBe(200);
    expect(page.text).toContain("/api/v1/openapi.json");
  });
});
