import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { closeStore, migrate, openStore } from "../src/db/client";
import { VERSION } from "../src/shared/version";
import { BUN, eventually, freePort, REPO, tempDir } from "./helpers";

/**
 * The compiled executable, run from an empty directory with nothing else present: it is built from
 * a copy of the sources that is deleted before it runs, as on a machine that only downloaded it.
 */
const home = tempDir("basalt-binary-");
const binary = join(home, "basalt");

beforeAll(() => {
  const sources = tempDir("basalt-sources-");
  for (const entry of ["package.json", "tsconfig.json", "bunfig.toml", "src", "migrations"]) cpSync(join(REPO, entry), join(sources, entry), { recursive: true });
  symlinkSync(join(REPO, "node_modules"), join(sources, "node_modules"));
  const build = Bun.spawnSync([BUN, "run", "build"], { cwd: sources, stderr: "pipe", stdout: "pipe" });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
  copyFileSync(join(sources, "dist/basalt"), binary);
  rmSync(sources, { recursive: true, force: true });
}, 60_000);
afterAll(() => rmSync(home, { recursive: true, force: true }));

interface Running {
  cwd: string;
  process: ReturnType<typeof Bun.spawn>;
  url: string;
  output: () => string;
}

/** Starts `basalt serve` in `cwd` and waits for its first line of output. */
async function serve(cwd: string, ...args: string[]): Promise<Running> {
  return serveWith({}, cwd, ...args);
}

