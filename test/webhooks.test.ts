import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { BUN, createBase, eventually, freePort, REPO, tempDir, TestServer, type Workspace, workspace } from "./helpers";
import { dailyUpkeep } from "../src/jobs/schedule";
import { Receiver } from "./receiver";
import { SecretBox } from "../src/webhooks/secrets";
import { TargetGuard } from "../src/webhooks/ssrf";
import { dueJobsOfRule } from "../src/webhooks/worker";

const SECRET = `whsec_${Buffer.from("a".repeat(32)).toString("base64")}`;

let server: TestServer;
let ws: Workspace;
let receiver: Receiver;
beforeEach(async () => {
  server = new TestServer({ webhookAllow: "127.0.0.1/32,localhost", retrySchedule: "0,0,0" });
  ws = await workspace(server);
  await createBase(server, ws.write);
  receiver = new Receiver();
});
afterEach(async () => {
  await server.stop();
  receiver.stop();
});

const rule = (body: Record<string, unknown> = {}, key = ws.manage) =>
  server.call("POST", "/api/v1/webhooks", { key, body: { name: "hook", eventType: "record.created", actionKind: "webhook", config: { targetUrl: receiver.url, secret: SECRET }, ...body } });
const createRecord = (title = "Attention") => server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title } } });
const countOf = (sql: string) => (server.ctx.store.sqlite.query(sql).get() as { n: number }).n;
const deliveries = async (ruleId: string) => (await server.call("GET", `/api/v1/webhooks/${ruleId}/deliveries`, { key: ws.manage })).body;

