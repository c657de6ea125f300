import { Database, type Statement } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { TestServer, freshPapersWorkspace, type Workspace } from "./helpers";

/** The SQL of the statements run while `ran` is a list (Bun keeps a statement's methods on the statement itself, so each one's are wrapped as it is made). */
let ran: string[] | null = null;
const recorded = new WeakSet<object>();
for (const method of ["query", "prepare"] as const) {
  const original = Database.prototype[method] as (this: Database, text: string, ...args: unknown[]) => Statement;
  (Database.prototype as unknown as Record<string, unknown>)[method] = function (this: Database, text: string, ...args: unknown[]) {
    const statement = original.call(this, text, ...args);
    if (recorded.has(statement)) return statement;
    recorded.add(statement);
    for (const name of ["all", "get", "values", "run", "iterate"]) {
      let inner = (statement as unknown as Record<string, (...values: unknown[]) => unknown>)[name];
      const recording = (...values: unknown[]) => {
        ran?.push(text);
        return inner.apply(statement, values);
      };
      Object.defineProperty(statement, name, { configurable: true, get: () => recording, set: (fn) => (inner = fn) });
    }
    return statement;
  };
}

// A direct create (one record, merged at once, no idempotency key) stores no change request or
// operation row: its commit stands for both (src/changes/direct.ts). Everything a client sees of
// it must be what a stored change request of the same write shows.

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshPapersWorkspace()));
afterEach(() => server.stop());

const create = async (fields: Record<string, unknown>, extra: Record<string, unknown> = {}, key = ws.write) => {
  const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key, headers: { "x-basalt-channel": "agent" }, body: { fields, message: "from the field notes", ...extra } });
  expect(reply.status).toBe(201);
  expect(reply.body.materialized).toBe(true);
  return reply.body;
};
const recordChangeRequests = async (recordId: string) => (await server.call("GET", `/api/v1/records/${recordId}/change-requests`, { key: ws.read })).body;
const stored = (table: string, id: string) => server.ctx.store.sqlite.query(`SELECT count(*) AS n FROM ${table} WHERE id = ?`).get(id) as { n: number };

/** A view with its ids, record and moments replaced by what they are, so two writes compare. */
function shape(view: unknown): unknown {
  return JSON.parse(JSON.stringify(view), (_key, value) =>
    typeof value === "string" ? value.replace(/\b(crq|opr|cmt|rec)_[0-9A-Za-z]+/g, "$1_ID").replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/, "MOMENT") : value,
  );
}

