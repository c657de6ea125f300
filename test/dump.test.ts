import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "bun";
import { BUN, createBase, freshWorkspace, REPO, TestServer, tempDir, type Workspace } from "./helpers";

let source: TestServer;
let target: TestServer;
let from: Workspace;
let to: Workspace;
const dumpFile = join(tempDir(), "research.basalt-dump");
const basalt = (...args: string[]) => Bun.spawnSync([BUN, join(REPO, "src/main.ts"), ...args]);
const ids: Record<string, string> = {};
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

beforeAll(async () => {
  ({ server: source, ws: from } = await freshWorkspace({ deliveries: false, webhookAllow: "127.0.0.1" }));
  await createBase(source, from.write, "authors", [{ slug: "name", name: "Name", type: "text" }]);
  await createBase(source, from.write, "papers", [
    { slug: "title", name: "Title", type: "text" },
    { slug: "authors", name: "Authors", type: "relation", options: { targetBaseSlug: "authors" } },
    { slug: "cover", name: "Cover", type: "attachment" },
  ]);
  const create = async (base: string, fields: Record<string, unknown>) => (await source.call("POST", `/api/v1/bases/${base}/change-requests`, { key: from.write, body: { fields } })).body.id as string;
  ids.ada = await create("authors", { name: "Ada" });
  const cover = await (await fetch(`${source.url}/api/v1/assets?fileName=cover.png`, { method: "POST", headers: { authorization: `Bearer ${from.write}`, "content-type": "image/png" }, body: PNG })).json();
  ids.cover = cover.id;
  ids.paper = await create("papers", { title: "Notes", authors: [ids.ada], cover: [cover.id] });
  await source.call("POST", `/api/v1/records/${ids.paper}/change-requests`, { key: from.write, body: { operation: "update", fields: { title: "Notes, revised" } } });
  const proposal = await source.call("POST", `/api/v1/records/${ids.paper}/change-requests`, { key: from.propose, body: { operation: "update", fields: { title: "Notes, third" }, message: "A better title" } });
  ids.proposal = proposal.body.id;
  await source.call("POST", "/api/v1/comments", { key: from.propose, body: { subjectType: "change_request", subjectId: ids.proposal, body: "Will fix" } });
  await source.call("POST", "/api/v1/views/change-requests", { key: from.write, body: { operation: "create", baseId: "papers", name: "All", type: "table", config: {} } });
  const rule = await source.call("POST", "/api/v1/webhooks", { key: from.manage, body: { name: "hook", eventType: "record.created", actionKind: "webhook", config: { targetUrl: "http://127.0.0.1:9/hook", secret: "whsec_dGhpcyBpcyBhIHNlY3JldCBrZXkgb2YgMzIgYnl0ZXM=", headers: { authorization: "Bearer very-secret" } } } });
  expect([rule.status, rule.body.error]).toEqual([201, undefined]);
  ({ server: target, ws: to } = await freshWorkspace({ deliveries: false }));
});
afterAll(async () => {
  await source.stop();
  await target.stop();
});

const read = (server: TestServer, key: string, space: string, path: string) => server.call("GET", path, { key, space }).then((reply) => reply.body);

