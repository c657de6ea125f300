import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { TestServer, createBase, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => {
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write);
  await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "<script>alert(1)</script> Attention" } } });
});
afterEach(() => server.stop());

const embed = (body: Record<string, unknown>, key = ws.manage) => server.call("POST", "/api/v1/embed-links", { key, body });
const anonymous = (path: string) => fetch(`${server.url}${path}`);

describe("embed links", () => {
  test("a manager makes a link; whoever holds it reads that node, and nothing else, without a key", async () => {
    const made = await embed({ nodeId: "papers" });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ nodeName: "papers", nodeType: "base", active: true, revokedAt: null, framePolicy: { mode: "anywhere", allowedOrigins: [] } });
    expect(Date.parse(made.body.expiresAt) - Date.parse(made.body.createdAt)).toBe(15 * 60_000);
    const token = new URL(made.body.url).pathname.split("/").pop()!;
    const view = await (await anonymous(`/api/v1/embed/${token}`)).json();
    expect(view).toMatchObject({ type: "base", node: { slug: "papers" }, base: { slug: "papers" } });
    expect(view.records.map((record: { fields: { title: string } }) => record.fields.title)).toEqual(["<script>alert(1)</script> Attention"]);
    const page = await anonymous(`/embed/${token}`);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors *");
    const html = await page.text();
    expect(html).toContain("&#60;script&#62;alert(1)&#60;/script&#62; Attention");
    expect(html).not.toContain("<script>");
    // The token reads its node only: another route of the space still needs a key.
    expect((await anonymous("/api/v1/records?baseId=papers")).status).toBe(401);
    expect((await server.call("GET", "/api/v1/embed-links", { key: ws.manage })).body.map((link: { id: string }) => link.id)).toEqual([made.body.id]);
    expect(JSON.stringify((await server.call("GET", "/api/v1/embed-links", { key: ws.manage })).body)).not.toContain(token);
  });

  test("a link ends when it expires or is revoked; a frame policy names where it may be framed", async () => {
    const made = await embed({ nodeId: "papers", expiresInMinutes: 1, framePolicy: { mode: "origins", allowedOrigins: ["https://blog.example.com/", "https://blog.example.com", "http://localhost:3000"] } });
    expect(made.body.framePolicy).toEqual({ mode: "origins", allowedOrigins: ["https://blog.example.com", "http://localhost:3000"] });
    const token = new URL(made.body.iframeUrl).pathname.split("/").pop()!;
    expect((await anonymous(`/embed/${token}`)).headers.get("content-security-policy")).toContain("frame-ancestors https://blog.example.com http://localhost:3000");
    server.clock.advance(61_000);
    expect((await anonymous(`/api/v1/embed/${token}`)).status).toBe(404);

    const other = await embed({ nodeId: "papers", framePolicy: { mode: "top-level-only" } });
    const otherToken = new URL(other.body.url).pathname.split("/").pop()!;
    expect((await anonymous(`/embed/${otherToken}`)).headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect((await server.call("DELETE", `/api/v1/embed-links/${other.body.id}`, { key: ws.manage })).body).toEqual({ revoked: true });
    expect((await anonymous(`/api/v1/embed/${otherToken}`)).status).toBe(404);
    expect((await anonymous("/api/v1/embed/not-a-token")).status).toBe(404);

    for (const origin of ["http://blog.example.com", "https://*.example.com", "https://blog.example.com/path", "https://user:pw@blog.example.com"]) {
      expect((await embed({ nodeId: "papers", framePolicy: { mode: "origins", allowedOrigins: [origin] } })).status).toBe(400);
    }
    expect((await embed({ nodeId: "papers" }, ws.write)).status).toBe(403);
    expect((await embed({ nodeId: "papers", expiresInMinutes: 1441 })).status).toBe(400);
  });
});
