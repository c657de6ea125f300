import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "bun";
import { DUMP_TABLES, PEOPLE_OF_SPACE, PERSON_COLUMNS, usersNamed } from "../src/transfer/store";
import { write } from "../src/db/tx";
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
  await source.call("PUT", `/api/v1/assets/${ids.cover}/text`, { key: from.write, body: { text: "a cover\nof words" } });
  ids.doc = (await source.call("POST", "/api/v1/docs", { key: from.write, body: { slug: "guide", name: "Guide", body: "# Guide\n" } })).body.node.id;
  await source.call("POST", `/api/v1/nodes/${ids.doc}/visibility`, { key: from.manage, body: { visibility: "private" } });
  await source.call("POST", `/api/v1/nodes/${ids.doc}/principals`, { key: from.manage, body: { principalType: "space", principalId: from.space.id, role: "read" } });
  const formNode = (await source.call("POST", "/api/v1/nodes/change-requests", { key: from.write, body: { operations: [{ kind: "create", nodeType: "form", slug: "suggest", name: "Suggest" }] } })).body.operations[0].nodeId;
  ids.form = (await source.call("POST", "/api/v1/forms", { key: from.manage, body: { nodeId: formNode, targetBaseId: "papers", name: "Suggest a paper", bindings: [{ inputName: "t", fieldSlug: "title" }] } })).body.nodeId;
  ids.skill = (await source.call("POST", "/api/v1/file-trees", { key: from.write, body: { type: "skill", slug: "triage", name: "Triage", files: [{ path: "notes/a.md", content: "A" }] } })).body.node.id;
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
    await same("/api/v1/records/count?baseId=papers");
    await same(`/api/v1/records/${ids.paper}/history`);
    await same(`/api/v1/records/${ids.paper}/links`);
    await same(`/api/v1/records/${ids.ada}`);
    await same(`/api/v1/change-requests/${ids.proposal}`);
    await same(`/api/v1/nodes/${ids.doc}`);
    await same(`/api/v1/forms/${ids.form}`);
    await same(`/api/v1/assets/${ids.cover}/text/lines`);
    await same(`/api/v1/file-trees/${ids.skill}/files/notes/a.md`);
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

const TABLES = ["users", "nodes", "nodePrincipals", "bases", "baseFields", "deletedFields", "deletedFieldValues", "views", "assets", "assetTexts", "assetUsages", "attachments", "nodeDocuments", "forms", "records", "fieldValues", "commits", "recordLinks", "changeRequests", "operations", "reviews", "comments", "auditEvents", "webhookRules"];