describe("moving a space between machines", () => {
  test("dump then load into another instance gives the same records, histories, proposals and files", async () => {
    const dumped = basalt("dump", "--space", "research", "--out", dumpFile, "--data-dir", source.dir);
    expect([dumped.exitCode, dumped.stderr.toString()]).toEqual([0, ""]);
    const text = new TextDecoder().decode(Bun.gunzipSync(await Bun.file(dumpFile).bytes()));
    expect(text).not.toContain("very-secret");
    expect(text).not.toContain("whsec_");
    expect(text).not.toContain("password");

    const loaded = basalt("load", "--from", dumpFile, "--owner", "ada@example.com", "--slug", "moved", "--data-dir", target.dir);
    expect([loaded.exitCode, loaded.stderr.toString()]).toEqual([0, ""]);
    // Ada has an account on both machines, under another id on each: the loaded rows name hers here.
    const same = async (path: string) => {
      const here = JSON.stringify(await read(source, from.read, "research", path)).replaceAll(from.owner.id, to.owner.id);
      expect(await read(target, to.read, "moved", path)).toEqual(JSON.parse(here));
    };
    await same("/api/v1/records?baseId=papers&include=none");
    await same(`/api/v1/records/${ids.paper}/history`);
    await same(`/api/v1/records/${ids.paper}/links`);
    await same(`/api/v1/records/${ids.ada}`);
    await same(`/api/v1/change-requests/${ids.proposal}`);
    expect(await read(target, to.read, "moved", `/api/v1/change-requests/${ids.proposal}`)).toMatchObject({ status: "in_review", comments: [{ body: "Will fix" }] });
    expect((await read(target, to.read, "moved", "/api/v1/bases/papers/views")).map((view: { name: string }) => view.name)).toEqual(["All"]);
    const search = await read(target, to.read, "moved", "/api/v1/search?query=revised&sources=records");
    expect(search.results.map((hit: { id: string }) => hit.id)).toEqual([ids.paper]);
    const cover = await fetch(`${target.url}/api/v1/assets/${ids.cover}/content`, { headers: { authorization: `Bearer ${to.read}`, "x-basalt-space": "moved" } });
    expect(new Uint8Array(await cover.arrayBuffer())).toEqual(PNG);
    const [rule] = await read(target, to.manage, "moved", "/api/v1/webhooks");
    expect(rule).toMatchObject({ enabled: false });
  });

  test("loading twice is refused; a file that is not a dump, or one made by a newer version, loads nothing", async () => {
    const again = basalt("load", "--from", dumpFile, "--owner", "ada@example.com", "--slug", "moved-again", "--data-dir", target.dir);
    expect([again.exitCode, again.stderr.toString()]).toEqual([1, expect.stringContaining("is here already")]);
    const junk = join(tempDir(), "junk.basalt-dump");
    writeFileSync(junk, "not a dump at all");
    expect(basalt("load", "--from", junk, "--owner", "ada@example.com", "--data-dir", target.dir).stderr.toString()).toContain("not a Basalt dump");
    const newer = join(tempDir(), "newer.basalt-dump");
    writeFileSync(newer, gzipSync(new TextEncoder().encode(`${JSON.stringify({ format: "basalt-dump", version: 99, schema: 1, space: { id: "spc_X", slug: "x" } })}\n`)));
    expect(basalt("load", "--from", newer, "--owner", "ada@example.com", "--data-dir", target.dir).stderr.toString()).toContain("newer version of Basalt");
    const spaces = target.ctx.store.sqlite.query("SELECT slug FROM spaces ORDER BY slug").all();
    expect(spaces).toEqual([{ slug: "moved" }, { slug: "research" }]);
  });
});