describe("rules (section 8.1)", () => {
  test("create, read, list, update, delete with manage; the secret is never answered and stored sealed", async () => {
    const created = await rule({ config: { targetUrl: receiver.url, secret: SECRET, headers: { "X-Team": "research" } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "hook",
      eventType: "record.created",
      actionKind: "webhook",
      enabled: true,
      disabledReason: null,
      spaceId: ws.space.id,
      baseId: null,
      createdBy: ws.owner.id,
      lastTriggeredAt: null,
      lastStatus: null,
      config: { targetUrl: receiver.url, hasSecret: true, headers: { "x-team": "research" } },
    });
    expect(created.body.id).toMatch(/^whk_/);
    expect(created.text).not.toContain(SECRET);
    const stored = server.ctx.store.sqlite.query("SELECT secret_sealed AS s FROM webhook_rules").get() as { s: string };
    expect(stored.s).not.toContain(SECRET.slice(6));
    expect(readFileSync(server.dbPath).includes(Buffer.from(SECRET.slice(6)))).toBe(false);

    const id = created.body.id;
    expect((await server.call("GET", `/api/v1/webhooks/${id}`, { key: ws.manage })).body.config.hasSecret).toBe(true);
    const list = await server.call("GET", "/api/v1/webhooks", { key: ws.manage });
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((r: { id: string }) => r.id)).toEqual([id]);

    const kept = await server.call("PUT", `/api/v1/webhooks/${id}`, { key: ws.manage, body: { name: "renamed", eventType: "changes_requested", actionKind: "webhook", config: { targetUrl: receiver.url } } });
    expect(kept.body).toMatchObject({ name: "renamed", eventType: "changes_requested", config: { hasSecret: true } });
    const removed = await server.call("PUT", `/api/v1/webhooks/${id}`, { key: ws.manage, body: { name: "renamed", eventType: "*", actionKind: "webhook", config: { targetUrl: receiver.url, secret: null } } });
    expect(removed.body.config.hasSecret).toBe(false);

    expect((await server.call("DELETE", `/api/v1/webhooks/${id}`, { key: ws.manage })).body).toEqual({ success: true });
    expect((await server.call("DELETE", `/api/v1/webhooks/${id}`, { key: ws.manage })).body).toEqual({ success: false });
  });

  test("need manage; name, eventType, actionKind and config.targetUrl are required; headers may not set content-type or webhook-*", async () => {
    expect((await rule({}, ws.write)).status).toBe(403);
    for (const missing of ["name", "eventType", "actionKind", "config"]) {
      const body: Record<string, unknown> = { name: "h", eventType: "record.created", actionKind: "webhook", config: { targetUrl: receiver.url } };
      delete body[missing];
      expect((await server.call("POST", "/api/v1/webhooks", { key: ws.manage, body })).status, missing).toBe(400);
    }
    expect((await rule({ eventType: "record.exploded" })).status).toBe(400);
    expect((await rule({ actionKind: "email" })).status).toBe(400);
    for (const header of ["Content-Type", "webhook-id", "Webhook-Signature"]) {
      expect((await rule({ config: { targetUrl: receiver.url, headers: { [header]: "x" } } })).status, header).toBe(400);
    }
    expect((await rule({ config: { targetUrl: receiver.url, secret: "x".repeat(257) } })).status).toBe(400);
    // Busabase's kinds: a secret of any length from 1, notify_agent delivered as a webhook, run_function refused with the reason.
    expect((await rule({ config: { targetUrl: receiver.url, secret: "s" } })).status).toBe(201);
    expect((await rule({ actionKind: "notify_agent" })).body).toMatchObject({ actionKind: "notify_agent", config: { targetUrl: receiver.url } });
    const code = await rule({ actionKind: "run_function", config: { code: "return input", timeoutMs: 2000 } });
    expect([code.status, code.body.reason]).toEqual([400, "ACTION_NOT_SUPPORTED"]);
    expect((await rule({ config: {} })).status).toBe(400);
    expect((await rule({ baseId: "no-such-base" })).status).toBe(404);
  });

  test("each refusal names the field in data.issues, as the schema's own refusals do", async () => {
    const issues = async (body: Record<string, unknown>) => (await rule(body)).body.data?.issues;
    expect(await issues({ config: {} })).toEqual([{ path: ["config", "targetUrl"], message: "A webhook rule needs config.targetUrl: where its events are POSTed." }]);
    expect(await issues({ config: { targetUrl: receiver.url, headers: { "Content-Type": "x" } } })).toEqual([{ path: ["config", "headers", "Content-Type"], message: expect.stringContaining("may not set Content-Type") }]);
    expect(await issues({ config: { targetUrl: receiver.url, secret: "x".repeat(257) } })).toEqual([{ path: ["config", "secret"], message: expect.any(String) }]);
    expect(await issues({ name: "  " })).toEqual([{ path: ["name"], message: "The name must not be empty." }]);
    expect(await issues({ actionKind: "run_function", config: { code: "return input" } })).toEqual([{ path: ["actionKind"], message: expect.stringContaining("run_function") }]);
    expect(await issues({ config: { targetUrl: "http://10.0.0.1/hook" } })).toEqual([{ path: ["config", "targetUrl"], message: expect.any(String) }]);
  });

  test("at most 50 rules a space: 409 RULE_LIMIT_REACHED", async () => {
    for (let i = 0; i < 50; i++) expect((await rule({ name: `r${i}` })).status).toBe(201);
    const over = await rule({ name: "one too many" });
    expect(over.status).toBe(409);
    expect(over.body.reason).toBe("RULE_LIMIT_REACHED");
  });
});

