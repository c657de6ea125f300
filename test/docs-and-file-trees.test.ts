import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { approveAndMerge, TestServer, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace()));
afterEach(() => server.stop());

const sha = (text: string) => `sha256:${new Bun.CryptoHasher("sha256").update(text).digest("hex")}`;
const upload = async (name: string, body: string | Uint8Array, type: string) =>
  (await server.call("POST", `/api/v1/assets?fileName=${name}`, { key: ws.write, rawBody: body as string, headers: { "content-type": type } })).body;

describe("docs", () => {
  test("a doc is made with its markdown, read whole and by lines, and changed by a change request", async () => {
    const made = await server.call("POST", "/api/v1/docs", { key: ws.write, body: { slug: "guide", name: "Guide", body: "# Guide\n\nline two\nline three\n" } });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ materialized: true, node: { type: "doc", slug: "guide" }, body: "# Guide\n\nline two\nline three\n", storagePrefix: expect.stringContaining(made.body.node.id) });
    const id = made.body.node.id;
    expect((await server.call("GET", `/api/v1/docs/${id}/lines?startLine=3&endLine=9`, { key: ws.read })).body).toEqual({ lines: ["line two", "line three"], startLine: 3, endLine: 4, totalLines: 4, truncated: false });
    expect((await server.call("GET", `/api/v1/nodes/${id}?type=doc`, { key: ws.read })).body).toMatchObject({ type: "doc", node: { id }, body: "# Guide\n\nline two\nline three\n" });

    const proposed = await server.call("PUT", `/api/v1/nodes/${id}/content`, { key: ws.propose, body: { content: { kind: "doc", body: "# Guide v2\n" } } });
    expect(proposed.body).toMatchObject({ status: "in_review", operations: [{ operation: "doc_update", status: "pending" }] });
    expect((await server.call("GET", `/api/v1/docs/${id}/lines`, { key: ws.read })).body.lines[0]).toBe("# Guide");
    await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    expect((await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/merge`, { key: ws.write })).status).toBe(200);
    expect((await server.call("GET", `/api/v1/docs/${id}/lines`, { key: ws.read })).body).toMatchObject({ lines: ["# Guide v2"], totalLines: 1 });
  });

  test("a doc's body has a bound, its content a matching kind, and an empty doc no lines", async () => {
    const big = await server.call("POST", "/api/v1/docs", { key: ws.write, body: { slug: "big", name: "Big", body: "x".repeat(300_001) } });
    expect(big).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" } });
    const empty = await server.call("POST", "/api/v1/docs", { key: ws.write, body: { slug: "empty", name: "Empty" } });
    expect((await server.call("GET", `/api/v1/docs/${empty.body.node.id}/lines`, { key: ws.read })).body).toMatchObject({ lines: [], totalLines: 0 });
    const wrong = await server.call("PUT", `/api/v1/nodes/${empty.body.node.id}/content`, { key: ws.write, body: { content: { kind: "html", document: { version: 1, source: "<p>" } } } });
    expect(wrong).toMatchObject({ status: 400, body: { error: `Content kind "html" does not match node type "doc" for node ${empty.body.node.id}.` } });
    expect((await server.call("GET", "/api/v1/docs/nope/lines", { key: ws.read })).status).toBe(404);
    expect((await server.call("GET", "/api/v1/nodes?types[0]=doc", { key: ws.read })).body.map((node: { slug: string }) => node.slug)).toEqual(["empty"]);
  });
});

describe("rich documents", () => {
  test("whiteboards, workflows and html nodes start with their empty document and take a checked one", async () => {
    const made = await server.call("POST", "/api/v1/nodes/change-requests", {
      key: ws.write,
      body: {
        operations: [
          { kind: "create", nodeType: "whiteboard", slug: "board", name: "Board" },
          { kind: "create", nodeType: "workflow", slug: "flow", name: "Flow" },
          { kind: "create", nodeType: "html", slug: "landing", name: "Landing" },
          { kind: "create", nodeType: "form", slug: "signup", name: "Signup" },
        ],
      },
    });
    expect(made.body.status).toBe("merged");
    const detail = async (slug: string) => (await server.call("GET", `/api/v1/nodes/${slug}`, { key: ws.read })).body;
    expect((await detail("board")).document).toEqual({ version: 1, elements: [], appState: {} });
    expect((await detail("flow")).document).toMatchObject({ version: 2, nodes: [{ id: "trigger", kind: "trigger", eventName: "manual" }], edges: [], settings: { concurrency: 1 } });
    expect((await detail("landing")).document.source).toContain("<!doctype html>");
    expect(await detail("signup")).toMatchObject({ type: "form", node: { slug: "signup" } });

    const flow = (await detail("flow")).node.id;
    const document = {
      version: 2,
      nodes: [
        { id: "start", kind: "trigger", position: { x: 0, y: 0 }, label: "Start" },
        { id: "wait", kind: "wait", position: { x: 1, y: 0 }, label: "Wait", duration: 2 },
      ],
      edges: [
        { id: "e1", source: "start", target: "wait" },
        { id: "e2", source: "wait", target: "gone" },
      ],
    };
    const put = await server.call("PUT", `/api/v1/nodes/${flow}/content`, { key: ws.write, body: { content: { kind: "workflow", document } } });
    expect(put.body.status).toBe("merged");
    expect((await detail("flow")).document).toEqual({
      version: 2,
      nodes: [
        { id: "start", kind: "trigger", position: { x: 0, y: 0 }, label: "Start", description: "", eventName: "manual" },
        { id: "wait", kind: "wait", position: { x: 1, y: 0 }, label: "Wait", description: "", duration: 2, unit: "hours" },
      ],
      edges: [{ id: "e1", source: "start", target: "wait", label: "", outcome: "default" }],
      settings: { executionMode: "manual", concurrency: 1, timeoutMs: 30_000, errorPolicy: "stop" },
    });
    const bad = await server.call("PUT", `/api/v1/nodes/${flow}/content`, { key: ws.write, body: { content: { kind: "workflow", document: { nodes: [{ id: "x", kind: "teleport", position: { x: 0, y: 0 }, label: "X" }] } } } });
    expect(bad).toMatchObject({ status: 400, body: { error: "document.nodes[0].kind must be one of trigger, webhook, function, condition, wait, approval, action, end." } });
  });
});

describe("files and file trees", () => {
  test("a file node mounts an asset, which is then in use", async () => {
    const asset = await upload("notes.txt", "hello", "text/plain");
    const made = await server.call("POST", "/api/v1/files", { key: ws.write, body: { slug: "notes", name: "Notes", assetId: asset.id } });
    expect(made.body).toMatchObject({ materialized: true, node: { type: "file", slug: "notes" }, asset: { id: asset.id, fileName: "notes.txt", usageCount: 1 } });
    expect((await server.call("GET", `/api/v1/assets/${asset.id}`, { key: ws.read })).body.usages).toEqual([expect.objectContaining({ ownerType: "file_node", nodeId: made.body.node.id, path: null })]);
    expect((await server.call("DELETE", `/api/v1/assets/${asset.id}`, { key: ws.write })).body.reason).toBe("ASSET_IN_USE");
  });

  test("a skill starts with its seed files, honours .gitignore, and reads text inline and bytes by URL", async () => {
    const png = await upload("logo.png", "\x89PNG\r\n\x1a\n0000", "image/png");
    const made = await server.call("POST", "/api/v1/file-trees", {
      key: ws.write,
      body: {
        type: "skill",
        slug: "triage",
        name: "Triage",
        description: "Sorts the inbox",
        files: [
          { path: ".gitignore", content: "*.log\nbuild/\n" },
          { path: "scripts/run.sh", content: "echo run\n" },
          { path: "debug.log", content: "noise" },
          { path: "build/out.js", content: "x" },
          { path: "assets/logo.png", assetId: png.id },
        ],
      },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ materialized: true, entryFile: "SKILL.md", visibility: "private", version: "0.1.0", skippedGitignorePaths: ["debug.log", "build/out.js"] });
    expect(made.body.files.map((file: { path: string }) => file.path)).toEqual([".gitignore", "SKILL.md", "assets/logo.png", "scripts/run.sh", "skill.json"]);
    const id = made.body.node.id;
    const skillMd = (await server.call("GET", `/api/v1/file-trees/${id}/files/SKILL.md?type=skill`, { key: ws.read })).body;
    expect(skillMd).toMatchObject({ encoding: "utf8", path: "SKILL.md", assetUrl: null });
    expect(skillMd.content).toContain("name: triage");
    expect(skillMd.contentHash).toBe(sha(skillMd.content));
    const nested = (await server.call("GET", `/api/v1/file-trees/${id}/files/scripts/run.sh`, { key: ws.read })).body;
    expect(nested).toMatchObject({ encoding: "utf8", content: "echo run\n" });
    const logo = (await server.call("GET", `/api/v1/file-trees/${id}/files/assets/logo.png`, { key: ws.read })).body;
    expect(logo).toMatchObject({ encoding: "url", content: "", assetUrl: `/api/v1/assets/${png.id}/content` });
    expect((await server.call("GET", `/api/v1/file-trees/${id}/files/missing.md`, { key: ws.read })).body).toMatchObject({ code: "NOT_FOUND", error: "Skill file not found: missing.md" });
    expect((await server.call("GET", `/api/v1/file-trees/${id}/files?type=drive`, { key: ws.read })).status).toBe(404);
    expect((await server.call("GET", `/api/v1/nodes/${id}`, { key: ws.read })).body).toMatchObject({ type: "skill", entryFile: "SKILL.md", files: expect.any(Array) });

    const ignoredOnly = await server.call("POST", "/api/v1/file-trees", { key: ws.write, body: { type: "drive", slug: "d", name: "D", files: [{ path: ".gitignore", content: "*" }, { path: "a.txt", content: "a" }], mergeMode: "replace" } });
    expect(ignoredOnly.status).toBe(201);
    const allIgnored = await server.call("POST", "/api/v1/file-trees", { key: ws.write, body: { type: "drive", slug: "e", name: "E", files: [{ path: "x/.gitignore", content: "*" }] } });
    expect(allIgnored.status).toBe(201);
    for (const path of ["/etc/passwd", "a/../b", "./a", "a//b"]) {
      const refused = await server.call("POST", "/api/v1/file-trees", { key: ws.write, body: { type: "drive", slug: "f", name: "F", files: [{ path, content: "x" }] } });
      expect(refused.status).toBe(400);
    }
  });

  test("a tree's files change by change request, deletes wait for review, and a stale base hash is a conflict", async () => {
    const made = await server.call("POST", "/api/v1/file-trees", { key: ws.write, body: { type: "drive", slug: "handbook", name: "Handbook" } });
    const id = made.body.node.id;
    const readme = (await server.call("GET", `/api/v1/file-trees/${id}/files/README.md`, { key: ws.read })).body;
    expect(readme.content).toBe("# Handbook\n");

    const change = await server.call("POST", `/api/v1/file-trees/${id}/change-requests`, {
      key: ws.write,
      body: { operations: [{ kind: "update", path: "README.md", content: "# Handbook v2\n", baseContentHash: readme.contentHash }, { kind: "create", path: "docs/intro.md", content: "hi" }, { kind: "metadata_update", metadata: { version: "1.0.0" } }] },
    });
    expect(change.body).toMatchObject({ status: "merged", operations: [{ operation: "drive_file_update" }, { operation: "drive_file_create" }, { operation: "drive_metadata_update" }] });
    expect((await server.call("GET", `/api/v1/file-trees/${id}/files`, { key: ws.read })).body.map((file: { path: string }) => file.path)).toEqual(["README.md", "docs/intro.md"]);
    expect((await server.call("GET", `/api/v1/nodes/${id}`, { key: ws.read })).body.version).toBe("1.0.0");

    const stale = await server.call("POST", `/api/v1/file-trees/${id}/change-requests`, { key: ws.write, body: { operations: [{ kind: "update", path: "README.md", content: "lost", baseContentHash: readme.contentHash }] } });
    expect(stale).toMatchObject({ status: 409, body: { error: "Drive file changed before merge: README.md" } });
    expect((await server.call("GET", `/api/v1/file-trees/${id}/files/README.md`, { key: ws.read })).body.content).toBe("# Handbook v2\n");

    const refused = await server.call("POST", `/api/v1/file-trees/${id}/change-requests`, { key: ws.write, body: { autoMerge: true, operations: [{ kind: "delete", path: "docs/intro.md" }] } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toStartWith("`autoMerge: true` is not accepted here:");
    expect(refused.body.error).toContain("Split the deletes into their own change request");
    // Left out, the flag still leaves a delete waiting, even for a manage key.
    const deletion = await server.call("POST", `/api/v1/file-trees/${id}/change-requests`, { key: ws.manage, body: { operations: [{ kind: "delete", path: "docs/intro.md" }] } });
    expect(deletion.body.status).toBe("in_review");
    expect((await server.call("GET", `/api/v1/file-trees/${id}/files`, { key: ws.read })).body).toHaveLength(2);
    expect((await approveAndMerge(server, ws.write, deletion.body.id)).body.changeRequest.status).toBe("merged");
    expect((await server.call("GET", `/api/v1/file-trees/${id}/files`, { key: ws.read })).body).toHaveLength(1);
  });
});
