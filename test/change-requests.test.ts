import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createBase, deleteField, TestServer, freshPapersWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshPapersWorkspace()));
afterEach(() => server.stop());

const proposeRecord = async (fields: Record<string, unknown> = { title: "Attention", year: 2017 }, key = ws.propose) => {
  const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key, body: { fields } });
  expect(reply.status).toBe(201);
  expect(reply.body.materialized).toBe(false);
  return reply.body;
};
const createRecord = async (fields: Record<string, unknown> = { title: "Attention", year: 2017 }) => {
  const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields } });
  expect(reply.body.materialized).toBe(true);
  return reply.body;
};
const review = (id: string, verdict: string, key = ws.write, reason?: string) => server.call("POST", `/api/v1/change-requests/${id}/reviews`, { key, body: { verdict, reason } });
const merge = (id: string, key = ws.write) => server.call("POST", `/api/v1/change-requests/${id}/merge`, { key });
const close = (id: string, reason?: string) => server.call("POST", `/api/v1/change-requests/${id}/close`, { key: ws.write, body: { reason } });
const revise = (operationId: string, fields: Record<string, unknown>, key = ws.propose) => server.call("POST", `/api/v1/operations/${operationId}/revisions`, { key, body: { fields } });
const get = async (id: string) => (await server.call("GET", `/api/v1/change-requests/${id}`, { key: ws.read })).body;

describe("the change request object", () => {
  test("has the seed's fields, attribution from the credential and the channel header", async () => {
    const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, headers: { "x-basalt-channel": "agent" }, body: { fields: { title: "T" }, message: "please add" } });
    const cr = reply.body;
    for (const key of ["id", "baseId", "targetType", "nodeId", "status", "submittedBy", "submittedByUser", "sourceAttribution", "sourceMeta", "reviewPolicySnapshot", "mergeSummary", "rejectedReason", "reviewedAt", "mergedAt", "createdAt", "updatedAt", "base", "node", "operations", "primaryOperation", "operationCount", "reviews"]) {
      expect(cr).toHaveProperty(key);
    }
    expect(cr).toMatchObject({ status: "in_review", targetType: "base", submittedBy: ws.owner.id, operationCount: 1, reviewPolicySnapshot: { kind: "single", requiredApprovals: 1 } });
    expect(cr.id).toMatch(/^crq_/);
    expect(cr.submittedByUser).toEqual({ id: ws.owner.id, name: "Ada", email: "ada@example.com", image: null });
    expect(cr.sourceAttribution).toEqual({ displayName: "changeRequest key", ownerName: "Ada", channel: "agent" });
    expect(cr.base.slug).toBe("papers");
    expect(cr.node.type).toBe("base");
    const op = cr.primaryOperation;
    expect(op).toMatchObject({ operation: "record_create", status: "pending", changeRequestId: cr.id, targetType: "base" });
    expect(op.id).toMatch(/^opr_/);
    expect(op.headCommit).toMatchObject({ id: op.headCommitId, operationId: op.id, parentCommitId: null, message: "please add", operation: "record_create", payload: { title: "T" } });
    const bad = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, headers: { "x-basalt-channel": "fax" }, body: { fields: { title: "T" } } });
    expect(bad.status).toBe(400);
  });

  test("a session's proposal is attributed to the web UI", async () => {
    const session = await server.signIn("ada@example.com");
    const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { session, space: ws.space.id, body: { fields: { title: "T" }, autoMerge: false } });
    expect(reply.body.sourceAttribution).toEqual({ displayName: "Ada", ownerName: "Ada", channel: "web_ui" });
  });
});

