import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BUN, freshWorkspace, REPO, type TestServer, tempDir, type Workspace } from "./helpers";

/** Installing a Busabase package (contract §2.13): planned, then installed from an archive or GitHub. */

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const json = (value: unknown) => JSON.stringify(value, null, 2);
const lines = (records: unknown[]) => records.map((record) => JSON.stringify(record)).join("\n");

/** A package as `busabase-cli export` writes one: two linked bases in a folder, a doc with an image, a skill and a file. */
const PACKAGE: Record<string, string | Uint8Array> = {
  "busabase.json": json({ format: "busabase-package@1", name: "Blog kit", description: "A blog with its authors", version: "1.2.0", author: "Acme" }),
  "content/cms/_folder.json": json({ name: "CMS", position: 1 }),
  "content/cms/posts/base.json": json({
    name: "Posts",
    fields: [
      { slug: "title", name: "Title", type: "text", required: true, position: 0, options: {} },
      { slug: "status", name: "Status", type: "select", position: 1, options: { choices: [{ id: "chc_draft", name: "Draft", color: "gray" }, { id: "chc_live", name: "Live", color: "neon" }] } },
      { slug: "author", name: "Author", type: "relation", position: 2, options: { targetBaseSlug: "authors", inverseFieldSlug: "posts", multiple: false } },
      { slug: "author_name", name: "Author name", type: "lookup", position: 3, options: { lookup: { relationFieldSlug: "author", targetFieldSlug: "name" } } },
      { slug: "shout", name: "Shout", type: "formula", position: 4, options: { formula: { expression: "UPPER({title})" } } },
      { slug: "summary", name: "Summary", type: "ai_summary", position: 5, options: {} },
    ],
    views: [{ slug: "live", name: "Live posts", config: { filters: [{ fieldSlug: "status", operator: "equals", value: "Live" }], sorts: [{ fieldSlug: "title", direction: "asc" }] } }],
  }),
  "content/cms/posts/records.ndjson": lines([
    { key: "rec_p1", fields: { title: "Hello world", status: "chc_live", author: "rec_a1", author_name: ["stale"], summary: "x" } },
    { key: "rec_p2", fields: { title: "Second post", status: "Draft", author: "rec_a2" } },
    { key: "rec_p3", fields: { title: "Orphan", author: "rec_gone" } },
  ]),
  "content/cms/authors/base.json": json({
    name: "Authors",
    fields: [
      { slug: "name", name: "Name", type: "text", position: 0, options: {} },
      { slug: "posts", name: "Their posts", type: "relation", position: 1, options: { targetBaseSlug: "posts", inverseFieldSlug: "author" } },
    ],
  }),
  "content/cms/authors/records.ndjson": lines([
    { key: "rec_a1", fields: { name: "Ada", posts: ["rec_p1"] } },
    { key: "rec_a2", fields: { name: "Grace" } },
  ]),
  "content/welcome.md": "---\nname: Welcome\ndescription: Start here\n---\n\n# Welcome\n\n![diagram](/api/assets/ast_old1/raw)\n",
  "assets/ast_old1.png": PNG,
  "assets/ast_old1.png.asset.json": json({ assetId: "ast_old1", fileName: "diagram.png", mimeType: "image/png" }),
  "content/editorial/_node.json": json({ type: "skill", name: "Editorial review" }),
  "content/editorial/SKILL.md": "---\nname: editorial\n---\n\nReview posts.\n",
  "content/editorial/scripts/check.py": "print('ok')\n",
  "content/logo.png": PNG,
  "content/logo.png.node.json": json({ name: "Logo" }),
};

const tarball = async (files: Record<string, string | Uint8Array>, top = "") =>
  Bun.gzipSync(await new Bun.Archive(Object.fromEntries(Object.entries(files).map(([path, body]) => [`${top}${path}`, body]))).bytes());

let server: TestServer | undefined;
let ws: Workspace;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const archive = (path: string, body: Uint8Array, key: string, query = "") => server!.call("POST", `/api/v1/install/archive${path}${query}`, { key, rawBody: body, headers: { "content-type": "application/gzip" } });
const recordsOf = async (base: string) => (await server!.call("GET", `/api/v1/records?baseId=${base}&limit=100`, { key: ws.read })).body.records as { id: string; fields: Record<string, unknown> }[];

