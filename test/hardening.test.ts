import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createBase, freshPapersWorkspace, freshWorkspace, type Session, TestServer, type Workspace, workspace } from "./helpers";

/**
 * What an attacker and a careless client tried against the landed surface (issue 7). Each test
 * failed on the code before its fix.
 */

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

/** Sends raw bytes over TCP (fetch will not announce a length it does not send) and answers the first reply. */
async function rawRequest(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = "";
    Bun.connect({
      hostname,
      port: Number(port),
      socket: {
        open: (socket) => void socket.write(head),
        data: (socket, chunk) => {
          text += chunk.toString();
          if (text.includes("\r\n\r\n") && text.trimEnd().endsWith("}")) {
            socket.end();
            resolve(text);
          }
        },
        close: () => resolve(text),
        error: (_, error) => reject(error),
      },
    }).catch(reject);
  });
}

const prototypeIsClean = () => Object.getOwnPropertyNames(Object.prototype).sort().join();
const CLEAN_PROTOTYPE = prototypeIsClean();

describe("nothing crosses a space (item 1)", () => {
  let server: TestServer;
  let ws: Workspace;
  let other: { key: string; space: string; record: { id: string; headCommitId: string } };

  beforeEach(async () => {
    ({ server, ws } = await freshPapersWorkspace());
    const eve = await server.user("Eve");
    const eveSpace = await server.space(eve.id, "Eve's");
    const eveKey = await server.key(eve.id, "manage");
    await createBase(server, eveKey, "papers");
    const foreign = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: eveKey, body: { fields: { title: "Eve's secret draft", year: 1999 } } });
    other = { key: eveKey, space: eveSpace.id, record: foreign.body };
  });
  afterEach(() => server.stop());

  const create = async (fields: Record<string, unknown>) => (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields } })).body;
  const count = (table: string) => (server.ctx.store.sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

  test("a record update naming another space's commit as baseCommitId is a 400 and stores nothing", async () => {
    const mine = await create({ title: "Mine", year: 2020 });
    const before = [count("change_requests"), count("commits"), count("operations")];
    const reply = await server.call("POST", `/api/v1/records/${mine.id}/change-requests`, {
      key: ws.propose,
      body: { operation: "update", fields: { year: 2021 }, baseCommitId: other.record.headCommitId },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("BAD_REQUEST");
    expect(reply.text).not.toContain("secret");
    expect([count("change_requests"), count("commits"), count("operations")]).toEqual(before);
  });

  test("a commit of another record of the same space is refused too; the record's own commits are accepted", async () => {
    const first = await create({ title: "First" });
    const second = await create({ title: "Second" });
    const wrong = await server.call("POST", `/api/v1/records/${first.id}/change-requests`, { key: ws.propose, body: { operation: "update", fields: { year: 1 }, baseCommitId: second.headCommitId } });
    expect(wrong.status).toBe(400);
    const right = await server.call("POST", `/api/v1/records/${first.id}/change-requests`, { key: ws.propose, body: { operation: "update", fields: { year: 1 }, baseCommitId: first.headCommitId } });
    expect(right.status).toBe(201);
    expect(right.body.primaryOperation.baseCommitId).toBe(first.headCommitId);
  });

  test("a revision naming another space's commit is a 400 and leaves the operation as it was", async () => {
    const mine = await create({ title: "Mine", year: 2020 });
    const proposal = await server.call("POST", `/api/v1/records/${mine.id}/change-requests`, { key: ws.propose, body: { operation: "update", fields: { year: 2021 } } });
    const op = proposal.body.primaryOperation;
    const revised = await server.call("POST", `/api/v1/operations/${op.id}/revisions`, { key: ws.propose, body: { fields: { year: 2022 }, baseCommitId: other.record.headCommitId } });
    expect(revised.status).toBe(400);
    const after = await server.call("GET", `/api/v1/change-requests/${proposal.body.id}`, { key: ws.read });
    expect(after.body.primaryOperation).toMatchObject({ headCommitId: op.headCommitId, baseCommitId: op.baseCommitId });
  });

  test("operations, fields and parents of another space are not found", async () => {
    const theirs = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: other.key, body: { fields: { title: "t" }, autoMerge: false } });
    const revise = await server.call("POST", `/api/v1/operations/${theirs.body.primaryOperation.id}/revisions`, { key: ws.write, body: { fields: { title: "mine now" } } });
    expect(revise.status).toBe(404);

    const theirBase = (await server.call("GET", "/api/v1/bases/papers", { key: other.key })).body;
    const reorder = await server.call("POST", "/api/v1/bases/papers/fields/change-requests", { key: ws.propose, body: { operation: "reorder", fieldIds: theirBase.fields.map((f: { id: string }) => f.id) } });
    expect(reorder.status).toBe(400);
    const update = await server.call("POST", "/api/v1/bases/papers/fields/change-requests", { key: ws.propose, body: { operation: "update", fieldId: theirBase.fields[0].id, patch: { name: "x" } } });
    expect(update.status).toBe(400);

    const parent = await server.call("POST", "/api/v1/nodes/change-requests", {
      key: ws.propose,
      body: { operations: [{ kind: "create", nodeType: "folder", slug: "inside", name: "Inside", parentNodeId: theirBase.nodeId }] },
    });
    expect(parent.status).toBe(404);
  });
});