describe("moving a space over HTTP (Busabase's dump routes, manage keys)", () => {
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
      expect(exported.nodeDocuments).toEqual([expect.objectContaining({ nodeId: ids.doc, body: "# Guide\n" })]);
      expect(exported.assetUsages.map((row) => row.path)).toEqual(["SKILL.md", "notes/a.md", "skill.json"]);
      // Busabase's names: what its CLI reads of assets and attachments.
      const coverRow = exported.assets.find((row) => row.id === ids.cover)!;
      expect(coverRow).toMatchObject({ attachmentId: ids.cover, spaceId: from.space.id, fileName: "cover.png" });
      expect(exported.attachments.find((row) => row.id === ids.cover)).toMatchObject({ storageKey: coverRow.contentHash, mimeType: "image/png", sizeBytes: PNG.length });
      // A grant travels as the contract's row, its own node its source.
      expect(exported.nodePrincipals).toEqual([expect.objectContaining({ nodeId: ids.doc, sourceNodeId: ids.doc, principalType: "space", principalId: from.space.id, role: "read", grantedBy: from.owner.id })]);
      expect(exported.nodes.find((row) => row.id === ids.doc)).toMatchObject({ explicitVisibility: "private" });
      expect(JSON.stringify(exported)).not.toContain("very-secret");
      expect(JSON.stringify(exported)).not.toContain("whsec_");
      expect(exported.users).toEqual([{ id: from.owner.id, email: "ada@example.com", name: "Ada" }]);

      const call = (path: string, body?: unknown, key = other.manage) => third.call("POST", path, { key, ...(body === undefined ? {} : { body }) });
      const { sessionId } = (await call("/api/v1/dump/import/begin")).body;
      for (const [table, rows] of Object.entries(exported)) expect((await call("/api/v1/dump/import/tables", { sessionId, table, rows })).body).toEqual({ inserted: ["fieldValues", "attachments"].includes(table) ? 0 : rows.length });
      for (const asset of exported.assets) {
        const bytes = new Uint8Array(await (await fetch(`${source.url}/api/v1/assets/${asset.id}/content`, { headers: { authorization: `Bearer ${from.read}` } })).arrayBuffer());
        // A file may come in parts: rows of one key, in order.
        const parts = [bytes.slice(0, 5), bytes.slice(5)].map((part) => ({ storageKey: asset.contentHash, base64: Buffer.from(part).toString("base64") }));
        expect((await call("/api/v1/dump/import/tables", { sessionId, table: "attachmentBlobs", rows: parts })).body).toEqual({ inserted: 2 });
      }
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
      await same("/api/v1/records/count?baseId=papers");
      await same(`/api/v1/records/${ids.paper}/history`);
      await same(`/api/v1/records/${ids.paper}/links`);
      await same(`/api/v1/change-requests/${ids.proposal}`);
      await same(`/api/v1/file-trees/${ids.skill}/files/notes/a.md`);
      await same(`/api/v1/forms/${ids.form}`);
      await same(`/api/v1/assets/${ids.cover}/text/lines`);
      // The private doc and its grant to the whole space: the space it landed in.
      const grants = await read(third, other.manage, "research", `/api/v1/nodes/${ids.doc}/principals`);
      expect(grants).toEqual([expect.objectContaining({ principalType: "space", principalId: other.space.id, role: "read", grantedBy: other.owner.id })]);
      expect((await read(third, other.read, "research", `/api/v1/nodes/${ids.doc}`)).explicitVisibility).toBe("private");
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

  test("a dump without a users list (Busabase's backup sends none) loads, its people the importer's", async () => {
    const { server: third, ws: other } = await freshWorkspace({ deliveries: false });
    try {
      const call = (path: string, body?: unknown) => third.call("POST", path, { key: other.manage, ...(body === undefined ? {} : { body }) });
      const { sessionId } = (await call("/api/v1/dump/import/begin")).body;
      for (const table of TABLES.filter((name) => name !== "users")) await call("/api/v1/dump/import/tables", { sessionId, table, rows: await exportTable(table) });
      const committed = await call("/api/v1/dump/import/commit", { sessionId });
      expect(committed.body.warnings).toContainEqual(expect.stringMatching(/^The dump has no users list: the \d+ mention\(s\) of a person in its rows are the importer's\.$/));
      const proposal = await third.call("GET", `/api/v1/change-requests/${ids.proposal}`, { key: other.read });
      expect(proposal.body.submittedBy).toBe(other.owner.id);
    } finally {
      await third.stop();
    }
  });

  test("a batch of rows may pass --max-body (Busabase's CLI sends a table's rows in its own batches); other routes may not", async () => {
    const { server: third, ws: other } = await freshWorkspace({ deliveries: false });
    try {
      const { sessionId } = (await third.call("POST", "/api/v1/dump/import/begin", { key: other.manage })).body;
      const rows = Array.from({ length: 3 }, (_, i) => ({ id: `nod_big${i}`, spaceId: "x", parentId: null, type: "folder", slug: `big-${i}`, name: "Big", description: "d".repeat(600_000), metadata: "{}", settings: "{}", position: i, status: "active", createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z" }));
      expect((await third.call("POST", "/api/v1/dump/import/tables", { key: other.manage, body: { sessionId, table: "nodes", rows } })).body).toEqual({ inserted: 3 });
      expect((await third.call("POST", "/api/v1/nodes/change-requests", { key: other.write, body: { operations: [{ kind: "create", nodeType: "folder", slug: "a", name: "A" }], message: "m".repeat(1_100_000) } })).status).toBe(413);
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
      expect((await call("/api/v1/dump/import/tables", { sessionId, table: "docBodies", rows: [{ nodeId: 1, markdown: "x" }] })).body.error).toBe("Row 0 of docBodies is not { nodeId, markdown }.");

      // Rows whose references are missing: the commit loads nothing, and the session ends.
      const nodes = (await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: "nodes" } })).body.rows;
      const records = (await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: "records" } })).body.rows;
      await call("/api/v1/dump/import/tables", { sessionId, table: "nodes", rows: nodes });
      await call("/api/v1/dump/import/tables", { sessionId, table: "records", rows: records });
      const refused = await call("/api/v1/dump/import/commit", { sessionId });
      expect([refused.status, refused.body.error]).toEqual([400, expect.stringMatching(/^The records row rec_\w+ names (the user|\w+ in \w+, which the dump does not hold|a row the import does not hold)/)]);
      expect(refused.text).not.toMatch(/SQLITE|INSERT/);
      const held = () => third.ctx.store.sqlite.query("SELECT (SELECT count(*) FROM nodes WHERE space_id = ?1) AS nodes, (SELECT count(*) FROM records WHERE space_id = ?1) AS records").get(other.space.id);
      expect(held()).toEqual({ nodes: 1, records: 0 });
      expect((await call("/api/v1/dump/import/commit", { sessionId })).status).toBe(404);

      // Rows that name another space's rows (here, records put into Eve's base) are refused whole.
      const eveKey = await third.key(stranger.id, "write");
      const eveBase = await createBase(third, eveKey, "diary", [{ slug: "title", name: "Title", type: "text" }]);
      const table = async (name: string) => (await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: name, limit: 2000 } })).body.rows;
      const intruding = (await call("/api/v1/dump/import/begin")).body.sessionId;
      for (const name of ["users", "nodes", "bases", "baseFields"]) await call("/api/v1/dump/import/tables", { sessionId: intruding, table: name, rows: await table(name) });
      await call("/api/v1/dump/import/tables", { sessionId: intruding, table: "records", rows: (await table("records")).map((row: Record<string, unknown>) => ({ ...row, base_id: eveBase.id })) });
      const intrusion = await call("/api/v1/dump/import/commit", { sessionId: intruding });
      expect([intrusion.status, intrusion.body.error]).toEqual([400, expect.stringContaining(`names ${eveBase.id} in base_id, which the dump does not hold`)]);
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

describe("a dump describes one space: every row it holds names only rows of the same dump", () => {
  const at = "2026-01-01T00:00:00.000Z";
  /** Mallory, no admin, imports into her own empty space with her own manage key. */
  async function mallory(server: TestServer) {
    const user = await server.user(`Mallory${Math.random().toString(36).slice(2, 8)}`);
    const space = await server.space(user.id, `Mallory ${user.id}`);
    return { user, space, key: await server.key(user.id, "manage") };
  }
  async function importAs(server: TestServer, who: { key: string; space: { slug: string } }, tables: Record<string, unknown[]>) {
    const call = (path: string, body?: unknown) => server.call("POST", path, { key: who.key, space: who.space.slug, ...(body === undefined ? {} : { body }) });
    const { sessionId } = (await call("/api/v1/dump/import/begin")).body;
    for (const [table, rows] of Object.entries(tables)) expect((await call("/api/v1/dump/import/tables", { sessionId, table, rows })).status).toBe(200);
    return call("/api/v1/dump/import/commit", { sessionId });
  }
  const victimState = () =>
    source.ctx.store.sqlite
      .query("SELECT (SELECT count(*) FROM fields WHERE base_id = (SELECT base_id FROM records WHERE id = ?1)) AS fields, (SELECT count(*) FROM operations WHERE change_request_id = ?2) AS operations, (SELECT count(*) FROM reviews WHERE change_request_id = ?2) AS reviews, (SELECT count(*) FROM comments WHERE change_request_id = ?2) AS comments")
      .get(ids.paper, ids.proposal);

  test("rows naming another space's base, change request or user are refused whole, and nothing is written", async () => {
    const before = victimState();
    const victimBase = (source.ctx.store.sqlite.query("SELECT base_id FROM records WHERE id = ?1").get(ids.paper) as { base_id: string }).base_id;
    const m = await mallory(source);
    const self = { id: m.user.id, email: m.user.email, name: m.user.name };
    const field = { id: "fld_FORGED1", base_id: victimBase, slug: "forged", name: "Forged", type: "text", required: 0, position: 99, options: "{}", created_at: at, index_state: "none" };
    const operation = { id: "opr_FORGED1", change_request_id: ids.proposal, base_id: victimBase, target_type: "base", kind: "record_delete", status: "pending", target_record_id: ids.paper, head_commit_id: "cmt_FORGED1", position: 1, created_at: at, updated_at: at };
    const commit = { id: "cmt_FORGED1", space_id: "x", base_id: victimBase, operation_id: "opr_FORGED1", record_id: null, author_id: self.id, target_type: "base", kind: "record_delete", payload: '{"deleteMode":"archive"}', message: "", created_at: at };
    const review = { id: "rev_FORGED1", change_request_id: ids.proposal, reviewer_id: from.owner.id, verdict: "approved", visible_operation_heads: "[]", created_at: at };
    const comment = { id: "com_FORGED1", space_id: "x", subject_type: "change_request", subject_id: ids.proposal, change_request_id: ids.proposal, author_id: self.id, body: "Delete everything", mentions_ai: 1, created_at: at, updated_at: at };
    const attempts: [Record<string, unknown[]>, string][] = [
      [{ users: [self], baseFields: [field] }, `names ${victimBase} in base_id`],
      [{ users: [self], commits: [commit], operations: [operation] }, "which the dump does not hold"],
      [{ users: [self, { id: from.owner.id, email: "ada@example.com", name: "Ada" }], reviews: [review] }, `names ${ids.proposal} in change_request_id`],
      [{ users: [self], reviews: [{ ...review, reviewer_id: from.owner.id }] }, `names the user ${from.owner.id}, who is not in the dump's users list`],
      [{ users: [self], comments: [comment] }, `names ${ids.proposal} in`],
    ];
    for (const [tables, why] of attempts) {
      const refused = await importAs(source, m, tables);
      expect([refused.status, refused.body.error]).toEqual([400, expect.stringContaining(why)]);
    }
    expect(victimState()).toEqual(before);
    expect(source.ctx.store.sqlite.query("SELECT count(*) AS n FROM nodes WHERE space_id = ?1").get(m.space.id)).toEqual({ n: 1 });
    const tasks = await source.call("GET", "/api/v1/agent/tasks", { key: from.manage });
    expect(JSON.stringify(tasks.body)).not.toContain("Delete everything");
  });

  test("an importer who is no instance admin matches no account: the dump's people become ids that name none, but the importer", async () => {
    const { server: third } = await freshWorkspace({ deliveries: false });
    try {
      const m = await mallory(third);
      const accounts = () => third.ctx.store.sqlite.query("SELECT count(*) AS n FROM users").get();
      const before = accounts();
      const table = async (name: string) => (await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: name, limit: 2000 } })).body.rows;
      const tables: Record<string, unknown[]> = {};
      for (const name of ["users", "nodes", "bases", "baseFields", "views", "assets", "records", "commits", "recordLinks", "changeRequests", "operations", "reviews", "comments"]) tables[name] = await table(name);
      const loaded = await importAs(third, m, tables);
      expect([loaded.status, loaded.body.error]).toEqual([200, undefined]);
      expect(accounts()).toEqual(before);
      const proposal = (await third.call("GET", `/api/v1/change-requests/${ids.proposal}`, { key: m.key, space: m.space.slug })).body;
      // Ada is an account of this instance too (its admin): the import may not make her the author.
      expect(JSON.stringify(proposal)).not.toContain("ada@example.com");
      const admins = third.ctx.store.sqlite.query("SELECT id FROM users WHERE email = 'ada@example.com'").get() as { id: string };
      expect(JSON.stringify(proposal)).not.toContain(admins.id);
    } finally {
      await third.stop();
    }
  });

  test("a dump's rows pass the checks the API makes: a view the API would refuse is refused, and nothing is written", async () => {
    const { server: third } = await freshWorkspace({ deliveries: false });
    try {
      const m = await mallory(third);
      const table = async (name: string) => (await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: name, limit: 2000 } })).body.rows;
      const tables: Record<string, Record<string, unknown>[]> = {};
      for (const name of ["users", "nodes", "bases", "baseFields", "views"]) tables[name] = await table(name);
      const title = tables.baseFields.find((field) => field.slug === "title")!;
      const withConfig = (config: unknown) => ({ ...tables, views: tables.views.map((view) => ({ ...view, config: JSON.stringify(config) })) });
      const filter = (value: unknown, operator = "in") => ({ filters: [{ fieldSlug: "title", fieldId: title.id, operator, value }] });
      const refusals: [unknown, string][] = [
        [filter(Array.from({ length: 50_000 }, (_, i) => `t${i}`)), "at most 1000"],
        [filter({ not: "a value" }), "must be a text, number or boolean"],
        [filter("x", "like"), "operator must be one of"],
        [{ sorts: [{ fieldSlug: "title", direction: "sideways" }] }, "config the API refuses"],
        [{ groupByFieldSlug: "title" }, "is a text field"],
      ];
      for (const [config, why] of refusals) {
        const refused = await importAs(third, m, withConfig(config));
        expect([refused.status, refused.body.error]).toEqual([400, expect.stringContaining(why)]);
        expect(third.ctx.store.sqlite.query("SELECT count(*) AS n FROM views").get()).toEqual({ n: 0 });
      }
      // Names, slugs and metadata past what the API takes.
      const papersNode = tables.nodes.find((node) => node.slug === "papers")!;
      const withNode = (change: Record<string, unknown>) => ({ ...tables, views: [], nodes: tables.nodes.map((node) => (node === papersNode ? { ...node, ...change } : node)) });
      const values: [Record<string, unknown[]>, string][] = [
        [withNode({ name: "n".repeat(201) }), "name must be text of at most 200 characters"],
        [withNode({ name: "   " }), "The name must not be empty"],
        [withNode({ slug: "Not A Slug" }), "must match"],
        [withNode({ metadata: JSON.stringify({ big: "x".repeat(70_000) }) }), "metadata"],
        [{ ...tables, views: [], baseFields: tables.baseFields.map((field) => (field === title ? { ...field, slug: "constructor" } : field)) }, "is reserved"],
      ];
      for (const [changed, why] of values) {
        const refused = await importAs(third, m, changed);
        expect([refused.status, refused.body.error]).toEqual([400, expect.stringMatching(new RegExp(`holds a value the API refuses \\(.*${why}`))]);
        expect(third.ctx.store.sqlite.query("SELECT count(*) AS n FROM nodes WHERE space_id = ?1").get(m.space.id)).toEqual({ n: 1 });
      }
      // A view naming a field its base no longer has is one the API holds too: it loads, and lists without it.
      const loaded = await importAs(third, m, withConfig({ filters: [{ fieldSlug: "gone", fieldId: "fld_GONE", operator: "eq", value: "x" }] }));
      expect([loaded.status, loaded.body.error]).toEqual([200, undefined]);
      const view = tables.views[0].id as string;
      const listed = await third.call("GET", `/api/v1/records?viewId=${view}`, { key: m.key, space: m.space.slug });
      expect([listed.status, listed.body.records]).toEqual([200, []]);
    } finally {
      await third.stop();
    }
  });

  test("listing through a view whose stored config no check would pass answers a 400 naming the view, never a 500", async () => {
    const { server: third, ws: other } = await freshWorkspace({ deliveries: false });
    try {
      await createBase(third, other.write, "notes", [{ slug: "title", name: "Title", type: "text" }]);
      expect((await third.call("POST", "/api/v1/views/change-requests", { key: other.write, body: { operation: "create", baseId: "notes", name: "All", type: "table", config: {} } })).status).toBe(201);
      const view = (third.ctx.store.sqlite.query("SELECT id FROM views").get() as { id: string }).id;
      const fieldId = (third.ctx.store.sqlite.query("SELECT id FROM fields WHERE slug = 'title'").get() as { id: string }).id;
      const refused = [
        { filters: [{ fieldSlug: "title", fieldId, operator: "in", value: Array.from({ length: 50_000 }, (_, i) => `t${i}`) }], sorts: [] },
        { filters: [{ fieldSlug: "title", fieldId, operator: "in", value: [{}] }], sorts: [] },
        { filters: [{ fieldSlug: "title", fieldId, operator: "like", value: "x" }], sorts: [] },
        { filters: "everything", sorts: [] },
        { filters: [], sorts: [{ fieldSlug: "title", fieldId, direction: "sideways" }], groups: [{ match: "some", filters: [] }] },
      ];
      // A number where the API keeps text (the API saves 5 as "5"): read as the API would have saved it.
      const kept: unknown[] = [{ filters: [{ fieldSlug: "title", fieldId, operator: "in", value: 5 }], sorts: [] }];
      for (const config of [...refused, ...kept]) {
        // As an older version or an earlier import could have left it.
        await write(third.ctx, (tx) => void tx.store.sqlite.query("UPDATE views SET config = ?1 WHERE id = ?2").run(JSON.stringify(config), view));
        for (const path of [`/api/v1/records?viewId=${view}`, `/api/v1/records/count?viewId=${view}`, `/api/v1/records/page?viewId=${view}`]) {
          const listed = await third.call("GET", path, { key: other.read });
          if (kept.includes(config)) expect([path, listed.status]).toEqual([path, 200]);
          else expect([path, listed.status, listed.body.error]).toEqual([path, 400, expect.stringContaining(`The view ${view} holds a configuration Basalt cannot run`)]);
        }
      }
    } finally {
      await third.stop();
    }
  });

  test("an asset whose file was not sent waits for its bytes, whether or not this instance stores that file", async () => {
    const m = await mallory(source);
    const stored = (source.ctx.store.sqlite.query("SELECT content_hash AS hash FROM assets WHERE id = ?1").get(ids.cover) as { hash: string }).hash;
    const asset = (hash: string, id: string) => ({ id, space_id: "x", status: "ready", file_name: "a.png", declared_type: "image/png", mime_type: "image/png", size: 12, content_hash: hash, created_by: "usr_SOMEONE", created_at: at, updated_at: at });
    const users = [{ id: "usr_SOMEONE", email: "someone@example.com", name: "Someone" }];
    const known = await importAs(source, m, { users, assets: [asset(stored, "ast_BORROW1")] });
    const unknown = await importAs(source, await mallory(source), { users, assets: [asset("ab".repeat(32), "ast_BORROW2")] });
    expect([known.status, known.body]).toEqual([unknown.status, unknown.body]);
    expect(known.body.warnings).toEqual([expect.stringContaining("1 file(s) were not sent")]);
    const content = await fetch(`${source.url}/api/v1/assets/ast_BORROW1/content`, { headers: { authorization: `Bearer ${m.key}`, "x-basalt-space": m.space.slug } });
    expect(content.status).not.toBe(200);
  });

  test("basalt load refuses a dump naming another space's rows, and loads webhook rules disabled", async () => {
    const rules = target.ctx.store.sqlite.query("SELECT enabled, secret_sealed FROM webhook_rules WHERE space_id = (SELECT id FROM spaces WHERE slug = 'moved')").all();
    expect(rules).toEqual([{ enabled: 0, secret_sealed: null }]);
    const victim = target.ctx.store.sqlite.query("SELECT id, base_id FROM records LIMIT 1").get() as { id: string; base_id: string };
    const lines = [
      { format: "basalt-dump", version: 1, schema: 1, space: { id: "spc_EVIL1", slug: "evil" } },
      { table: "spaces", row: { id: "spc_EVIL1", name: "Evil", slug: "evil", created_at: at, updated_at: at } },
      { table: "nodes", row: { id: "nod_EVIL1", space_id: "spc_EVIL1", parent_id: null, type: "folder", slug: "root", name: "Evil", description: "", metadata: "{}", settings: "{}", position: 0, status: "active", created_at: at, updated_at: at } },
      { table: "fields", row: { id: "fld_EVIL1", base_id: victim.base_id, slug: "evil", name: "Evil", type: "text", required: 0, position: 9, options: "{}", created_at: at, index_state: "none" } },
    ];
    const file = join(tempDir(), "evil.basalt-dump");
    writeFileSync(file, gzipSync(new TextEncoder().encode(lines.map((line) => JSON.stringify(line)).join("\n"))));
    const loaded = basalt("load", "--from", file, "--owner", "ada@example.com", "--data-dir", target.dir);
    expect([loaded.exitCode, loaded.stderr.toString()]).toEqual([1, expect.stringContaining(`names ${victim.base_id} in base_id`)]);
    expect(target.ctx.store.sqlite.query("SELECT count(*) AS n FROM fields WHERE id = 'fld_EVIL1'").get()).toEqual({ n: 0 });
    expect(target.ctx.store.sqlite.query("SELECT count(*) AS n FROM spaces WHERE id = 'spc_EVIL1'").get()).toEqual({ n: 0 });
  });
});