describe("a direct create's change request", () => {
  test("reads exactly as a stored one of the same write, and writes no change request or operation row", async () => {
    const direct = await create({ title: "Attention", year: 2017, status: "draft" });
    const kept = await create({ title: "Attention", year: 2017, status: "draft" }, { idempotencyKey: "once" });
    const [directCr] = await recordChangeRequests(direct.id);
    const [keptCr] = await recordChangeRequests(kept.id);
    expect(shape(directCr)).toEqual(shape(keptCr));
    expect(directCr).toMatchObject({ status: "merged", submittedBy: ws.owner.id, sourceAttribution: { displayName: "write key", ownerName: "Ada", channel: "agent" }, sourceMeta: { message: "from the field notes" }, operationCount: 1 });
    expect(directCr.operations[0]).toMatchObject({ operation: "record_create", status: "merged", targetRecordId: direct.id, mergedRecordId: direct.id, headCommitId: direct.headCommitId });
    expect(directCr.operations[0].headCommit).toMatchObject({ id: direct.headCommitId, operationId: directCr.operations[0].id, payload: direct.fields, message: "from the field notes" });
    expect((await server.call("GET", `/api/v1/change-requests/${directCr.id}`, { key: ws.read })).body).toEqual({ ...directCr, comments: [] });
    expect(direct.headCommit.operationId).toBe(directCr.operations[0].id);
    // The create's answer is the record as it reads afterwards, its head commit included.
    const { materialized: _, ...answered } = direct;
    expect((await server.call("GET", `/api/v1/records/${direct.id}`, { key: ws.read })).body).toEqual(answered);
    expect([stored("change_requests", directCr.id), stored("operations", directCr.operations[0].id)]).toEqual([{ n: 0 }, { n: 0 }]);
    expect([stored("change_requests", keptCr.id), stored("operations", keptCr.operations[0].id)]).toEqual([{ n: 1 }, { n: 1 }]);
    const history = (await server.call("GET", `/api/v1/records/${direct.id}/history`, { key: ws.read })).body;
    expect(history.map((commit: { id: string }) => commit.id)).toEqual([direct.headCommitId]);
  });

  test("its commit is written once, as the record's first: one insert, never an update of it", async () => {
    const commitWrites = async (send: () => Promise<unknown>) => {
      ran = [];
      try {
        await send();
        return ran.filter((text) => /^\s*(insert into|update) "commits"/i.test(text)).map((text) => text.trim().split(" ")[0].toLowerCase());
      } finally {
        ran = null;
      }
    };
    let direct: { id: string; headCommitId: string } | undefined;
    expect(await commitWrites(async () => (direct = await create({ title: "Attention", year: 2017 })))).toEqual(["insert"]);
    // While it is its record's head, its values are the record's (no second copy), and it names its record.
    expect(server.ctx.store.sqlite.query("SELECT record_id, payload FROM commits WHERE id = ?").get(direct!.headCommitId)).toEqual({ record_id: direct!.id, payload: null });
    // A bulk create merged at once writes each record's commit once too.
    const bulk = () => server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.write, body: { records: [{ fields: { title: "A" } }, { fields: { title: "B" } }] } });
    expect(await commitWrites(bulk)).toEqual(["insert", "insert"]);
  });

  test("the review loop answers it as any merged change request", async () => {
    const direct = await create({ title: "Attention" });
    const [cr] = await recordChangeRequests(direct.id);
    const conflict = { status: 409, reason: "INVALID_STATUS", state: "merged" };
    const answer = (reply: { status: number; body: { data?: { reason?: string; status?: string } } }) => ({ status: reply.status, reason: reply.body.data?.reason, state: reply.body.data?.status });
    expect(answer(await server.call("POST", `/api/v1/change-requests/${cr.id}/reviews`, { key: ws.write, body: { verdict: "approved" } }))).toEqual(conflict);
    expect(answer(await server.call("POST", `/api/v1/change-requests/${cr.id}/close`, { key: ws.write, body: {} }))).toEqual(conflict);
    expect(answer(await server.call("POST", `/api/v1/operations/${cr.operations[0].id}/revisions`, { key: ws.write, body: { fields: { title: "Other" } } }))).toEqual(conflict);
    const merged = await server.call("POST", `/api/v1/change-requests/${cr.id}/merge`, { key: ws.write });
    expect(merged.status).toBe(200);
    expect(merged.body.changeRequest).toEqual(cr);
    expect(merged.body.record.id).toBe(direct.id);
    // The ids share their tail with the commit, but each names only its own kind.
    expect((await server.call("GET", `/api/v1/change-requests/${cr.operations[0].id}`, { key: ws.read })).status).toBe(404);
    expect((await server.call("GET", `/api/v1/change-requests/${direct.headCommitId}`, { key: ws.read })).status).toBe(404);
    expect((await server.call("POST", `/api/v1/operations/${cr.id}/revisions`, { key: ws.write, body: { fields: { title: "Other" } } })).status).toBe(404);
  });

  test("lists, cursors, filters and Inbox counts interleave direct and stored change requests, newest first", async () => {
    const bob = await server.user("Bob");
    const session = await server.signIn("ada@example.com");
    await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { session, body: { email: bob.email, role: "editor" } });
    const bobKey = await server.key(bob.id, "write");
    await server.call("POST", "/api/v1/bases", { key: ws.write, body: { slug: "notes", name: "Notes", fields: [{ slug: "text", name: "Text", type: "text" }] } });
    const made: { id: string; status: string; submittedBy: string; base: string }[] = [];
    const note = async (entry: { id: string; status: string }, submittedBy: string, base = "papers") => {
      made.unshift({ id: entry.id, status: entry.status, submittedBy, base });
      server.clock.advance(1);
    };
    for (let i = 0; i < 3; i++) {
      const direct = await create({ title: `direct ${i}` });
      await note((await recordChangeRequests(direct.id))[0], ws.owner.id);
      const proposal = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: `proposal ${i}` } } });
      await note(proposal.body, ws.owner.id);
      const bobs = await server.call("POST", "/api/v1/bases/notes/change-requests", { key: bobKey, body: { fields: { text: `bob ${i}` } } });
      await note((await recordChangeRequests(bobs.body.id))[0], bob.id, "notes");
    }
    const walk = async (query: string) => {
      const ids: string[] = [];
      let cursor = "";
      do {
        const page = await server.call("GET", `/api/v1/change-requests?limit=2${query}${cursor ? `&cursor=${cursor}` : ""}`, { key: ws.read });
        expect(page.status).toBe(200);
        ids.push(...page.body.changeRequests.map((cr: { id: string }) => cr.id));
        cursor = page.body.nextCursor ?? "";
      } while (cursor);
      return ids;
    };
    // Older than all of these: the change requests that created the papers base, then the notes base.
    const [notesBase, papersBase] = (await walk("")).slice(made.length);
    expect(await walk("")).toEqual([...made.map((entry) => entry.id), notesBase, papersBase]);
    expect(await walk("&status[]=merged&baseId=papers")).toEqual([...made.filter((entry) => entry.status === "merged" && entry.base === "papers").map((entry) => entry.id), papersBase]);
    expect(await walk("&status[]=in_review")).toEqual(made.filter((entry) => entry.status === "in_review").map((entry) => entry.id));
    const bobsOwn = await server.call("GET", "/api/v1/change-requests?mine=true&limit=100", { key: bobKey });
    expect(bobsOwn.body.changeRequests.map((cr: { id: string }) => cr.id)).toEqual(made.filter((entry) => entry.submittedBy === bob.id).map((entry) => entry.id));
    const counts = (await server.call("GET", "/api/v1/change-requests/counts", { key: bobKey })).body;
    expect(counts).toEqual({ review: 3, changes: 0, created: 3, approved: 0, merged: 6 + 2, rejected: 0, conflict: 0 });

    // Busabase's numbered pages show the same order, with the total.
    const numbered = async (query: string) => (await server.call("GET", `/api/v1/change-requests/page?${query}`, { key: ws.read })).body;
    const everyId = await walk("");
    const pages = [await numbered("pageSize=4"), await numbered("pageSize=4&page=2"), await numbered("pageSize=4&page=3")];
    expect(pages.map((page) => [page.total, page.totalPages, page.page, page.pageSize])).toEqual([[11, 3, 1, 4], [11, 3, 2, 4], [11, 3, 3, 4]]);
    expect(pages.flatMap((page) => page.changeRequests.map((cr: { id: string }) => cr.id))).toEqual(everyId);
    const merged = await numbered("status[]=merged&baseId=papers&page=2&pageSize=2");
    expect(merged.total).toBe(4);
    expect(merged.changeRequests.map((cr: { id: string }) => cr.id)).toEqual((await walk("&status[]=merged&baseId=papers")).slice(2, 4));
    expect((await numbered("pageSize=4&page=4")).changeRequests).toEqual([]);
    for (const query of ["page=0", "pageSize=101", "page=101&pageSize=100", "status[]=nope"]) {
      expect((await server.call("GET", `/api/v1/change-requests/page?${query}`, { key: ws.read })).status).toBe(400);
    }
    expect((await server.call("GET", "/api/v1/change-requests/page?page=101&pageSize=100", { key: ws.read })).body.error).toContain("nextCursor");
  });

  test("another space does not see it", async () => {
    const direct = await create({ title: "Attention" });
    const [cr] = await recordChangeRequests(direct.id);
    const eve = await server.user("Eve");
    await server.space(eve.id, "Elsewhere");
    const eveKey = await server.key(eve.id, "manage");
    expect((await server.call("GET", `/api/v1/change-requests/${cr.id}`, { key: eveKey })).status).toBe(404);
    expect((await server.call("POST", `/api/v1/change-requests/${cr.id}/merge`, { key: eveKey })).status).toBe(404);
    expect((await server.call("POST", `/api/v1/operations/${cr.operations[0].id}/revisions`, { key: eveKey, body: { fields: { title: "x" } } })).status).toBe(404);
    const list = await server.call("GET", "/api/v1/change-requests?limit=100", { key: eveKey });
    expect(list.body.changeRequests.map((one: { id: string }) => one.id)).not.toContain(cr.id);
  });
});