describe("delivery (section 8.2)", () => {
  test("a record create is delivered once, signed, with the contract's body and headers", async () => {
    const created = (await rule({ config: { targetUrl: receiver.url, secret: SECRET, headers: { "x-team": "research" } } })).body;
    const record = (await createRecord()).body;
    await eventually(() => receiver.received.length === 1);
    const [hit] = receiver.received;
    const body = JSON.parse(hit.body);
    expect(body).toMatchObject({ type: "record.created", event: "record.created", spaceId: ws.space.id, baseId: record.baseId, data: { record: { id: record.id, fields: { title: "Attention" } } } });
    expect(body.id).toMatch(/^evt_/);
    expect(hit.headers["webhook-id"]).toBe(body.id);
    expect(hit.headers["content-type"]).toBe("application/json");
    expect(hit.headers["user-agent"]).toMatch(/^Basalt-Webhooks\//);
    expect(hit.headers["x-team"]).toBe("research");
    // Signed as the standardwebhooks package signs (the test's clock stands in the past, so its own
    // freshness check would refuse the timestamp; the signature itself is compared byte for byte).
    const sentAt = new Date(Number(hit.headers["webhook-timestamp"]) * 1000);
    expect(hit.headers["webhook-signature"]).toBe(new Webhook(SECRET).sign(body.id, sentAt, hit.body));
    await eventually(() => countOf("SELECT count(*) AS n FROM webhook_deliveries") === 1);
    const [log] = await deliveries(created.id);
    expect(log).toMatchObject({ ruleId: created.id, eventId: body.id, eventType: "record.created", attempt: 1, trigger: "event", status: "success", httpStatus: 200, detail: "answer 200", requestUrl: receiver.url, nextAttemptAt: null });
    expect((await server.call("GET", `/api/v1/webhooks/${created.id}`, { key: ws.manage })).body.lastStatus).toBe("success");
  });

  test("a receiver written for Busabase reads the same deliveries: X-Busabase-Signature and its flat fields", async () => {
    const secret = "a plain secret";
    const hex = (body: string) => new Bun.CryptoHasher("sha256", secret).update(body).digest("hex");
    await rule({ config: { targetUrl: receiver.url, secret } });
    await rule({ name: "sent back", eventType: "changes_requested", config: { targetUrl: receiver.url, secret } });
    const record = (await createRecord()).body;
    await eventually(() => receiver.received.length === 1);
    const created = receiver.received[0];
    expect(created.headers["x-busabase-signature"]).toBe(hex(created.body));
    expect(JSON.parse(created.body)).toMatchObject({ event: "record.created", recordId: record.id, baseId: record.baseId, changeRequestId: expect.stringMatching(/^crq_/), fields: { title: "Attention" } });
    const proposal = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "Draft" } } })).body;
    await server.call("POST", `/api/v1/change-requests/${proposal.id}/reviews`, { key: ws.write, body: { verdict: "rejected", reason: "needs a source" } });
    await eventually(() => receiver.received.length === 2);
    const sentBack = receiver.received[1];
    expect(JSON.parse(sentBack.body)).toMatchObject({ event: "agent.task", trigger: "changes_requested", changeRequestId: proposal.id, type: "change_request.changes_requested" });
    expect(sentBack.headers["x-busabase-signature"]).toBe(hex(sentBack.body));
  });

  test("Busabase's event names are accepted and answered as given; an asset confirmed is asset.uploaded, a comment asking the agent is ai_mention", async () => {
    const secret = "a plain secret";
    for (const eventType of ["ai_mention", "asset.uploaded", "changes_requested"]) {
      const made = await rule({ name: eventType, eventType, config: { targetUrl: receiver.url, secret } });
      expect([made.status, made.body.eventType]).toEqual([201, eventType]);
    }
    const listed = (await server.call("GET", "/api/v1/webhooks", { key: ws.manage })).body.map((one: { eventType: string }) => one.eventType);
    expect(listed.sort()).toEqual(["ai_mention", "asset.uploaded", "changes_requested"]);

    const started = (await server.call("POST", "/api/v1/assets/upload-urls", { key: ws.write, body: { fileName: "notes.txt", mimeType: "text/plain", size: 5 } })).body;
    await fetch(`${server.url}${started.uploadUrl}`, { method: "PUT", headers: { authorization: `Bearer ${ws.write}`, "content-type": "text/plain" }, body: "hello" });
    expect(receiver.received).toHaveLength(0);
    await server.call("POST", "/api/v1/assets/confirmations", { key: ws.write, body: { assetId: started.assetId } });
    await eventually(() => receiver.received.length === 1);
    const uploaded = receiver.received[0];
    expect(JSON.parse(uploaded.body)).toMatchObject({ event: "asset.uploaded", assetId: started.assetId, fileName: "notes.txt", mimeType: "text/plain", textStatus: "present" });
    expect(uploaded.headers["x-busabase-signature"]).toBe(new Bun.CryptoHasher("sha256", secret).update(uploaded.body).digest("hex"));

    const proposal = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "Draft" } } })).body;
    await server.call("POST", "/api/v1/comments", { key: ws.write, body: { subjectType: "change_request", subjectId: proposal.id, body: "Looks fine" } });
    await server.call("POST", "/api/v1/comments", { key: ws.write, body: { subjectType: "change_request", subjectId: proposal.id, body: "@ai add a source", mentionsAi: true } });
    await eventually(() => receiver.received.length === 2);
    expect(JSON.parse(receiver.received[1].body)).toMatchObject({ event: "agent.task", trigger: "ai_mention", changeRequestId: proposal.id });

    const aiRule = (await server.call("GET", "/api/v1/webhooks", { key: ws.manage })).body.find((one: { eventType: string }) => one.eventType === "ai_mention");
    const fired = await server.call("POST", `/api/v1/webhooks/${aiRule.id}/test-fire`, { key: ws.manage });
    expect(fired.body).toMatchObject({ eventType: "change_request.ai_mention", status: "success" });
    expect(JSON.parse(receiver.received[2].body)).toMatchObject({ event: "agent.task", trigger: "ai_mention", _test: true });
  });

  test("a 500, 500, 200 receiver gets three attempts with one webhook-id, and the log shows each", async () => {
    const created = (await rule()).body;
    receiver.answers = [500, 500, 200];
    await createRecord();
    await eventually(() => receiver.received.length === 3);
    expect(new Set(receiver.received.map((hit) => hit.headers["webhook-id"])).size).toBe(1);
    await eventually(() => countOf("SELECT count(*) AS n FROM webhook_deliveries") === 3);
    const log = await deliveries(created.id);
    expect(log.map((d: { attempt: number; status: string }) => [d.attempt, d.status])).toEqual([
      [3, "success"],
      [2, "failed"],
      [1, "failed"],
    ]);
    expect(log[1].nextAttemptAt).not.toBeNull();
  });

  test("410 Gone disables the rule, with its reason; later events are not delivered to it", async () => {
    const created = (await rule()).body;
    receiver.answers = [410];
    await createRecord();
    await eventually(() => receiver.received.length === 1);
    await eventually(() => countOf("SELECT enabled AS n FROM webhook_rules") === 0);
    const after = (await server.call("GET", `/api/v1/webhooks/${created.id}`, { key: ws.manage })).body;
    expect(after.enabled).toBe(false);
    expect(after.disabledReason).toContain("410");
    await createRecord("Another");
    await Bun.sleep(100);
    expect(receiver.received).toHaveLength(1);
  });

  test("redirects are not followed: a 302 is a failure", async () => {
    const created = (await rule()).body;
    receiver.answers = [{ status: 302, headers: { location: "http://169.254.169.254/latest/meta-data" } }, 302, 302, 302];
    await createRecord();
    await eventually(() => receiver.received.length === 4);
    await eventually(() => countOf("SELECT count(*) AS n FROM webhook_deliveries") === 4);
    const log = await deliveries(created.id);
    expect(log.every((d: { status: string }) => d.status === "failed")).toBe(true);
    expect(log.at(-1).detail).toContain("not followed");
  });

  test("a slow receiver does not hold up another rule's deliveries", async () => {
    const slow = new Receiver();
    try {
      slow.answers = Array.from({ length: 20 }, () => ({ status: 200, delayMs: 3000 }));
      await rule({ name: "slow", config: { targetUrl: slow.url } });
      await rule({ name: "fast" });
      const started = performance.now();
      for (let i = 0; i < 10; i++) await createRecord(`r${i}`);
      await eventually(() => receiver.received.length === 10);
      expect(performance.now() - started).toBeLessThan(2500);
    } finally {
      slow.stop();
    }
  });

  describe("the pool is shared fairly between spaces", () => {
    /** Another space, its own owner, base and rules, all aimed at a target that never answers (until it is stopped). */
    async function hangingSpace(rules: number) {
      const hanging = new Receiver();
      hanging.answers = Array.from({ length: 1000 }, () => ({ status: 200, delayMs: 60_000 }));
      const owner = await server.user("Grace");
      await server.space(owner.id, "Elsewhere", "elsewhere");
      const manage = await server.key(owner.id, "manage");
      await createBase(server, manage);
      const ids: string[] = [];
      for (let i = 0; i < rules; i++) ids.push((await rule({ name: `dead ${i}`, eventType: "*", config: { targetUrl: hanging.url } }, manage)).body.id);
      return { hanging, manage, ids };
    }

    test("a space whose targets never answer holds at most half the pool: another space's delivery arrives while all of its attempts still hang", async () => {
      const other = await hangingSpace(40);
      try {
        for (let i = 0; i < 10; i++) await server.call("POST", "/api/v1/bases/papers/change-requests", { key: other.manage, body: { fields: { title: `b${i}` } } });
        await eventually(() => other.hanging.received.length >= 64);
        await rule({ name: "fast" });
        await createRecord("from the first space");
        await eventually(() => receiver.received.length === 1, 5000);
        expect(JSON.parse(receiver.received[0].body).data.record.fields.title).toBe("from the first space");
        // None of the other space's attempts has ended (each waits for its 10 s limit), and it never held more than its share (its 40 rules would take 80).
        expect(countOf(`SELECT count(*) AS n FROM webhook_deliveries WHERE request_url = '${other.hanging.url}'`)).toBe(0);
        expect(other.hanging.received.length).toBe(64);
      } finally {
        other.hanging.stop();
      }
    });

    test("a rule whose target has not answered holds 2 slots, not 16: beside another space's dead targets, this space's own dead target leaves its share to the rules that answer", async () => {
      const dead = new Receiver();
      dead.answers = Array.from({ length: 100 }, () => ({ status: 200, delayMs: 60_000 }));
      // Two rules that answer once (so they have earned their 16 slots), then hold every answer.
      const held = [new Receiver(), new Receiver()];
      for (const receiver of held) receiver.answers = [200, ...Array.from({ length: 100 }, () => ({ status: 200, delayMs: 60_000 }))];
      const other = await hangingSpace(25);
      try {
        for (const [i, receiver] of held.entries()) await rule({ name: `answers ${i}`, config: { targetUrl: receiver.url } });
        await rule({ name: "dead", config: { targetUrl: dead.url } });
        await createRecord("first");
        await eventually(() => countOf("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'success'") === 2);
        // The other space's rules hold its share (42 of 128 while both spaces have work).
        for (let i = 0; i < 2; i++) await server.call("POST", "/api/v1/bases/papers/change-requests", { key: other.manage, body: { fields: { title: `b${i}` } } });
        await eventually(() => other.hanging.received.length >= 42);
        for (let i = 0; i < 16; i++) await createRecord(`r${i}`);
        // 16 + 16 held attempts and the dead target's 2 fit in the share (its 16 would not).
        await eventually(() => held.every((receiver) => receiver.received.length === 17), 5000);
        expect(dead.received.length).toBe(2);
      } finally {
        for (const receiver of [dead, ...held, other.hanging]) receiver.stop();
      }
    });

    test("a rule's due jobs are read by the rule's own index: a dead target's backlog is never walked to find another rule's jobs", () => {
      // The loop's own statement; its placeholders (rule, now, jobs in flight, limit) bound to sample values.
      const { sql } = dueJobsOfRule(server.ctx).getQuery();
      const plan = (server.ctx.store.sqlite.query(`EXPLAIN QUERY PLAN ${sql}`).all("rul_x", Date.now(), "[]", 16) as { detail: string }[]).map((row) => row.detail);
      expect(plan[0]).toBe("SEARCH webhook_jobs USING INDEX webhook_jobs_rule_due_idx (rule_id=? AND due_at<?)");
    });

    test("test-fire and redeliver wait for a slot of their space's share: past 32 waiting, 429; another space's deliveries go on", async () => {
      const other = await hangingSpace(1);
      try {
        const fires = Array.from({ length: 100 }, () => server.call("POST", `/api/v1/webhooks/${other.ids[0]}/test-fire`, { key: other.manage }));
        await eventually(() => other.hanging.received.length === 64);
        await rule({ name: "fast" });
        await createRecord("beside the test-fires");
        await eventually(() => receiver.received.length === 1, 5000);
        other.hanging.stop();
        const answers = await Promise.all(fires);
        const refused = answers.filter((answer) => answer.status === 429);
        expect(refused).toHaveLength(4);
        expect(refused[0].headers.get("retry-after")).toBe("10");
        expect(refused[0].body).toMatchObject({ code: "TOO_MANY_REQUESTS" });
        expect(answers.filter((answer) => answer.status === 200)).toHaveLength(96);
        expect(other.hanging.received.length).toBe(64);
      } finally {
        other.hanging.stop();
      }
    });
  });

  test("test-fire: one synchronous attempt with a synthetic event, even on a disabled rule; redeliver keeps the webhook-id", async () => {
    const created = (await rule({ enabled: false, eventType: "change_request.merged" })).body;
    const fired = await server.call("POST", `/api/v1/webhooks/${created.id}/test-fire`, { key: ws.manage });
    expect(fired.status).toBe(200);
    expect(fired.body).toMatchObject({ ruleId: created.id, eventType: "change_request.merged", trigger: "test", status: "success", attempt: 1, httpStatus: 200 });
    expect(JSON.parse(receiver.received[0].body)).toMatchObject({ data: { test: true }, _test: true });
    const again = await server.call("POST", `/api/v1/webhooks/${created.id}/deliveries/${fired.body.id}/redeliver`, { key: ws.manage });
    expect(again.body).toMatchObject({ trigger: "redeliver", eventId: fired.body.eventId, status: "success" });
    expect(receiver.received[1].headers["webhook-id"]).toBe(receiver.received[0].headers["webhook-id"]);
    const rule2 = (await server.call("GET", `/api/v1/webhooks/${created.id}`, { key: ws.manage })).body;
    expect(rule2).toMatchObject({ lastStatus: "success", enabled: false });
    expect(rule2.lastTriggeredAt).not.toBeNull();
  });

  test("a secret the server's key cannot open (the key file lost or changed): each attempt is logged as not sent, on the retry schedule, and test-fire answers it", async () => {
    const created = (await rule()).body;
    Object.assign(server.ctx, { secretBox: new SecretBox({ dataDir: server.dir, secretKey: "not the key it was sealed with" }) });
    await createRecord();
    // Four attempts (the first and three retries at 0 s), then the job is done: no loop.
    await eventually(() => countOf("SELECT count(*) AS n FROM webhook_deliveries") === 4);
    await Bun.sleep(100);
    expect(countOf("SELECT count(*) AS n FROM webhook_deliveries")).toBe(4);
    expect(countOf("SELECT count(*) AS n FROM webhook_jobs")).toBe(0);
    const log = await deliveries(created.id);
    expect(log.every((d: { status: string; httpStatus: number | null; detail: string }) => d.status === "failed" && d.httpStatus === null && d.detail.includes("signing secret cannot be opened"))).toBe(true);
    const fired = await server.call("POST", `/api/v1/webhooks/${created.id}/test-fire`, { key: ws.manage });
    expect(fired.status).toBe(200);
    expect(fired.body).toMatchObject({ status: "failed", httpStatus: null });
    expect(receiver.received).toHaveLength(0);
  });

  test("an attempt whose outcome cannot be written (a full disk) is not sent again at once; once writes work, it is delivered and logged", async () => {
    const created = (await rule()).body;
    receiver.answers = [{ status: 200, delayMs: 300 }];
    await createRecord();
    await eventually(() => receiver.received.length === 1);
    const writes = server.ctx.store.writes;
    const working = writes.write;
    writes.write = (() => Promise.reject(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }))) as typeof writes.write;
    await Bun.sleep(700);
    expect(receiver.received).toHaveLength(1);
    writes.write = working;
    await eventually(() => countOf("SELECT count(*) AS n FROM webhook_deliveries") === 1);
    expect((await deliveries(created.id))[0]).toMatchObject({ status: "success", attempt: 1 });
    expect(receiver.received).toHaveLength(2);
  });

  test("the delivery log: limit 1..100, default 20, newest first", async () => {
    const created = (await rule()).body;
    for (let i = 0; i < 22; i++) await server.call("POST", `/api/v1/webhooks/${created.id}/test-fire`, { key: ws.manage });
    expect(await deliveries(created.id)).toHaveLength(20);
    expect((await server.call("GET", `/api/v1/webhooks/${created.id}/deliveries?limit=5`, { key: ws.manage })).body).toHaveLength(5);
    for (const limit of ["0", "101", "x"]) expect((await server.call("GET", `/api/v1/webhooks/${created.id}/deliveries?limit=${limit}`, { key: ws.manage })).status).toBe(400);
    const all = (await server.call("GET", `/api/v1/webhooks/${created.id}/deliveries?limit=100`, { key: ws.manage })).body;
    expect(all.map((d: { id: string }) => d.id)).toEqual([...all.map((d: { id: string }) => d.id)].sort().reverse());
  });
});