describe("every file a command writes is new, 0600, never over a file or through a link, and whole", () => {
  test("dump, export and backup refuse a planted link or an existing file, and leave nothing half-written", () => {
    const dir = tempDir();
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "someone else's file");
    const planted = join(dir, "planted");
    symlinkSync(victim, planted);
    const commands = [
      ["dump", "--space", "research", "--out"],
      ["export", "--space", "research", "--base", "papers", "--out"],
    ];
    for (const command of commands) {
      for (const out of [planted, victim]) {
        const refused = basalt(...command, out, "--data-dir", source.dir);
        expect([refused.exitCode, refused.stderr.toString()]).toEqual([1, expect.stringContaining("already exists")]);
      }
      const fresh = join(dir, `fresh-${command[0]}`);
      // What a command killed midway left beside its file is cleared when the next one starts.
      writeFileSync(join(dir, `.fresh-${command[0]}.0123456789ab.partial`), "cut short");
      expect(basalt(...command, fresh, "--data-dir", source.dir).exitCode).toBe(0);
      expect(statSync(fresh).mode & 0o777).toBe(0o600);
    }
    expect(readFileSync(victim, "utf8")).toBe("someone else's file");
    expect(readdirSync(dir).filter((name) => name.endsWith(".partial"))).toEqual([]);
    // A backup killed midway leaves its partial file and SQLite's journal of it; the next backup to that name clears both, and leaves neither itself.
    writeFileSync(join(dir, ".copy2.db.0123456789ab.partial"), "cut short");
    writeFileSync(join(dir, ".copy2.db.0123456789ab.partial-journal"), "cut short");
    expect(basalt("backup", "--out", join(dir, "copy2.db"), "--data-dir", source.dir).exitCode).toBe(0);
    expect(readdirSync(dir).filter((name) => name.includes(".partial"))).toEqual([]);
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(dir, "copy.db.files"));
    const backup = basalt("backup", "--out", join(dir, "copy.db"), "--data-dir", source.dir);
    expect([backup.exitCode, backup.stderr.toString()]).toEqual([1, expect.stringContaining("already exists")]);
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});

