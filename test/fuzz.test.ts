import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { Contract } from "./contract";
import { createBase, freshWorkspace, type TestServer, textOf, type Workspace } from "./helpers";

/**
 * Generated wrong input against every operation of openapi.json (issue 11, item 1): wrong types,
 * missing and extra fields, huge strings, deep nesting, prototype keys, invalid UTF-8, wrong
 * content types, absurd query values, every variant of the credential and space headers. No answer
 * may be a 5xx, every answer must be one the document describes (errors in the envelope), and the
 * database must pass `PRAGMA integrity_check` afterwards. `npm test` runs a short seeded run;
 * `BASALT_FUZZ_RUNS=20000 bun test test/fuzz.test.ts` the long one (set `BASALT_FUZZ_SEED` to replay).
 */
const RUNS = Number(process.env.BASALT_FUZZ_RUNS ?? 400);
const SEED = Number(process.env.BASALT_FUZZ_SEED ?? 20261123);

let server: TestServer;
let ws: Workspace;
let contract: Contract;
let operations: { method: string; template: string }[];
const realIds: string[] = [];

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace());
  const base = await createBase(server, ws.write);
  const record = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Fuzzed" } } });
  const proposal = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "Proposed" } } });
  realIds.push(base.id, base.fields[0].id, base.nodeId, record.body.id, record.body.headCommitId, proposal.body.id, proposal.body.operations[0].id, ws.space.id, ws.owner.id, "papers");
  const document = await (await fetch(`${server.url}/api/v1/openapi.json`)).json();
  contract = new Contract(document);
  operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([template, methods]) =>
    Object.keys(methods)
      .filter(() => template !== "/mcp")
      .map((method) => ({ method: method.toUpperCase(), template })),
  );
});
afterAll(() => server.stop());

const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype"];
const text = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.constantFrom(...PROTOTYPE_KEYS, "", " ", "null", "0", "-1", "1e309", "NaN", "%00", "../../etc/passwd"));
const huge = fc.integer({ min: 1, max: 3 }).map((n) => "x".repeat(n * 400_000));
/** Chained so the ids are read when values are generated, after `beforeAll` made them. */
const realId = fc.constant(null).chain(() => fc.constantFrom(...realIds));
const pathValue = fc.oneof(realId, realId, text, fc.constantFrom("%2e%2e", "%2F", "%E0%A4%A", "a".repeat(5000)));

/** Any JSON, some of it shaped like Basalt's bodies, some deep, some with prototype keys. */
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double(),
    fc.integer(),
    text,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(text, fc.constantFrom("fields", "operation", "kind", "name", "slug", "level", "config", "records", "operations", ...PROTOTYPE_KEYS)), tie("value"), { maxKeys: 5 }),
  ),
})).value;
const deep = fc.integer({ min: 50, max: 5000 }).map((depth) => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`));

const body = fc.oneof(
  fc.constant(undefined),
  json.map((value) => ({ raw: JSON.stringify(value) ?? "null", type: "application/json" })),
  deep.map((value) => ({ raw: JSON.stringify(value), type: "application/json" })),
  huge.map((value) => ({ raw: JSON.stringify({ name: value, fields: { title: value } }), type: "application/json" })),
  fc.constantFrom('{"a":', "{'a':1}", "[1,2", "\u0000", '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}').map((raw) => ({ raw, type: "application/json" })),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => ({ raw: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, ...bytes]), type: "application/json" })),
  json.map((value) => ({ raw: JSON.stringify(value) ?? "", type: "text/plain" })),
  fc.constant({ raw: "a=1&b=2", type: "application/x-www-form-urlencoded" }),
);

const query = fc.array(
  fc.tuple(
    fc.oneof(text, fc.constantFrom("limit", "cursor", "sort", "status", "baseId", "filters[0][fieldSlug]", "filters[0][operator]", "filters[0][value]", "filters[__proto__][x]", "sort[fieldSlug]", "depth", "mine")),
    fc.oneof(text, fc.constantFrom("-1", "0", "101", "99999999999999999999", "1.5", "title", "-title", "eq", "in", "isEmpty", "true")),
  ),
  { maxLength: 5 },
);

const credential = fc.oneof(
  fc.constant({}),
  fc.constantFrom("read", "propose", "write", "manage").map((level) => ({ authorization: `Bearer ${ws[level as "read"]}` })),
  fc.constantFrom("Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer bsk_", "Bearer bsk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "bearer x y z").map((authorization) => ({ authorization })),
  text.map((value) => ({ "x-api-key": value.replace(/[\r\n]/g, "") })),
  fc.constant({ cookie: "basalt_session=forged" }),
);
const spaceHeader = fc.oneof(fc.constant({}), fc.constantFrom("research", "nope", "", "__proto__").map((space) => ({ "x-basalt-space": space })));

/** Header values must be ByteStrings; a generated value outside that is not a request a client can send. */
const sendable = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([, value]) => /^[\x20-\x7e]*$/.test(value)));

test(`${RUNS} generated wrong requests: no 5xx, every answer one openapi.json describes, the database intact`, async () => {
  const operation = fc.constantFrom(...operations);
  await fc.assert(
    fc.asyncProperty(
      operation,
      fc.array(pathValue, { minLength: 3, maxLength: 3 }),
      query,
      body,
      credential,
      spaceHeader,
      fc.constantFrom("same", "GET", "POST", "PUT", "PATCH", "DELETE"),
      async (op, values, pairs, payload, auth, space, methodChoice) => {
        let i = 0;
        const path = op.template.replace(/\{\w+\}/g, () => encodeURIComponent(values[i++]));
        const search = new URLSearchParams(pairs).toString();
        const method = methodChoice === "same" ? op.method : methodChoice;
        const headers = sendable({ ...auth, ...space, ...(payload ? { "content-type": payload.type } : {}) });
        const aborter = new AbortController();
        const response = await fetch(`${server.url}${path}${search ? `?${search}` : ""}`, {
          method,
          headers,
          body: method === "GET" ? undefined : payload?.raw,
          redirect: "manual",
          signal: aborter.signal,
        });
        const answer = await textOf(response, aborter);
        let parsed: unknown = answer;
        try {
          parsed = JSON.parse(answer);
        } catch {}
        expect(response.status, `${method} ${path}?${search} → ${answer.slice(0, 300)}`).toBeLessThan(500);
        contract.check(method, path, response.status, parsed, response.headers.get("content-type"));
      },
    ),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
  expect(server.ctx.store.sqlite.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
}, 600_000);
