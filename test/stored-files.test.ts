import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { contentPath, filesDir, tmpDir } from "../src/db/content-files";
import { dailyUpkeep } from "../src/jobs/schedule";
import { freshWorkspace, type TestServer, type Workspace } from "./helpers";

/**
 * Bytes nothing names any more are removed once the write that unnamed them commits; what a crash
 * leaves is swept by the daily upkeep (and when `serve` starts). Issue 35, item 8.
 */
let server: TestServer;
let ws: Workspace;
beforeAll(async () => ({ server, ws } = await freshWorkspace({ deliveries: false })));
afterAll(() => server.stop());

const sha256 = (bytes: string) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
const put = (path: string, body: string, key = ws.write, space?: string) =>
  fetch(`${server.url}${path}`, { method: "PUT", headers: { authorization: `Bearer ${key}`, "content-type": "text/plain", ...(space ? { "x-basalt-space": space } : {}) }, body });
const upload = (body: string, key = ws.write, space?: string) =>
  fetch(`${server.url}/api/v1/assets?fileName=a.txt`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "text/plain", ...(space ? { "x-basalt-space": space } : {}) }, body }).then((response) => response.json());

test("bytes replaced by a second upload are removed when it commits; bytes another asset names stay", async () => {
  const started = (await server.call("POST", "/api/v1/assets/upload-urls", { key: ws.write, body: { fileName: "draft.txt", mimeType: "text/plain", size: 5 } })).body;
  expect((await put(started.uploadUrl, "first draft")).status).toBe(200);
  expect(existsSync(contentPath(server.dir, sha256("first draft")))).toBe(true);
  expect((await put(started.uploadUrl, "second draft")).status).toBe(200);
  expect(existsSync(contentPath(server.dir, sha256("first draft")))).toBe(false);
  expect(existsSync(contentPath(server.dir, sha256("second draft")))).toBe(true);
  // The same bytes named twice: replacing one name leaves them to the other.
  await upload("shared bytes");
  const again = (await server.call("POST", "/api/v1/assets/upload-urls", { key: ws.write, body: { fileName: "b.txt", mimeType: "text/plain", size: 5 } })).body;
  await put(again.uploadUrl, "shared bytes");
  await put(again.uploadUrl, "its own bytes");
  expect(existsSync(contentPath(server.dir, sha256("shared bytes")))).toBe(true);
});

test("every file of a deleted space is removed when the delete commits; another space's copy of the same bytes stays", async () => {
  const owner = await server.user("Temporary");
  const space = await server.space(owner.id, "Short lived");
  const key = await server.key(owner.id, "manage");
  const mine = await upload("only in the short-lived space", key, space.slug);
  const both = await upload("in both spaces", key, space.slug);
  await upload("in both spaces");
  expect(mine.id).toBeString();
  expect(both.id).toBeString();
  const session = await server.signIn(owner.email);
  expect((await server.call("DELETE", `/api/v1/spaces/${space.id}`, { session, body: { confirm: space.slug } })).status).toBe(200);
  expect(existsSync(contentPath(server.dir, sha256("only in the short-lived space")))).toBe(false);
  expect(existsSync(contentPath(server.dir, sha256("in both spaces")))).toBe(true);
});

test("the daily upkeep sweeps what a crash left: temporary files and unnamed files over an hour old, never newer ones", async () => {
  mkdirSync(tmpDir(server.dir), { recursive: true });
  const hourAgo = (Date.now() - 2 * 3600_000) / 1000;
  const leftTemp = join(tmpDir(server.dir), "cut-short-upload");
  writeFileSync(leftTemp, "half an upload");
  utimesSync(leftTemp, hourAgo, hourAgo);
  const freshTemp = join(tmpDir(server.dir), "upload-in-flight");
  writeFileSync(freshTemp, "arriving");
  const orphan = sha256("bytes whose row never committed");
  mkdirSync(join(filesDir(server.dir), orphan.slice(0, 2)), { recursive: true });
  writeFileSync(contentPath(server.dir, orphan), "bytes whose row never committed");
  utimesSync(contentPath(server.dir, orphan), hourAgo, hourAgo);
  const named = sha256("second draft");
  utimesSync(contentPath(server.dir, named), hourAgo, hourAgo);
  await dailyUpkeep(server.ctx);
  expect(readdirSync(tmpDir(server.dir))).toEqual(["upload-in-flight"]);
  expect(existsSync(contentPath(server.dir, orphan))).toBe(false);
  expect(existsSync(contentPath(server.dir, named))).toBe(true);
});
