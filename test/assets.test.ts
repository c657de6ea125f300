import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { contentPath } from "../src/db/content-files";
import { dailyUpkeep } from "../src/jobs/schedule";
import { BUN, createBase, freePort, freshWorkspace, REPO, TestServer, tempDir, type Workspace, workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
beforeAll(async () => ({ server, ws } = await freshWorkspace({ deliveries: false })));
afterAll(() => server.stop());

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...Array.from({ length: 56 }, (_, i) => i)]);
const PDF = new TextEncoder().encode("%PDF-1.7\n% a small document\n");

const upload = (body: BodyInit, contentType: string | null, query = "", key = ws.write, target = server) =>
  fetch(`${target.url}/api/v1/assets${query}`, { method: "POST", headers: { authorization: `Bearer ${key}`, ...(contentType ? { "content-type": contentType } : {}) }, body }).then(async (response) => ({ status: response.status, body: await response.json() }));
const content = (id: string, headers: Record<string, string> = {}, key = ws.read) => fetch(`${server.url}/api/v1/assets/${id}/content`, { headers: { authorization: `Bearer ${key}`, ...headers } });

describe("assets", () => {
  test("a signed-in browser reads an attachment's bytes in the space it chose (its cookie), with no header; a key never uses the cookie", async () => {
    const { server: other, ws: mine } = await freshWorkspace({ deliveries: false });
    try {
      await other.space(mine.owner.id, "Elsewhere");
      const asset = (await other.call("POST", "/api/v1/assets?fileName=a.txt", { key: mine.write, space: "research", rawBody: "hello", headers: { "content-type": "text/plain" } })).body;
      const session = await other.signIn("ada@example.com");
      const read = (headers: Record<string, string>) => fetch(`${other.url}/api/v1/assets/${asset.id}/content`, { headers });
      // Two spaces and no header: which one is not guessed.
      expect((await read({ cookie: session.cookie })).status).toBe(400);
      const chosen = await read({ cookie: `${session.cookie}; basalt_space=research` });
      expect([chosen.status, await chosen.text()]).toEqual([200, "hello"]);
      expect((await read({ cookie: `${session.cookie}; basalt_space=elsewhere` })).status).toBe(404);
      expect((await read({ authorization: `Bearer ${mine.read}`, cookie: "basalt_space=research" })).status).toBe(400);
    } finally {
      await other.stop();
    }
  });

  test("one request stores the file once by its hash (0600) and serves it with its type, ETag and ranges", async () => {
    const made = await upload(PNG, "image/png", "?fileName=../../etc/logo.png");
    expect(made.status).toBe(201);
    const hash = String(made.body.contentHash).slice(7);
    expect(made.body).toMatchObject({ status: "ready", fileName: "logo.png", mimeType: "image/png", size: PNG.length, contentHash: `sha256:${new Bun.CryptoHasher("sha256").update(PNG).digest("hex")}`, url: `/api/v1/assets/${made.body.id}/content` });
    const path = contentPath(server.dir, hash);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const again = await upload(PNG, "image/png", "?fileName=copy.png");
    expect(again.body.id).not.toBe(made.body.id);
    expect(readdirSync(join(server.dir, "files", hash.slice(0, 2)))).toEqual([hash]);

    const whole = await content(made.body.id);
    expect(whole.status).toBe(200);
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(PNG);
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(whole.headers.get("content-disposition")).toStartWith('inline; filename="logo.png"');
    expect(whole.headers.get("x-content-type-options")).toBe("nosniff");
    const etag = whole.headers.get("etag")!;
    expect((await content(made.body.id, { "if-none-match": etag })).status).toBe(304);
    const part = await content(made.body.id, { range: "bytes=2-5" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 2-5/${PNG.length}`);
    expect([...new Uint8Array(await part.arrayBuffer())]).toEqual([...PNG.slice(2, 6)]);
    expect((await content(made.body.id, { range: "bytes=-4" })).headers.get("content-range")).toBe(`bytes ${PNG.length - 4}-${PNG.length - 1}/${PNG.length}`);
    const beyond = await content(made.body.id, { range: "bytes=9999-" });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get("content-range")).toBe(`bytes */${PNG.length}`);
  });

  test("a lying content type is served as bytes and downloaded; HTML never renders", async () => {
    const html = await upload("<script>alert(1)</script>", "image/png", "?fileName=evil.png");
    expect(html.body.mimeType).toBe("application/octet-stream");
    const page = await upload("<html><script>alert(1)</script></html>", "text/html", "?fileName=page.html");
    const served = await content(page.body.id);
    expect(served.headers.get("content-type")).toBe("text/html");
    expect(served.headers.get("content-disposition")).toStartWith("attachment;");
    expect(served.headers.get("content-security-policy")).toContain("sandbox");
    expect((await server.call("GET", `/api/v1/assets/${page.body.id}/content`, { key: ws.read })).status).toBe(200);
  });

  test("Busabase's upload: a URL, the bytes, a confirmation; a multipart upload for curl", async () => {
    const started = await server.call("POST", "/api/v1/assets/upload-urls", { key: ws.write, body: { fileName: "paper.pdf", mimeType: "application/pdf", size: PDF.length } });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ uploadUrl: `/api/v1/assets/${started.body.assetId}/upload`, method: "PUT" });
    const early = await server.call("POST", "/api/v1/assets/confirmations", { key: ws.write, body: { assetId: started.body.assetId } });
    expect([early.status, early.body.data?.reason]).toEqual([409, "ASSET_EMPTY"]);
    const other = await server.user("Hopper");
    const added = await server.call("POST", `/api/v1/spaces/${ws.space.id}/members`, { key: ws.manage, body: { email: "hopper@example.com", role: "editor" } });
    expect(added.status).toBe(201);
    const swapped = await fetch(`${server.url}${started.body.uploadUrl}`, { method: "PUT", headers: { authorization: `Bearer ${await server.key(other.id, "write")}`, "x-basalt-space": "research" }, body: "not the paper" });
    expect(swapped.status).toBe(403);
    const put = await fetch(`${server.url}${started.body.uploadUrl}`, { method: "PUT", headers: { authorization: `Bearer ${ws.write}`, "content-type": "application/pdf" }, body: PDF });
    expect(put.status).toBe(200);
    const confirmed = await server.call("POST", "/api/v1/assets/confirmations", { key: ws.write, body: { assetId: started.body.assetId } });
    expect(confirmed.body).toMatchObject({ status: "ready", mimeType: "application/pdf", size: PDF.length });
    const late = await fetch(`${server.url}${started.body.uploadUrl}`, { method: "PUT", headers: { authorization: `Bearer ${ws.write}` }, body: "other" });
    expect(late.status).toBe(409);

    const form = new FormData();
    form.append("file", new File([PDF], "../notes.pdf", { type: "application/pdf" }));
    const multipart = await upload(form, null);
    expect(multipart.body).toMatchObject({ fileName: "notes.pdf", mimeType: "application/pdf" });
    expect((await upload(PNG, "image/png", "", ws.read)).status).toBe(403);
  });

  test("Busabase's CLI upload: an absolute link that needs no key, a confirmation by storageKey, known bytes answered as a duplicate", async () => {
    const CLI_PDF = new TextEncoder().encode("%PDF-1.7\n% sent by Busabase's CLI\n");
    const hash = `sha256:${new Bun.CryptoHasher("sha256").update(CLI_PDF).digest("hex")}`;
    const ask = () => server.call("POST", "/api/v1/assets/upload-urls", { key: ws.write, body: { fileName: "cli.pdf", mimeType: "application/pdf", sizeBytes: CLI_PDF.length, context: "record-field", contentHash: hash } });
    const started = await ask();
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ duplicate: false, expiresIn: 3600, storageKey: `attachments/${started.body.assetId}`, publicUrl: `http://basalt.test/api/v1/assets/${started.body.assetId}/content` });
    expect(started.body.uploadUrl).toStartWith("http://basalt.test/api/v1/assets/uploads/");
    const link = new URL(started.body.uploadUrl).pathname;
    // The link carries its own authority: no key. Changed by one character, it is nothing.
    const forged = await fetch(`${server.url}${link.slice(0, -1)}${link.endsWith("A") ? "B" : "A"}`, { method: "PUT", body: CLI_PDF });
    expect(forged.status).toBe(404);
    const put = await fetch(`${server.url}${link}`, { method: "PUT", headers: { "content-type": "application/pdf" }, body: CLI_PDF });
    expect(put.status).toBe(200);
    const refused = await server.call("POST", "/api/v1/assets/confirmations", { key: ws.write, body: { storageKey: "attachments/../secret", fileName: "x", mimeType: "x", sizeBytes: 1 } });
    expect(refused.status).toBe(400);
    const confirmed = await server.call("POST", "/api/v1/assets/confirmations", { key: ws.write, body: { storageKey: started.body.storageKey, fileName: "cli.pdf", mimeType: "application/pdf", sizeBytes: CLI_PDF.length, contentHash: hash } });
    expect(confirmed.body).toMatchObject({ success: true, assetId: started.body.assetId, attachmentId: started.body.assetId, status: "ready", storageKey: started.body.storageKey });
    // The same bytes again: the asset the space has, nothing to upload.
    expect((await ask()).body).toMatchObject({ duplicate: true, assetId: started.body.assetId, uploadUrl: "", expiresIn: 0 });
    // A link an hour old no longer works.
    const later = await server.call("POST", "/api/v1/assets/upload-urls", { key: ws.write, body: { fileName: "late.pdf", mimeType: "application/pdf", sizeBytes: 5 } });
    server.clock.advance(3601_000);
    expect((await fetch(`${server.url}${new URL(later.body.uploadUrl).pathname}`, { method: "PUT", body: "bytes" })).status).toBe(404);
  });

  test("an attachment value names assets of the space, within the field's count, types and size", async () => {
    const image = (await upload(PNG, "image/png", "?fileName=cover.png")).body;
    const pdf = (await upload(PDF, "application/pdf", "?fileName=paper.pdf")).body;
    await createBase(server, ws.write, "gallery", [
      { slug: "title", name: "Title", type: "text" },
      { slug: "images", name: "Images", type: "attachment", options: { maxFiles: 1, allowedMimeTypes: ["image/*"] } },
    ]);
    const create = (fields: Record<string, unknown>) => server.call("POST", "/api/v1/bases/gallery/change-requests", { key: ws.write, body: { fields } });
    const made = await create({ title: "One", images: [{ id: image.id, fileName: "forged.exe", size: 1 }] });
    expect(made.status).toBe(201);
    expect(made.body.fields.images).toEqual([{ id: image.id, url: image.url, fileName: "cover.png", mimeType: "image/png", size: PNG.length }]);
    const exported = await server.call("GET", "/api/v1/bases/gallery/export?format=csv", { key: ws.read });
    expect(exported.text).toContain(",cover.png,");
    for (const [images, message] of [
      [[pdf.id], "this field takes image/*"],
      [[image.id, pdf.id], "at most 1 files"],
      [["ast_01NOSUCHASSET000"], "no asset of this space"],
      ["not a list", "must be a list of files"],
    ] as const) {
      const refused = await create({ title: "Bad", images });
      expect([refused.status, refused.body.error]).toEqual([400, expect.stringContaining(message)]);
    }
    const badOptions = await server.call("POST", "/api/v1/bases/gallery/fields/change-requests", { key: ws.write, body: { operation: "create", slug: "docs", name: "Docs", type: "attachment", options: { allowedMimeTypes: ["not a type"] } } });
    expect(badOptions.status).toBe(400);
  });

  test("Busabase's asset library: the list with usage counts, an asset with its usages, its metadata, and a delete refused while a record names it", async () => {
    const used = (await upload(new TextEncoder().encode("used by a record"), "text/plain", "?fileName=used.txt")).body;
    const spare = (await upload(new TextEncoder().encode("named by nothing"), "text/plain", "?fileName=spare.txt")).body;
    await createBase(server, ws.write, "library", [
      { slug: "title", name: "Title", type: "text" },
      { slug: "files", name: "Files", type: "attachment" },
    ]);
    const record = (await server.call("POST", "/api/v1/bases/library/change-requests", { key: ws.write, body: { fields: { title: "With a file", files: [used.id] } } })).body;
    const listed = (await server.call("GET", "/api/v1/assets", { key: ws.read })).body as { id: string; usageCount: number; name: string; contentKind: string }[];
    expect(listed[0].id).toBe(spare.id);
    expect(listed.find((asset) => asset.id === used.id)).toMatchObject({ usageCount: 1, name: "used.txt", contentKind: "text", textStatus: "present", metadata: {} });
    const detail = (await server.call("GET", `/api/v1/assets/${used.id}`, { key: ws.read })).body;
    expect(detail).toMatchObject({ id: used.id, asset: { id: used.id, usageCount: 1 }, usages: [{ ownerType: "base", nodeSlug: "library", recordId: record.id, fieldSlug: "files" }] });
    const merged = await server.call("PATCH", `/api/v1/assets/${used.id}/metadata`, { key: ws.write, body: { metadata: { source: "scan", pages: 2 } } });
    expect(merged.body.asset.metadata).toEqual({ source: "scan", pages: 2 });
    expect((await server.call("PATCH", `/api/v1/assets/${used.id}/metadata`, { key: ws.write, body: { metadata: { pages: 3 } } })).body.metadata).toEqual({ source: "scan", pages: 3 });
    expect((await server.call("PATCH", `/api/v1/assets/${used.id}/metadata`, { key: ws.write, body: { metadata: { only: true }, mode: "replace" } })).body.metadata).toEqual({ only: true });
    expect((await server.call("PATCH", `/api/v1/assets/${used.id}/metadata`, { key: ws.read, body: { metadata: {} } })).status).toBe(403);
    const refused = await server.call("DELETE", `/api/v1/assets/${used.id}`, { key: ws.write });
    expect([refused.status, refused.body.reason]).toEqual([409, "ASSET_IN_USE"]);
    // Busabase's asset text: a text file's is its own bytes (no separate download); a file of another kind has none.
    expect((await server.call("GET", `/api/v1/dump/export/asset-texts/${used.id}/content`, { key: ws.manage })).body).toEqual({ assetId: used.id, textStorageKey: "", downloadUrl: null, textContentHash: used.contentHash, byteCount: used.size });
    const binary = (await upload(PNG, "image/png", "?fileName=dot.png")).body;
    const none = await server.call("GET", `/api/v1/dump/export/asset-texts/${binary.id}/content`, { key: ws.manage });
    expect([none.status, none.body.error]).toEqual([404, `Asset text not found: ${binary.id}`]);
    expect((await server.call("DELETE", `/api/v1/assets/${spare.id}`, { key: ws.write })).body).toEqual({ deleted: true });
    expect((await server.call("GET", `/api/v1/assets/${spare.id}`, { key: ws.read })).status).toBe(404);
  });

  test("another space's keys neither read an asset nor attach it", async () => {
    const image = (await upload(PNG, "image/png", "?fileName=private.png")).body;
    const grace = await server.user("Grace");
    await server.space(grace.id, "Elsewhere");
    const outsider = await server.key(grace.id, "write");
    expect((await content(image.id, {}, outsider)).status).toBe(404);
    expect((await server.call("GET", `/api/v1/assets/${image.id}`, { key: outsider })).status).toBe(404);
    await createBase(server, outsider, "theirs", [{ slug: "files", name: "Files", type: "attachment" }]);
    const stolen = await server.call("POST", "/api/v1/bases/theirs/change-requests", { key: outsider, body: { fields: { files: [image.id] } } });
    expect([stolen.status, stolen.body.error]).toEqual([400, expect.stringContaining("no asset of this space")]);
  });

  test("the daily upkeep removes, after a day, the assets nothing names and the files no asset holds", async () => {
    const keeper = new TestServer({ deliveries: false });
    try {
      const own = await workspace(keeper);
      await createBase(keeper, own.write, "album", [{ slug: "photos", name: "Photos", type: "attachment" }]);
      const send = (bytes: Uint8Array<ArrayBuffer>, key = own.write) => upload(bytes, "application/octet-stream", "", key, keeper).then((reply) => reply.body);
      const attached = await send(new Uint8Array([1, 2, 3]));
      const twin = await send(new Uint8Array([1, 2, 3]));
      const loose = await send(new Uint8Array([4, 5, 6]));
      const proposed = await send(new Uint8Array([7, 8, 9]));
      await keeper.call("POST", "/api/v1/bases/album/change-requests", { key: own.write, body: { fields: { photos: [attached.id] } } });
      const waiting = await keeper.call("POST", "/api/v1/bases/album/change-requests", { key: own.propose, body: { fields: { photos: [proposed.id] } } });
      expect(waiting.body.status).toBe("in_review");
      keeper.clock.advance(2 * 24 * 3600 * 1000);
      const fresh = await send(new Uint8Array([10, 11]));
      await dailyUpkeep(keeper.ctx);
      const left = (keeper.ctx.store.sqlite.query("SELECT id FROM assets ORDER BY id").all() as { id: string }[]).map((row) => row.id);
      expect(left).toEqual([attached.id, proposed.id, fresh.id].sort());
      const stored = (asset: { contentHash: string }) => existsSync(contentPath(keeper.dir, asset.contentHash.slice(7)));
      expect([stored(attached), stored(loose), stored(proposed)]).toEqual([true, false, true]);
      expect(twin.contentHash).toBe(attached.contentHash);
    } finally {
      await keeper.stop();
    }
  });

  test("basalt backup carries the files beside the database, and a restored backup serves every one", async () => {
    const image = (await upload(PNG, "image/png", "?fileName=kept.png")).body;
    const out = join(tempDir(), "backup.db");
    const basalt = (...args: string[]) => Bun.spawnSync([BUN, join(REPO, "src/main.ts"), ...args]);
    const backup = basalt("backup", "--out", out, "--data-dir", server.dir);
    expect(backup.exitCode).toBe(0);
    expect(backup.stdout.toString()).toContain(`${out}.files`);
    const restored = tempDir();
    expect(basalt("restore", "--from", out, "--data-dir", restored).exitCode).toBe(0);
    const port = await freePort();
    const child = Bun.spawn([BUN, join(REPO, "src/main.ts"), "serve", "--port", String(port), "--data-dir", restored], { stdout: "ignore", stderr: "ignore" });
    try {
      for (let tries = 0; tries < 200; tries++) {
        if (await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.ok, () => false)) break;
        await Bun.sleep(25);
      }
      const ids = (server.ctx.store.sqlite.query("SELECT id FROM assets WHERE status = 'ready'").all() as { id: string }[]).map((row) => row.id);
      expect(ids).toContain(image.id);
      for (const id of ids) {
        const served = await fetch(`http://127.0.0.1:${port}/api/v1/assets/${id}/content`, { headers: { authorization: `Bearer ${ws.read}` } });
        expect([id, served.status]).toEqual([id, 200]);
      }
      const same = await fetch(`http://127.0.0.1:${port}${image.url}`, { headers: { authorization: `Bearer ${ws.read}` } });
      expect(new Uint8Array(await same.arrayBuffer())).toEqual(PNG);
    } finally {
      child.kill();
      await child.exited;
      rmSync(restored, { recursive: true, force: true });
      rmSync(dirname(out), { recursive: true, force: true });
    }
  });

  test("a file past --max-file is 413, announced or streamed, and leaves nothing behind", async () => {
    const small = new TestServer({ deliveries: false, flags: { "max-file": "1kb" } });
    try {
      const key = (await workspace(small)).write;
      const big = new Uint8Array(4096);
      expect((await upload(big, "application/octet-stream", "", key, small)).status).toBe(413);
      const streamed = await upload(new ReadableStream({ start: (controller) => (controller.enqueue(big), controller.close()) }), "application/octet-stream", "", key, small);
      expect([streamed.status, streamed.body.error]).toEqual([413, expect.stringContaining("--max-file")]);
      expect(readdirSync(join(small.dir, "files", "tmp"))).toEqual([]);
      expect(small.ctx.store.sqlite.query("SELECT count(*) AS n FROM assets").get()).toEqual({ n: 0 });
    } finally {
      await small.stop();
    }
  });
});
