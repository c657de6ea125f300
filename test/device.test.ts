import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { type Session, TestServer } from "./helpers";

let server: TestServer;
let session: Session;

beforeEach(async () => {
  server = new TestServer();
  await server.user("Ada");
  session = await server.signIn("ada@example.com");
});
afterEach(() => server.stop());

const issue = (clientName = "basalt-cli on laptop") => server.call("POST", "/api/v1/device/code", { body: { clientName } });
const finalize = (deviceCode: string) => server.call("POST", "/api/v1/device/finalize", { body: { deviceCode } });
const wait = (seconds: number) => server.clock.advance(seconds * 1000);

describe("device authorization (RFC 8628)", () => {
  test("issue → pending → approve → finalize yields a working key, once", async () => {
    const grant = await issue();
    expect(grant.status).toBe(200);
    expect(grant.body).toMatchObject({ verificationUri: "http://basalt.test/admin/device", expiresIn: 900, interval: 5 });
    expect(grant.body.deviceCode.length).toBeGreaterThanOrEqual(32);
    expect(grant.body.userCode).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(grant.body.verificationUriComplete).toBe(`http://basalt.test/admin/device?code=${grant.body.userCode}`);

    wait(5);
    const pending = await finalize(grant.body.deviceCode);
    expect(pending.status).toBe(400);
    expect(pending.body).toMatchObject({ code: "AUTHORIZATION_PENDING", error: "authorization_pending" });

    const lookup = await server.call("GET", `/api/v1/device/requests/${grant.body.userCode.toLowerCase().replace("-", " ")}`, { session });
    expect(lookup.body).toMatchObject({ userCode: grant.body.userCode, clientName: "basalt-cli on laptop", status: "pending" });

    const approved = await server.call("POST", "/api/v1/device/approve", { session, body: { userCode: grant.body.userCode.replace("-", ""), name: "laptop agent", level: "changeRequest", expiration: "7d" } });
    expect(approved.body).toEqual({ success: true });

    const credential = await finalize(grant.body.deviceCode);
    expect(credential.status).toBe(200);
    expect(credential.body.credentialType).toBe("api_key");
    expect(credential.body.apiKeyId).toMatch(/^key_/);
    expect(Date.parse(credential.body.expiresAt)).toBe(server.clock.now() + 7 * 86_400_000);
    const auth = await server.call("GET", "/api/v1/auth", { key: credential.body.apiKey });
    expect(auth.body.credential).toMatchObject({ id: credential.body.apiKeyId, name: "laptop agent", level: "changeRequest" });
    expect(auth.body.user.email).toBe("ada@example.com");

    const again = await finalize(grant.body.deviceCode);
    expect(again.body).toMatchObject({ code: "INVALID_GRANT", error: "invalid_grant" });
  });

  test("a key that never expires reports expiresAt null", async () => {
    const grant = await issue();
    await server.call("POST", "/api/v1/device/approve", { session, body: { userCode: grant.body.userCode, name: "forever", level: "read", expiration: "never" } });
    expect((await finalize(grant.body.deviceCode)).body.expiresAt).toBeNull();
  });

  test("polling faster than the interval: slow_down, and the interval grows by 5 s for good", async () => {
    const grant = await issue();
    wait(2);
    expect((await finalize(grant.body.deviceCode)).body).toMatchObject({ code: "SLOW_DOWN", error: "slow_down" });
    wait(6);
    expect((await finalize(grant.body.deviceCode)).body.code).toBe("SLOW_DOWN");
    wait(15);
    expect((await finalize(grant.body.deviceCode)).body.code).toBe("AUTHORIZATION_PENDING");
    wait(14);
    expect((await finalize(grant.body.deviceCode)).body.code).toBe("SLOW_DOWN");
  });

  test("after approval or denial the answer comes at once, whatever the interval", async () => {
    const grant = await issue();
    await server.call("POST", "/api/v1/device/deny", { session, body: { userCode: grant.body.userCode } });
    for (let i = 0; i < 3; i++) expect((await finalize(grant.body.deviceCode)).body).toMatchObject({ code: "ACCESS_DENIED", error: "access_denied" });
    const approve = await server.call("POST", "/api/v1/device/approve", { session, body: { userCode: grant.body.userCode, name: "x", level: "read" } });
    expect(approve.status).toBe(409);
  });

  test("codes expire after 900 s", async () => {
    const grant = await issue();
    wait(900);
    expect((await finalize(grant.body.deviceCode)).body).toMatchObject({ code: "EXPIRED_TOKEN", error: "expired_token" });
    const lookup = await server.call("GET", `/api/v1/device/requests/${grant.body.userCode}`, { session });
    expect(lookup.body.status).toBe("expired");
    expect((await server.call("POST", "/api/v1/device/approve", { session, body: { userCode: grant.body.userCode, name: "x", level: "read" } })).status).toBe(409);
  });

  test("an unknown device code is invalid_grant; no Authorization header is needed", async () => {
    expect((await finalize("x".repeat(40))).body.code).toBe("INVALID_GRANT");
  });

  test("device codes are stored only as hashes", async () => {
    const grant = await issue();
    const rows = server.ctx.store.sqlite.query("SELECT * FROM device_requests").all();
    expect(JSON.stringify(rows)).not.toContain(grant.body.deviceCode);
  });

  test("approval needs a session; a key gets 403", async () => {
    const grant = await issue();
    const key = await server.key(session.userId, "manage");
    const reply = await server.call("POST", "/api/v1/device/approve", { key, body: { userCode: grant.body.userCode, name: "x", level: "manage" } });
    expect(reply.status).toBe(403);
    expect(reply.body.reason).toBe("SESSION_REQUIRED");
  });

  test("issuing codes is limited to 10 a minute per address", async () => {
    for (let i = 0; i < 10; i++) expect((await issue()).status).toBe(200);
    const limited = await issue();
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBeTruthy();
  });

  test("lookups of unknown codes are limited per user and per address: a new session does not reset the count", async () => {
    for (let i = 0; i < 10; i++) expect((await server.call("GET", "/api/v1/device/requests/BCDF-GHJK", { session })).status).toBe(404);
    expect((await server.call("GET", "/api/v1/device/requests/BCDF-GHJK", { session })).status).toBe(429);
    const fresh = await server.signIn("ada@example.com");
    expect((await server.call("GET", "/api/v1/device/requests/BCDF-GHJK", { session: fresh })).status).toBe(429);
    expect((await server.call("POST", "/api/v1/device/approve", { session: fresh, body: { userCode: "BCDF-GHJK", name: "x", level: "read" } })).status).toBe(429);
    await server.user("Bob");
    const bob = await server.signIn("bob@example.com");
    expect((await server.call("GET", "/api/v1/device/requests/BCDF-GHJK", { session: bob })).status).toBe(429);
    server.clock.advance(60_000);
    expect((await server.call("GET", "/api/v1/device/requests/BCDF-GHJK", { session: fresh })).status).toBe(404);
  });
});
