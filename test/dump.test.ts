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