describe("install from an uploaded archive", () => {
  test("the plan outlines the package, counts it, and says links need autoMerge; it writes nothing", async () => {
    ({ server, ws } = await freshWorkspace());
    const plan = await archive("/plan", await tarball(PACKAGE, "blog-kit/"), ws.read);
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({
      package: { name: "Blog kit", description: "A blog with its authors", version: "1.2.0", author: "Acme" },
      source: { archive: "upload" },
      targetFolderSlug: "blog-kit",
      counts: { folders: 1, docs: 1, bases: 2, records: 5, skills: 1, airapps: 0, drives: 0, files: 4 },
      collisions: [],
      requiresAutoMerge: true,
      applicable: false,
    });
    expect(plan.body.nodes).toContainEqual({ path: "cms/posts", slug: "posts", name: "Posts", type: "base", depth: 1, fieldCount: 6, recordCount: 3 });
    expect(plan.body.nodes).toContainEqual({ path: "editorial", slug: "editorial", name: "Editorial review", type: "skill", depth: 0, fileCount: 2 });
    expect(plan.body.warnings).toContain('blog-kit/cms/posts: the field "summary" is of type ai_summary, which Basalt does not have; it is left out.'.replace("blog-kit/", ""));
    expect((await server!.call("GET", "/api/v1/nodes", { key: ws.read })).body).toEqual([]);
    expect((await archive("", await tarball(PACKAGE), ws.manage)).body).toMatchObject({ reason: "INSTALL_NOT_APPLICABLE" });
    expect((await server!.call("GET", "/api/v1/nodes", { key: ws.read })).body).toEqual([]);
  });

  test("with autoMerge everything lands: fields of both sides of a link, lookups, formulas, views, records with their links, a doc naming its image, a skill and a file", async () => {
    ({ server, ws } = await freshWorkspace());
    const done = await archive("", await tarball(PACKAGE), ws.manage, "?autoMerge=true");
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ targetFolderSlug: "blog-kit", created: { folders: 2, docs: 1, bases: 2, views: 1, records: 5, fileTreeNodes: 1, files: 4 }, pendingChangeRequests: 0 });
    expect(done.body.warnings).toContain('posts: record "rec_p3" links 1 record(s) the package does not hold; those links are left out.');

    const posts = (await server!.call("GET", "/api/v1/bases/posts", { key: ws.read })).body;
    expect(posts.fields.map((field: { slug: string; type: string }) => `${field.slug}:${field.type}`)).toEqual(["title:text", "status:select", "author:relation", "author_name:lookup", "shout:formula"]);
    const authors = (await server!.call("GET", "/api/v1/bases/authors", { key: ws.read })).body;
    expect(authors.fields.map((field: { name: string; type: string }) => `${field.name}:${field.type}`)).toEqual(["Name:text", "Their posts:relation"]);

    const rows = await recordsOf("posts");
    const hello = rows.find((row) => row.fields.title === "Hello world")!;
    expect(hello.fields).toMatchObject({ status: "Live", shout: "HELLO WORLD", author_name: ["Ada"] });
    const ada = (await recordsOf("authors")).find((row) => row.fields.name === "Ada")!;
    expect(hello.fields.author).toBe(ada.id);
    expect(Object.values(ada.fields).flat()).toContain(hello.id);

    const views = (await server!.call("GET", `/api/v1/bases/${posts.id}/views`, { key: ws.read })).body;
    expect(views.map((view: { slug: string }) => view.slug)).toContain("live");

    const tree = (await server!.call("GET", "/api/v1/nodes", { key: ws.read })).body;
    expect(tree.map((node: { slug: string; type: string }) => `${node.slug}:${node.type}`)).toEqual(["blog-kit:folder"]);
    const inside = tree[0].children.map((node: { slug: string; type: string }) => `${node.slug}:${node.type}`).sort();
    expect(inside).toEqual(["cms:folder", "editorial:skill", "logo:file", "welcome:doc"]);
    const welcome = tree[0].children.find((node: { slug: string }) => node.slug === "welcome");
    const doc = (await server!.call("GET", `/api/v1/nodes/${welcome.id}?type=doc`, { key: ws.read })).body;
    expect(doc.body).toMatch(/^# Welcome\n\n!\[diagram\]\(\/api\/v1\/assets\/ast_[0-9A-Za-z]+\/content\)$/);
    const image = await fetch(server!.url + doc.body.match(/\((.*)\)/)[1], { headers: { authorization: `Bearer ${ws.read}` } });
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(PNG);
    const skill = tree[0].children.find((node: { slug: string }) => node.slug === "editorial");
    const files = (await server!.call("GET", `/api/v1/file-trees/${skill.id}/files`, { key: ws.read })).body;
    expect(JSON.stringify(files)).toContain("scripts/check.py");
  });

  test("taken slugs refuse the install unless rename makes them free; without autoMerge the content waits for review", async () => {
    ({ server, ws } = await freshWorkspace());
    const { "content/cms/posts/records.ndjson": _, "content/cms/authors/records.ndjson": __, ...unlinked } = PACKAGE;
    expect((await archive("", await tarball(unlinked), ws.manage)).status).toBe(200);

    const again = await archive("/plan", await tarball(unlinked), ws.read);
    const bySlug = (a: { slug: string }, b: { slug: string }) => a.slug.localeCompare(b.slug);
    expect(again.body.collisions.sort(bySlug)).toEqual(
      [
        { kind: "base", slug: "posts", path: "blog-kit/cms/posts" },
        { kind: "base", slug: "authors", path: "blog-kit/cms/authors" },
        { kind: "node", slug: "cms", path: "blog-kit/cms" },
      ].sort(bySlug),
    );
    // The doc, the skill and the file of the first install wait for review: they take no slug yet.
    expect(again.body.applicable).toBe(false);
    const refused = await archive("", await tarball(unlinked), ws.manage);
    expect(refused).toMatchObject({ status: 409, body: { reason: "INSTALL_NOT_APPLICABLE" } });
    expect(refused.body.error).toContain("posts (base)");

    const renamed = await archive("", await tarball(unlinked), ws.manage, "?rename=true&intoFolder=kit-two");
    expect(renamed.status).toBe(200);
    expect(renamed.body.pendingChangeRequests).toBe(3);
    const posts2 = (await server!.call("GET", "/api/v1/bases/posts-2", { key: ws.read })).body;
    expect(posts2.fields.find((field: { slug: string }) => field.slug === "author").options.targetBaseId).toBe((await server!.call("GET", "/api/v1/bases/authors-2", { key: ws.read })).body.id);
    const inbox = (await server!.call("GET", "/api/v1/change-requests?status=in_review", { key: ws.read })).body;
    expect(JSON.stringify(inbox)).toContain("Install: Welcome");
  });

  test("a read key plans but may not install; a bad archive, a foreign format and an inflating bomb are refused with nothing made", async () => {
    ({ server, ws } = await freshWorkspace());
    expect((await archive("", await tarball(PACKAGE), ws.write, "?autoMerge=true")).status).toBe(403);
    expect((await archive("/plan", new TextEncoder().encode("not an archive"), ws.read)).body).toMatchObject({ code: "BAD_REQUEST", error: "The body is not a .tar or .tar.gz archive." });
    const foreign = await archive("/plan", await tarball({ ...PACKAGE, "busabase.json": json({ format: "busabase-package@9", name: "x" }) }), ws.read);
    expect(foreign.body.error).toContain('declares the format "busabase-package@9"');
    const badSlug = await archive("/plan", await tarball({ ...PACKAGE, "content/Bad Name.md": "hi" }), ws.read);
    expect(badSlug.body.error).toContain('"Bad Name"');
    const bomb = Bun.gzipSync(await new Bun.Archive({ "busabase.json": new Uint8Array(260 * 1024 * 1024) }).bytes());
    expect(bomb.byteLength).toBeLessThan(1024 * 1024);
    expect((await archive("/plan", bomb, ws.read)).status).toBe(413);
    expect((await server!.call("GET", "/api/v1/nodes", { key: ws.read })).body).toEqual([]);
  });
});

