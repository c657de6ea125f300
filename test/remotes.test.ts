import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { findUserByEmail } from "../src/auth/users";
import { cloneSpace, pull, push, remoteStatus } from "../src/remotes/remotes";
import { remotePushes, remotes } from "../src/tables/changes";
import { TestServer } from "./helpers";
import { wire } from "../src/cli/wiring";
import { closeStore, openStore } from "../src/db/client";
import { loadConfig } from "../src/shared/config";

/**
 * Remotes (docs/remotes.md): two real servers on real ports, each over its own SQLite file. The
 * team's instance is `team`; a laptop's is `laptop`, which clones the team's space, works on it,
 * pulls what the team merged and pushes what it made.
 */
let team: TestServer;
let laptop: TestServer;
let teamKeys: { read: string; propose: string; write: string; manage: string };
let teamSpace: string;
let local: string;

const NOTE_FIELDS = [
  { slug: "title", name: "Title", type: "text" },
  { slug: "n", name: "N", type: "number" },
];

async function teamCall(method: string, path: string, body?: unknown, key = teamKeys.write) {
  return team.call(method, path, { key, space: teamSpace, body });
}

async function laptopCall(method: string, path: string, body?: unknown) {
  return laptop.call(method, path, { key: laptopKey, space: local, body });
}

let laptopKey: string;

const recordsOf = async (call: typeof teamCall) => {
  const reply = await call("GET", "/api/v1/records?baseId=notes&limit=100");
  return Object.fromEntries((reply.body.records as { id: string; fields: Record<string, unknown>; headCommitId: string }[]).map((record) => [record.id, record]));
};

async function cloneTeam(key = teamKeys.read) {
  const owner = findUserByEmail(laptop.ctx, "ada@example.com")!;
  return cloneSpace(laptop.ctx, { url: team.url, key, remoteSpace: teamSpace, owner, actor: { userId: owner.id, keyId: null } });
}

beforeEach(async () => {
  team = new TestServer();
  laptop = new TestServer();
  const ada = await team.user("Ada");
  teamSpace = (await team.space(ada.id, "Team", "team")).id;
  teamKeys = { read: await team.key(ada.id, "read"), propose: await team.key(ada.id, "changeRequest"), write: await team.key(ada.id, "write"), manage: await team.key(ada.id, "manage") };
  await team.call("POST", "/api/v1/bases", { key: teamKeys.write, space: teamSpace, body: { slug: "notes", name: "Notes", fields: NOTE_FIELDS } });
  for (const n of [1, 2, 3]) await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: `note ${n}`, n } });
  const localAda = await laptop.user("Ada");
  laptopKey = await laptop.key(localAda.id, "write");
});

afterEach(async () => {
  await laptop.stop();
  await team.stop();
});

describe("clone", () => {
  test("makes a local space with the remote's records, ids and history, and remembers the remote with its key sealed", async () => {
    const cloned = await cloneTeam();
    local = cloned.spaceId;
    expect(cloned.remote).toMatchObject({ name: "origin", url: team.url, behind: 0, ahead: 0, pending: 0, refused: 0 });
    const there = await recordsOf(teamCall);
    const here = await recordsOf(laptopCall);
    expect(Object.keys(here).sort()).toEqual(Object.keys(there).sort());
    for (const [id, record] of Object.entries(there)) expect(here[id]).toMatchObject({ fields: record.fields, headCommitId: record.headCommitId });
    const sealed = laptop.ctx.db.select().from(remotes).get()!;
    expect(sealed.sealedKey).not.toContain(teamKeys.read);
    expect(laptop.ctx.secretBox.open(sealed.sealedKey)).toBe(teamKeys.read);
  });

  test("a key that cannot see the whole space is refused, and nothing is made", async () => {
    const bob = await team.user("Bob");
    await teamCall("POST", `/api/v1/spaces/${teamSpace}/members`, { email: bob.email, role: "editor" }, teamKeys.manage);
    const node = (await teamCall("GET", "/api/v1/bases/notes")).body.nodeId;
    await teamCall("POST", `/api/v1/nodes/${node}/visibility`, { visibility: "private" }, teamKeys.manage);
    const bobKey = await team.key(bob.id, "read");
    const owner = findUserByEmail(laptop.ctx, "ada@example.com")!;
    await expect(cloneSpace(laptop.ctx, { url: team.url, key: bobKey, remoteSpace: teamSpace, owner, actor: { userId: owner.id, keyId: null } })).rejects.toThrow(/private to you/);
    expect((await laptop.call("GET", "/api/v1/spaces", { key: laptopKey })).body).toEqual([]);
  });
});