describe("transitions (section 7)", () => {
  test("create → in_review; approve → approved; merge → merged; merge again is idempotent", async () => {
    const cr = await proposeRecord();
    const approved = await review(cr.id, "approved");
    expect(approved.body.status).toBe("approved");
    expect(approved.body.reviews).toHaveLength(1);
    expect(approved.body.reviews[0]).toMatchObject({ reviewerId: ws.owner.id, verdict: "approved", visibleOperationHeads: { [cr.operations[0].id]: cr.operations[0].headCommitId } });
    const merged = await merge(cr.id);
    expect(merged.status).toBe(200);
    expect(merged.body.changeRequest).toMatchObject({ status: "merged" });
    expect(merged.body.changeRequest.mergedAt).toBeString();
    expect(merged.body.changeRequest.operations[0]).toMatchObject({ status: "merged", mergedRecordId: merged.body.record.id });
    expect(merged.body.record.fields).toMatchObject({ title: "Attention", year: 2017 });
    const again = await merge(cr.id);
    expect(again.status).toBe(200);
    expect(again.body.changeRequest.status).toBe("merged");
    expect(again.body.record.id).toBe(merged.body.record.id);
    const count = await server.call("GET", "/api/v1/records/count?baseId=papers", { key: ws.read });
    expect(count.body).toEqual({ total: 1 });
  });

  test("a merged proposal is authored by its submitter, with its message", async () => {
    const bob = await server.user("Bob");
    const session = await server.signIn("ada@example.com");
    await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { session, body: { email: bob.email, role: "contributor" } });
    const proposal = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: await server.key(bob.id, "changeRequest"), body: { fields: { title: "Bob's" }, message: "from Bob" } });
    await review(proposal.body.id, "approved");
    const merged = await merge(proposal.body.id);
    expect(merged.body.record.createdBy).toBe(bob.id);
    expect(merged.body.record.headCommit).toMatchObject({ author: bob.id, message: "from Bob", authorUser: { id: bob.id, name: "Bob", email: bob.email } });
  });

  test("a rejection → changes_requested; a new verdict from the same reviewer replaces it", async () => {
    const cr = await proposeRecord();
    const rejected = await review(cr.id, "rejected", ws.write, "cite the paper");
    expect(rejected.body.status).toBe("changes_requested");
    expect(rejected.body.reviews[0]).toMatchObject({ verdict: "rejected", reason: "cite the paper" });
    const approved = await review(cr.id, "approved");
    expect(approved.body.status).toBe("approved");
    expect(approved.body.reviews).toHaveLength(1);
    expect(approved.body.reviews[0].verdict).toBe("approved");
    expect((await review(cr.id, "rejected")).body.status).toBe("changes_requested");
  });

  test("an agent's tasks are its own change requests a reviewer sent back, newest first, with the reason", async () => {
    const bob = await server.user("Bob");
    const session = await server.signIn("ada@example.com");
    await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { session, body: { email: bob.email, role: "contributor" } });
    const agent = await server.key(bob.id, "changeRequest");
    const tasks = async (key = agent) => (await server.call("GET", "/api/v1/agent/tasks", { key })).body;
    const first = await proposeRecord({ title: "One" }, agent);
    const second = await proposeRecord({ title: "Two" }, agent);
    const waiting = await proposeRecord({ title: "Three" }, agent);
    const adas = await proposeRecord({ title: "Ada's" });
    expect(await tasks()).toEqual([]);
    await review(first.id, "rejected", ws.write, "cite the paper");
    await review(second.id, "rejected", ws.write, "wrong year");
    await review(adas.id, "rejected", ws.write, "not Bob's");
    await review(waiting.id, "approved");
    const asked = (await server.call("POST", "/api/v1/comments", { key: ws.write, body: { subjectType: "operation", subjectId: first.operations[0].id, body: "use the DOI", mentionsAi: true } })).body;
    await server.call("POST", "/api/v1/comments", { key: ws.write, body: { subjectType: "change_request", subjectId: first.id, body: "for the humans" } });
    const sentBack = await tasks();
    expect(sentBack.map((task: any) => [task.changeRequest.id, task.trigger, task.reviewReason, task.aiComments])).toEqual([
      [second.id, "changes_requested", "wrong year", []],
      [first.id, "changes_requested", "cite the paper", [asked]],
    ]);
    // Busabase's agent tasks are the same, in its shape, paged.
    const contract = (await server.call("GET", "/api/v1/agent-tasks?limit=1&offset=1", { key: agent })).body;
    expect(contract).toEqual({ tasks: [expect.objectContaining({ id: first.id, description: "cite the paper", status: "pending", priority: "normal", completedAt: null })], total: 2 });
    expect((await server.call("GET", "/api/v1/agent-tasks?status=completed", { key: agent })).body).toEqual({ tasks: [], total: 0 });
    expect((await server.call("GET", `/api/v1/agent-tasks/${second.id}`, { key: agent })).body).toMatchObject({ id: second.id, description: "wrong year" });
    expect((await server.call("GET", `/api/v1/agent-tasks/${adas.id}`, { key: agent })).status).toBe(404);
    await revise(first.operations[0].id, { title: "One, cited" }, agent);
    expect((await tasks()).map((task: any) => task.changeRequest.id)).toEqual([second.id]);
    expect((await tasks(ws.read)).map((task: any) => task.changeRequest.id)).toEqual([adas.id]);
  });

  test("revise → in_review, earlier approvals no longer count, commits chain", async () => {
    const cr = await proposeRecord();
    expect((await review(cr.id, "approved")).body.status).toBe("approved");
    const op = cr.operations[0];
    const revised = await revise(op.id, { title: "Attention Is All You Need", year: 2017 });
    expect(revised.status).toBe(200);
    expect(revised.body.status).toBe("in_review");
    const head = revised.body.operations[0].headCommit;
    expect(head.parentCommitId).toBe(op.headCommitId);
    expect(head.payload).toEqual({ title: "Attention Is All You Need", year: 2017 });
    expect((await merge(cr.id)).status).toBe(409);
    expect((await review(cr.id, "approved")).body.status).toBe("approved");
    expect((await merge(cr.id)).body.record.fields.title).toBe("Attention Is All You Need");
  });

  test("close → rejected (terminal) with its reason", async () => {
    const cr = await proposeRecord();
    const closed = await close(cr.id, "duplicate");
    expect(closed.body).toMatchObject({ status: "rejected", rejectedReason: "duplicate" });
    for (const attempt of [review(cr.id, "approved"), merge(cr.id), close(cr.id), revise(cr.operations[0].id, { title: "x" })]) {
      const reply = await attempt;
      expect(reply.status).toBe(409);
      expect(reply.body.data.status).toBe("rejected");
    }
  });

  test("merge needs approved: in_review and changes_requested answer 409 with the status", async () => {
    const cr = await proposeRecord();
    const early = await merge(cr.id);
    expect(early.status).toBe(409);
    expect(early.body.data.status).toBe("in_review");
    await review(cr.id, "rejected");
    expect((await merge(cr.id)).body.data.status).toBe("changes_requested");
  });

  test("a merged change request cannot be reviewed, revised or closed", async () => {
    const cr = await proposeRecord();
    await review(cr.id, "approved");
    await merge(cr.id);
    for (const attempt of [review(cr.id, "approved"), close(cr.id), revise(cr.operations[0].id, { title: "x" })]) {
      const reply = await attempt;
      expect(reply.status).toBe(409);
      expect(reply.body.data.status).toBe("merged");
    }
  });

  test("a changeRequest key can propose and revise, never review, merge or close", async () => {
    const cr = await proposeRecord();
    expect((await revise(cr.operations[0].id, { title: "B" })).status).toBe(200);
    for (const reply of [
      await review(cr.id, "approved", ws.propose),
      await merge(cr.id, ws.propose),
      await server.call("POST", `/api/v1/change-requests/${cr.id}/close`, { key: ws.propose, body: {} }),
    ]) {
      expect(reply.status).toBe(403);
      expect(reply.body.data).toEqual({ required: "write", effective: "changeRequest" });
    }
    expect((await get(cr.id)).status).toBe("in_review");
  });

  test("a read key cannot propose", async () => {
    const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.read, body: { fields: { title: "T" } } });
    expect(reply.status).toBe(403);
    expect(reply.body.data).toEqual({ required: "changeRequest", effective: "read" });
  });

  test("unknown change requests and operations are 404", async () => {
    expect((await merge("crq_00000000000000000000000000")).status).toBe(404);
    expect((await revise("opr_00000000000000000000000000", {})).status).toBe(404);
  });
});

