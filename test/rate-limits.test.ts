import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { roughBytes, StampedCache } from "../src/db/caches";
import { clientAddress } from "../src/http/plumbing";
import { ManualClock } from "../src/shared/clock";
import { MAX_KEYS, RateLimiter } from "../src/shared/rate-limit";
import { TestServer, createBase, freshWorkspace, fromAddress, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
let formNode: string;
let doc: string;
beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write, "leads", [{ slug: "name", name: "Name", type: "text", required: true }]);
  const made = await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "form", slug: "signup", name: "Sign up" }] } });
  formNode = made.body.operations[0].nodeId;
  await server.call("POST", "/api/v1/forms", { key: ws.manage, body: { nodeId: formNode, targetBaseId: "leads", name: "Sign up", bindings: [{ inputName: "fullName", fieldSlug: "name", required: true }], share: { isPublic: true, anonymousSubmit: true } } });
  doc = (await server.call("POST", "/api/v1/docs", { key: ws.write, body: { slug: "press", name: "Press kit", body: "# Press kit\n" } })).body.node.id;
  await server.call("POST", `/api/v1/nodes/${doc}/share`, { key: ws.manage, body: { scope: "public", password: "open sesame" } });
});
afterEach(() => server.stop());

const submit = (address: string, node: string, values: Record<string, unknown>) =>
  fromAddress(address, `${server.url}/api/v1/forms/${node}/submit`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ values }) });
const visit = (address: string, node: string, password?: string) => fromAddress(address, `${server.url}/api/v1/shared/${node}`, { headers: password === undefined ? {} : { "x-share-password": password } });

describe("rate limits and what they keep", () => {
  test("ids of the wrong shape or length are refused before anything is counted for them", async () => {
    const limits = server.ctx.limits;
    for (let i = 0; i < 50; i++) {
      const id = `nod_${String(i).padStart(12_000, "A")}`;
      expect((await submit("127.0.0.1", id, { fullName: "x" })).status).toBe(404);
      expect((await visit("127.0.0.1", id, "guess")).status).toBe(404);
      expect((await visit("127.0.0.1", `../${i}`, "guess")).status).toBe(404);
    }
    // Nothing was counted: not the ids, not even the address's tries (a malformed id costs nothing to refuse).
    expect([limits.formVisitors.size, limits.formSubmissions.size, limits.sharePasswords.size, limits.shareFailures.size]).toEqual([0, 0, 0, 0]);
    // Ids of the right shape that name nothing count the address's try, and only that.
    for (let i = 0; i < 5; i++) expect((await submit("127.0.0.1", `nod_UNKNOWN${i}`, { fullName: "x" })).status).toBe(404);
    for (let i = 0; i < 5; i++) expect((await visit("127.0.0.1", `nod_UNKNOWN${i}`, "guess")).status).toBe(404);
    expect([limits.formVisitors.size, limits.formSubmissions.size, limits.sharePasswords.size, limits.shareFailures.size]).toEqual([1, 0, 1, 0]);
  });

  test("one address cannot close a public form for its other visitors", async () => {
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      const status = (await submit("127.0.0.1", formNode, { nobody: "binds this" })).status;
      if (status === 429) refused++;
      else expect(status).toBe(400);
    }
    expect(refused).toBe(10);
    // Another visitor is not refused for the first one's tries.
    expect(await submit("127.0.0.2", formNode, { fullName: "Ada" })).toMatchObject({ status: 200, body: { status: "pending_review" } });
    server.clock.advance(61_000);
    expect((await submit("127.0.0.1", formNode, { fullName: "Back again" })).status).toBe(200);
  });

  test("one address cannot close a shared node's password for the others", async () => {
    let refused = 0;
    for (let i = 0; i < 15; i++) if ((await visit("127.0.0.1", doc, `guess ${i}`)).status === 429) refused++;
    expect(refused).toBe(5);
    expect((await visit("127.0.0.3", doc, "open sesame")).status).toBe(200);
    expect(server.ctx.limits.shareFailures.count(`share ${doc}`)).toBe(10);
  });

  test("a limiter keeps a bounded number of windows of bounded keys, however many keys are flooded at it", () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter(clock, 1, 60_000);
    for (let i = 0; i < MAX_KEYS + 5000; i++) limiter.take(i % 100 === 0 ? `address ${i} ${"x".repeat(1000)}` : `address ${i}`);
    expect(limiter.size).toBeLessThanOrEqual(MAX_KEYS);
    // A long key is still its own: two that differ only past the kept length are counted apart.
    const long = "k".repeat(500);
    limiter.take(`${long}a`);
    limiter.take(`${long}b`);
    expect(() => limiter.take(`${long}a`)).toThrow();
  });

  test("an IPv6 client is counted by its /64, an IPv4-mapped one by its IPv4 address", () => {
    const from = (address: string) => clientAddress({ requestIP: () => ({ address }) }, new Request("http://x/"));
    expect(from("2001:db8:1:2:aaaa::1")).toBe(from("2001:db8:1:2:bbbb:cccc:dddd:eeee"));
    expect(from("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(from("2001:db8:1:3::1")).not.toBe(from("2001:db8:1:2::1"));
    expect(from("::ffff:10.0.0.1")).toBe("10.0.0.1");
    expect(from("10.0.0.1")).toBe("10.0.0.1");
  });

  test("a cache of linked values is bounded in bytes as well as in entries", () => {
    const cache = new StampedCache<string, unknown>(server.ctx.store.sqlite, 50_000, 1024 * 1024, roughBytes);
    expect(cache.open()).toBe(true);
    for (let i = 0; i < 1000; i++) cache.set(`rec ${i}`, { lookup: ["y".repeat(20_000)] });
    expect(cache.held.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(cache.held.entries).toBeLessThan(1000);
    cache.set("huge", "z".repeat(1024 * 1024));
    expect(cache.get("huge")).toBeUndefined();
  });
});