describe("a walk of every route of openapi.json with another space's ids and prototype keys (items 1 and 2)", () => {
  let server: TestServer;
  let victim: Record<string, string>;
  let secret: string;
  let eve: { key: string; session: Session; space: string; own: Record<string, string> };

  /** Every row of a space, as text: what the victim owns, or what the attacker's space holds. */
  const spaceRows = (spaceId: string): string => {
    const db = server.ctx.store.sqlite;
    const rows = [
      ...["spaces", "members", "nodes", "bases", "records", "commits", "change_requests", "events"].map((table) =>
        db.query(`SELECT * FROM ${table} WHERE ${table === "spaces" ? "id" : "space_id"} = ? ORDER BY rowid`).all(spaceId),
      ),
      db.query("SELECT f.* FROM fields f JOIN bases b ON b.id = f.base_id WHERE b.space_id = ? ORDER BY f.rowid").all(spaceId),
      db.query("SELECT o.* FROM operations o JOIN change_requests c ON c.id = o.change_request_id WHERE c.space_id = ? ORDER BY o.rowid").all(spaceId),
      db.query("SELECT r.* FROM reviews r JOIN change_requests c ON c.id = r.change_request_id WHERE c.space_id = ? ORDER BY r.rowid").all(spaceId),
    ];
    return JSON.stringify(rows);
  };

  beforeAll(async () => {
    server = new TestServer();
    const ada = await server.user("Ada", { admin: true });
    const space = await server.space(ada.id, "Research");
    const write = await server.key(ada.id, "write");
    const base = await createBase(server, write);
    secret = "the-victim's-unpublished-result";
    const record = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: write, body: { fields: { title: secret, year: 2026 } } })).body;
    const proposal = (await server.call("POST", `/api/v1/records/${record.id}/change-requests`, { key: write, body: { operation: "update", fields: { title: `${secret} v2` }, autoMerge: false } })).body;
    const keyId = (server.ctx.store.sqlite.query("SELECT id FROM api_keys WHERE user_id = ? LIMIT 1").get(ada.id) as { id: string }).id;
    victim = {
      spaceId: space.id,
      userId: ada.id,
      keyId,
      nodeId: base.nodeId,
      baseId: base.id,
      fieldId: base.fields[0].id,
      recordId: record.id,
      commitId: record.headCommitId,
      changeRequestId: proposal.id,
      operationId: proposal.primaryOperation.id,
      userCode: "BCDF-GHJK",
    };
    const eveUser = await server.user("Eve");
    const eveSpace = await server.space(eveUser.id, "Eve's");
    const eveKey = await server.key(eveUser.id, "manage");
    const spareKey = await server.key(eveUser.id, "read");
    const eveBase = await createBase(server, eveKey, "papers");
    const eveRecord = (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: eveKey, body: { fields: { title: "Eve's", year: 1 } } })).body;
    const eveProposal = (await server.call("POST", `/api/v1/records/${eveRecord.id}/change-requests`, { key: eveKey, body: { operation: "update", fields: { year: 2 }, autoMerge: false } })).body;
    const spareKeyId = (server.ctx.store.sqlite.query("SELECT id FROM api_keys WHERE prefix = ?").get(spareKey.slice(0, 12)) as { id: string }).id;
    eve = {
      key: eveKey,
      session: await server.signIn("eve@example.com"),
      space: eveSpace.id,
      own: {
        spaceId: eveSpace.id,
        userId: eveUser.id,
        keyId: spareKeyId,
        nodeId: eveBase.nodeId,
        baseId: eveBase.id,
        recordId: eveRecord.id,
        changeRequestId: eveProposal.id,
        operationId: eveProposal.primaryOperation.id,
        userCode: "BCDF-GHJK",
      },
    };
  });
  afterAll(() => server.stop());

  /** A body that names the victim's ids wherever a route reads an id, with enough else to pass validation. */
  const poisonBody = () => ({
    fields: { title: "x" },
    baseCommitId: victim.commitId,
    parentNodeId: victim.nodeId,
    nodeId: victim.nodeId,
    fieldId: victim.fieldId,
    fieldIds: [victim.fieldId],
    recordId: victim.recordId,
    changeRequestIds: [victim.changeRequestId],
    operation: "update",
    operations: [{ kind: "move", nodeId: victim.nodeId, parentNodeId: victim.nodeId }],
    records: [{ fields: { title: "x" } }],
    verdict: "approved",
    patch: { name: "x" },
    metadata: { x: 1 },
    slug: "walk",
    name: "walk",
    type: "text",
    role: "owner",
    email: "nobody@example.com",
    level: "manage",
    confirm: true,
    userCode: victim.userCode,
  });

  /** Calls every operation of the document; `pathIds` fills its path parameters by name. */
  async function walk(caller: { key?: string; session?: Session }, pathIds: Record<string, string>, variant: "ids" | "prototype") {
    const document = (await server.call("GET", "/api/v1/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    const answers: string[] = [];
    for (const [template, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations)) {
        if (template === "/api/v1/auth/logout") continue;
        const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(pathIds[name] ?? "unknown"));
        const query =
          variant === "ids"
            ? `?baseId=${victim.baseId}&parentId=${victim.nodeId}&recordId=${victim.recordId}`
            : "?filters[__proto__][fieldSlug]=title&filters[0][constructor][prototype][polluted]=1&status[__proto__]=x";
        const body = variant === "ids" ? poisonBody() : undefined;
        const rawBody = variant === "prototype" ? `{"__proto__": {"polluted": true, "reviewAlways": true}, "fields": {"__proto__": {"polluted": true}}}` : undefined;
        const reply = await server.call(method.toUpperCase(), path + (method === "get" ? query : ""), {
          ...caller,
          space: eve.space,
          body: method === "get" ? undefined : body,
          rawBody: method === "get" ? undefined : rawBody,
          headers: rawBody && method !== "get" ? { "content-type": "application/json" } : {},
        });
        answers.push(`${method.toUpperCase()} ${template} → ${reply.status}`);
        expect(reply.status, `${method} ${template}`).toBeLessThan(500);
        expect(reply.text, `${method} ${template}`).not.toContain(secret);
        if (reply.status >= 400) expect(reply.body.code, `${method} ${template}`).toBeString();
        expect(prototypeIsClean(), `${method} ${template}`).toBe(CLEAN_PROTOTYPE);
      }
    }
    return answers;
  }

  test("with a manage key and with a session, in the caller's own space: nothing of the victim's space is read, changed or copied", async () => {
    const victimBefore = spaceRows(victim.spaceId);
    const answers: string[] = [];
    for (const caller of [{ key: eve.key }, { session: eve.session }]) {
      // The victim's ids in the path, then the caller's own objects in the path with the victim's ids in the body.
      answers.push(...(await walk(caller, victim, "ids")), ...(await walk(caller, eve.own, "ids")));
    }
    expect(answers.length).toBeGreaterThan(160);
    expect(spaceRows(victim.spaceId)).toBe(victimBefore);
    const attackerRows = spaceRows(eve.space);
    for (const [name, id] of Object.entries(victim)) if (name !== "userCode") expect(attackerRows, name).not.toContain(id);
    expect(attackerRows).not.toContain(secret);
  });

  test("bracketed prototype keys in queries and __proto__ in bodies never reach Object.prototype, and change no later answer", async () => {
    await walk({ key: eve.key }, eve.own, "prototype");
    await walk({ session: eve.session }, eve.own, "prototype");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // A filtered listing and a direct write, in another space, still answer as before.
    const adaWrite = await server.key(victim.userId, "write");
    const listing = await server.call("GET", `/api/v1/records?baseId=papers&filters[0][fieldSlug]=year&filters[0][operator]=eq&filters[0][value]=2026`, { key: adaWrite });
    expect(listing.status).toBe(200);
    expect(listing.body.records).toHaveLength(1);
    const direct = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: adaWrite, body: { fields: { title: "still direct" } } });
    expect(direct.body.materialized).toBe(true);
  });
});

