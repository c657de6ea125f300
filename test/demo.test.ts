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
    expect(social.every((record: { fields: { related_blogs: unknown[] } }) => record.fields.related_blogs.length === 1)).toBe(true);
    const issue = (await read("/api/v1/records?baseId=newsletter")).records[0];
    expect(issue.fields.source_posts).toHaveLength(2);
    expect((await read("/api/v1/change-requests/counts")).review).toBe(1);
    expect((await read("/api/v1/nodes/welcome")).body).toContain("# Welcome to the demo workspace");
    expect((await read("/api/v1/file-trees/ai-research-editor/files")).map((file: { path: string }) => file.path)).toEqual(["SKILL.md", "skill.json"]);
  });

  test("it holds what Busabase's seed holds where its golden path looks: the blog's fields take its record, a status written by id reads back, and AI finds things", async () => {
    server = new TestServer({ flags: { demo: true } });
    const token = issueSetupToken(server.ctx)!;
    const created = await server.call("POST", "/api/v1/setup", { body: { token, email: "ada@example.com", name: "Ada", password: "correct horse" } });
    const key = await server.key(created.body.id, "manage");
    const blog = (await server.call("GET", "/api/v1/bases/blog", { key })).body;
    expect(blog.fields.map((field: { slug: string }) => field.slug)).toEqual(expect.arrayContaining(["title", "body", "channel", "path", "slug", "locale", "status", "schema-version"]));
    const social = (await server.call("GET", "/api/v1/bases/social-content", { key })).body;
    expect(social.fields.map((field: { slug: string }) => field.slug)).toEqual(["title", "body", "channel", "related_blogs"]);
    const newsletter = (await server.call("GET", "/api/v1/bases/newsletter", { key })).body;
    expect(newsletter.fields.map((field: { slug: string }) => field.slug)).toEqual(["title", "body", "audience", "source_posts"]);

    const fields = { title: "CLI golden path", channel: "blog", body: "Written via busabase-cli.", path: "/blog/cli-golden-path", slug: "cli-golden-path", locale: "en", status: "draft", "schema-version": 1 };
    const proposed = await server.call("POST", `/api/v1/bases/${blog.id}/change-requests`, { key, body: { fields, autoMerge: false } });
    expect([proposed.status, proposed.body.status]).toEqual([201, "in_review"]);
    const first = (await server.call("GET", `/api/v1/records?baseId=${blog.id}&limit=1`, { key })).body.records[0];
    const updated = await server.call("POST", `/api/v1/records/${first.id}/change-requests`, { key, body: { operation: "update", fields: { status: "published" }, autoMerge: true } });
    expect(updated.body.materialized).toBe(true);
    expect((await server.call("GET", `/api/v1/records/${first.id}`, { key })).body.headCommit.payload.status).toBe("published");

    const found = (await server.call("GET", "/api/v1/search?query=AI&limit=5", { key })).body.results;
    expect(found.length).toBeGreaterThan(0);
    const skills = (await server.call("GET", "/api/v1/nodes?types=skill", { key })).body;
    expect(JSON.stringify(skills)).toContain("ai-research-editor");
  });

  test("a space that holds anything is left as it is", async () => {
    server = new TestServer();
    const ws = await workspace(server);
    await server.call("POST", "/api/v1/nodes/change-requests", { key: ws.write, body: { operations: [{ kind: "create", nodeType: "folder", slug: "mine", name: "Mine" }] } });
    expect(await fillDemo(server.ctx, ws.space.id, ws.owner.id)).toBe(false);
    expect((await server.call("GET", "/api/v1/bases", { key: ws.read })).body).toEqual([]);
  });
});