describe("approvals against reviewPolicy.requiredApprovals", () => {
  test("two distinct reviewers are needed; the submitter's own approval is recorded, not counted", async () => {
    await server.call("PATCH", "/api/v1/bases/papers", { key: ws.manage, body: { reviewPolicy: { requiredApprovals: 2 } } });
    const bob = await server.user("Bob");
    const carol = await server.user("Carol");
    const session = await server.signIn("ada@example.com");
    for (const person of [bob, carol]) await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { session, body: { email: person.email, role: "editor" } });
    const cr = await proposeRecord();
    expect(cr.reviewPolicySnapshot.requiredApprovals).toBe(2);
    expect((await review(cr.id, "approved", ws.write)).body.status).toBe("in_review");
    const bobKey = await server.key(bob.id, "write");
    expect((await review(cr.id, "approved", bobKey)).body.status).toBe("in_review");
    expect((await review(cr.id, "approved", bobKey)).body.status).toBe("in_review");
    const done = await review(cr.id, "approved", await server.key(carol.id, "write"));
    expect(done.body.status).toBe("approved");
    expect(done.body.reviews).toHaveLength(3);
  });
});

describe("three-way merge", () => {
  test("changes to different fields merge; the result keeps both", async () => {
    const record = await createRecord({ title: "Original", year: 2000 });
    const proposal = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.propose, body: { operation: "update", fields: { title: "Proposed" } } })).body;
    expect(proposal.operations[0].baseCommitId).toBe(record.headCommitId);
    expect(proposal.operations[0].baseFields).toEqual({ title: "Original" });
    const direct = await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { year: 2001 } } });
    expect(direct.body.materialized).toBe(true);
    await review(proposal.id, "approved");
    const merged = await merge(proposal.id);
    expect(merged.status).toBe(200);
    expect(merged.body.record.fields).toMatchObject({ title: "Proposed", year: 2001 });
    const history = (await server.call("GET", `/api/v1/records/${record.id}/history`, { key: ws.read })).body;
    expect(history).toHaveLength(3);
    expect(history[0].parentCommitId).toBe(history[1].id);
    expect(history[1].parentCommitId).toBe(history[2].id);
    expect(history[0].payload).toEqual(merged.body.record.fields);
  });

  test("both sides changing one field is a conflict: 409, status conflict, and the failed merge changes nothing", async () => {
    const record = await createRecord({ title: "Original", year: 2000 });
    const proposal = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.propose, body: { operation: "update", fields: { title: "Theirs", year: 1999 } } })).body;
    await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: "Ours" } } });
    await review(proposal.id, "approved");
    const before = (await server.call("GET", `/api/v1/records/${record.id}`, { key: ws.read })).body;
    const eventsBefore = server.ctx.store.sqlite.query("SELECT count(*) AS n FROM events WHERE type LIKE 'record.%'").get();
    const failed = await merge(proposal.id);
    expect(failed.status).toBe(409);
    expect(failed.body.data.conflict).toEqual({ recordId: record.id, fields: ["title"] });
    const after = (await server.call("GET", `/api/v1/records/${record.id}`, { key: ws.read })).body;
    expect(after).toEqual(before);
    expect(server.ctx.store.sqlite.query("SELECT count(*) AS n FROM events WHERE type LIKE 'record.%'").get()).toEqual(eventsBefore);
    const cr = await get(proposal.id);
    expect(cr.status).toBe("conflict");
    expect(cr.mergeSummary.conflict).toEqual({ recordId: record.id, fields: ["title"] });
    expect(cr.operations[0].status).toBe("pending");

    const rebased = await revise(cr.operations[0].id, { title: "Theirs, rebased", year: 1999 });
    expect(rebased.body.status).toBe("in_review");
    expect(rebased.body.operations[0].baseCommitId).toBe(after.headCommitId);
    await review(proposal.id, "approved");
    expect((await merge(proposal.id)).body.record.fields).toMatchObject({ title: "Theirs, rebased", year: 1999 });
  });

  test("a field deleted and created again under its slug starts empty, and updates of it merge", async () => {
    const record = await createRecord({ title: "Original", year: 2000 });
    // The head commit now stores the values, the old year included.
    await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: "Edited" } } });
    const fields = (await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.fields;
    const year = fields.find((field: { slug: string }) => field.slug === "year");
    const removed = await deleteField(server, ws.write, "papers", year.id);
    expect(removed.body.changeRequest.status).toBe("merged");
    await server.fieldUpkeep.settled();
    expect((await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug: "year", name: "Year", type: "text" } })).status).toBe(200);
    expect((await server.call("GET", `/api/v1/records/${record.id}`, { key: ws.read })).body.fields).toMatchObject({ title: "Edited", year: null });

    const first = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.propose, body: { operation: "update", fields: { year: "MM" } } })).body;
    await review(first.id, "approved");
    expect((await merge(first.id)).body.record.fields).toMatchObject({ title: "Edited", year: "MM" });
    const second = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.propose, body: { operation: "update", fields: { year: "MMI" } } })).body;
    await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: "Edited again" } } });
    await review(second.id, "approved");
    expect((await merge(second.id)).body.record.fields).toMatchObject({ title: "Edited again", year: "MMI" });
    const history = (await server.call("GET", `/api/v1/records/${record.id}/history`, { key: ws.read })).body;
    expect(history.at(-2).payload).toMatchObject({ title: "Edited", year: 2000 });
  });

  test("a proposal whose base was archived since answers 409 NOT_MERGEABLE and changes nothing; once the base is restored it merges", async () => {
    const record = await proposeRecord({ title: "Waiting" });
    const field = (await server.call("POST", "/api/v1/bases/papers/fields/change-requests", { key: ws.propose, body: { operation: "create", slug: "venue", name: "Venue", type: "text" } })).body;
    const base = (await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body;
    const archive = (operation: string) => server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: operation, nodeId: base.nodeId }], autoMerge: true } });
    expect((await archive("delete")).body.status).toBe("merged");
    for (const cr of [record, field]) {
      await review(cr.id, "approved");
      const refused = await merge(cr.id);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: "CONFLICT", reason: "NOT_MERGEABLE" });
      expect(refused.body.error).toContain("archived");
      expect((await get(cr.id)).status).toBe("approved");
    }
    expect((await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).status).toBe(404);
    expect((await archive("restore")).body.status).toBe("merged");
    expect((await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.fields.map((f: { slug: string }) => f.slug)).not.toContain("venue");
    expect((await merge(record.id)).body.record.fields.title).toBe("Waiting");
    expect((await merge(field.id)).status).toBe(200);
    expect((await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.fields.map((f: { slug: string }) => f.slug)).toContain("venue");
  });

  test("a merge whose values no longer fit the base fails whole and changes nothing", async () => {
    const cr = (await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.propose, body: { records: [{ fields: { title: "One" } }, { fields: { title: "Two", status: "draft" } }] } })).body;
    await server.call("POST", "/api/v1/bases/papers/fields/change-requests", {
      key: ws.write,
      body: { operation: "update", fieldId: "status", patch: { options: { choices: [{ name: "published" }] } } },
    });
    await review(cr.id, "approved");
    const failed = await merge(cr.id);
    expect(failed.status).toBe(409);
    expect(failed.body.data.errors[0]).toMatchObject({ slug: "status" });
    expect((await server.call("GET", "/api/v1/records/count?baseId=papers", { key: ws.read })).body.total).toBe(0);
    expect((await get(cr.id)).status).toBe("approved");
  });
});

