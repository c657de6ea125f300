import { afterEach, beforeEach, expect, test } from "bun:test";
import { TestServer } from "./helpers";

let server: TestServer;
beforeEach(() => (server = new TestServer()));
afterEach(() => server.stop());

test("GET /auth with a key: user, credential, space in effect, member, every space", async () => {
  const ada = await server.user("Ada");
  const bob = await server.user("Bob");
  const research = await server.space(bob.id, "Research");
  server.ctx.store.sqlite.run("INSERT INTO members (space_id, user_id, role, created_at) VALUES (?, ?, 'editor', ?)", [research.id, ada.id, new Date().toISOString()]);
  const key = await server.key(ada.id, "changeRequest");
  const reply = await server.call("GET", "/api/v1/auth", { key });
  expect(reply.status).toBe(200);
  expect(reply.body).toEqual({
    user: { id: ada.id, name: "Ada", email: "ada@example.com", image: null },
    credential: { type: "api_key", id: expect.stringMatching(/^key_/), name: "changeRequest key", prefix: key.slice(0, 12), level: "changeRequest", expiresAt: expect.any(String) },
    space: { id: research.id, name: "Research", slug: "research", plan: null, nodeVisibilityMode: "open" },
    member: { userId: ada.id, spaceId: research.id, role: "editor" },
    effectiveLevel: "changeRequest",
    spaces: [{ id: research.id, name: "Research", slug: "research", plan: null, role: "editor", effectiveLevel: "changeRequest" }],
  });
});

test("GET /auth never rejects for ambiguity: several spaces, no header, space is null", async () => {
  const ada = await server.user("Ada");
  await server.space(ada.id, "One");
  await server.space(ada.id, "Two");
  const reply = await server.call("GET", "/api/v1/auth", { key: await server.key(ada.id, "write") });
  expect(reply.status).toBe(200);
  expect(reply.body.space).toBeNull();
  expect(reply.body.member).toBeNull();
  expect(reply.body.effectiveLevel).toBeNull();
  expect(reply.body.spaces.map((s: { slug: string; effectiveLevel: string }) => [s.slug, s.effectiveLevel])).toEqual([["one", "write"], ["two", "write"]]);
  const foreign = await server.call("GET", "/api/v1/auth", { key: await server.key(ada.id, "write"), space: "elsewhere" });
  expect(foreign.status).toBe(403);
  expect(foreign.body.reason).toBe("SPACE_NOT_ALLOWED");
});

test("GET /auth with a session: the credential is a session (with its CSRF token) at the role's level", async () => {
  const ada = await server.user("Ada");
  await server.space(ada.id, "Mine");
  const session = await server.signIn(ada.email);
  const reply = await server.call("GET", "/api/v1/auth", { session });
  expect(reply.body.credential).toEqual({ type: "session", csrfToken: session.csrfToken });
  expect(reply.body.effectiveLevel).toBe("manage");
});
