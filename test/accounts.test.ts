import { verifyLogin } from "../src/auth/users";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { issueSetupToken } from "../src/spaces/setup";
import { TestServer } from "./helpers";

let server: TestServer;
beforeEach(() => (server = new TestServer()));
afterEach(() => server.stop());

describe("first-run setup", () => {
  test("the one-time token creates an instance admin, signs in, then dies", async () => {
    const token = issueSetupToken(server.ctx)!;
    expect((await server.call("GET", "/api/v1/setup")).body).toEqual({ needed: true });

    const wrong = await server.call("POST", "/api/v1/setup", { body: { token: "nope", email: "ada@example.com", name: "Ada", password: "correct horse" } });
    expect(wrong.status).toBe(403);

    const created = await server.call("POST", "/api/v1/setup", { body: { token, email: "Ada@Example.com", name: "Ada", password: "correct horse" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: "ada@example.com", name: "Ada", admin: true, banned: false });
    expect(created.body.id).toMatch(/^usr_/);
    const cookie = created.headers.get("set-cookie")!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");

    const me = await server.call("GET", "/api/v1/users/me", { headers: { cookie: cookie.split(";")[0] } });
    expect(me.body.email).toBe("ada@example.com");
    const spaces = await server.call("GET", "/api/v1/spaces", { headers: { cookie: cookie.split(";")[0] } });
    expect(spaces.body).toMatchObject([{ name: "My workspace", slug: "my-workspace", role: "owner" }]);

    expect((await server.call("GET", "/api/v1/setup")).body).toEqual({ needed: false });
    const again = await server.call("POST", "/api/v1/setup", { body: { token, email: "eve@example.com", name: "Eve", password: "correct horse" } });
    expect(again.status).toBe(409);
  });

  test("a rejected setup keeps the token alive", async () => {
    const token = issueSetupToken(server.ctx)!;
    const short = await server.call("POST", "/api/v1/setup", { body: { token, email: "ada@example.com", name: "Ada", password: "short" } });
    expect(short.status).toBe(400);
    const ok = await server.call("POST", "/api/v1/setup", { body: { token, email: "ada@example.com", name: "Ada", password: "long enough" } });
    expect(ok.status).toBe(201);
  });
});

describe("sessions", () => {
  test("login answers the user and a CSRF token; logout deletes the session", async () => {
    await server.user("Ada");
    const login = await server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: "correct horse" } });
    expect(login.status).toBe(200);
    expect(login.body.user).toMatchObject({ email: "ada@example.com", admin: false });
    expect(login.body.csrfToken).toBeString();
    const session = await server.signIn("ada@example.com");
    expect((await server.call("GET", "/api/v1/auth", { session })).status).toBe(200);
    const out = await server.call("POST", "/api/v1/auth/logout", { session });
    expect(out.body).toEqual({ success: true });
    expect((await server.call("GET", "/api/v1/auth", { session })).status).toBe(401);
  });

  test("unknown e-mail and wrong password get the same answer", async () => {
    await server.user("Ada");
    const unknown = await server.call("POST", "/api/v1/auth/login", { body: { email: "nobody@example.com", password: "correct horse" } });
    const wrong = await server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: "wrong horse" } });
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
  });

  test("five failures a minute per e-mail, then 429 with Retry-After", async () => {
    await server.user("Ada");
    for (let i = 0; i < 5; i++) {
      expect((await server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: `wrong ${i}` } })).status).toBe(401);
    }
    const limited = await server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: "correct horse" } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("TOO_MANY_REQUESTS");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    server.clock.advance(61_000);
    expect((await server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: "correct horse" } })).status).toBe(200);
  });

  test("bad passwords from other addresses never lock the owner out: the account is paced, not locked", async () => {
    const ada = await server.user("Ada");
    for (let i = 0; i < 6; i++) {
      await expect(verifyLogin(server.ctx, "ada@example.com", `wrong ${i}`, `10.0.0.${i}`)).rejects.toMatchObject({ status: 401 });
    }
    // From the owner's own address the right password works at once (paced by a second at most).
    expect((await verifyLogin(server.ctx, "ada@example.com", "correct horse", "192.168.1.20")).id).toBe(ada.id);
    const reply = await server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: "correct horse" } });
    expect(reply.status).toBe(200);
  });

  test("failures are also limited per address, across e-mails", async () => {
    for (let i = 0; i < 5; i++) await server.call("POST", "/api/v1/auth/login", { body: { email: `u${i}@example.com`, password: "whatever1" } });
    const limited = await server.call("POST", "/api/v1/auth/login", { body: { email: "other@example.com", password: "whatever1" } });
    expect(limited.status).toBe(429);
  });

  test("a state-changing session request needs the CSRF token", async () => {
    const ada = await server.user("Ada");
    const session = await server.signIn(ada.email);
    const missing = await server.call("POST", "/api/v1/spaces", { session, body: { name: "Research" }, headers: { "x-csrf-token": "" } });
    expect(missing.status).toBe(403);
    expect(missing.body).toMatchObject({ code: "FORBIDDEN", reason: "CSRF_TOKEN_INVALID", data: { reason: "CSRF_TOKEN_INVALID" } });
    const wrong = await server.call("POST", "/api/v1/spaces", { session, body: { name: "Research" }, headers: { "x-csrf-token": "x".repeat(32) } });
    expect(wrong.status).toBe(403);
    const right = await server.call("POST", "/api/v1/spaces", { session, body: { name: "Research" } });
    expect(right.status).toBe(201);
    expect((await server.call("GET", "/api/v1/spaces", { session, headers: {} })).status).toBe(200);
  });

  test("a session expires after 7 days idle, and use keeps it alive", async () => {
    const ada = await server.user("Ada");
    const session = await server.signIn(ada.email);
    server.clock.advance(6 * 86_400_000);
    expect((await server.call("GET", "/api/v1/users/me", { session })).status).toBe(200);
    server.clock.advance(6 * 86_400_000);
    expect((await server.call("GET", "/api/v1/users/me", { session })).status).toBe(200);
    server.clock.advance(7 * 86_400_000 + 1000);
    const expired = await server.call("GET", "/api/v1/users/me", { session });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toBe("Bearer");
  });
});

