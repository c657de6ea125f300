import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

/**
 * A full disk while an upload or an import is written is a 507 like every other write's, with
 * nothing half-written left (issue 35, item 12). The store's files sit on a real 1 MB file system
 * (tmpfs, mounted as root, as CI runs); the database stays where it is.
 */
let server: TestServer;
let ws: Workspace;
let files: string;
const mounted = () => Bun.spawnSync(["mountpoint", "-q", files]).exitCode === 0;

beforeAll(async () => {
  ({ server, ws } = await freshWorkspace({ deliveries: false }));
  await createBase(server, ws.write, "notes", [{ slug: "title", name: "Title", type: "text" }]);
  files = join(server.dir, "files");
  mkdirSync(files, { recursive: true, mode: 0o700 });
  const mount = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", files]);
  if (mount.exitCode !== 0) throw new Error(`this test mounts a 1 MB tmpfs and needs root: ${mount.stderr.toString()}`);
});
afterAll(async () => {
  if (mounted()) Bun.spawnSync(["umount", files]);
  await server.stop();
});

const leftovers = () => readdirSync(join(files, "tmp"));
const post = (path: string, body: Uint8Array<ArrayBuffer> | string, contentType: string) =>
  fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${ws.write}`, "content-type": contentType }, body }).then(async (response) => ({ status: response.status, body: await response.json() }));

test("an upload that fills the disk answers 507 and leaves no partial file; a smaller one then succeeds", async () => {
  const full = await post("/api/v1/assets?fileName=big.bin", new Uint8Array(3 * 1024 * 1024).fill(7), "application/octet-stream");
  expect([full.status, full.body.code]).toEqual([507, "INSUFFICIENT_STORAGE"]);
  expect(leftovers()).toEqual([]);
  expect(server.ctx.store.sqlite.query("SELECT count(*) AS n FROM assets").get()).toEqual({ n: 0 });
  const small = await post("/api/v1/assets?fileName=small.bin", new Uint8Array(64 * 1024).fill(1), "application/octet-stream");
  expect(small.status).toBe(201);
});

test("an import that fills the disk answers 507, imports nothing and leaves no spool", async () => {
  const csv = `title\n${Array.from({ length: 40_000 }, (_, i) => `A note of some length, number ${i}`).join("\n")}\n`;
  const full = await post("/api/v1/bases/notes/imports", csv, "text/csv");
  expect([full.status, full.body.code]).toEqual([507, "INSUFFICIENT_STORAGE"]);
  expect(leftovers()).toEqual([]);
  expect((await server.call("GET", "/api/v1/records/count?baseId=notes", { key: ws.read })).body.total).toBe(0);
});
