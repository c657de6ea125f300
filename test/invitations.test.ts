import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { freshWorkspace, type TestServer, type Workspace } from "./helpers";

/** Invitation links (issue 38, item 7): one person joins a space with a role, setting their own password. */
let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace({ deliveries: false })));
afterEach(() => server.stop());

const invite = (body: Record<string, unknown>, key = ws.manage) => server.call("POST", `/api/v1/spaces/${ws.space.id}/invitations`, { key, body });
const accept = (token: string, body: Record<string, unknown>) =>
  fetch(`${server.url}/api/v1/invitations/${token}/accept`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(async (response) => ({ status: response.status, body: await response.json(), cookie: response.headers.get("set-cookie") }));

describe("invitation links", () => {
  test("a manager's link lets one person make their account and join with its role, signed in; it works once", async () => {
    const made = await invite({ role: "editor" });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ role: "editor", path: `/admin/invite?token=${made.body.token}`, createdBy: ws.owner.id });
    expect(made.body.expiresAt).toBe(new Date(server.clock.now() + 7 * 86_400_000).toISOString());
    // Only its hash is kept.
    const stored = server.ctx.store.sqlite.query("SELECT token_hash AS hash FROM invitations").get() as { hash: string };
    expect(stored.hash).not.toContain(made.body.token);
    expect((await server.call("GET", `/api/v1/spaces/${ws.space.id}/invitations`, { key: ws.manage })).body).toEqual([expect.objectContaining({ id: made.body.id, role: "editor" })]);

    const preview = await fetch(`${server.url}/api/v1/invitations/${made.body.token}`).then((response) => response.json());
    expect(preview).toMatchObject({ spaceName: "Research", role: "editor" });
    const joined = await accept(made.body.token, { name: "Bea", email: "bea@example.com", password: "a long enough password" });
    expect(joined.status).toBe(201);
    expect(joined.body).toMatchObject({ user: { email: "bea@example.com", name: "Bea", admin: false }, spaceId: ws.space.id });
    expect(joined.cookie).toContain("basalt_session=");
    const members = (await server.call("GET", `/api/v1/spaces/${ws.space.id}/members`, { key: ws.manage })).body;
    expect(members.find((member: { email: string }) => member.email === "bea@example.com")).toMatchObject({ role: "editor" });
    // Bea is signed in by the answer's cookie.
    const cookie = joined.cookie!.split(";")[0];
    expect((await fetch(`${server.url}/api/v1/auth`, { headers: { cookie } }).then((response) => response.json())).user.email).toBe("bea@example.com");

    expect((await accept(made.body.token, { name: "Cid", email: "cid@example.com", password: "another long password" })).status).toBe(404);
    expect((await server.call("GET", `/api/v1/spaces/${ws.space.id}/invitations`, { key: ws.manage })).body).toEqual([]);
    const audit = (await server.call("GET", "/api/v1/audit-events", { key: ws.manage })).body;
    expect(audit.find((event: { action: string }) => event.action === "member.added").metadata).toMatchObject({ email: "bea@example.com", role: "editor", invitation: made.body.id });
  });

  test("an expired or revoked link, an unknown token, and an owner's role are refused; only managers make links; guesses are limited", async () => {
    expect((await invite({ role: "owner" })).status).toBe(400);
    expect((await invite({ role: "viewer" }, ws.write)).status).toBe(403);
    const short = await invite({ role: "viewer", expiresInDays: 1 });
    server.clock.advance(86_400_000 + 1);
    expect((await accept(short.body.token, { name: "Dee", email: "dee@example.com", password: "a long enough password" })).status).toBe(404);
    const revoked = await invite({ role: "viewer" });
    expect((await server.call("DELETE", `/api/v1/spaces/${ws.space.id}/invitations/${revoked.body.id}`, { key: ws.manage })).body).toEqual({ revoked: true });
    expect((await fetch(`${server.url}/api/v1/invitations/${revoked.body.token}`)).status).toBe(404);
    // An e-mail that has an account already joins by signing in first.
    const open = await invite({ role: "viewer" });
    const taken = await accept(open.body.token, { name: "Ada again", email: "ada@example.com", password: "a long enough password" });
    expect(taken.status).toBe(409);
    expect((await fetch(`${server.url}/api/v1/invitations/${open.body.token}`)).status).toBe(200);
    let limited = 0;
    for (let i = 0; i < 25; i++) if ((await fetch(`${server.url}/api/v1/invitations/guess${i}`)).status === 429) limited++;
    expect(limited).toBeGreaterThan(0);
  });

  test("a signed-in person joins as themselves", async () => {
    const bea = await server.user("Bea");
    const session = await server.signIn(bea.email);
    const made = await invite({ role: "contributor" });
    const joined = await server.call("POST", `/api/v1/invitations/${made.body.token}/join`, { session });
    expect(joined.body).toEqual({ spaceId: ws.space.id });
    const members = (await server.call("GET", `/api/v1/spaces/${ws.space.id}/members`, { key: ws.manage })).body;
    expect(members.find((member: { userId: string }) => member.userId === bea.id)).toMatchObject({ role: "contributor" });
  });
});