describe("listing, Inbox counts and batches", () => {
  test("list newest first with status, mine and cursor; counts per Inbox tab", async () => {
    const a = await proposeRecord({ title: "A" });
    const b = await proposeRecord({ title: "B" });
    const c = await proposeRecord({ title: "C" });
    await review(b.id, "rejected");
    await review(c.id, "approved");
    await createRecord({ title: "direct" });
    const all = await server.call("GET", "/api/v1/change-requests?limit=2", { key: ws.read });
    expect(all.body.changeRequests).toHaveLength(2);
    const next = await server.call("GET", `/api/v1/change-requests?limit=2&cursor=${all.body.nextCursor}`, { key: ws.read });
    const seen = [...all.body.changeRequests, ...next.body.changeRequests].map((cr: { id: string }) => cr.id);
    expect(new Set(seen).size).toBe(seen.length);
    const inReview = await server.call("GET", "/api/v1/change-requests?status[0]=in_review", { key: ws.read });
    expect(inReview.body.changeRequests.map((cr: { id: string }) => cr.id)).toEqual([a.id]);
    const plain = await server.call("GET", "/api/v1/change-requests?status=changes_requested&status=approved", { key: ws.read });
    expect(plain.body.changeRequests.map((cr: { id: string }) => cr.id)).toEqual([c.id, b.id]);
    expect((await server.call("GET", "/api/v1/change-requests?status=bogus", { key: ws.read })).status).toBe(400);
    const counts = await server.call("GET", "/api/v1/change-requests/counts", { key: ws.read });
    // created: the base, three proposals and one direct record, all by the same user
    expect(counts.body).toEqual({ review: 1, changes: 1, created: 5, approved: 1, merged: 2, rejected: 0, conflict: 0 });
  });

  test("batch review and merge answer each item on its own", async () => {
    const a = await proposeRecord({ title: "A" });
    const b = await proposeRecord({ title: "B" });
    const reviewed = await server.call("POST", "/api/v1/change-requests/reviews", { key: ws.write, body: { changeRequestIds: [a.id, b.id, "crq_missing"], verdict: "approved" } });
    expect(reviewed.status).toBe(200);
    expect(reviewed.body.results.map((r: { ok: boolean }) => r.ok)).toEqual([true, true, false]);
    expect(reviewed.body.results[0]).toMatchObject({ changeRequestId: a.id, ok: true, status: "approved" });
    expect(reviewed.body.results[2]).toMatchObject({ changeRequestId: "crq_missing", ok: false, code: "NOT_FOUND" });
    const merged = await server.call("POST", "/api/v1/change-requests/merge", { key: ws.write, body: { changeRequestIds: [a.id, b.id] } });
    expect(merged.body.results.map((r: { status: string }) => r.status)).toEqual(["merged", "merged"]);
    expect((await server.call("POST", "/api/v1/change-requests/merge", { key: ws.write, body: { changeRequestIds: [] } })).status).toBe(400);
    const tooMany = Array.from({ length: 101 }, (_, i) => `crq_${i}`);
    expect((await server.call("POST", "/api/v1/change-requests/reviews", { key: ws.write, body: { changeRequestIds: tooMany, verdict: "approved" } })).status).toBe(400);
  });
});