describe("moving a space over HTTP (Busabase's dump routes, manage keys)", () => {
  const TABLES = ["users", "nodes", "bases", "baseFields", "deletedFields", "views", "assets", "records", "fieldValues", "commits", "recordLinks", "changeRequests", "operations", "reviews", "comments", "auditEvents", "webhookRules"];
  /** Every row of the table, a page of `limit` at a time. */
  async function exportTable(table: string, limit = 2): Promise<Record<string, unknown>[]> {
    const rows: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    do {
      const page = await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table, limit, ...(cursor ? { cursor } : {}) } });
      expect(page.status).toBe(200);
      rows.push(...page.body.rows);
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    return rows;
  }

  test("every table exported in pages, imported into an empty space of another instance, reads the same", async () => {
    const { server: third, ws: other } = await freshWorkspace({ deliveries: false });
    try {
      const exported = Object.fromEntries(await Promise.all(TABLES.map(async (table) => [table, await exportTable(table)] as const)));
      expect(exported.records.map((row) => row.id).sort()).toEqual([ids.ada, ids.paper].sort());
      expect(exported.fieldValues).toEqual([]);
      expect(JSON.stringify(exported)).not.toContain("very-secret");
      expect(JSON.stringify(exported)).not.toContain("whsec_");
      expect(exported.users).toEqual([{ id: from.owner.id, email: "ada@example.com", name: "Ada" }]);

      const call = (path: string, body?: unknown, key = other.manage) => third.call("POST", path, { key, ...(body === undefined ? {} : { body }) });
      const { sessionId } = (await call("/api/v1/dump/import/begin")).body;
      for (const [table, rows] of Object.entries(exported)) expect((await call("/api/v1/dump/import/tables", { sessionId, table, rows })).body).toEqual({ inserted: table === "fieldValues" ? 0 : rows.length });
      const bytes = new Uint8Array(await (await fetch(`${source.url}/api/v1/assets/${ids.cover}/content`, { headers: { authorization: `Bearer ${from.read}` } })).arrayBuffer());
      const storageKey = exported.assets[0].content_hash;
      // A file may come in parts: rows of one key, in order.
      const parts = [bytes.slice(0, 5), bytes.slice(5)].map((part) => ({ storageKey, base64: Buffer.from(part).toString("base64") }));
      expect((await call("/api/v1/dump/import/tables", { sessionId, table: "attachmentBlobs", rows: parts })).body).toEqual({ inserted: 2 });
      // Nothing is in the space before the commit.
      expect((await third.call("GET", "/api/v1/records?baseId=papers", { key: other.read })).status).toBe(404);
      const committed = await call("/api/v1/dump/import/commit", { sessionId });
      expect([committed.status, committed.body.ok]).toEqual([200, true]);
      expect(committed.body.warnings).toEqual([expect.stringContaining("1 webhook rule(s) loaded disabled")]);

      const same = async (path: string) => {
        const there = JSON.stringify(await read(source, from.read, "research", path)).replaceAll(from.owner.id, other.owner.id).replaceAll(from.space.id, other.space.id);
        expect(await read(third, other.read, "research", path)).toEqual(JSON.parse(there));
      };
      await same("/api/v1/records?baseId=papers&include=none");
      await same(`/api/v1/records/${ids.paper}/history`);
      await same(`/api/v1/records/${ids.paper}/links`);
      await same(`/api/v1/change-requests/${ids.proposal}`);
      const cover = await fetch(`${third.url}/api/v1/assets/${ids.cover}/content`, { headers: { authorization: `Bearer ${other.read}` } });
      expect(new Uint8Array(await cover.arrayBuffer())).toEqual(PNG);
      const audit = await read(third, other.manage, "research", "/api/v1/audit-events");
      expect(audit.some((event: { action: string }) => event.action === "space.imported")).toBe(true);

      // The space is no longer empty: a second import is refused before it begins.
      expect((await call("/api/v1/dump/import/begin")).body).toMatchObject({ code: "CONFLICT", reason: "SPACE_NOT_EMPTY" });
    } finally {
      await third.stop();
    }
  });

  test("a session is the space's own; bad rows, bad bytes and ids already here load nothing", async () => {
    const { server: third, ws: other } = await freshWorkspace({ deliveries: false });
    try {
      const call = (path: string, body?: unknown, key = other.manage) => third.call("POST", path, { key, ...(body === undefined ? {} : { body }) });
      expect((await call("/api/v1/dump/import/begin", undefined, other.write)).status).toBe(403);
      expect((await source.call("POST", "/api/v1/dump/export/tables", { key: from.write, body: { table: "records" } })).status).toBe(403);
      expect((await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: "passwords" } })).status).toBe(400);
      expect((await call("/api/v1/dump/import/begin", undefined, other.manage)).status).toBe(200);
      const { sessionId } = (await call("/api/v1/dump/import/begin")).body;

      // Another space's manager cannot use the session, nor can a made-up id reach the disk.
      const stranger = await third.user("Eve");
      await third.space(stranger.id, "Elsewhere");
      const eve = await third.key(stranger.id, "manage");
      expect((await call("/api/v1/dump/import/tables", { sessionId, table: "nodes", rows: [] }, eve)).status).toBe(404);
      expect((await call("/api/v1/dump/import/commit", { sessionId: "../../etc" })).status).toBe(404);

      expect((await call("/api/v1/dump/import/tables", { sessionId, table: "records", rows: [{ id: "rec_1", password_hash: "x" }] })).body.error).toContain('has a column "password_hash"');
      expect((await call("/api/v1/dump/import/tables", { sessionId, table: "records", rows: [{ id: "rec_1", data: { a: 1 } }] })).body.error).toContain("JSON columns are sent as text");
      expect((await call("/api/v1/dump/import/tables", { sessionId, table: "docBodies", rows: [] })).status).toBe(400);

      // Rows whose references are missing: the commit loads nothing, and the session ends.
      const nodes = (await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: "nodes" } })).body.rows;
      const records = (await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: "records" } })).body.rows;
      await call("/api/v1/dump/import/tables", { sessionId, table: "nodes", rows: nodes });
      await call("/api/v1/dump/import/tables", { sessionId, table: "records", rows: records });
      const refused = await call("/api/v1/dump/import/commit", { sessionId });
      expect([refused.status, refused.body.error]).toEqual([400, expect.stringMatching(/^The records row rec_\w+ names a row the import does not hold/)]);
      expect(refused.text).not.toMatch(/SQLITE|INSERT/);
      const held = () => third.ctx.store.sqlite.query("SELECT (SELECT count(*) FROM nodes WHERE space_id = ?1) AS nodes, (SELECT count(*) FROM records WHERE space_id = ?1) AS records").get(other.space.id);
      expect(held()).toEqual({ nodes: 1, records: 0 });
      expect((await call("/api/v1/dump/import/commit", { sessionId })).status).toBe(404);

      // Rows that name another space's rows (here, records put into Eve's base) are refused whole.
      const eveKey = await third.key(stranger.id, "write");
      const eveBase = await createBase(third, eveKey, "diary", [{ slug: "title", name: "Title", type: "text" }]);
      const table = async (name: string) => (await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: name, limit: 2000 } })).body.rows;
      const intruding = (await call("/api/v1/dump/import/begin")).body.sessionId;
      for (const name of ["nodes", "bases", "baseFields"]) await call("/api/v1/dump/import/tables", { sessionId: intruding, table: name, rows: await table(name) });
      await call("/api/v1/dump/import/tables", { sessionId: intruding, table: "records", rows: (await table("records")).map((row: Record<string, unknown>) => ({ ...row, base_id: eveBase.id })) });
      const intrusion = await call("/api/v1/dump/import/commit", { sessionId: intruding });
      expect([intrusion.status, intrusion.body.error]).toEqual([400, expect.stringContaining(`a base (${eveBase.id})`)]);
      expect(held()).toEqual({ nodes: 1, records: 0 });
      expect((await third.call("GET", "/api/v1/records?baseId=diary", { key: eveKey })).body.records).toEqual([]);

      // Bytes that are not what their key says.
      const second = (await call("/api/v1/dump/import/begin")).body.sessionId;
      await call("/api/v1/dump/import/tables", { sessionId: second, table: "attachmentBlobs", rows: [{ storageKey: "0".repeat(64), base64: "aGVsbG8=" }] });
      expect((await call("/api/v1/dump/import/commit", { sessionId: second })).body.error).toContain("do not have that SHA-256");

      // The ids of a space this instance holds already (the CLI test loaded it into `target`).
      const fresh = await target.space(to.owner.id, "Empty");
      const sessionHere = (await target.call("POST", "/api/v1/dump/import/begin", { key: to.manage, space: fresh.slug })).body.sessionId;
      await target.call("POST", "/api/v1/dump/import/tables", { key: to.manage, space: fresh.slug, body: { sessionId: sessionHere, table: "nodes", rows: nodes } });
      const twice = await target.call("POST", "/api/v1/dump/import/commit", { key: to.manage, space: fresh.slug, body: { sessionId: sessionHere } });
      expect([twice.status, twice.body.reason]).toEqual([409, "ALREADY_LOADED"]);
      expect(target.ctx.store.sqlite.query("SELECT count(*) AS n FROM nodes WHERE space_id = ?1").get(fresh.id)).toEqual({ n: 1 });

      const abort = await call("/api/v1/dump/import/abort", { sessionId: (await call("/api/v1/dump/import/begin")).body.sessionId });
      expect(abort.body).toEqual({ ok: true });
    } finally {
      await third.stop();
    }
  });
});