describe("snapshots", () => {
  test("every page shows the space as it was when the snapshot began; a new one closes the person's last, and an idle one closes", async () => {
    const begun = (await teamCall("POST", "/api/v1/sync/snapshots")).body;
    expect(begun.instanceId).toMatch(/^ins_/);
    expect(begun.space.slug).toBe("team");
    expect(begun.tables).toContain("records");
    expect(begun.tables).not.toContain("webhook_rules");
    await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "after the snapshot", n: 4 } });
    const page = async (id: string, table: string) => teamCall("GET", `/api/v1/sync/snapshots/${id}?table=${table}&limit=2`);
    const first = await page(begun.snapshotId, "records");
    expect(first.body.rows).toHaveLength(2);
    const second = await teamCall("GET", `/api/v1/sync/snapshots/${begun.snapshotId}?table=records&limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ nextCursor: null });
    expect(second.body.rows).toHaveLength(1);
    expect([...first.body.rows, ...second.body.rows].map((row: { data: string }) => JSON.parse(row.data).title)).not.toContain("after the snapshot");
    expect((await page(begun.snapshotId, "webhook_rules")).status).toBe(400);
    const again = (await teamCall("POST", "/api/v1/sync/snapshots")).body;
    expect((await page(begun.snapshotId, "records")).status).toBe(404);
    expect((await page(again.snapshotId, "records")).body.rows).toHaveLength(2);
    team.clock.advance(121_000);
    expect((await page(again.snapshotId, "records")).status).toBe(404);
  });
});

describe("pull and push", () => {
  beforeEach(async () => {
    local = (await cloneTeam(teamKeys.write)).spaceId;
  });

  const ids = async () => Object.values(await recordsOf(teamCall)).sort((a, b) => (a.fields.n as number) - (b.fields.n as number)).map((record) => record.id);
  const update = (call: typeof teamCall, id: string, fields: Record<string, unknown>) => call("POST", `/api/v1/records/${id}/change-requests`, { operation: "update", fields });

  test("a pull applies what the remote merged, with its commits' ids; changes of other fields merge with local ones", async () => {
    const [one, two] = await ids();
    await update(teamCall, one, { title: "team's title" });
    await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "note 4", n: 4 } });
    await update(laptopCall, two, { n: 20 });
    await update(teamCall, two, { title: "team's second" });
    const pulled = await pull(laptop.ctx, local);
    expect(pulled).toMatchObject({ applied: 2, merged: 1, conflicts: 0 });
    const there = await recordsOf(teamCall);
    const here = await recordsOf(laptopCall);
    expect(Object.keys(here).sort()).toEqual(Object.keys(there).sort());
    expect(here[one]).toMatchObject({ fields: { title: "team's title" }, headCommitId: there[one].headCommitId });
    expect(here[two].fields).toMatchObject({ title: "team's second", n: 20 });
    // Pulling again brings nothing twice.
    expect(await pull(laptop.ctx, local)).toMatchObject({ applied: 0, merged: 0, conflicts: 0 });
  });

  test("a push proposes each local change on the remote, from the key's owner, channel remote; both sides then hold the same", async () => {
    const [one, two, three] = await ids();
    await update(laptopCall, one, { title: "laptop's title" });
    await laptopCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "made offline", n: 5 } });
    await update(teamCall, two, { n: 22 });
    await update(laptopCall, three, { title: "laptop's third" });
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ ahead: 3, behind: 1 });
    const pushed = await push(laptop.ctx, local);
    expect(pushed).toMatchObject({ landed: 3, pending: 0, refused: [] });
    const crs = (await teamCall("GET", "/api/v1/change-requests?status=merged&limit=50")).body;
    const fromLaptop = (crs.items ?? crs.changeRequests ?? crs).filter((cr: { sourceAttribution: { channel: string } }) => cr.sourceAttribution.channel === "remote");
    expect(fromLaptop).toHaveLength(3);
    await pull(laptop.ctx, local);
    const there = await recordsOf(teamCall);
    const here = await recordsOf(laptopCall);
    expect(Object.keys(here).sort()).toEqual(Object.keys(there).sort());
    for (const [id, record] of Object.entries(there)) expect(here[id].fields).toEqual(record.fields);
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ ahead: 0, behind: 0, pending: 0 });
  });

  test("a field both sides changed differently is a change request in conflict on the side that pulls; resolved, it pushes", async () => {
    const [one] = await ids();
    await update(teamCall, one, { title: "team says" });
    await update(laptopCall, one, { title: "laptop says" });
    const pulled = await pull(laptop.ctx, local);
    expect(pulled.conflicts).toBe(1);
    const inbox = (await laptopCall("GET", "/api/v1/change-requests?status=conflict")).body;
    const conflicted = (inbox.items ?? inbox.changeRequests ?? inbox)[0];
    expect(conflicted).toMatchObject({ status: "conflict", sourceAttribution: { channel: "remote" } });
    // Nothing was overwritten: the laptop still holds its own title, and its change waits for the decision rather than make the same conflict there.
    expect((await recordsOf(laptopCall))[one].fields.title).toBe("laptop says");
    expect(await push(laptop.ctx, local)).toMatchObject({ landed: 0, waiting: 1 });
    expect((await recordsOf(teamCall))[one].fields.title).toBe("team says");
    // The laptop's person keeps the remote's title, as a revision made on the record's head, and merges.
    const head = (await recordsOf(laptopCall))[one].headCommitId;
    const operation = (await laptopCall("GET", `/api/v1/change-requests/${conflicted.id}`)).body.operations[0];
    expect((await laptopCall("POST", `/api/v1/operations/${operation.id}/revisions`, { fields: { title: "both agree" }, baseCommitId: head })).status).toBeLessThan(300);
    await laptopCall("POST", `/api/v1/change-requests/${conflicted.id}/reviews`, { verdict: "approved" });
    expect((await laptopCall("POST", `/api/v1/change-requests/${conflicted.id}/merge`)).status).toBe(200);
    await push(laptop.ctx, local);
    expect((await recordsOf(teamCall))[one].fields.title).toBe("both agree");
    expect((await recordsOf(laptopCall))[one].fields.title).toBe("both agree");
  });

  test("closing a pulled conflict keeps this side's values: the change that waited is then pushed, and both agree", async () => {
    const [one] = await ids();
    await update(teamCall, one, { title: "team says" });
    await update(laptopCall, one, { title: "laptop says" });
    await pull(laptop.ctx, local);
    const inbox = (await laptopCall("GET", "/api/v1/change-requests?status=conflict")).body;
    const conflicted = (inbox.items ?? inbox.changeRequests ?? inbox)[0];
    expect((await laptopCall("POST", `/api/v1/change-requests/${conflicted.id}/close`, { reason: "ours stands" })).status).toBe(200);
    expect(await push(laptop.ctx, local)).toMatchObject({ landed: 1, waiting: 0 });
    expect((await recordsOf(teamCall))[one].fields.title).toBe("laptop says");
    await pull(laptop.ctx, local);
    expect((await recordsOf(laptopCall))[one].fields.title).toBe("laptop says");
  });

  const openConflicts = async (call: typeof teamCall) => {
    const listed = (await call("GET", "/api/v1/change-requests?status=conflict&limit=100")).body;
    return (listed.items ?? listed.changeRequests ?? listed) as unknown[];
  };
  const useKey = (key: string) => {
    const remote = laptop.ctx.db.select().from(remotes).get()!;
    laptop.ctx.store.db.update(remotes).set({ sealedKey: laptop.ctx.secretBox.seal(key) }).where(eq(remotes.id, remote.id)).run();
  };
  const mergeOnTeam = async (id: string) => {
    await teamCall("POST", `/api/v1/change-requests/${id}/reviews`, { verdict: "approved" });
    expect((await teamCall("POST", `/api/v1/change-requests/${id}/merge`)).status).toBe(200);
  };
  const waitingOnTeam = async () => {
    const listed = (await teamCall("GET", "/api/v1/change-requests?status=in_review&limit=100")).body;
    return (listed.items ?? listed.changeRequests ?? listed) as { id: string; sourceAttribution: { channel: string } }[];
  };

  test("the laptop's own edits coming back are known: several edits per record between syncs make no conflict, and each later edit lands", async () => {
    const [one, two, three] = await ids();
    let conflicts = 0;
    for (let round = 0; round < 4; round++) {
      // Between two syncs, each record edited several times on the laptop; the team edits another field meanwhile.
      for (const [i, id] of [one, two, three].entries()) for (const edit of [1, 2, 3]) await update(laptopCall, id, { title: `laptop ${round}.${i}.${edit}` });
      await update(teamCall, [one, two, three][round % 3], { n: 100 + round });
      const pushed = await push(laptop.ctx, local);
      expect(pushed).toMatchObject({ waiting: 0, refused: [] });
      conflicts += pushed.pull.conflicts;
      // Edited again before the pull that brings the pushed edits back.
      await update(laptopCall, one, { title: `laptop ${round} after the push` });
    }
    conflicts += (await pull(laptop.ctx, local)).conflicts;
    expect(conflicts).toBe(0);
    expect(await openConflicts(laptopCall)).toEqual([]);
    expect(await openConflicts(teamCall)).toEqual([]);
    // The last edit, made after the last push, is sent by the next one and lands.
    expect(await push(laptop.ctx, local)).toMatchObject({ landed: 1, waiting: 0, refused: [], pull: { conflicts: 0 } });
    await pull(laptop.ctx, local);
    const there = await recordsOf(teamCall);
    const here = await recordsOf(laptopCall);
    expect(there[one].fields).toMatchObject({ title: "laptop 3 after the push", n: 103 });
    expect(there[two].fields).toMatchObject({ title: "laptop 3.1.3", n: 101 });
    for (const [id, record] of Object.entries(there)) expect(here[id].fields).toEqual(record.fields);
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ ahead: 0, pending: 0, refused: 0 });
  });

  test("an edit pushed to a reviewing team and edited again here waits until the first lands, then lands too", async () => {
    useKey(teamKeys.propose);
    const [one] = await ids();
    await update(laptopCall, one, { title: "first" });
    expect(await push(laptop.ctx, local)).toMatchObject({ pending: 1 });
    await update(laptopCall, one, { title: "second" });
    expect(await push(laptop.ctx, local)).toMatchObject({ pending: 0, waiting: 1 });
    const [first] = await waitingOnTeam();
    await mergeOnTeam(first.id);
    expect(await push(laptop.ctx, local)).toMatchObject({ pull: { landed: 1, conflicts: 0 }, pending: 1, waiting: 0 });
    const [second] = await waitingOnTeam();
    await mergeOnTeam(second.id);
    expect(await pull(laptop.ctx, local)).toMatchObject({ landed: 1, conflicts: 0 });
    expect((await recordsOf(teamCall))[one].fields.title).toBe("second");
    expect((await recordsOf(laptopCall))[one].fields.title).toBe("second");
    expect(await openConflicts(laptopCall)).toEqual([]);
  });

  test("a record created offline and edited before the push: the edit waits until the team merges the create, then reaches the team", async () => {
    useKey(teamKeys.propose);
    const created = (await laptopCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "draft", n: 5 } })).body;
    await update(laptopCall, created.id, { title: "final" });
    expect(await push(laptop.ctx, local)).toMatchObject({ pending: 1, waiting: 1, refused: [] });
    const [create] = await waitingOnTeam();
    expect(create.sourceAttribution.channel).toBe("remote");
    await mergeOnTeam(create.id);
    expect(await push(laptop.ctx, local)).toMatchObject({ pull: { landed: 1, conflicts: 0 }, pending: 1, waiting: 0, refused: [] });
    expect(await openConflicts(laptopCall)).toEqual([]);
    const [edit] = await waitingOnTeam();
    await mergeOnTeam(edit.id);
    expect(await pull(laptop.ctx, local)).toMatchObject({ landed: 1, conflicts: 0 });
    expect((await recordsOf(teamCall))[created.id].fields).toMatchObject({ title: "final", n: 5 });
    expect((await recordsOf(laptopCall))[created.id].fields).toMatchObject({ title: "final", n: 5 });
    expect(await openConflicts(laptopCall)).toEqual([]);
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ ahead: 0, pending: 0, refused: 0 });
  });

  test("files travel: a file attached on the team comes down with a pull, one attached on the laptop goes up with a push, each checked against its SHA-256", async () => {
    const notes = (await teamCall("GET", "/api/v1/bases/notes")).body;
    await teamCall("POST", `/api/v1/bases/${notes.id}/fields/change-requests`, { operation: "create", slug: "file", name: "File", type: "attachment" });
    const [one, two] = await ids();
    const upload = async (server: TestServer, key: string, space: string, name: string, text: string) =>
      (await server.call("POST", `/api/v1/assets?fileName=${name}`, { key, space, rawBody: text, headers: { "content-type": "text/plain" } })).body.id as string;
    const teamFile = await upload(team, teamKeys.write, teamSpace, "team.txt", "made on the team");
    await update(teamCall, one, { file: [teamFile] });
    await pull(laptop.ctx, local);
    const content = (server: TestServer, key: string, space: string, id: string) => server.call("GET", `/api/v1/assets/${id}/content`, { key, space });
    expect(await content(laptop, laptopKey, local, teamFile)).toMatchObject({ status: 200, text: "made on the team" });
    expect((await recordsOf(laptopCall))[one].fields.file).toEqual([expect.objectContaining({ id: teamFile, fileName: "team.txt" })]);

    const laptopFile = await upload(laptop, laptopKey, local, "laptop.txt", "made on the laptop");
    await update(laptopCall, two, { file: [laptopFile] });
    const createdFile = await upload(laptop, laptopKey, local, "new.txt", "with a new record");
    const created = (await laptopCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "with a file", file: [createdFile] } })).body;
    expect(await push(laptop.ctx, local)).toMatchObject({ landed: 2, refused: [] });
    expect(await content(team, teamKeys.read, teamSpace, laptopFile)).toMatchObject({ status: 200, text: "made on the laptop" });
    expect(await content(team, teamKeys.read, teamSpace, createdFile)).toMatchObject({ status: 200, text: "with a new record" });
    const there = await recordsOf(teamCall);
    expect(there[two].fields.file).toEqual([expect.objectContaining({ id: laptopFile, fileName: "laptop.txt" })]);
    expect(there[created.id].fields.file).toEqual([expect.objectContaining({ id: createdFile })]);
    expect(await pull(laptop.ctx, local)).toMatchObject({ conflicts: 0, warnings: [] });

    // Bytes that do not match the SHA-256 they are sent with are refused, and nothing is kept.
    const wrong = await team.call("PUT", `/api/v1/sync/assets/ast_0000000000forged?fileName=x.txt&contentHash=${"0".repeat(64)}`, { key: teamKeys.propose, space: teamSpace, rawBody: "tampered", headers: { "content-type": "application/octet-stream" } });
    expect(wrong.status).toBe(400);
    expect((await teamCall("GET", "/api/v1/assets/ast_0000000000forged")).status).toBe(404);
  });

  test("structure travels both ways through review: a field made on the laptop is proposed with the records that fill it, and waits in the team's Inbox with a folder and a doc; the view on its base follows; after the merges both hold each once, with the same ids", async () => {
    useKey(teamKeys.propose);
    const notes = (await teamCall("GET", "/api/v1/bases/notes")).body;
    const [one, two] = await ids();
    // Made on the team: a field, filled.
    await teamCall("POST", `/api/v1/bases/${notes.id}/fields/change-requests`, { operation: "create", slug: "owner", name: "Owner", type: "text" });
    await update(teamCall, two, { owner: "Grace" });
    // Made on the laptop, offline: a field filled at once, a view, a folder and a doc.
    expect((await laptopCall("POST", `/api/v1/bases/${notes.id}/fields/change-requests`, { operation: "create", slug: "tag", name: "Tag", type: "text" })).status).toBe(201);
    await update(laptopCall, one, { tag: "offline" });
    expect((await laptopCall("POST", "/api/v1/views/change-requests", { operation: "create", baseId: notes.id, slug: "by-tag", name: "By tag", type: "table" })).status).toBe(201);
    const folder = (await laptopCall("POST", "/api/v1/nodes/change-requests", { operations: [{ kind: "create", nodeType: "folder", slug: "plans", name: "Plans" }] })).body;
    expect(folder.status).toBe("merged");
    const doc = (await laptopCall("POST", "/api/v1/docs", { slug: "guide", name: "Guide", body: "# Guide\n" })).body;

    // The field with the record that fills it (one proposal), the folder and the doc wait in the team's Inbox; the view on the field's base waits here for the field.
    expect(await push(laptop.ctx, local)).toMatchObject({ pull: { structure: 1, conflicts: 0 }, pending: 4, waiting: 1, refused: [] });
    const proposals = await waitingOnTeam();
    expect(proposals.map((cr) => cr.sourceAttribution.channel)).toEqual(["remote", "remote", "remote"]);
    const proposed = await Promise.all(proposals.map(async (cr) => (await teamCall("GET", `/api/v1/change-requests/${cr.id}`)).body as { operations: { operation: string; targetRecordId: string | null; headCommit: { payload: Record<string, unknown> } }[] }));
    const withRecords = proposed.find((cr) => cr.operations[0].operation === "base_add_field")!;
    expect(withRecords.operations.map((op) => `${op.operation} ${op.targetRecordId ?? ""}`.trim())).toEqual(["base_add_field", `record_update ${one}`]);
    expect(withRecords.operations[1].headCommit.payload).toEqual({ tag: "offline" });
    for (const cr of proposals) await mergeOnTeam(cr.id);
    expect(await push(laptop.ctx, local)).toMatchObject({ pull: { landed: 4, conflicts: 0, notFollowed: 0 }, pending: 1, waiting: 0, refused: [] });
    for (const cr of await waitingOnTeam()) await mergeOnTeam(cr.id);
    expect(await pull(laptop.ctx, local)).toMatchObject({ landed: 1, conflicts: 0, notFollowed: 0 });

    const fieldsOf = async (call: typeof teamCall) => (await call("GET", `/api/v1/bases/${notes.id}`)).body.fields.map((field: { id: string; slug: string }) => `${field.slug}:${field.id}`).sort();
    const teamFields = await fieldsOf(teamCall);
    expect(teamFields.filter((field: string) => field.startsWith("tag:") || field.startsWith("owner:"))).toHaveLength(2);
    expect(await fieldsOf(laptopCall)).toEqual(teamFields);
    const viewsOf = async (call: typeof teamCall) => (await call("GET", `/api/v1/bases/${notes.id}/views`)).body.map((view: { id: string; slug: string }) => `${view.slug}:${view.id}`).sort();
    expect(await viewsOf(teamCall)).toEqual(await viewsOf(laptopCall));
    expect((await viewsOf(teamCall)).filter((view: string) => view.startsWith("by-tag:"))).toHaveLength(1);
    type TreeNode = { id: string; slug: string; type: string; children?: TreeNode[] };
    const flat = (nodes: TreeNode[]): string[] => nodes.flatMap((node) => [`${node.type} ${node.slug}:${node.id}`, ...flat(node.children ?? [])]);
    const nodesOf = async (call: typeof teamCall) => flat((await call("GET", "/api/v1/nodes")).body).sort();
    expect(await nodesOf(teamCall)).toEqual(expect.arrayContaining([`folder plans:${folder.nodeId}`, `doc guide:${doc.node.id}`]));
    expect(await nodesOf(teamCall)).toEqual(await nodesOf(laptopCall));
    expect((await teamCall("GET", `/api/v1/nodes/${doc.node.id}?type=doc`)).body).toMatchObject({ body: "# Guide\n" });
    const there = await recordsOf(teamCall);
    const here = await recordsOf(laptopCall);
    expect(there[one].fields.tag).toBe("offline");
    expect(here[two].fields.owner).toBe("Grace");
    for (const [id, record] of Object.entries(there)) expect(here[id].fields).toEqual(record.fields);
    expect(await openConflicts(laptopCall)).toEqual([]);
    expect(await openConflicts(teamCall)).toEqual([]);
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ ahead: 0, pending: 0, refused: 0 });
  });

  test("a file tree's files travel up: a file made, changed and removed on the laptop and the tree's settings reach the team; one the team changed since waits in its Inbox for a person", async () => {
    const drive = (await teamCall("POST", "/api/v1/file-trees", { type: "drive", slug: "handbook", name: "Handbook", files: ["a", "b", "c"].map((name) => ({ path: `${name}.md`, content: name.toUpperCase() })) })).body.node.id as string;
    expect(await pull(laptop.ctx, local)).toMatchObject({ structure: 1, warnings: [] });
    const file = (call: typeof teamCall, path: string) => call("GET", `/api/v1/file-trees/${drive}/files/${path}`);
    const change = (call: typeof teamCall, operations: unknown[]) => call("POST", `/api/v1/file-trees/${drive}/change-requests`, { operations });
    const c = (await file(laptopCall, "c.md")).body.contentHash as string;

    // The laptop changes its files; the team changes c.md, on the bytes both held.
    expect((await change(laptopCall, [{ kind: "create", path: "notes/new.md", content: "made on the laptop" }, { kind: "update", path: "a.md", content: "A, revised on the laptop" }, { kind: "metadata_update", metadata: { version: "0.2.0" } }])).body.status).toBe("merged");
    // Removing a file always waits for review, here and there.
    const removal = (await change(laptopCall, [{ kind: "delete", path: "b.md" }])).body.id;
    await laptopCall("POST", `/api/v1/change-requests/${removal}/reviews`, { verdict: "approved" });
    expect((await laptopCall("POST", `/api/v1/change-requests/${removal}/merge`)).status).toBe(200);
    expect((await change(laptopCall, [{ kind: "update", path: "c.md", content: "C, by the laptop", baseContentHash: c }])).body.status).toBe("merged");
    expect((await change(teamCall, [{ kind: "update", path: "c.md", content: "C, by the team", baseContentHash: c }])).body.status).toBe("merged");

    // The team's c.md cannot merge on the laptop's: named in the pull's warnings. The removal waits in the team's Inbox, and the laptop's c.md, a later change of the same drive, waits here behind it.
    expect(await push(laptop.ctx, local)).toMatchObject({ pull: { notFollowed: 1 }, landed: 1, pending: 1, waiting: 1, refused: [] });
    const paths = async (call: typeof teamCall) => ((await call("GET", `/api/v1/file-trees/${drive}/files`)).body as { path: string }[]).map((each) => each.path).sort();
    expect(await paths(teamCall)).toEqual(["README.md", "a.md", "b.md", "c.md", "notes/new.md"]);
    expect((await file(teamCall, "notes/new.md")).body.content).toBe("made on the laptop");
    expect((await file(teamCall, "a.md")).body.content).toBe("A, revised on the laptop");
    expect((await teamCall("GET", `/api/v1/nodes/${drive}?type=drive`)).body).toMatchObject({ version: "0.2.0" });
    const proposalOnTeam = async () => {
      const [only, ...others] = await waitingOnTeam();
      expect(others).toEqual([]);
      return (await teamCall("GET", `/api/v1/change-requests/${only.id}`)).body as { id: string; sourceAttribution: { channel: string }; operations: { operation: string }[] };
    };
    const removalThere = await proposalOnTeam();
    expect(removalThere).toMatchObject({ sourceAttribution: { channel: "remote" }, operations: [{ operation: "drive_file_delete" }] });

    // Merged there, the removal lands; the laptop's c.md then goes, and meets the team's: it waits in the team's Inbox for a person, not refused at each push.
    await mergeOnTeam(removalThere.id);
    expect(await push(laptop.ctx, local)).toMatchObject({ pull: { landed: 1 }, landed: 0, pending: 1, waiting: 0, refused: [] });
    expect(await paths(teamCall)).toEqual(["README.md", "a.md", "c.md", "notes/new.md"]);
    expect(await paths(laptopCall)).toEqual(await paths(teamCall));
    expect((await file(teamCall, "c.md")).body.content).toBe("C, by the team");
    expect(await proposalOnTeam()).toMatchObject({ sourceAttribution: { channel: "remote" }, operations: [{ operation: "drive_file_update" }] });
    expect(await push(laptop.ctx, local)).toMatchObject({ landed: 0, pending: 0, refused: [] });
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ ahead: 0, pending: 1, refused: 0 });
  });

  test("a pushed change of structure is checked as a proposal made there is: another space's file, an unknown node type or a bad slug is refused, and nothing is made", async () => {
    const ada = findUserByEmail(team.ctx, "ada@example.com")!;
    const other = (await team.space(ada.id, "Other", "other")).id;
    const secret = (await team.call("POST", "/api/v1/assets?fileName=secret.txt", { key: teamKeys.write, space: other, rawBody: "not yours", headers: { "content-type": "text/plain" } })).body.id;
    const origin = `ins_${"a".repeat(20)}`;
    const send = (n: number, payload: Record<string, unknown>) =>
      teamCall("POST", "/api/v1/sync/structure", { changeRequestId: `crq_pushedstructure${n}`, origin, operations: [{ commitId: `cmt_pushedstructure${n}`, kind: "node_create", targetType: "node", baseId: null, nodeId: null, payload }] });
    expect((await send(1, { nodeType: "drive", slug: "stolen", name: "Stolen", files: [{ path: "secret.txt", assetId: secret }] })).status).toBe(404);
    expect((await send(2, { nodeType: "vault", slug: "odd", name: "Odd" })).status).toBe(400);
    expect((await send(3, { nodeType: "folder", slug: "Not a slug!", name: "Bad" })).status).toBe(400);
    const made = await send(4, { nodeType: "folder", slug: "fine", name: "Fine" });
    expect(made).toMatchObject({ status: 201, body: { status: "merged" } });
    // Sent again, the same change answers the change request it made.
    expect((await send(4, { nodeType: "folder", slug: "fine", name: "Fine" })).body.changeRequestId).toBe(made.body.changeRequestId);
    const slugs = JSON.stringify((await teamCall("GET", "/api/v1/nodes")).body);
    expect(slugs).toContain('"fine"');
    expect(slugs).not.toContain("stolen");
    expect(slugs).not.toContain('"odd"');
  });

  test("a push cut after the remote took it and sent again creates nothing twice", async () => {
    const remote = laptop.ctx.db.select().from(remotes).get()!;
    laptop.ctx.store.db.update(remotes).set({ sealedKey: laptop.ctx.secretBox.seal(teamKeys.propose) }).where(eq(remotes.id, remote.id)).run();
    const [one] = await ids();
    await update(laptopCall, one, { title: "sent twice" });
    expect(await push(laptop.ctx, local)).toMatchObject({ pending: 1 });
    // As if the process died before it wrote down what the remote answered: the same change goes again.
    laptop.ctx.store.db.delete(remotePushes).run();
    laptop.ctx.store.db.update(remotes).set({ pushedSeq: remote.pushedSeq }).where(eq(remotes.id, remote.id)).run();
    expect(await push(laptop.ctx, local)).toMatchObject({ pending: 1 });
    const crs = (await teamCall("GET", "/api/v1/change-requests?limit=100")).body;
    expect((crs.items ?? crs.changeRequests ?? crs).filter((cr: { sourceAttribution: { channel: string } }) => cr.sourceAttribution.channel === "remote")).toHaveLength(1);
  });

  test("a field added offline goes in one proposal with a record created and records edited to fill it; cut after the team took it and sent again, it is taken once, and a record filled since follows alone", async () => {
    const notes = (await teamCall("GET", "/api/v1/bases/notes")).body;
    const [one, two] = await ids();
    const remote = laptop.ctx.db.select().from(remotes).get()!;
    expect((await laptopCall("POST", `/api/v1/bases/${notes.id}/fields/change-requests`, { operation: "create", slug: "due", name: "Due", type: "number" })).status).toBe(201);
    expect((await laptopCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "made offline", due: 3 } })).status).toBe(201);
    await update(laptopCall, one, { due: 1 });
    await update(laptopCall, two, { due: 2 });
    expect(await push(laptop.ctx, local)).toMatchObject({ landed: 4, pending: 0, waiting: 0, refused: [] });
    const remoteProposals = async () => {
      const listed = (await teamCall("GET", "/api/v1/change-requests?limit=100")).body;
      return ((listed.items ?? listed.changeRequests ?? listed) as { id: string; sourceAttribution: { channel: string } }[]).filter((cr) => cr.sourceAttribution.channel === "remote");
    };
    const [together] = await remoteProposals();
    expect((await teamCall("GET", `/api/v1/change-requests/${together.id}`)).body.operations.map((op: { operation: string }) => op.operation)).toEqual(["base_add_field", "record_create", "record_update", "record_update"]);
    const dues = async (call: typeof teamCall) => Object.fromEntries(Object.values(await recordsOf(call)).map((record) => [record.id, record.fields.due ?? null]));
    expect(await dues(teamCall)).toEqual(await dues(laptopCall));
    expect(Object.values(await dues(teamCall)).sort()).toEqual([1, 2, 3, null]);

    // As if the process died before it wrote down what the team answered; meanwhile a third record is filled here.
    laptop.ctx.store.db.delete(remotePushes).run();
    laptop.ctx.store.db.update(remotes).set({ pushedSeq: remote.pushedSeq }).where(eq(remotes.id, remote.id)).run();
    const [, , three] = await ids();
    await update(laptopCall, three, { due: 4 });
    expect(await push(laptop.ctx, local)).toMatchObject({ landed: 5, refused: [] });
    expect(await remoteProposals()).toHaveLength(2);
    expect(await dues(teamCall)).toEqual(await dues(laptopCall));
    expect(await pull(laptop.ctx, local)).toMatchObject({ conflicts: 0, notFollowed: 0 });
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ ahead: 0, pending: 0, refused: 0 });
  });

  test("a push sends its changes in batches of 100, one request each, in order: 250 changes are 3 requests, and edits of one record in a batch land in turn", async () => {
    const [one] = await ids();
    const made: string[] = [];
    for (let i = 0; i < 245; i++) made.push((await laptopCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: `laptop ${i}`, n: 100 + i } })).body.id);
    for (let n = 1; n <= 5; n++) await update(laptopCall, one, { n: 1000 + n });
    const sent: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.includes("/sync/proposals")) sent.push(new URL(url).pathname);
      return realFetch(input, init);
    }) as typeof fetch;
    try {
      expect(await push(laptop.ctx, local)).toMatchObject({ landed: 250, pending: 0, waiting: 0, refused: [] });
    } finally {
      globalThis.fetch = realFetch;
    }
    // Five edits of one record go each after the one before has landed: they break a batch each.
    expect(sent.length).toBeLessThanOrEqual(3 + 5);
    expect(new Set(sent)).toEqual(new Set(["/api/v1/sync/proposals/batch"]));
    const there = new Map<string, Record<string, unknown>>();
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: { records: { id: string; fields: Record<string, unknown> }[]; nextCursor: string | null } = (await teamCall("GET", `/api/v1/records?baseId=notes&limit=100${cursor ? `&cursor=${cursor}` : ""}`)).body;
      for (const record of page.records) there.set(record.id, record.fields);
      cursor = page.nextCursor;
    }
    expect(there.get(one)?.n).toBe(1005);
    expect(made.filter((id) => there.has(id))).toEqual(made);
    expect(there.size).toBe(3 + 245);
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ ahead: 0, pending: 0, refused: 0 });
  });

  test("with a changeRequest key, pushed changes wait in the remote's Inbox; once merged there, a pull marks them landed", async () => {
    const remote = laptop.ctx.db.select().from(remotes).get()!;
    laptop.ctx.store.db.update(remotes).set({ sealedKey: laptop.ctx.secretBox.seal(teamKeys.propose) }).where(eq(remotes.id, remote.id)).run();
    const [one] = await ids();
    await update(laptopCall, one, { title: "please review" });
    expect(await push(laptop.ctx, local)).toMatchObject({ landed: 0, pending: 1 });
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ pending: 1, ahead: 0 });
    const waiting = (await teamCall("GET", "/api/v1/change-requests?status=in_review")).body;
    const cr = (waiting.items ?? waiting.changeRequests ?? waiting)[0];
    await teamCall("POST", `/api/v1/change-requests/${cr.id}/reviews`, { verdict: "approved" });
    expect((await teamCall("POST", `/api/v1/change-requests/${cr.id}/merge`)).status).toBe(200);
    expect(await pull(laptop.ctx, local)).toMatchObject({ landed: 1 });
    expect((await remoteStatus(laptop.ctx, local))[0]).toMatchObject({ pending: 0 });
  });

  test("structure follows too: a field, a base with its records and a view made on the remote arrive with the same ids, and records of the new base push back", async () => {
    const notes = (await teamCall("GET", "/api/v1/bases/notes")).body;
    await teamCall("POST", `/api/v1/bases/${notes.id}/fields/change-requests`, { operation: "create", slug: "tag", name: "Tag", type: "text" });
    await teamCall("POST", "/api/v1/bases", { slug: "tasks", name: "Tasks", fields: [{ slug: "name", name: "Name", type: "text" }, { slug: "note", name: "Note", type: "relation", options: { targetBaseSlug: "notes" } }] });
    const [one] = await ids();
    const task = (await teamCall("POST", "/api/v1/bases/tasks/change-requests", { fields: { name: "Read it", note: [one] } })).body;
    await teamCall("POST", "/api/v1/views/change-requests", { operation: "create", baseId: notes.id, slug: "by-n", name: "By N", type: "table" });
    await update(teamCall, one, { tag: "urgent" });
    const pulled = await pull(laptop.ctx, local);
    expect(pulled).toMatchObject({ structure: 3, notFollowed: 0, warnings: [] });
    const fieldIds = (base: { fields: { id: string }[] }) => base.fields.map((field) => field.id);
    const notesThere = (await teamCall("GET", "/api/v1/bases/notes")).body;
    expect(fieldIds(notesThere)).toHaveLength(notes.fields.length + 2);
    expect(fieldIds((await laptopCall("GET", "/api/v1/bases/notes")).body)).toEqual(fieldIds(notesThere));
    const tasksThere = (await teamCall("GET", "/api/v1/bases/tasks")).body;
    const tasksHere = (await laptopCall("GET", "/api/v1/bases/tasks")).body;
    expect(tasksHere).toMatchObject({ id: tasksThere.id, nodeId: tasksThere.nodeId });
    expect(fieldIds(tasksHere)).toEqual(fieldIds(tasksThere));
    expect((await laptopCall("GET", `/api/v1/records/${task.id}`)).body.fields).toMatchObject({ name: "Read it", note: [one] });
    expect((await recordsOf(laptopCall))[one].fields.tag).toBe("urgent");
    const viewsThere = (await teamCall("GET", `/api/v1/bases/${notes.id}/views`)).body.map((view: { id: string }) => view.id);
    expect((await laptopCall("GET", `/api/v1/bases/${notes.id}/views`)).body.map((view: { id: string }) => view.id)).toEqual(viewsThere);
    await laptopCall("POST", "/api/v1/bases/tasks/change-requests", { fields: { name: "Written offline" } });
    expect(await push(laptop.ctx, local)).toMatchObject({ landed: 1, refused: [] });
    const names = (await teamCall("GET", "/api/v1/records?baseId=tasks")).body.records.map((record: { fields: { name: string } }) => record.fields.name);
    expect(names.sort()).toEqual(["Read it", "Written offline"]);
  });

  test("a change of structure that cannot merge here is noted and passed; the pull goes on", async () => {
    await laptop.call("POST", "/api/v1/bases", { key: laptopKey, space: local, body: { slug: "tasks", name: "Local tasks", fields: [] } });
    await teamCall("POST", "/api/v1/bases", { slug: "tasks", name: "Tasks", fields: [{ slug: "name", name: "Name", type: "text" }] });
    await teamCall("POST", "/api/v1/bases/tasks/change-requests", { fields: { name: "Team task" } });
    const [one] = await ids();
    await update(teamCall, one, { title: "still comes" });
    const pulled = await pull(laptop.ctx, local);
    expect(pulled.notFollowed).toBe(2);
    expect(pulled.warnings[0]).toContain("cannot merge here");
    expect((await recordsOf(laptopCall))[one].fields.title).toBe("still comes");
    // Pushed, the laptop's own base of that slug is refused by the team with its reason, and stays here.
    expect(await push(laptop.ctx, local)).toMatchObject({ refused: [expect.objectContaining({ reason: expect.stringContaining('slug "tasks"') })] });
  });

  test("a pull run as a command on the data directory while the server serves it: the server sees the new field and records", async () => {
    const command = wire(openStore(laptop.dbPath), loadConfig({ "data-dir": laptop.dir }), laptop.clock, { info: () => undefined, error: () => undefined }).ctx;
    try {
      expect((await laptopCall("GET", "/api/v1/bases/notes")).body.fields.map((field: { slug: string }) => field.slug)).not.toContain("tag");
      const notes = (await teamCall("GET", "/api/v1/bases/notes")).body;
      await teamCall("POST", `/api/v1/bases/${notes.id}/fields/change-requests`, { operation: "create", slug: "tag", name: "Tag", type: "text" });
      await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "tagged", n: 7, tag: "new" } });
      expect(await pull(command, local)).toMatchObject({ structure: 1, applied: 1 });
      for (let waited = 0; ; waited += 20) {
        const fields = (await laptopCall("GET", "/api/v1/bases/notes")).body.fields.map((field: { slug: string }) => field.slug);
        if (fields.includes("tag")) break;
        if (waited > 1000) throw new Error("the server still shows the base as it was");
        await Bun.sleep(20);
      }
      expect(Object.values(await recordsOf(laptopCall)).find((record) => record.fields.title === "tagged")?.fields.tag).toBe("new");
    } finally {
      await closeStore(command.store);
    }
  });

  test("a remote put back from an older copy (its log behind the cursor) is refused, rather than its next commits missed", async () => {
    const remote = laptop.ctx.db.select().from(remotes).get()!;
    laptop.ctx.store.db.update(remotes).set({ pulledSeq: remote.pulledSeq + 1000 }).where(eq(remotes.id, remote.id)).run();
    await expect(pull(laptop.ctx, local)).rejects.toMatchObject({ status: 502, data: { remoteCode: "REMOTE_WENT_BACK" } });
  });

  test("offline is normal: an unreachable remote answers 503 and changes nothing; local work goes on", async () => {
    const remote = laptop.ctx.db.select().from(remotes).get()!;
    laptop.ctx.store.db.update(remotes).set({ url: "http://127.0.0.1:9" }).where(eq(remotes.id, remote.id)).run();
    const [one] = await ids();
    expect((await update(laptopCall, one, { title: "on the plane" })).status).toBe(201);
    await expect(pull(laptop.ctx, local)).rejects.toMatchObject({ status: 503, code: "REMOTE_UNREACHABLE" });
    await expect(push(laptop.ctx, local)).rejects.toMatchObject({ status: 503 });
    const [status] = await remoteStatus(laptop.ctx, local);
    expect(status.ahead).toBe(1);
    expect(status.lastError).toContain("cannot be reached");
  });
});

describe("the Remotes screen's routes", () => {
  test("an instance admin clones over HTTP; the space's remotes are listed, pulled and pushed through the API", async () => {
    const admin = await laptop.user("Root", { admin: true });
    const adminKey = await laptop.key(admin.id, "manage");
    const badAddress = await laptop.call("POST", "/api/v1/remotes/clone", { key: adminKey, body: { url: "ftp://team", key: teamKeys.write, remoteSpace: teamSpace } });
    expect(badAddress).toMatchObject({ status: 400, body: { error: "ftp://team is not an http(s) address." } });
    const nobody = await laptop.call("POST", "/api/v1/remotes/clone", { key: laptopKey, body: { url: team.url, key: teamKeys.write, remoteSpace: teamSpace } });
    expect(nobody.status).toBe(403);
    const wrongKey = await laptop.call("POST", "/api/v1/remotes/clone", { key: adminKey, body: { url: team.url, key: "bsk_wrong", remoteSpace: teamSpace } });
    expect(wrongKey).toMatchObject({ status: 502, body: { code: "REMOTE_REFUSED" } });
    const cloned = await laptop.call("POST", "/api/v1/remotes/clone", { key: adminKey, body: { url: team.url, key: teamKeys.write, remoteSpace: teamSpace, slug: "team-copy" } });
    expect(cloned.status).toBe(201);
    const space = cloned.body.spaceId;
    const listed = await laptop.call("GET", "/api/v1/remotes", { key: adminKey, space });
    expect(listed.body).toEqual([expect.objectContaining({ name: "origin", url: team.url, ahead: 0 })]);
    const remoteId = listed.body[0].id;
    await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "from the team", n: 9 } });
    expect((await laptop.call("POST", `/api/v1/remotes/${remoteId}/pull`, { key: adminKey, space })).body).toMatchObject({ applied: 1, conflicts: 0 });
    await laptop.call("POST", "/api/v1/bases/notes/change-requests", { key: adminKey, space, body: { fields: { title: "from the laptop", n: 10 } } });
    expect((await laptop.call("POST", `/api/v1/remotes/${remoteId}/push`, { key: adminKey, space })).body).toMatchObject({ landed: 1 });
    expect(Object.values(await recordsOf(teamCall)).map((record) => record.fields.title)).toContain("from the laptop");
    // Naming an address the server will reach is an instance admin's: a space's manager who is not one is refused.
    const manager = await laptop.user("Manager");
    await laptop.call("POST", `/api/v1/spaces/${space}/members`, { key: adminKey, space, body: { email: manager.email, role: "admin" } });
    const managerKey = await laptop.key(manager.id, "manage");
    const follow = await laptop.call("POST", "/api/v1/remotes", { key: managerKey, space, body: { name: "inside", url: "http://127.0.0.1:9", key: "bsk_x", remoteSpace: "team" } });
    expect(follow).toMatchObject({ status: 403, body: { reason: "ADMIN_REQUIRED" } });
    expect((await laptop.call("DELETE", `/api/v1/remotes/${remoteId}`, { key: adminKey, space })).status).toBe(200);
    expect((await laptop.call("GET", "/api/v1/remotes", { key: adminKey, space })).body).toEqual([]);
  });
});