describe("install from GitHub", () => {
  let github: ReturnType<typeof Bun.serve>;
  const asked: string[] = [];
  beforeAll(async () => {
    const repo = await tarball(Object.fromEntries(Object.entries(PACKAGE).map(([path, body]) => [`packages/blog/${path}`, body])), "kits-0123abc/");
    github = Bun.serve({
      port: 0,
      fetch(request) {
        const path = new URL(request.url).pathname;
        asked.push(path);
        return path === "/acme/kits/tar.gz/v1" ? new Response(repo) : new Response("Not Found", { status: 404 });
      },
    });
  });
  afterAll(() => github.stop(true));

  test("the server fetches the repository's tarball at the ref and installs the folder the URL names", async () => {
    ({ server, ws } = await freshWorkspace({ env: { BASALT_GITHUB_ARCHIVE_URL: `http://127.0.0.1:${github.port}` } }));
    const input = { repoUrl: "https://github.com/acme/kits/tree/v1/packages/blog", autoMerge: true };
    const plan = await server!.call("POST", "/api/v1/install/github/plan", { key: ws.read, body: input });
    expect(plan.body).toMatchObject({ source: { owner: "acme", repo: "kits", ref: "v1", subdir: "packages/blog" }, applicable: true, counts: { bases: 2 } });
    expect(asked).toContain("/acme/kits/tar.gz/v1");
    const done = await server!.call("POST", "/api/v1/install/github", { key: ws.manage, body: { ...input, intoFolder: "blog" } });
    expect(done.body).toMatchObject({ targetFolderSlug: "blog", created: { bases: 2, records: 5 } });
    expect((await server!.call("POST", "/api/v1/install/github/plan", { key: ws.read, body: { repoUrl: "https://github.com/acme/missing" } })).body).toMatchObject({ code: "BAD_REQUEST", error: expect.stringContaining("GitHub has no repository acme/missing") });
    expect((await server!.call("POST", "/api/v1/install/github/plan", { key: ws.read, body: { repoUrl: "https://gitlab.com/acme/kits" } })).body.error).toContain("must be on github.com");
  });

  test("a Basalt that cannot reach GitHub says so and points to the archive route", async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    ({ server, ws } = await freshWorkspace({ env: { BASALT_GITHUB_ARCHIVE_URL: `http://127.0.0.1:${port}` } }));
    const reply = await server!.call("POST", "/api/v1/install/github/plan", { key: ws.read, body: { repoUrl: "https://github.com/acme/kits" } });
    expect(reply).toMatchObject({ status: 503, body: { code: "GITHUB_UNREACHABLE" } });
    expect(reply.body.error).toContain("/api/v1/install/archive");
  });
});