describe("no request changes another (item 2)", () => {
  let server: TestServer;
  let ws: Workspace;
  beforeEach(async () => ({ server, ws } = await freshPapersWorkspace()));
  afterEach(() => server.stop());

  test("a bracketed __proto__, constructor or prototype in a query is a 400", async () => {
    for (const query of ["filters[__proto__][fieldSlug]=title", "filters[0][constructor][x]=1", "status[prototype]=in_review", "__proto__=1"]) {
      const path = query.startsWith("status") ? `/api/v1/change-requests?${query}` : `/api/v1/records?baseId=papers&${query}`;
      const reply = await server.call("GET", path, { key: ws.read });
      expect(reply.status, query).toBe(400);
      expect(reply.body.code).toBe("BAD_REQUEST");
    }
    expect(prototypeIsClean()).toBe(CLEAN_PROTOTYPE);
  });

  test("a body holding __proto__ at any depth is a 400, escaped or not", async () => {
    for (const raw of ['{"__proto__": {"reviewAlways": true}, "fields": {"title": "x"}}', '{"fields": {"title": "x", "__proto__": {"a": 1}}}', '{"fields": {"title": "x"}, "\\u005f_proto__": {}}']) {
      const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, rawBody: raw, headers: { "content-type": "application/json" } });
      expect(reply.status, raw).toBe(400);
    }
    const direct = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "x" } } });
    expect(direct.body.materialized).toBe(true);
  });

  test("field slugs __proto__, constructor and prototype are refused", async () => {
    for (const slug of ["__proto__", "constructor", "prototype"]) {
      const field = await server.call("POST", "/api/v1/bases/papers/fields", { key: ws.write, body: { slug, name: slug, type: "text" } });
      expect(field.status, slug).toBe(400);
      const base = await server.call("POST", "/api/v1/bases", { key: ws.write, body: { slug: `b-${slug.replace(/_/g, "")}`, name: "B", fields: [{ slug, name: "x", type: "text" }] } });
      expect(base.status, slug).toBe(400);
    }
  });
});