describe("an export pages by key", () => {
  test("every table's page resumes after the last key through the table's key index: no sort, no scan of the table", () => {
    const sqlite = source.ctx.store.sqlite;
    sqlite.run("ANALYZE");
    for (const { table, from, key } of DUMP_TABLES) {
      if (table === "spaces") continue;
      const columns = key.map((column) => `t."${column}"`).join(", ");
      const plan = (sqlite.query(`EXPLAIN QUERY PLAN SELECT t.* FROM ${from} AND (${columns}) > (${key.map(() => "'a'").join(", ")}) ORDER BY ${columns} LIMIT 500`).all("spc_x") as { detail: string }[]).map((row) => row.detail);
      expect([table, plan.join(" | ")]).toEqual([table, expect.not.stringMatching(/TEMP B-TREE|^SCAN t\b/)]);
      expect([table, plan[0]]).toEqual([table, expect.stringMatching(/^SEARCH t USING (PRIMARY KEY|INDEX sqlite_autoindex)/)]);
    }
  });

  test("the users table is read by the space's key from the people its rows name, kept by a trigger on every column that names one: never a scan of its rows", () => {
    const sqlite = source.ctx.store.sqlite;
    const triggers = new Set((sqlite.query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'space_people_%'").all() as { name: string }[]).map((row) => row.name));
    expect(PERSON_COLUMNS.length).toBeGreaterThanOrEqual(12);
    for (const { table, column } of PERSON_COLUMNS) for (const when of ["insert", "update"]) expect(triggers.has(`space_people_${table}_${column}_after_${when}`), `${table}.${column} ${when}`).toBe(true);
    const plan = (sqlite.query(`EXPLAIN QUERY PLAN ${PEOPLE_OF_SPACE}`).all(from.space.id, "", 2) as { detail: string }[]).map((row) => row.detail);
    expect(plan.filter((detail) => /^SCAN /.test(detail))).toEqual([]);
    for (const { table } of PERSON_COLUMNS) expect(plan.join(" | ")).not.toContain(` ${table} `);
    // Whoever acted in the space is listed: its owner (member) and every author, reviewer and creator.
    const actors = sqlite.query("SELECT DISTINCT author_id AS id FROM commits WHERE space_id = ?1 UNION SELECT reviewer_id FROM reviews JOIN change_requests c ON c.id = change_request_id WHERE c.space_id = ?1").all(from.space.id) as { id: string }[];
    const listed = usersNamed(source.ctx.store, from.space.id).map((user) => user.id);
    for (const { id } of actors) expect(listed).toContain(id);
  });

  test("each page of the users table holds the next people, in id order", async () => {
    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: "users", limit: 1, ...(cursor ? { cursor } : {}) } })).body;
      all.push(...page.rows.map((row: { id: string }) => row.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(all).toEqual([...all].sort());
    expect(all).toContain(from.owner.id);
    const bad = await source.call("POST", "/api/v1/dump/export/tables", { key: from.manage, body: { table: "recordLinks", cursor: Buffer.from('["x"]').toString("base64url") } });
    expect(bad.status).toBe(400);
  });
});