async function serveWith(env: Record<string, string>, cwd: string, ...args: string[]): Promise<Running> {
  const port = await freePort();
  const child = Bun.spawn([binary, "serve", "--port", String(port), ...args], { cwd, stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", ...env } });
  let text = "";
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value);
    }
  })();
  const deadline = Date.now() + 10_000;
  while (!text.includes("listening on")) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`serve did not start: ${text} ${await new Response(child.stderr as ReadableStream).text()}`);
    await Bun.sleep(10);
  }
  return { cwd, process: child, url: `http://127.0.0.1:${port}`, output: () => text };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("the single executable", () => {
  test("prints its version and help from an empty directory", () => {
    const cwd = tempDir("basalt-empty-");
    const version = Bun.spawnSync([binary, "--version"], { cwd });
    expect(version.stdout.toString().trim()).toBe(VERSION);
    expect(Bun.spawnSync([binary, "--help"], { cwd }).stdout.toString()).toContain("backup --out FILE");
  });

  test("serves from an empty directory: migrations, docs and admin assets are inside it", async () => {
    const cwd = tempDir("basalt-empty-");
    const server = await serve(cwd);
    try {
      expect(existsSync(join(cwd, "basalt-data/basalt.db"))).toBe(true);
      expect(await (await fetch(`${server.url}/api/health`)).json()).toMatchObject({ status: "ok", service: "basalt", version: VERSION });
      const spec = await (await fetch(`${server.url}/api/v1/openapi.json`)).json();
      expect(Object.keys(spec.paths)).toContain("/api/v1/device/finalize");
      const docs = await (await fetch(`${server.url}/api/v1/docs`)).text();
      for (const asset of docs.matchAll(/(?:src|href)="(\/[^"]+)"/g)) expect((await fetch(server.url + asset[1])).status).toBe(200);
      const admin = await (await fetch(`${server.url}/admin/setup`)).text();
      // Files named by their content's hash, kept by browsers for a year, sent compressed.
      const scriptPath = /src="(\/admin\/assets\/admin\.[0-9a-f]{16}\.js)"/.exec(admin)![1];
      const script = await fetch(server.url + scriptPath);
      expect(script.headers.get("content-type")).toContain("javascript");
      expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      // The page's TypeScript, bundled when the binary was built, with the server's own level names.
      const scriptText = await script.text();
      expect(scriptText).toContain("Read-view-only");
      for (const encoding of ["br", "gzip"] as const) {
        const compressed = await fetch(server.url + scriptPath, { headers: { "accept-encoding": encoding }, decompress: false } as RequestInit);
        expect(compressed.headers.get("content-encoding")).toBe(encoding);
        const bytes = new Uint8Array(await compressed.arrayBuffer());
        expect(Buffer.from(encoding === "br" ? brotliDecompressSync(bytes) : gunzipSync(bytes)).toString()).toBe(scriptText);
      }
      const stylesPath = /href="(\/admin\/assets\/admin\.[0-9a-f]{16}\.css)"/.exec(admin)![1];
      expect((await fetch(server.url + stylesPath)).headers.get("content-type")).toContain("text/css");
    } finally {
      server.process.kill("SIGTERM");
    }
    // The checkpoint worker is inside the executable too: it started and stopped without a complaint.
    expect(await server.process.exited).toBe(0);
    expect(await new Response(server.process.stderr as ReadableStream).text()).toBe("");
  });

  test("serve --demo: the first space, made by the setup link, is the demo workspace; a restart leaves it as it is", async () => {
    const cwd = tempDir("basalt-demo-");
    const first = await serve(cwd, "--demo");
    let cookie = "";
    try {
      await eventually(() => first.output().includes("setup?token="));
      const token = /setup\?token=([0-9A-Za-z]+)/.exec(first.output())![1];
      const setup = await post(`${first.url}/api/v1/setup`, { token, email: "ada@example.com", name: "Ada", password: "correct horse" });
      expect(setup.status).toBe(201);
      cookie = setup.headers.get("set-cookie")!.split(";")[0];
      const bases = await (await fetch(`${first.url}/api/v1/bases`, { headers: { cookie } })).json();
      expect(bases.map((base: { slug: string }) => base.slug).sort()).toEqual(["blog", "newsletter", "social-content"]);
    } finally {
      first.process.kill("SIGTERM");
      await first.process.exited;
    }
    const again = await serve(cwd, "--demo");
    try {
      expect(again.output()).not.toContain("is now the demo workspace");
      const records = await (await fetch(`${again.url}/api/v1/records?baseId=blog`, { headers: { cookie } })).json();
      expect(records.records).toHaveLength(4);
    } finally {
      again.process.kill("SIGTERM");
      await again.process.exited;
    }
  });

  test("setup link, acknowledged writes survive kill -9, backup while serving, graceful SIGTERM", async () => {
    const cwd = tempDir("basalt-e2e-");
    const first = await serve(cwd);
    await eventually(() => first.output().includes("setup?token="));
    const token = /setup\?token=([0-9A-Za-z]+)/.exec(first.output())![1];
    const setup = await post(`${first.url}/api/v1/setup`, { token, email: "ada@example.com", name: "Ada", password: "correct horse" });
    expect(setup.status).toBe(201);
    const cookie = setup.headers.get("set-cookie")!.split(";")[0];
    const { credential } = await (await fetch(`${first.url}/api/v1/auth`, { headers: { cookie } })).json();
    const space = await post(`${first.url}/api/v1/spaces`, { name: "Durable" }, { cookie, "x-csrf-token": credential.csrfToken });
    expect(space.status).toBe(201);
    const named = await fetch(`${first.url}/api/v1/spaces/durable`, { headers: { cookie } });
    expect((await named.json()).role).toBe("owner");
    const device = await post(`${first.url}/api/v1/device/code`, { clientName: "cli" });
    expect((await device.json()).verificationUri).toBe(`${first.url}/admin/device`);
    first.process.kill("SIGKILL");
    await first.process.exited;

    const second = await serve(cwd);
    expect(second.output()).not.toContain("setup?token=");
    const login = await post(`${second.url}/api/v1/auth/login`, { email: "ada@example.com", password: "correct horse" });
    expect(login.status).toBe(200);
    const session = login.headers.get("set-cookie")!.split(";")[0];
    const spaces = await (await fetch(`${second.url}/api/v1/spaces`, { headers: { cookie: session } })).json();
    expect(spaces.map((s: { slug: string }) => s.slug)).toEqual(["my-workspace", "durable"]);

    const backup = Bun.spawnSync([binary, "backup", "--out", join(cwd, "snapshot.db")], { cwd });
    expect(backup.exitCode).toBe(0);
    const snapshot = new Database(join(cwd, "snapshot.db"), { readonly: true });
    expect(snapshot.query("SELECT slug FROM spaces ORDER BY id").all()).toEqual([{ slug: "my-workspace" }, { slug: "durable" }]);
    snapshot.close();

    // A login takes tens of milliseconds of password hashing: it is still in flight when SIGTERM lands.
    const inFlight = post(`${second.url}/api/v1/auth/login`, { email: "ada@example.com", password: "wrong password" });
    await Bun.sleep(5);
    second.process.kill("SIGTERM");
    expect((await inFlight).status).toBe(401);
    expect(await second.process.exited).toBe(0);
    expect(second.output()).toContain("Received SIGTERM");
    const db = new Database(join(cwd, "basalt-data/basalt.db"));
    expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    db.close();
  });

  test("a backup taken under write load holds every record acknowledged before it began; restore brings a server back from it", async () => {
    const cwd = tempDir("basalt-restore-");
    const cli = (...args: string[]) => Bun.spawnSync([binary, ...args], { cwd, stdout: "pipe", stderr: "pipe" });
    cli("users", "create", "--email", "ada@example.com", "--name", "Ada", "--password", "correct horse");
    cli("spaces", "create", "--name", "Lab", "--slug", "lab", "--owner", "ada@example.com");
    const key = cli("keys", "create", "--email", "ada@example.com", "--name", "w", "--level", "write").stdout.toString().trim();
    const headers = { authorization: `Bearer ${key}` };
    const running = await serve(cwd);
    await post(`${running.url}/api/v1/bases`, { slug: "papers", name: "Papers", fields: [{ slug: "title", name: "Title", type: "text" }] }, headers);
    const acknowledged: string[] = [];
    let writing = true;
    const writer = async () => {
      while (writing) {
        const reply = await post(`${running.url}/api/v1/bases/papers/change-requests`, { fields: { title: "under load" } }, headers);
        if (reply.status === 201) acknowledged.push((await reply.json()).id);
      }
    };
    const writers = Array.from({ length: 8 }, writer);
    await eventually(() => acknowledged.length >= 200, 10_000);
    const beforeBackup = [...acknowledged];
    const backup = Bun.spawn([binary, "backup", "--out", join(cwd, "under-load.db")], { cwd, stdout: "pipe", stderr: "pipe" });
    expect(await backup.exited).toBe(0);
    writing = false;
    await Promise.all(writers);
    const afterBackup = acknowledged.length;

    const snapshot = new Database(join(cwd, "under-load.db"), { readonly: true });
    expect(snapshot.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    const inSnapshot = new Set((snapshot.query("SELECT id FROM records").all() as { id: string }[]).map((row) => row.id));
    snapshot.close();
    for (const id of beforeBackup) expect(inSnapshot.has(id)).toBe(true);

    const refused = cli("restore", "--from", join(cwd, "under-load.db"));
    expect([refused.exitCode, refused.stderr.toString()]).toEqual([1, expect.stringContaining("Another basalt serve is already using")]);
    running.process.kill("SIGTERM");
    await running.process.exited;
    const replaced = new Database(join(cwd, "basalt-data", "basalt.db"), { readonly: true });
    const lastSeen = (replaced.query("SELECT seq FROM sqlite_sequence WHERE name = 'events'").get() as { seq: number }).seq;
    replaced.close();
    const restored = cli("restore", "--from", join(cwd, "under-load.db"));
    expect(restored.exitCode).toBe(0);
    expect(restored.stdout.toString()).toContain("the database it replaced is kept as");
    const again = await serve(cwd);
    const count = await (await fetch(`${again.url}/api/v1/records/count?baseId=papers`, { headers })).json();
    expect(count.total).toBe(inSnapshot.size);
    expect(count.total).toBeGreaterThanOrEqual(beforeBackup.length);
    expect(count.total).toBeLessThanOrEqual(afterBackup);
    // A client that saw events before the restore is told to read the state again, and no event id repeats.
    const aborter = new AbortController();
    const stream = await fetch(`${again.url}/api/v1/events/stream`, { headers: { ...headers, "last-event-id": String(lastSeen) }, signal: aborter.signal });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("event: reset")) text += (await reader.read()).value ?? "";
    await post(`${again.url}/api/v1/bases/papers/change-requests`, { fields: { title: "after the restore" } }, headers);
    while (!text.includes("event: record.created")) text += (await reader.read()).value ?? "";
    aborter.abort();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids.length).toBeGreaterThan(0);
    expect(Math.min(...ids)).toBeGreaterThan(lastSeen);
    again.process.kill("SIGTERM");
    await again.process.exited;
    writeFileSync(join(cwd, "not-a-database.db"), "hello");
    expect(cli("restore", "--from", join(cwd, "not-a-database.db")).stderr.toString()).toContain("is not a SQLite database");
  });

  test("a damaged database: serve says so and what to do in one sentence; restore replaces it and keeps it byte for byte", async () => {
    const cwd = tempDir("basalt-damaged-");
    const cli = (...args: string[]) => Bun.spawnSync([binary, ...args], { cwd, stdout: "pipe", stderr: "pipe" });
    cli("migrate", "--data-dir", "fresh");
    expect(cli("backup", "--out", join(cwd, "fresh.db"), "--data-dir", "fresh").exitCode).toBe(0);
    const garbage = Buffer.from("this was a database once ".repeat(400));
    mkdirSync(join(cwd, "basalt-data"));
    writeFileSync(join(cwd, "basalt-data/basalt.db"), garbage);
    const refused = cli("serve", "--port", "0");
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.toString().trim().split("\n")).toEqual([expect.stringContaining('The database file is damaged or is not a Basalt database (file is not a database). Restore a backup with "basalt restore --from FILE"')]);
    const restored = cli("restore", "--from", join(cwd, "fresh.db"));
    expect(restored.exitCode).toBe(0);
    const kept = /kept as (\S+)\. Start/.exec(restored.stdout.toString())![1];
    expect(Buffer.compare(readFileSync(kept), garbage)).toBe(0);
    const server = await serve(cwd);
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    server.process.kill("SIGTERM");
    expect(await server.process.exited).toBe(0);
  });

  test("migrates an old database (only the first migration applied) from an empty directory", async () => {
    const cwd = tempDir("basalt-old-");
    const old = openStore(join(cwd, "basalt-data", "basalt.db"));
    const [first] = readMigrationFiles({ migrationsFolder: join(REPO, "migrations") });
    migrate(old, [first]);
    old.sqlite.run("INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES ('usr_old', 'old@example.com', 'Old', 'x', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')");
    await closeStore(old);
    const result = Bun.spawnSync([binary, "migrate"], { cwd });
    expect(result.stdout.toString()).toMatch(/^Applied [1-9]\d* migrations?\.$/m);
    const db = new Database(join(cwd, "basalt-data", "basalt.db"), { readonly: true });
    expect(db.query("SELECT email FROM users").all()).toEqual([{ email: "old@example.com" }]);
    expect(db.query("SELECT count(*) AS n FROM records").get()).toEqual({ n: 0 });
    db.close();
    expect(Bun.spawnSync([binary, "migrate"], { cwd }).stdout.toString()).toContain("up to date");
  });

  test("a port another basalt serve holds is refused with one sentence, and so is its data directory", async () => {
    const running = await serve(tempDir("basalt-first-"));
    try {
      const port = new URL(running.url).port;
      const samePort = Bun.spawnSync([binary, "serve", "--port", port], { cwd: tempDir("basalt-second-") });
      expect(samePort.exitCode).not.toBe(0);
      expect(samePort.stderr.toString().trim()).toBe(`basalt: Port ${port} on 127.0.0.1 is already in use.`);

      const sameDir = Bun.spawnSync([binary, "serve", "--port", String(await freePort()), "--data-dir", join(running.cwd, "basalt-data")], { cwd: tempDir("basalt-second-") });
      expect(sameDir.exitCode).not.toBe(0);
      expect(sameDir.stderr.toString().trim()).toBe(`basalt: Another basalt serve is already using the data directory ${join(running.cwd, "basalt-data")}.`);
      // The other commands keep working beside the server.
      expect(Bun.spawnSync([binary, "users", "list"], { cwd: running.cwd }).exitCode).toBe(0);
    } finally {
      running.process.kill("SIGKILL");
      await running.process.exited;
    }
    // The kernel dropped the lock with the process: the same directory serves again at once.
    const again = await serve(running.cwd);
    again.process.kill("SIGKILL");
  });

  test("a webhook owed when the server is killed with SIGKILL is delivered after the restart", async () => {
    const cwd = tempDir("basalt-hook-");
    const received: { id: string; at: number }[] = [];
    let answer = 500;
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (request) => {
        received.push({ id: request.headers.get("webhook-id") ?? "", at: Date.now() });
        return new Response(null, { status: answer });
      },
    });
    const env = { BASALT_WEBHOOK_ALLOW: "127.0.0.1/32", BASALT_WEBHOOK_RETRY_SCHEDULE: "3" };
    const cli = (...args: string[]) => Bun.spawnSync([binary, ...args], { cwd }).stdout.toString().trim();
    cli("users", "create", "--email", "ada@example.com", "--name", "Ada", "--password", "correct horse");
    cli("spaces", "create", "--name", "Hooks", "--owner", "ada@example.com");
    const key = cli("keys", "create", "--email", "ada@example.com", "--name", "k", "--level", "manage");
    const first = await serveWith(env, cwd);
    try {
      const call = (path: string, body: unknown) =>
        fetch(`${first.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      expect((await call("/api/v1/webhooks", { name: "h", eventType: "record.created", actionKind: "webhook", config: { targetUrl: `http://127.0.0.1:${receiver.port}/` } })).status).toBe(201);
      expect((await call("/api/v1/bases", { slug: "notes", name: "Notes", fields: [{ slug: "title", name: "Title", type: "text" }] })).status).toBe(201);
      expect((await call("/api/v1/bases/notes/change-requests", { fields: { title: "owed" } })).status).toBe(201);
      await eventually(() => received.length === 1);
    } finally {
      first.process.kill("SIGKILL");
      await first.process.exited;
    }
    answer = 200;
    const restartedAt = Date.now();
    const second = await serveWith(env, cwd);
    try {
      await eventually(() => received.length === 2, 8000);
      expect(received[1].id).toBe(received[0].id);
      expect(received[1].at - restartedAt).toBeLessThan(5000);
    } finally {
      second.process.kill("SIGKILL");
      receiver.stop(true);
    }
  });

  test("the data directory is 0700; the database, its WAL and backups are 0600", async () => {
    const cwd = tempDir("basalt-modes-");
    const running = await serve(cwd);
    try {
      const mode = (path: string) => statSync(path).mode & 0o777;
      const data = join(cwd, "basalt-data");
      expect(mode(data)).toBe(0o700);
      const inData = readdirSync(data, { recursive: true }).map(String);
      for (const file of ["basalt.db", "basalt.db-wal", "basalt.db-shm", "serve.lock"]) expect(inData).toContain(file);
      for (const file of inData) expect([file, mode(join(data, file))]).toEqual([file, statSync(join(data, file)).isDirectory() ? 0o700 : 0o600]);
      expect(Bun.spawnSync([binary, "backup", "--out", join(cwd, "copy.db")], { cwd }).exitCode).toBe(0);
      expect(mode(join(cwd, "copy.db"))).toBe(0o600);
    } finally {
      running.process.kill("SIGKILL");
    }
  });

  /** A real small file system (tmpfs) holds the data directory: mounting one needs root, as on CI; elsewhere this test is skipped. */
  const tmpfsAllowed = (() => {
    const probe = tempDir("basalt-tmpfs-probe-");
    const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe], { stderr: "pipe" }).exitCode === 0;
    if (mounted) Bun.spawnSync(["umount", probe]);
    rmSync(probe, { recursive: true, force: true });
    return mounted;
  })();

  test.skipIf(!tmpfsAllowed)("on a real full disk (an 8 MB tmpfs): clean 507s, reads go on, a SIGKILL while full loses nothing acknowledged, writes resume once space is freed", async () => {
    const cwd = tempDir("basalt-full-");
    expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", cwd]).exitCode).toBe(0);
    try {
      const cli = (...args: string[]) => Bun.spawnSync([binary, ...args], { cwd, stdout: "pipe", stderr: "pipe" });
      cli("users", "create", "--email", "ada@example.com", "--name", "Ada", "--password", "correct horse");
      cli("spaces", "create", "--name", "Lab", "--slug", "lab", "--owner", "ada@example.com");
      const key = cli("keys", "create", "--email", "ada@example.com", "--name", "w", "--level", "write").stdout.toString().trim();
      const headers = { authorization: `Bearer ${key}` };
      const filler = join(cwd, "filler");
      const acknowledged: string[] = [];
      const count = async (url: string) => (await (await fetch(`${url}/api/v1/records/count?baseId=papers`, { headers })).json()).total;
      const full = await serve(cwd);
      try {
        expect((await post(`${full.url}/api/v1/bases`, { slug: "papers", name: "Papers", fields: [{ slug: "title", name: "Title", type: "text" }] }, headers)).status).toBe(201);
        // Leave about 3 MB: the records below (each write appends its pages to the WAL) fill it within a few dozen.
        const free = Number(Bun.spawnSync(["df", "--output=avail", "-B1", cwd]).stdout.toString().split("\n")[1]);
        writeFileSync(filler, Buffer.alloc(Math.max(free - 3 * 1024 * 1024, 0)));
        const refusals: { code: string; error: string }[] = [];
        for (let i = 0; i < 2000 && refusals.length < 20; i++) {
          const reply = await post(`${full.url}/api/v1/bases/papers/change-requests`, { fields: { title: `${i} ${"x".repeat(1000)}` } }, headers);
          if (reply.status === 201) acknowledged.push((await reply.json()).id);
          else {
            expect(reply.status).toBe(507);
            refusals.push(await reply.json());
          }
        }
        expect(refusals.length).toBe(20);
        expect(acknowledged.length).toBeGreaterThan(10);
        console.log(`full disk: ${acknowledged.length} creates acknowledged before the first 507`);
        for (const refusal of refusals) {
          expect(refusal.code).toBe("INSUFFICIENT_STORAGE");
          expect(JSON.stringify(refusal)).not.toMatch(/SQLITE|sqlite|disk I\/O/);
        }
        expect(await count(full.url)).toBe(acknowledged.length);
        expect(full.process.exitCode).toBeNull();
      } finally {
        // The worst moment to die: with the disk still full.
        full.process.kill("SIGKILL");
        await full.process.exited;
      }
      rmSync(filler);
      const freed = await serve(cwd);
      try {
        expect(await count(freed.url)).toBe(acknowledged.length);
        const after = await post(`${freed.url}/api/v1/bases/papers/change-requests`, { fields: { title: "space again" } }, headers);
        expect(after.status).toBe(201);
        expect(await count(freed.url)).toBe(acknowledged.length + 1);
      } finally {
        freed.process.kill("SIGTERM");
        await freed.process.exited;
      }
      const db = new Database(join(cwd, "basalt-data", "basalt.db"));
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      db.close();
    } finally {
      Bun.spawnSync(["umount", cwd]);
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 60_000);
});