describe("bulk updates: many records of a base in one change request", () => {
  test("merged at once with write; waiting for review, every record untouched, with a changeRequest key; any bad update refuses all", async () => {
    const { server, ws } = await freshPapersWorkspace();
    try {
      const create = async (title: string) => (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title, year: 2000 } } })).body;
      const [a, b] = [await create("A"), await create("B")];
      const bulk = (key: string, updates: unknown[]) => server.call("POST", "/api/v1/bases/papers/records/bulk-update-change-request", { key, body: { updates, message: "Mark as published" } });
      const year = async (id: string) => (await server.call("GET", `/api/v1/records/${id}`, { key: ws.read })).body.fields.year;

      const proposed = await bulk(ws.propose, [{ recordId: a.id, fields: { year: 2001 } }, { recordId: b.id, fields: { year: 2001 } }]);
      expect([proposed.status, proposed.body.status, proposed.body.operationCount]).toEqual([201, "in_review", 2]);
      expect([await year(a.id), await year(b.id)]).toEqual([2000, 2000]);

      const merged = await bulk(ws.write, [{ recordId: a.id, fields: { year: 2002 } }, { recordId: b.id, fields: { year: 2003 } }]);
      expect(merged.body.status).toBe("merged");
      expect([await year(a.id), await year(b.id)]).toEqual([2002, 2003]);

      const count = async () => (await server.call("GET", "/api/v1/change-requests/counts", { key: ws.read })).body;
      const before = await count();
      expect((await bulk(ws.write, [{ recordId: a.id, fields: { year: 1 } }, { recordId: a.id, fields: { year: 2 } }])).body.error).toContain("one update a record");
      const wrong = await bulk(ws.write, [{ recordId: a.id, fields: { year: 2004 } }, { recordId: b.id, fields: { year: "soon" } }]);
      expect([wrong.status, wrong.body.error]).toEqual([400, expect.stringContaining("1 of 2 updates")]);
      await createBase(server, ws.write, "other", [{ slug: "title", name: "Title", type: "text" }]);
      const stranger = (await server.call("POST", "/api/v1/bases/other/change-requests", { key: ws.write, body: { fields: { title: "X" } } })).body;
      expect((await bulk(ws.write, [{ recordId: stranger.id, fields: { title: "Y" } }])).body.error).toContain('is not a record of the base "papers"');
      // Only the other base and its record were made since: the refused updates left nothing.
      expect(await count()).toEqual({ ...before, merged: before.merged + 2, created: before.created + 2 });
      expect([await year(a.id), await year(b.id)]).toEqual([2002, 2003]);
    } finally {
      await server.stop();
    }
  });
});

