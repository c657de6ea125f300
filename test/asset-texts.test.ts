import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { TestServer, freshWorkspace, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeEach(async () => ({ server, ws } = await freshWorkspace()));
afterEach(() => server.stop());

const sha = (text: string | Uint8Array) => `sha256:${new Bun.CryptoHasher("sha256").update(text).digest("hex")}`;
const upload = async (name: string, body: string | Uint8Array, type: string) =>
  (await server.call("POST", `/api/v1/assets?fileName=${name}`, { key: ws.write, rawBody: body as string, headers: { "content-type": type } })).body;

describe("downloads in Busabase's form", () => {
  test("a Busabase client reading content gets a descriptor whose link reads the bytes without a key; anyone else gets the bytes", async () => {
    const asset = await upload("notes.txt", "hello", "text/plain");
    const bytes = await fetch(`${server.url}/api/v1/assets/${asset.id}/content`, { headers: { authorization: `Bearer ${ws.read}` } });
    expect(await bytes.text()).toBe("hello");
    const busabase = await server.call("GET", `/api/v1/assets/${asset.id}/content`, { key: ws.read, headers: { "x-busabase-space": ws.space.id } });
    expect(busabase.body).toEqual({ assetId: asset.id, downloadUrl: expect.stringContaining("/api/v1/assets/downloads/"), fileName: "notes.txt", mimeType: "text/plain", size: 5, contentHash: sha("hello") });
    const asked = await server.call("GET", `/api/v1/assets/${asset.id}/content`, { key: ws.read, headers: { accept: "application/json" } });
    expect(asked.body.assetId).toBe(asset.id);
    const link = new URL(busabase.body.downloadUrl);
    const anonymous = await fetch(`${server.url}${link.pathname}`);
    expect([anonymous.status, await anonymous.text()]).toEqual([200, "hello"]);
    const forged = await fetch(`${server.url}${link.pathname.replace(/.$/, (c) => (c === "A" ? "B" : "A"))}`);
    expect(forged.status).toBe(404);
    server.clock.advance(3601_000);
    expect((await fetch(`${server.url}${link.pathname}`)).status).toBe(404);
  });
});

describe("asset texts", () => {
  test("a text file's text is its bytes; a set text replaces it for lines; none leaves no lines", async () => {
    const notes = await upload("notes.md", "one\ntwo\nthree\n", "text/markdown");
    expect((await server.call("GET", `/api/v1/assets/${notes.id}/text/lines?startLine=2&endLine=3`, { key: ws.read })).body).toEqual({ lines: ["two", "three"], startLine: 2, endLine: 3, totalLines: 3, truncated: false });
    const png = await upload("scan.png", "\x89PNG\r\n\x1a\n0000", "image/png");
    expect((await server.call("GET", `/api/v1/assets/${png.id}/text/lines`, { key: ws.read })).body.error).toBe("Asset has no readable text (status: missing).");
    const written = await server.call("PUT", `/api/v1/assets/${png.id}/text`, { key: ws.write, body: { text: "scanned words\nsecond line" } });
    expect(written.body).toEqual({ assetId: png.id, textStatus: "present", lineCount: 2, charCount: 25, byteCount: 25 });
    expect((await server.call("GET", `/api/v1/assets/${png.id}/text/lines`, { key: ws.read })).body.lines).toEqual(["scanned words", "second line"]);
    expect((await server.call("GET", `/api/v1/assets/${png.id}`, { key: ws.read })).body.textStatus).toBe("present");
    expect((await server.call("PUT", `/api/v1/assets/${png.id}/text`, { key: ws.write, body: { none: true } })).body).toMatchObject({ textStatus: "none", lineCount: 0 });
    expect((await server.call("GET", `/api/v1/assets/${png.id}/text/lines`, { key: ws.read })).body.error).toBe("Asset has no readable text (status: none).");
    expect((await server.call("GET", "/api/v1/assets", { key: ws.read })).body.find((a: { id: string }) => a.id === png.id).textStatus).toBe("none");
    for (const body of [{}, { text: "a", none: true }]) expect((await server.call("PUT", `/api/v1/assets/${png.id}/text`, { key: ws.write, body })).body.error).toBe("putText requires exactly one of: text, storageKey, or none.");
    expect((await server.call("PUT", `/api/v1/assets/${png.id}/text`, { key: ws.read, body: { none: true } })).status).toBe(403);
    const audit = (await server.call("GET", "/api/v1/audit-events", { key: ws.manage })).body;
    expect(JSON.stringify(audit)).toContain("asset.text_marked_none");
  });

  test("a large text is uploaded to a link of its own first, and named by its storageKey", async () => {
    const pdf = await upload("paper.pdf", "%PDF-1.4 ...", "application/pdf");
    const text = "page one\npage two\n";
    const link = (await server.call("POST", "/api/v1/assets/text/upload-urls", { key: ws.write, body: { assetId: pdf.id, sizeBytes: text.length } })).body;
    expect(link.storageKey).toMatch(/^asset-texts\/pending\/ast_\w+\.txt$/);
    expect(link.expiresIn).toBe(3600);
    expect((await fetch(`${server.url}${new URL(link.uploadUrl).pathname}`, { method: "PUT", body: text, headers: { "content-type": "text/plain; charset=utf-8" } })).status).toBe(200);
    const wrong = await server.call("PUT", `/api/v1/assets/${pdf.id}/text`, { key: ws.write, body: { storageKey: link.storageKey, contentHash: sha("other") } });
    expect(wrong.body.error).toBe("Claimed contentHash does not match the actual bytes.");
    const put = await server.call("PUT", `/api/v1/assets/${pdf.id}/text`, { key: ws.write, body: { storageKey: link.storageKey, contentHash: sha(text) } });
    expect(put.body).toMatchObject({ textStatus: "present", lineCount: 2 });
    expect((await server.call("GET", `/api/v1/assets/${pdf.id}/text/lines`, { key: ws.read })).body.lines).toEqual(["page one", "page two"]);
    // The temporary upload is gone once its text is kept.
    expect((await server.call("GET", "/api/v1/assets", { key: ws.read })).body.map((a: { id: string }) => a.id)).toEqual([pdf.id]);
    expect((await server.call("PUT", `/api/v1/assets/${pdf.id}/text`, { key: ws.write, body: { storageKey: "attachments/x" } })).status).toBe(400);
  });
});

describe("editing a mounted file's content", () => {
  test("replacements in a drive's file wait for review, then change the file; conflicts and bad edits are refused", async () => {
    const drive = await server.call("POST", "/api/v1/file-trees", { key: ws.write, body: { type: "drive", slug: "handbook", name: "Handbook", files: [{ path: "guide.md", content: "Hello world. Hello again.\n" }] } });
    const file = drive.body.files.find((f: { path: string }) => f.path === "guide.md");
    const edit = (edits: unknown[], extra: Record<string, unknown> = {}) => server.call("POST", `/api/v1/assets/${file.assetId}/edit-content`, { key: ws.write, body: { edits, ...extra } });
    expect((await edit([{ oldString: "Hello", newString: "Hi" }])).body.error).toBe("Edit 1: oldString matches 2 times; either make it unique or set replaceAll: true.");
    expect((await edit([{ oldString: "Bye", newString: "Hi" }])).body.error).toBe("Edit 1: oldString was not found.");
    expect((await edit([{ oldString: "Hello", newString: "Hello" }])).status).toBe(400);
    expect((await edit([{ oldString: "Hello", newString: "Hi", replaceAll: true }], { autoMerge: true })).body.error).toStartWith("`autoMerge: true` is not accepted here: editContent rewrites");
    const proposed = await edit([{ oldString: "Hello", newString: "Hi", replaceAll: true }]);
    expect(proposed.body).toMatchObject({ status: "in_review", operations: [{ operation: "drive_file_update", status: "pending" }] });
    await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    expect((await server.call("POST", `/api/v1/change-requests/${proposed.body.id}/merge`, { key: ws.write })).status).toBe(200);
    expect((await server.call("GET", `/api/v1/file-trees/${drive.body.node.id}/files/guide.md`, { key: ws.read })).body.content).toBe("Hi world. Hi again.\n");

    // The file is another asset now: the one edited before is mounted nowhere.
    expect((await edit([{ oldString: "Hi", newString: "Howdy" }])).body.error).toBe("Asset is not mounted in an editable Drive or Skill location.");
    const loose = await upload("loose.txt", "x", "text/plain");
    expect((await server.call("POST", `/api/v1/assets/${loose.id}/edit-content`, { key: ws.write, body: { edits: [{ oldString: "x", newString: "y" }] } })).body.error).toBe("Asset is not mounted in an editable Drive or Skill location.");
  });
});