describe("users (instance admins)", () => {
  test("admins create, list and update users; others get 403", async () => {
    const admin = await server.user("Ada", { admin: true });
    const session = await server.signIn(admin.email);
    const created = await server.call("POST", "/api/v1/users", { session, body: { email: "bob@example.com", name: "Bob", password: "bob password" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: "bob@example.com", name: "Bob", admin: false, banned: false });
    expect(Object.keys(created.body).sort()).toEqual(["admin", "banned", "createdAt", "email", "emailVerified", "id", "image", "name"]);

    const duplicate = await server.call("POST", "/api/v1/users", { session, body: { email: "BOB@example.com", name: "Bob 2", password: "bob password" } });
    expect(duplicate.status).toBe(409);

    const list = await server.call("GET", "/api/v1/users", { session });
    expect(list.body.map((u: { email: string }) => u.email)).toEqual(["ada@example.com", "bob@example.com"]);

    const renamed = await server.call("PATCH", `/api/v1/users/${created.body.id}`, { session, body: { name: "Robert" } });
    expect(renamed.body.name).toBe("Robert");

    const bob = await server.signIn("bob@example.com", "bob password");
    expect((await server.call("GET", "/api/v1/users", { session: bob })).status).toBe(403);
    expect((await server.call("PATCH", `/api/v1/users/${admin.id}`, { session: bob, body: { banned: true } })).status).toBe(403);
    expect((await server.call("PATCH", "/api/v1/users/usr_missing", { session, body: { name: "X" } })).status).toBe(404);
  });

  test("changing users with a key needs the manage level", async () => {
    const admin = await server.user("Ada", { admin: true });
    const write = await server.call("POST", "/api/v1/users", { key: await server.key(admin.id, "write"), body: { email: "b@example.com", name: "B", password: "b password" } });
    expect(write.status).toBe(403);
    expect(write.body.data).toEqual({ required: "manage", effective: "write" });
    const manage = await server.call("POST", "/api/v1/users", { key: await server.key(admin.id, "manage"), body: { email: "b@example.com", name: "B", password: "b password" } });
    expect(manage.status).toBe(201);
  });

  test("a ban cuts every key and session of the user at once", async () => {
    const admin = await server.user("Ada", { admin: true });
    const bob = await server.user("Bob");
    const adminSession = await server.signIn(admin.email);
    const bobSession = await server.signIn(bob.email);
    const bobKey = await server.key(bob.id, "read");
    expect((await server.call("GET", "/api/v1/auth", { key: bobKey })).status).toBe(200);

    const banned = await server.call("PATCH", `/api/v1/users/${bob.id}`, { session: adminSession, body: { banned: true } });
    expect(banned.body.banned).toBe(true);
    for (const caller of [{ key: bobKey }, { session: bobSession }]) {
      const reply = await server.call("GET", "/api/v1/auth", caller);
      expect(reply.status).toBe(401);
      expect(reply.headers.get("www-authenticate")).toBe("Bearer");
    }
    expect((await server.call("POST", "/api/v1/auth/login", { body: { email: bob.email, password: "correct horse" } })).status).toBe(401);
  });
});