describe("direct writes and their base commit", () => {
  test("concurrent updates without baseCommitId each apply to the head they find: every one 2xx and merged", async () => {
    const record = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Start", year: 2000 } } })).body;
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.manage, body: { operation: "update", fields: { title: `Edit ${i}` } } })));
    expect(replies.map((reply) => [reply.status, reply.body.materialized])).toEqual(replies.map(() => [201, true]));
    const history = (await server.call("GET", `/api/v1/records/${record.id}/history`, { key: ws.read })).body;
    expect(history).toHaveLength(21);
  });

  test("a direct update on a stale baseCommitId that changed the same field is a 409 naming the conflict, and stores nothing", async () => {
    const record = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "Start", year: 2000 } } })).body;
    await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: "Theirs" } } });
    const proposals = () => server.ctx.store.sqlite.query("SELECT count(*) AS n FROM change_requests").get();
    const before = proposals();
    const stale = await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: "Mine" }, baseCommitId: record.headCommitId } });
    expect([stale.status, stale.body.reason, stale.body.data.conflict]).toEqual([409, "MERGE_CONFLICT", { recordId: record.id, fields: ["title"] }]);
    expect(proposals()).toEqual(before);
    expect((await server.call("GET", `/api/v1/records/${record.id}`, { key: ws.read })).body.fields.title).toBe("Theirs");
    // A stale base that changed other fields merges.
    const other = await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: ws.write, body: { operation: "update", fields: { year: 2001 }, baseCommitId: record.headCommitId } });
    expect([other.status, other.body.materialized, other.body.fields]).toEqual([201, true, expect.objectContaining({ title: "Theirs", year: 2001 })]);
  });
});