describe("basalt install", () => {
  test("installs a package from a directory as a member of the space; --dry-run prints the plan and makes nothing", () => {
    const dir = tempDir("basalt-install-");
    const basalt = (...args: string[]) => {
      const result = Bun.spawnSync([BUN, join(REPO, "src/main.ts"), ...args, "--data-dir", join(dir, "data")], { env: { ...process.env, BASALT_DATA_DIR: undefined } });
      return { code: result.exitCode, out: result.stdout.toString(), err: result.stderr.toString() };
    };
    try {
      for (const [path, body] of Object.entries(PACKAGE)) {
        mkdirSync(dirname(join(dir, "kit", path)), { recursive: true });
        writeFileSync(join(dir, "kit", path), body);
      }
      expect(basalt("users", "create", "--email", "ada@example.com", "--name", "Ada", "--password", "correct horse").code).toBe(0);
      expect(basalt("spaces", "create", "--name", "Team", "--slug", "team", "--owner", "ada@example.com").code).toBe(0);
      const dry = basalt("install", "--space", "team", "--as", "ada@example.com", "--from", join(dir, "kit"), "--dry-run");
      expect(JSON.parse(dry.out)).toMatchObject({ source: { archive: join(dir, "kit") }, counts: { bases: 2, records: 5 }, applicable: false });
      const done = basalt("install", "--space", "team", "--as", "ada@example.com", "--from", join(dir, "kit"), "--auto-merge");
      expect(done.code).toBe(0);
      expect(done.out).toContain("Installed Blog kit into the folder blog-kit: 2 folders, 1 docs, 2 bases, 1 views, 5 records, 1 fileTreeNodes, 4 files.");
      expect(done.err).toContain('warning: posts: record "rec_p3" links 1 record(s)');
      const exported = basalt("export", "--space", "team", "--base", "posts", "--format", "json");
      expect(JSON.parse(exported.out).map((record: { fields: { title: string } }) => record.fields.title).sort()).toEqual(["Hello world", "Orphan", "Second post"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("an archive's declared sizes are not believed", () => {
  /** A tar of one header block whose type and size are set by hand, with the right checksum. */
  const header = (name: string, type: string, size: number, extra: (block: Uint8Array) => void = () => undefined) => {
    const block = new Uint8Array(512);
    const put = (at: number, text: string) => block.set(new TextEncoder().encode(text), at);
    put(0, name);
    put(100, "0000644\0");
    put(124, `${size.toString(8).padStart(11, "0")}\0`);
    put(156, type);
    put(257, "ustar\u000000");
    extra(block);
    put(148, "        ");
    const sum = block.reduce((total, byte) => total + byte, 0);
    put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
    return block;
  };
  const tarOf = (...blocks: Uint8Array[]) => Buffer.concat([...blocks, new Uint8Array(1024)]);

  test("a package that is a gzip of a gzip, a sparse file or an entry longer than the archive is refused without being inflated", async () => {
    ({ server, ws } = await freshWorkspace());
    // A tar.gz inside a gzip: the inner one is not inflated (the archive library would have, without a bound).
    const inner = Bun.gzipSync(await new Bun.Archive({ "busabase.json": new Uint8Array(300 * 1024 * 1024) }).bytes());
    const twice = await archive("/plan", Bun.gzipSync(inner), ws.read);
    expect([twice.status, twice.body.error]).toEqual([400, "The body is not a .tar or .tar.gz archive."]);
    // A GNU sparse file: a few blocks that declare 2 GB.
    const sparse = await archive("/plan", Bun.gzipSync(tarOf(header("big", "S", 0, (block) => block.set(new TextEncoder().encode("00020000000000"), 483)))), ws.read);
    expect([sparse.status, sparse.body.error]).toEqual([400, expect.stringContaining("sparse file")]);
    const paxSparse = `30 GNU.sparse.realsize=2147483648\n`;
    const pax = await archive("/plan", Bun.gzipSync(tarOf(header("pax", "x", paxSparse.length), Buffer.from(paxSparse.padEnd(512, "\0")), header("big", "0", 0))), ws.read);
    expect([pax.status, pax.body.error]).toEqual([400, expect.stringContaining("sparse file")]);
    // An entry whose header says 1 GB over the few bytes there are.
    const long = await archive("/plan", Bun.gzipSync(tarOf(header("busabase.json", "0", 1 << 30))), ws.read);
    expect([long.status, long.body.error]).toEqual([400, expect.stringContaining("declares more bytes than the archive holds")]);
    expect((await server!.call("GET", "/api/v1/nodes", { key: ws.read })).body).toEqual([]);
  });

  test("entries are counted as they are read: an archive of more entries than a package may hold is refused at the bound", async () => {
    ({ server, ws } = await freshWorkspace());
    // 20,001 folder entries (no file among them): 10 MB of headers in a gzip of under 200 KB, which were all read before anything was counted.
    const blocks = Array.from({ length: 20_001 }, (_, i) => header(`d${i}/`, "5", 0));
    const body = Bun.gzipSync(tarOf(...blocks));
    expect(body.byteLength).toBeLessThan(200 * 1024);
    const folders = await archive("/plan", body, ws.read);
    expect([folders.status, folders.body.error]).toEqual([413, "The archive holds more than 20000 entries; a package may hold at most 5000 files."]);
    const files = await archive("/plan", Bun.gzipSync(tarOf(...Array.from({ length: 5001 }, (_, i) => header(`f${i}.md`, "0", 0)))), ws.read);
    expect([files.status, files.body.error]).toEqual([413, "A package may hold at most 5000 files."]);
  });
});