describe("what the outbox keeps", () => {
  test("an event no rule wants is deleted once the loop reads it; one a rule wants stays for redelivery until the daily upkeep removes it with its deliveries", async () => {
    const unwanted = await createRecord("nobody listens");
    await eventually(() => countOf(`SELECT count(*) AS n FROM events WHERE data LIKE '%${unwanted.body.id}%'`) === 0);

    const created = (await rule()).body;
    const wanted = await createRecord("someone listens");
    await eventually(() => receiver.received.length === 1);
    // A job is sent before the write that stores it (and drops the unwanted events) commits; its outcome is written after it.
    await eventually(() => countOf("SELECT count(*) AS n FROM webhook_deliveries") === 1);
    await eventually(() => countOf("SELECT count(*) AS n FROM webhook_jobs") === 0);
    expect(countOf(`SELECT count(*) AS n FROM events WHERE type = 'record.created' AND data LIKE '%${wanted.body.id}%'`)).toBe(1);
    expect(countOf("SELECT count(*) AS n FROM events WHERE type != 'record.created'")).toBe(0);
    const [delivery] = await deliveries(created.id);
    expect((await server.call("POST", `/api/v1/webhooks/${created.id}/deliveries/${delivery.id}/redeliver`, { key: ws.manage })).status).toBe(200);

    server.clock.advance(31 * 86_400_000);
    await dailyUpkeep(server.ctx);
    expect(countOf("SELECT count(*) AS n FROM events")).toBe(0);
    const key = await server.key(ws.owner.id, "manage"); // the workspace's keys expired meanwhile
    const gone = await server.call("POST", `/api/v1/webhooks/${created.id}/deliveries/${delivery.id}/redeliver`, { key });
    expect(gone.status).toBe(404); // the delivery went with its event
  });
});

