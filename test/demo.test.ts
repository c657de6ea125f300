import { afterEach, describe, expect, test } from "bun:test";
import { issueSetupToken } from "../src/spaces/setup";
import { fillDemo } from "../src/transfer/demo";
import { TestServer, workspace } from "./helpers";

let server: TestServer;
afterEach(() => server.stop());

describe("the demo workspace (basalt serve --demo)", () => {
  test("the setup's first space becomes a content team's workspace: bases with linked records, a proposal in the Inbox, a doc and a skill", async () => {
    server = new TestServer({ flags: { demo: true } });
    const token = issueSetupToken(server.ctx)!;
    const created = await server.call("POST", "/api/v1/setup", { body: { token, email: "ada@example.com", name: "Ada", password: "correct horse" } });
    expect(created.status).toBe(201);
    const key = await server.key(created.body.id, "read");
    const read = async (path: string) => (await server.call("GET", path, { key })).body;
    expect((await read("/api/v1/bases")).map((base: { slug: string }) => base.slug).sort()).toEqual(["blog", "newsletter", "social-content"]);
    const posts = (await read("/api/v1/records?baseId=blog&sort=priority")).records;
    expect(posts).toHaveLength(4);
    const social = (await read("/api/v1/records?baseId=social-content")).records;
    expect(social.every((record: { fields: { related_blog: unknown[] } }) => record.fields.related_blog.length === 1)).toBe(true);
    const issue = (await read("/api/v1/records?baseId=newsletter")).records[0];
    expect(issue.fields.source_posts).toHaveLength(2);
    expect((await read("/api/v1/change-requests/counts")).review).toBe(1);
    expect((await read("/api/v1/nodes/welcome")).body).toContain("# Welcome to the demo workspace");
    expect((await read("/api/v1/file-trees/editorial-review/files")).map((file: { path: string }) => file.path)).toEqual(["SKILL.md", "skill.json"]);
  });

  test("a space that holds anything is left as it is", async () => {
    server = new TestServer();
    const ws = await workspace(server);
    await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "folder", slug: "mine", name: "Mine" }] } });
    expect(await fillDemo(server.ctx, ws.space.id, ws.owner.id)).toBe(false);
    expect((await server.call("GET", "/api/v1/bases", { key: ws.read })).body).toEqual([]);
  });
});