describe("bulk archive and restore: many records of a base in one change request", () => {
  const lifecycle = (body: Record<string, unknown>, key = ws.write) => server.call("POST", "/api/v1/bases/papers/records/bulk-lifecycle-change-request", { key, body });
  const active = async () => (await server.call("GET", "/api/v1/records?baseId=papers&include=none", { key: ws.read })).body.records.map((record: { fields: { title: string } }) => record.fields.title).sort();

  test("an archive waits for a person even with write, one operation a record; once merged they are gone, and a restore (waiting too) brings them back", async () => {
    const ids = [(await createRecord({ title: "A" })).id, (await createRecord({ title: "B" })).id, (await createRecord({ title: "C" })).id];
    const archived = await lifecycle({ operation: "delete", recordIds: ids.slice(0, 2), message: "Tidy up" });
    expect([archived.status, archived.body.status, archived.body.operationCount]).toEqual([201, "in_review", 2]);
    expect(await active()).toEqual(["A", "B", "C"]);
    expect((await review(archived.body.id, "approved")).status).toBe(200);
    expect((await merge(archived.body.id)).body.changeRequest.status).toBe("merged");
    expect(await active()).toEqual(["C"]);
    const restored = await lifecycle({ operation: "restore", recordIds: ids.slice(0, 2) });
    expect(restored.body.status).toBe("in_review");
    await review(restored.body.id, "approved");
    await merge(restored.body.id);
    expect(await active()).toEqual(["A", "B", "C"]);
  });

  test("waiting for review with a changeRequest key, nothing archived yet; a record of another base or named twice refuses all", async () => {
    const ids = [(await createRecord({ title: "A" })).id, (await createRecord({ title: "B" })).id];
    const waiting = await lifecycle({ operation: "delete", recordIds: ids }, ws.propose);
    expect([waiting.status, waiting.body.status]).toEqual([201, "in_review"]);
    expect(await active()).toEqual(["A", "B"]);
    await createBase(server, ws.write, "notes", [{ slug: "text", name: "Text", type: "text" }]);
    const other = (await server.call("POST", "/api/v1/bases/notes/change-requests", { key: ws.write, body: { fields: { text: "x" } } })).body.id;
    expect((await lifecycle({ operation: "delete", recordIds: [ids[0], other] })).status).toBe(400);
    expect((await lifecycle({ operation: "delete", recordIds: [ids[0], ids[0]] })).status).toBe(400);
    expect(await active()).toEqual(["A", "B"]);
  });
});