describe("the SSRF guard (section 8.1)", () => {
  test("every private form is refused at save without an allow list, and at delivery against the address connected to", async () => {
    const strict = new TestServer();
    try {
      const w = await workspace(strict);
      for (const target of ["http://127.0.0.1/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/", "http://169.254.169.254/latest", "http://10.1.2.3/", "http://100.64.0.1/", "http://[::1]/", "http://localhost/", "http://224.0.0.1/", "ftp://example.com/", "http://2130706433/", "http://[::127.0.0.1]/", "http://[::a00:1]/"]) {
        const reply = await strict.call("POST", "/api/v1/webhooks", { key: w.manage, body: { name: "x", eventType: "*", actionKind: "webhook", config: { targetUrl: target } } });
        expect(reply.status, target).toBe(400);
        if (!target.startsWith("ftp")) expect(reply.body.reason, target).toBe("TARGET_NOT_ALLOWED");
      }
    } finally {
      await strict.stop();
    }
  });

  test("an allow-list entry with a port allows that port only; the log keeps at most 256 bytes of an answer", async () => {
    const guard = new TargetGuard(["127.0.0.1:8787", "10.0.0.0/8:443", "localhost:9000", "[::1]:8787", "[fd00::]/8:443"]);
    for (const allowed of ["http://127.0.0.1:8787/", "https://10.2.3.4/", "http://10.2.3.4:443/", "http://localhost:9000/x", "http://[::1]:8787/", "https://[fd12::1]/"]) {
      expect((await guard.resolve(allowed)).url.href, allowed).toBe(new URL(allowed).href);
    }
    for (const refused of ["http://127.0.0.1:8788/", "http://127.0.0.1/", "http://10.2.3.4/", "http://localhost:9001/", "http://[::1]:22/", "http://[fd12::1]/"]) {
      await expect(guard.resolve(refused), refused).rejects.toThrow("webhooks may only call public addresses");
    }
    expect(() => new TargetGuard(["127.0.0.1:99999"])).toThrow("has no valid port");

    const talkative = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("s".repeat(5000), { status: 200 }) });
    try {
      const created = (await rule({ config: { targetUrl: `http://127.0.0.1:${talkative.port}/`, secret: SECRET } })).body;
      const fired = await server.call("POST", `/api/v1/webhooks/${created.id}/test-fire`, { key: ws.manage });
      expect(fired.body.status).toBe("success");
      expect(fired.body.detail).toContain("s".repeat(256));
      expect(fired.body.detail).not.toContain("s".repeat(257));
    } finally {
      talkative.stop(true);
    }
  });

  test("a rule saved while allowed is checked again at every attempt", async () => {
    const created = (await rule()).body;
    server.ctx.webhookTargets = new (server.ctx.webhookTargets.constructor as typeof import("../src/webhooks/ssrf").TargetGuard)([]);
    const fired = await server.call("POST", `/api/v1/webhooks/${created.id}/test-fire`, { key: ws.manage });
    expect(fired.body).toMatchObject({ status: "failed", httpStatus: null });
    expect(fired.body.detail).toContain("Not sent");
    expect(receiver.received).toHaveLength(0);
  });
});

