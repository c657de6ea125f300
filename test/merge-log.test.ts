import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/** The merge log a remote follows (docs/remotes.md): commits in the order they merged, read from a cursor. */
let server: TestServer;
let ws: Workspace;
beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write, "notes", [{ slug: "title", name: "Title", type: "text" }]);
});
afterEach(() => server.stop());

const state = async (key = ws.read) => (await server.call("GET", "/api/v1/sync/state", { key })).body;
const since = async (after: number, limit?: number, key = ws.read) => (await server.call("GET", `/api/v1/sync/commits?after=${after}${limit ? `&limit=${limit}` : ""}`, { key })).body;
const create = async (title: string, autoMerge?: boolean) => (await server.call("POST", "/api/v1/bases/notes/change-requests", { key: ws.write, body: { fields: { title }, ...(autoMerge === false ? { autoMerge } : {}) } })).body;

describe("the merge log", () => {
  test("commits come in the order they merged: a proposal merged late comes after what merged meanwhile", async () => {
    const start = (await state()).head;
    expect((await state()).instanceId).toMatch(/^ins_[0-9a-f]{20}$/);
    const monday = await create("Monday's proposal", false);
    await create("Tuesday's note");
    await server.call("POST", `/api/v1/change-requests/${monday.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    expect((await server.call("POST", `/api/v1/change-requests/${monday.id}/merge`, { key: ws.write })).status).toBe(200);
    const page = await since(start);
    expect(page.commits.map((commit: { payload: { title: string } }) => commit.payload.title)).toEqual(["Tuesday's note", "Monday's proposal"]);
    expect(page.commits.map((commit: { seq: number }) => commit.seq)).toEqual([start + 1, start + 2]);
    expect(page.commits[1]).toMatchObject({ changeRequestId: monday.id, operation: "record_create", authorUser: { name: "Ada" } });
    expect(page).toMatchObject({ head: start + 2, next: null });
    // Ids sort by creation: Monday's proposal before Tuesday's, which is why the log is the cursor.
    expect(monday.id < page.commits[0].changeRequestId).toBe(true);
    expect((await state()).head).toBe(start + 2);
  });

  test("pages from a cursor; a waiting or closed proposal is not in it; the cursor and limit are checked", async () => {
    const start = (await state()).head;
    for (const title of ["a", "b", "c"]) await create(title);
    await create("waiting", false);
    const first = await since(start, 2);
    expect(first.commits.map((commit: { payload: { title: string } }) => commit.payload.title)).toEqual(["a", "b"]);
    expect(first.next).toBe(start + 2);
    const second = await since(first.next, 2);
    expect(second.commits.map((commit: { payload: { title: string } }) => commit.payload.title)).toEqual(["c"]);
    expect(second.next).toBeNull();
    expect((await server.call("GET", "/api/v1/sync/commits?after=-1", { key: ws.read })).status).toBe(400);
    expect((await server.call("GET", "/api/v1/sync/commits?limit=1001", { key: ws.read })).body.error).toBe("limit must be a whole number from 1 to 1000.");
  });

  test("each space has its own log; a member to whom a base is private reads none of it", async () => {
    const start = (await state()).head;
    const bob = await server.user("Bob");
    await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { key: ws.manage, body: { email: bob.email, role: "editor" } });
    const bobKey = await server.key(bob.id, "read");
    const node = (await server.call("GET", "/api/v1/bases/notes", { key: ws.read })).body.nodeId;
    await create("secret note");
    await server.call("POST", `/api/v1/nodes/${node}/visibility`, { key: ws.manage, body: { visibility: "private" } });
    expect((await since(start)).commits).toHaveLength(1);
    // A follower copies the whole space: a reader to whom part of it is private follows none of it.
    const refused = await server.call("GET", `/api/v1/sync/commits?after=${start}`, { key: bobKey });
    expect([refused.status, refused.body.reason]).toEqual([403, "SYNC_NEEDS_WHOLE_SPACE"]);

    const other = await server.space(ws.owner.id, "Elsewhere");
    const elsewhere = await server.call("GET", "/api/v1/sync/state", { key: ws.read, headers: { "x-basalt-space": other.slug } });
    expect(elsewhere.body).toMatchObject({ spaceId: other.id, head: 0 });
  });
});
