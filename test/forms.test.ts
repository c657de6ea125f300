import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { TestServer, createBase, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
let formNode: string;
beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write, "leads", [
    { slug: "name", name: "Name", type: "text", required: true },
    { slug: "email", name: "Email", type: "email" },
    { slug: "size", name: "Size", type: "select", options: { choices: [{ id: "s", name: "Small" }, { id: "l", name: "Large" }] } },
  ]);
  const made = await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "form", slug: "signup", name: "Sign up" }] } });
  formNode = made.body.operations[0].nodeId;
});
afterEach(() => server.stop());

const bindings = [
  { inputName: "fullName", fieldSlug: "name", required: true, label: "Your name" },
  { inputName: "mail", fieldSlug: "email" },
  { inputName: "size", fieldSlug: "size" },
];
const makeForm = (extra: Record<string, unknown> = {}) => server.call("POST", "/api/v1/forms", { key: ws.manage, body: { nodeId: formNode, targetBaseId: "leads", name: "Sign up", bindings, ...extra } });
const anonymous = (values: Record<string, unknown>, node = formNode) => fetch(`${server.url}/api/v1/forms/${node}/submit`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ values }) }).then(async (r) => ({ status: r.status, body: await r.json() }));

describe("forms", () => {
  test("a manager puts a form on a form node; it lists, reads and changes; one form a node", async () => {
    const made = await makeForm();
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ nodeId: formNode, name: "Sign up", share: { isPublic: false, anonymousSubmit: false }, submissionCount: 0, status: "active", mergeSubmissions: false });
    expect(made.body.boundFields).toEqual([
      { slug: "name", name: "Name", type: "text", choices: [] },
      { slug: "email", name: "Email", type: "email", choices: [] },
      { slug: "size", name: "Size", type: "select", choices: [{ id: "s", name: "Small" }, { id: "l", name: "Large" }] },
    ]);
    expect((await makeForm()).body).toMatchObject({ code: "CONFLICT", reason: "FORM_EXISTS" });
    expect((await server.call("POST", "/api/v1/forms", { key: ws.write, body: { nodeId: formNode, targetBaseId: "leads", name: "x" } })).status).toBe(403);
    expect((await server.call("GET", `/api/v1/forms/signup`, { key: ws.read })).body.id).toBe(made.body.id);
    expect((await server.call("GET", "/api/v1/forms?targetBaseId=leads", { key: ws.read })).body).toMatchObject({ forms: [{ id: made.body.id }], nextCursor: null });
    expect((await server.call("GET", "/api/v1/forms?cursor=nonsense", { key: ws.read })).body.error).toBe("The form cursor is invalid.");
    const changed = await server.call("PUT", `/api/v1/forms/${formNode}`, { key: ws.manage, body: { name: "Join us", share: { isPublic: true } } });
    expect(changed.body).toMatchObject({ name: "Join us", share: { isPublic: true, anonymousSubmit: false } });
    const wrongField = await server.call("PUT", `/api/v1/forms/${formNode}`, { key: ws.manage, body: { bindings: [{ inputName: "x", fieldSlug: "nope" }] } });
    expect(wrongField.body.error).toBe('The base "leads" has no field "nope".');
    expect((await server.call("GET", "/api/v1/forms/nothing", { key: ws.read })).body.error).toBe(`No node "nothing" in this space.`);
  });

  test("a member's submission is a record proposal waiting for review; inputs map to fields", async () => {
    await makeForm();
    const submitted = await server.call("POST", `/api/v1/forms/${formNode}/submit`, { key: ws.write, body: { values: { fullName: "Ada", mail: "ada@example.com", size: "Large" } } });
    const { changeRequestId, status } = submitted.body;
    expect([changeRequestId, status]).toEqual([expect.stringMatching(/^crq_/), "pending_review"]);
    const proposal = (await server.call("GET", `/api/v1/change-requests/${changeRequestId}`, { key: ws.read })).body;
    expect(proposal).toMatchObject({ status: "in_review", operations: [{ operation: "record_create", headCommit: { payload: { name: "Ada", email: "ada@example.com", size: "Large" } } }] });
    expect((await server.call("POST", `/api/v1/forms/${formNode}/submit`, { key: ws.write, body: { values: { mail: "x@example.com" } } })).body.error).toBe("Missing required fields: fullName.");
    expect((await server.call("POST", `/api/v1/forms/${formNode}/submit`, { key: ws.write, body: { values: { fullName: "A", color: "red" } } })).body.error).toBe('The form has no input "color".');
    expect((await server.call("POST", `/api/v1/forms/${formNode}/submit`, { key: ws.write, body: { values: { fullName: "A", mail: "not an address" } } })).status).toBe(400);
    expect((await server.call("GET", `/api/v1/forms/${formNode}`, { key: ws.read })).body.submissionCount).toBe(1);
  });

  test("a visitor submits without a key only to a public form that takes it; a limit and a rate hold", async () => {
    await makeForm();
    expect(await anonymous({ fullName: "Eve" })).toMatchObject({ status: 403, body: { error: "This form is not public." } });
    await server.call("PUT", `/api/v1/forms/${formNode}`, { key: ws.manage, body: { share: { isPublic: true } } });
    expect((await anonymous({ fullName: "Eve" })).status).toBe(403);
    await server.call("PUT", `/api/v1/forms/${formNode}`, { key: ws.manage, body: { share: { anonymousSubmit: true, submitLimit: 2 } } });
    const first = await anonymous({ fullName: "Visitor one" });
    expect(first).toMatchObject({ status: 200, body: { status: "pending_review" } });
    const proposal = (await server.call("GET", `/api/v1/change-requests/${first.body.changeRequestId}`, { key: ws.read })).body;
    expect(proposal.sourceAttribution).toMatchObject({ channel: "form", displayName: 'A visitor of the form "Sign up"' });
    expect((await anonymous({ fullName: "Visitor two" })).status).toBe(200);
    expect(await anonymous({ fullName: "Visitor three" })).toMatchObject({ status: 429, body: { error: "This form takes no more submissions: it has reached its limit of 2." } });
    expect((await server.call("GET", `/api/v1/forms/${formNode}`, { key: ws.read })).body.submissionCount).toBe(2);
    await server.call("PUT", `/api/v1/forms/${formNode}`, { key: ws.manage, body: { share: { requireCaptcha: true, submitLimit: 100 } } });
    expect((await anonymous({ fullName: "x" })).body.reason).toBe("CAPTCHA_REQUIRED");
    await server.call("PUT", `/api/v1/forms/${formNode}`, { key: ws.manage, body: { share: { requireCaptcha: false } } });
    let limited = 0;
    for (let i = 0; i < 40; i++) if ((await anonymous({ fullName: `v${i}` })).status === 429) limited++;
    expect(limited).toBeGreaterThan(0);
    expect((await anonymous({ fullName: "x" }, "nod_unknown")).status).toBe(429);
  });

  test("a form that merges its submissions makes the record at once", async () => {
    await makeForm({ mergeSubmissions: true, share: { isPublic: true, anonymousSubmit: true } });
    const submitted = await anonymous({ fullName: "Grace" });
    expect(submitted.body.status).toBe("merged");
    const records = (await server.call("GET", "/api/v1/records?baseId=leads", { key: ws.read })).body.records;
    expect(records.map((record: { fields: { name: string } }) => record.fields.name)).toEqual(["Grace"]);
  });
});