describe("durability", () => {
  test("pending attempts live in the database: a new loop on the same database delivers what the old one left", async () => {
    await server.deliveries!.stop();
    await rule();
    await createRecord();
    await Bun.sleep(50);
    expect(receiver.received).toHaveLength(0);
    const { DeliveryLoop } = await import("../src/webhooks/worker");
    const restarted = new DeliveryLoop().start(server.ctx);
    try {
      await eventually(() => receiver.received.length === 1);
    } finally {
      await restarted.stop();
    }
  });
});

describe("a restore (basalt restore)", () => {
  test("each space's receivers get space.restored when the restored server starts: history went back, as stream clients get reset", async () => {
    await rule({ eventType: "space.restored", config: { targetUrl: receiver.url } });
    const dir = tempDir();
    const basalt = (...args: string[]) => Bun.spawnSync([BUN, join(REPO, "src/main.ts"), ...args], { stdout: "pipe", stderr: "pipe" });
    expect(basalt("backup", "--out", join(dir, "monday.db"), "--data-dir", server.dir).exitCode).toBe(0);
    const restored = join(dir, "data");
    const restore = basalt("restore", "--from", join(dir, "monday.db"), "--data-dir", restored);
    expect([restore.exitCode, restore.stderr.toString()]).toEqual([0, ""]);
    const port = await freePort();
    const child = Bun.spawn([BUN, join(REPO, "src/main.ts"), "serve", "--port", String(port), "--data-dir", restored, "--webhook-allow", "127.0.0.1/32"], { stdout: "ignore", stderr: "ignore" });
    try {
      await eventually(() => receiver.received.length > 0, 20_000);
      const body = JSON.parse(receiver.received[0].body);
      expect(body).toMatchObject({ type: "space.restored", spaceId: ws.space.id, baseId: null, data: { restoredFrom: "monday.db", reason: expect.stringContaining("Read the space again") } });
      expect(receiver.received).toHaveLength(1);
    } finally {
      child.kill();
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test("the secret key file is created 0600 in the data directory", async () => {
  await rule();
  const { statSync } = await import("node:fs");
  expect(statSync(join(server.dir, "secret.key")).mode & 0o777).toBe(0o600);
});