describe("rate limits hold under parallel requests (item 3)", () => {
  test("150 logins at once: at most 5 passwords are checked, the rest are 429", async () => {
    const server = new TestServer();
    try {
      await server.user("Ada");
      const replies = await Promise.all(Array.from({ length: 150 }, () => server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: "wrong password" } })));
      const statuses = replies.map((reply) => reply.status);
      expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(5);
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(145);
      expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
      // The right password is refused too while the e-mail is limited, and accepted once the minute is over.
      expect((await server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: "correct horse" } })).status).toBe(429);
      server.clock.advance(60_000);
      expect((await server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: "correct horse" } })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  test("successful logins do not count as failures", async () => {
    const server = new TestServer();
    try {
      await server.user("Ada");
      for (let i = 0; i < 8; i++) expect((await server.call("POST", "/api/v1/auth/login", { body: { email: "ada@example.com", password: "correct horse" } })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe("roles (item 4)", () => {
  let server: TestServer;
  let ada: { id: string; email: string };
  let bob: { id: string; email: string };
  let spaceId: string;
  let bobKey: string;
  beforeEach(async () => {
    server = new TestServer();
    ada = await server.user("Ada", { admin: true });
    bob = await server.user("Bob");
    spaceId = (await server.space(ada.id, "Team")).id;
    const session = await server.signIn(ada.email);
    await server.call("POST", `/api/v1/spaces/${spaceId}/members`, { session, body: { email: bob.email, role: "admin" } });
    bobKey = await server.key(bob.id, "manage");
  });
  afterEach(() => server.stop());

  test("an admin cannot make anyone owner, change or remove an owner, or delete the space", async () => {
    const attempts = [
      await server.call("PATCH", `/api/v1/spaces/${spaceId}/members/${bob.id}`, { key: bobKey, body: { role: "owner" } }),
      await server.call("PATCH", `/api/v1/spaces/${spaceId}/members/${ada.id}`, { key: bobKey, body: { role: "viewer" } }),
      await server.call("DELETE", `/api/v1/spaces/${spaceId}/members/${ada.id}`, { key: bobKey }),
      await server.call("DELETE", `/api/v1/spaces/${spaceId}`, { key: bobKey, body: { confirm: "team" } }),
    ];
    const carol = await server.user("Carol");
    attempts.push(await server.call("POST", `/api/v1/spaces/${spaceId}/members`, { key: bobKey, body: { email: carol.email, role: "owner" } }));
    for (const reply of attempts) {
      expect(reply.status).toBe(403);
      expect(reply.body.reason).toBe("OWNER_REQUIRED");
    }
    const members = (await server.call("GET", `/api/v1/spaces/${spaceId}/members`, { key: bobKey })).body;
    expect(members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([[ada.email, "owner"], [bob.email, "admin"]]);
  });

  test("an admin still manages the other roles; an owner manages owners", async () => {
    const carol = await server.user("Carol");
    expect((await server.call("POST", `/api/v1/spaces/${spaceId}/members`, { key: bobKey, body: { email: carol.email, role: "editor" } })).status).toBe(201);
    expect((await server.call("PATCH", `/api/v1/spaces/${spaceId}/members/${carol.id}`, { key: bobKey, body: { role: "viewer" } })).status).toBe(200);
    const adaKey = await server.key(ada.id, "manage");
    expect((await server.call("PATCH", `/api/v1/spaces/${spaceId}/members/${bob.id}`, { key: adaKey, body: { role: "owner" } })).body.role).toBe("owner");
  });

  test("the last instance admin cannot drop the admin flag or be banned (409); with two admins, one can", async () => {
    const adaKey = await server.key(ada.id, "manage");
    for (const body of [{ admin: false }, { banned: true }]) {
      const reply = await server.call("PATCH", `/api/v1/users/${ada.id}`, { key: adaKey, body });
      expect(reply.status).toBe(409);
      expect(reply.body.reason).toBe("LAST_ADMIN");
    }
    expect((await server.call("GET", "/api/v1/users/me", { key: adaKey })).body).toMatchObject({ admin: true, banned: false });
    expect((await server.call("PATCH", `/api/v1/users/${bob.id}`, { key: adaKey, body: { admin: true } })).status).toBe(200);
    expect((await server.call("PATCH", `/api/v1/users/${ada.id}`, { key: adaKey, body: { admin: false } })).body.admin).toBe(false);
    const bobAsAdmin = await server.key(bob.id, "manage");
    expect((await server.call("PATCH", `/api/v1/users/${bob.id}`, { key: bobAsAdmin, body: { banned: true } })).status).toBe(409);
  });
});

describe("revisions belong to their author (item 5)", () => {
  let server: TestServer;
  let ws: Workspace;
  let carol: { id: string };
  let carolPropose: string;
  let carolWrite: string;
  beforeEach(async () => {
    ({ server, ws } = await freshPapersWorkspace());
    carol = await server.user("Carol");
    const session = await server.signIn("ada@example.com");
    await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { session, body: { email: "carol@example.com", role: "editor" } });
    carolPropose = await server.key(carol.id, "changeRequest");
    carolWrite = await server.key(carol.id, "write");
  });
  afterEach(() => server.stop());

  const propose = async () => (await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { title: "Ada's words" } } })).body;
  const revise = (operationId: string, key: string, fields: Record<string, unknown>) => server.call("POST", `/api/v1/operations/${operationId}/revisions`, { key, body: { fields } });

  test("at the changeRequest level only the submitter revises; anyone else needs write", async () => {
    const cr = await propose();
    const other = await revise(cr.primaryOperation.id, carolPropose, { title: "Carol's words" });
    expect(other.status).toBe(403);
    expect(other.body.data).toEqual({ required: "write", effective: "changeRequest" });
    expect((await revise(cr.primaryOperation.id, ws.propose, { title: "Ada's second words" })).status).toBe(200);
    expect((await revise(cr.primaryOperation.id, carolWrite, { title: "Carol's words" })).status).toBe(200);
  });

  test("each revision's commit, and the merged record, are authored by whoever wrote the words", async () => {
    const cr = await propose();
    const revised = await revise(cr.primaryOperation.id, carolWrite, { title: "Carol's words" });
    expect(revised.body.primaryOperation.headCommit.author).toBe(carol.id);
    await server.call("POST", `/api/v1/change-requests/${cr.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    const merged = await server.call("POST", `/api/v1/change-requests/${cr.id}/merge`, { key: ws.write });
    expect(merged.body.record.fields.title).toBe("Carol's words");
    expect(merged.body.record.createdBy).toBe(carol.id);
    expect(merged.body.record.headCommit.author).toBe(carol.id);
    expect(merged.body.record.headCommit.authorUser.name).toBe("Carol");

    const untouched = await propose();
    await server.call("POST", `/api/v1/change-requests/${untouched.id}/reviews`, { key: carolWrite, body: { verdict: "approved" } });
    const mergedByCarol = await server.call("POST", `/api/v1/change-requests/${untouched.id}/merge`, { key: carolWrite });
    expect(mergedByCarol.body.record.headCommit.author).toBe(ws.owner.id);
  });

  test("operations that are not record writes cannot be revised", async () => {
    const folder = await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.propose, body: { operations: [{ kind: "create", nodeType: "folder", slug: "f", name: "F" }] } });
    const reply = await revise(folder.body.primaryOperation.id, ws.propose, { slug: "g" });
    expect(reply.status).toBe(400);
  });
});

describe("stored values cannot break reads (item 6)", () => {
  let server: TestServer;
  let ws: Workspace;
  beforeEach(async () => {
    ({ server, ws } = await freshWorkspace());
    await createBase(server, ws.write, "notes", [
      { slug: "title", name: "Title", type: "text" },
      { slug: "data", name: "Data", type: "json" },
    ]);
  });
  afterEach(() => server.stop());

  const create = (data: unknown) => server.call("POST", "/api/v1/bases/notes/change-requests", { key: ws.write, body: { fields: { title: "t", data } } });

  test("a json value nests at most 32 levels; deeper is a 400, however deep", async () => {
    expect((await create(nested(32))).status).toBe(201);
    for (const depth of [33, 1_001]) {
      const reply = await create(nested(depth));
      expect(reply.status, String(depth)).toBe(400);
    }
    const huge = `{"fields": {"title": "t", "data": ${"[".repeat(150_000)}${"]".repeat(150_000)}}}`;
    const reply = await server.call("POST", "/api/v1/bases/notes/change-requests", { key: ws.write, rawBody: huge, headers: { "content-type": "application/json" } });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe("BAD_REQUEST");
  });

  test("node metadata nests at most 32 levels, on create and on update", async () => {
    const deep = { x: nested(32) };
    const created = await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "folder", slug: "f", name: "F", metadata: deep }] } });
    expect(created.status).toBe(400);
    const patched = await server.call("PATCH", "/api/v1/nodes/notes/metadata", { key: ws.write, body: { metadata: deep } });
    expect(patched.status).toBe(400);
    expect((await server.call("PATCH", "/api/v1/nodes/notes/metadata", { key: ws.write, body: { metadata: { x: nested(31) } } })).status).toBe(200);
  });

  test("after the deepest accepted values, every listing, count and sort still answers", async () => {
    await create(nested(32));
    await create({ a: { b: nested(30) } });
    for (const query of ["", "&sort=title", "&sort=-title", "&filters[0][fieldSlug]=title&filters[0][operator]=contains&filters[0][value]=t", "&filters[0][fieldSlug]=data&filters[0][operator]=isNotEmpty"]) {
      expect((await server.call("GET", `/api/v1/records?baseId=notes${query}`, { key: ws.read })).status, query).toBe(200);
      expect((await server.call("GET", `/api/v1/records/count?baseId=notes${query.replace(/&sort=[^&]*/, "")}`, { key: ws.read })).status, query).toBe(200);
    }
  });
});

describe("strict input everywhere (item 7)", () => {
  let server: TestServer;
  let ws: Workspace;
  beforeAll(async () => {
    server = new TestServer({ maxBody: "64kb" });
    ws = await workspace(server);
    await createBase(server, ws.write);
  });
  afterAll(() => server.stop());

  test("no coercion: a number sent as a string is a 400", async () => {
    const node = (await server.call("GET", "/api/v1/nodes/papers", { key: ws.read })).body;
    const move = await server.call("POST", `/api/v1/nodes/${node.id}/move`, { key: ws.write, body: { position: "3" } });
    expect(move.status).toBe(400);
    const policy = await server.call("PATCH", "/api/v1/bases/papers", { key: ws.manage, body: { reviewPolicy: { requiredApprovals: "2" } } });
    expect(policy.status).toBe(400);
    const op = await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "move", nodeId: node.id, position: "1" }] } });
    expect(op.status).toBe(400);
    expect((await server.call("GET", "/api/v1/bases/papers", { key: ws.read })).body.reviewPolicy.requiredApprovals).toBe(1);
  });

  test("invalid UTF-8 and lone surrogates are a 400 and store nothing", async () => {
    const before = (await server.call("GET", "/api/v1/records/count?baseId=papers", { key: ws.read })).body.total;
    const bytes = new Uint8Array([...new TextEncoder().encode('{"fields":{"title":"'), 0xff, 0xfe, ...new TextEncoder().encode('"}}')]);
    const invalid = await fetch(`${server.url}/api/v1/bases/papers/change-requests`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": "application/json" }, body: bytes });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).code).toBe("BAD_REQUEST");
    for (const raw of ['{"fields":{"title":"a\\ud800"}}', '{"fields":{"title":"\\udc00b"}}', '{"fields":{"ti\\ud800tle":"x"}}']) {
      const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, rawBody: raw, headers: { "content-type": "application/json" } });
      expect(reply.status, raw).toBe(400);
    }
    expect((await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, rawBody: '{"fields":{"title":"\\ud83d\\ude00"}}', headers: { "content-type": "application/json" } })).status).toBe(201);
    expect((await server.call("GET", "/api/v1/records/count?baseId=papers", { key: ws.read })).body.total).toBe(before + 1);
  });

  test("a body over the limit answers the 413 envelope at any size, announced or streamed", async () => {
    const huge = new Uint8Array(5 * 1024 * 1024).fill(0x20);
    const announced = await fetch(`${server.url}/api/v1/bases/papers/change-requests`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": "application/json" }, body: huge });
    expect(announced.status).toBe(413);
    expect(await announced.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    const streamed = await fetch(`${server.url}/api/v1/bases/papers/change-requests`, {
      method: "POST",
      headers: { authorization: `Bearer ${ws.write}`, "content-type": "application/json" },
      body: new ReadableStream({
        pull(controller) {
          controller.enqueue(new Uint8Array(256 * 1024).fill(0x20));
        },
      }),
    });
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    // A length far over the limit is answered before a byte of the body is read.
    const farOver = await rawRequest(server.url, `POST /api/v1/bases/papers/change-requests HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${ws.write}\r\ncontent-type: application/json\r\ncontent-length: ${10 * 1024 ** 3}\r\n\r\n{`);
    expect(farOver).toStartWith("HTTP/1.1 413");
    expect(farOver).toContain('"code":"PAYLOAD_TOO_LARGE"');
  });

  test("a slug the base does not have is a 400 that lists the base's slugs; nothing is proposed", async () => {
    const before = (await server.call("GET", "/api/v1/change-requests/counts", { key: ws.read })).body;
    const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.propose, body: { fields: { Title: "Attention" } } });
    expect(reply.status).toBe(400);
    expect(reply.body.data.fields).toEqual(["title", "year", "status"]);
    expect(reply.body.data.errors).toContainEqual({ slug: "Title", type: null, message: '"Title" is not a field of this base.' });
    const bulk = await server.call("POST", "/api/v1/bases/papers/records/bulk-change-request", { key: ws.propose, body: { records: [{ fields: { title: "ok" } }, { fields: { title: "x", venue: "y" } }] } });
    expect(bulk.status).toBe(400);
    expect(bulk.body.data.errors).toEqual([{ index: 1, slug: "venue", type: null, message: '"venue" is not a field of this base.' }]);
    expect(bulk.body.data.fields).toEqual(["title", "year", "status"]);
    expect((await server.call("GET", "/api/v1/change-requests/counts", { key: ws.read })).body).toEqual(before);
  });
});

describe("the admin page (item 9)", () => {
  test("forbids framing and runs no inline script or style", async () => {
    const server = new TestServer();
    try {
      for (const path of ["/admin", "/admin/device"]) {
        const reply = await server.call("GET", path);
        expect(reply.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
        expect(reply.headers.get("content-security-policy")).toStartWith("default-src 'self';");
        expect(reply.headers.get("content-security-policy")).not.toContain("unsafe-inline");
        expect(reply.headers.get("x-frame-options")).toBe("DENY");
      }
    } finally {
      await server.stop();
    }
  });
});