describe("a space in which a node was purged moves whole (issue 49, item 5)", () => {
  test("its history still names the purged node and the records it held; dump and load, and the HTTP export and import, take it", async () => {
    const { server: from2, ws: mine } = await freshWorkspace({ deliveries: false });
    let { server: to2, ws: theirs } = await freshWorkspace({ deliveries: false });
    try {
      const nodes = (operations: unknown[]) => from2.call("POST", "/api/v1/nodes/change-requests", { key: mine.write, body: { operations } });
      await nodes([{ kind: "create", ref: "old", nodeType: "folder", slug: "old", name: "Old" }, { kind: "create", parentNodeRef: "old", nodeType: "base", slug: "drafts", name: "Drafts", fields: [{ slug: "title", name: "Title", type: "text" }] }]);
      const draft = (await from2.call("POST", "/api/v1/bases/drafts/change-requests", { key: mine.write, body: { fields: { title: "Gone soon" } } })).body.id;
      await createBase(from2, mine.write, "papers", [{ slug: "title", name: "Title", type: "text" }, { slug: "drafts", name: "Drafts", type: "relation", options: { targetBaseSlug: "drafts" } }]);
      const paper = (await from2.call("POST", "/api/v1/bases/papers/change-requests", { key: mine.write, body: { fields: { title: "Kept", drafts: [draft] } } })).body.id;
      const old = (await from2.call("GET", "/api/v1/nodes/old", { key: mine.read })).body.id;
      expect((await nodes([{ kind: "delete", nodeId: old }])).body.status).toBe("merged");
      expect((await from2.call("DELETE", `/api/v1/nodes/${old}`, { key: mine.manage })).body.purged).toBe(true);
      // The links of the relation the purge deleted are cleared by the background upkeep, as any deleted field's.
      await from2.fieldUpkeep.settled();

      const out = join(tempDir(), "purged.basalt-dump");
      const dumped = basalt("dump", "--space", "research", "--out", out, "--data-dir", from2.dir);
      expect([dumped.exitCode, dumped.stderr.toString()]).toEqual([0, ""]);
      const loaded = basalt("load", "--from", out, "--owner", "ada@example.com", "--slug", "moved", "--data-dir", to2.dir);
      expect([loaded.exitCode, loaded.stderr.toString()]).toEqual([0, ""]);
      expect((await read(to2, theirs.read, "moved", `/api/v1/records/${paper}`)).fields.title).toBe("Kept");

      // Busabase's backup and restore: every table exported in pages, imported into a fresh space.
      await to2.stop();
      ({ server: to2, ws: theirs } = await freshWorkspace({ deliveries: false }));
      const fresh = theirs.space;
      const call = (server: TestServer, key: string, space: string, path: string, body?: unknown) => server.call("POST", path, { key, space, ...(body === undefined ? {} : { body }) });
      const { sessionId } = (await call(to2, theirs.manage, fresh.slug, "/api/v1/dump/import/begin")).body;
      for (const table of TABLES) {
        const page = (await call(from2, mine.manage, "research", "/api/v1/dump/export/tables", { table, limit: 500 })).body;
        const imported = await call(to2, theirs.manage, fresh.slug, "/api/v1/dump/import/tables", { sessionId, table, rows: page.rows });
        expect([table, imported.status, imported.body.error]).toEqual([table, 200, undefined]);
      }
      const committed = await call(to2, theirs.manage, fresh.slug, "/api/v1/dump/import/commit", { sessionId });
      expect([committed.status, committed.body.error]).toEqual([200, undefined]);
      expect((await read(to2, theirs.read, fresh.slug, `/api/v1/records/${paper}`)).fields.title).toBe("Kept");
    } finally {
      await from2.stop();
      await to2.stop();
    }
  });
});
