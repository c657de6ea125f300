import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BUN, freePort, REPO, tempDir } from "./helpers";

/**
 * Remotes under real failure (docs/remotes.md, "Proof"): the team's `basalt serve`, the laptop's
 * `basalt serve`, and `basalt push` / `basalt pull` on the laptop's data directory, each its own
 * process. Ten times, both sides write while a push or a pull runs, and a process is killed with
 * SIGKILL at a random point: the command itself, or the team's server under it. In the end both
 * hold the same records, every change the laptop acknowledged reached the team once, and none twice.
 * The same processes carry an offline day's structure: a field filled at once, and a file tree's file.
 */
const teamDir = tempDir("basalt-team-");
const laptopDir = tempDir("basalt-laptop-");
const running: Bun.Subprocess[] = [];
afterAll(() => {
  for (const process of running) process.kill(9);
  rmSync(teamDir, { recursive: true, force: true });
  rmSync(laptopDir, { recursive: true, force: true });
});

const env = { ...process.env, BASALT_DATA_DIR: undefined };

function basalt(dataDir: string, args: string[], extra: Record<string, string> = {}) {
  const result = Bun.spawnSync([BUN, join(REPO, "src/main.ts"), ...args, "--data-dir", dataDir], { env: { ...env, ...extra } });
  if (result.exitCode !== 0) throw new Error(`basalt ${args.join(" ")}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

async function serve(dataDir: string, port: number, flags: string[] = []): Promise<Bun.Subprocess> {
  const server = Bun.spawn([BUN, join(REPO, "src/main.ts"), "serve", "--port", String(port), "--data-dir", dataDir, ...flags], { env, stdout: "ignore", stderr: "ignore" });
  running.push(server);
  for (let waited = 0; waited < 10_000; waited += 50) {
    const up = await fetch(`http://127.0.0.1:${port}/api/v1/health`).then((response) => response.ok, () => false);
    if (up) return server;
    await Bun.sleep(50);
  }
  throw new Error(`the server on ${port} did not start`);
}

async function call(port: number, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "x-basalt-space": "team", ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

type Note = { id: string; fields: { title: string; n: number | null } };

async function notes(port: number, key: string): Promise<Map<string, Note["fields"]>> {
  const all = new Map<string, Note["fields"]>();
  let cursor: string | null = null;
  do {
    const page: { records: Note[]; nextCursor: string | null } = await call(port, key, "GET", `/records?baseId=notes&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    for (const record of page.records) all.set(record.id, { title: record.fields.title, n: record.fields.n ?? null });
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

const keyOf = (output: string) => output.trim().split("\n")[0].trim();
/** Ada on both instances, and the team's space on the team's. */
function teamAndLaptop(team: string, laptop: string): void {
  for (const dir of [team, laptop]) basalt(dir, ["users", "create", "--email", "ada@example.com", "--name", "Ada", "--password", "correct horse"]);
  basalt(team, ["spaces", "create", "--name", "Team", "--slug", "team", "--owner", "ada@example.com"]);
}
/** A key of Ada's on an instance. */
const keyFor = (dataDir: string, name: string, level: string) => keyOf(basalt(dataDir, ["keys", "create", "--email", "ada@example.com", "--name", name, "--level", level]));

describe("remotes across processes, some killed", () => {
  test("ten pushes and pulls killed at random points: nothing duplicated, nothing lost", async () => {
    teamAndLaptop(teamDir, laptopDir);
    const teamKey = keyFor(teamDir, "laptop", "write");
    const laptopKey = keyFor(laptopDir, "me", "write");
    const teamPort = await freePort();
    let teamServer = await serve(teamDir, teamPort);
    await call(teamPort, teamKey, "POST", "/bases", { slug: "notes", name: "Notes", fields: [{ slug: "title", name: "Title", type: "text" }, { slug: "n", name: "N", type: "number" }] });
    await call(teamPort, teamKey, "POST", "/bases/notes/records/bulk-change-request", { records: Array.from({ length: 50 }, (_, i) => ({ fields: { title: `team ${i}`, n: i } })) });
    basalt(laptopDir, ["clone", `http://127.0.0.1:${teamPort}`, "--space", "team", "--as", "ada@example.com"], { BASALT_REMOTE_KEY: teamKey });
    const laptopPort = await freePort();
    await serve(laptopDir, laptopPort);
    const cloned = [...(await notes(laptopPort, laptopKey)).keys()];
    expect(cloned).toHaveLength(50);

    const acknowledged = new Map<string, string>();
    let made = 0;
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 20; i++) {
        const title = `laptop ${round}.${i}`;
        const created = await call(laptopPort, laptopKey, "POST", "/bases/notes/change-requests", { fields: { title } });
        acknowledged.set(created.id, title);
        made++;
      }
      for (let i = 0; i < 5; i++) {
        const id = cloned[(round * 5 + i) % cloned.length];
        const title = `laptop edit ${round}.${i}`;
        await call(laptopPort, laptopKey, "POST", `/records/${id}/change-requests`, { operation: "update", fields: { title } });
        acknowledged.set(id, title);
        await call(teamPort, teamKey, "POST", `/records/${id}/change-requests`, { operation: "update", fields: { n: 1000 + round } });
      }
      const command = round % 2 === 0 ? "push" : "pull";
      const run = Bun.spawn([BUN, join(REPO, "src/main.ts"), command, "--space", "team", "--data-dir", laptopDir], { env, stdout: "ignore", stderr: "ignore" });
      running.push(run);
      await Bun.sleep(100 + Math.floor(Math.random() * 900));
      if (round % 3 === 2) {
        // The team's server dies under the push or pull, and comes back.
        teamServer.kill(9);
        await teamServer.exited;
        teamServer = await serve(teamDir, teamPort);
      }
      run.kill(9);
      await run.exited;
    }
    basalt(laptopDir, ["push", "--space", "team"]);
    basalt(laptopDir, ["pull", "--space", "team"]);

    const there = await notes(teamPort, teamKey);
    const here = await notes(laptopPort, laptopKey);
    expect(here.size).toBe(50 + made);
    expect([...there.entries()].sort()).toEqual([...here.entries()].sort());
    // Every change the laptop acknowledged is on the team's instance, once.
    for (const [id, title] of acknowledged) expect(there.get(id)?.title).toBe(title);
    const titles = [...there.values()].map((note) => note.title);
    expect(new Set(titles).size).toBe(titles.length);
    // The team's edits of another field came down and stayed.
    for (let round = 0; round < 10; round++) expect(there.get(cloned[(round * 5) % cloned.length])?.n).toBeGreaterThanOrEqual(1000);
    const status = basalt(laptopDir, ["status", "--space", "team"]);
    expect(status).toMatch(/origin\s+http:\S+\s+0\s+0\s+0\s+0/);
  }, 120_000);

  test("a clone killed midway (SIGKILL) leaves no space and no staged files: cloning again succeeds", async () => {
    const team = tempDir("basalt-team-");
    const laptop = tempDir("basalt-laptop-");
    try {
      teamAndLaptop(team, laptop);
      const key = keyFor(team, "laptop", "read");
      const port = await freePort();
      await serve(team, port);
      const writeKey = keyFor(team, "team", "write");
      await call(port, writeKey, "POST", "/bases", { slug: "notes", name: "Notes", fields: [{ slug: "title", name: "Title", type: "text" }] });
      await call(port, writeKey, "POST", "/bases/notes/records/bulk-change-request", { records: Array.from({ length: 20 }, (_, i) => ({ fields: { title: `team ${i}` } })) });
      // The link to the team stalls when the clone asks for the records, after it has staged the tables before them.
      let stalled = false;
      const link = Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        fetch: async (request) => {
          const url = new URL(request.url);
          if (url.searchParams.get("table") === "records") {
            stalled = true;
            return new Promise<Response>(() => undefined);
          }
          return fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body: request.method === "GET" ? undefined : await request.arrayBuffer() });
        },
      });
      try {
        const clone = Bun.spawn([BUN, join(REPO, "src/main.ts"), "clone", `http://127.0.0.1:${link.port}`, "--space", "team", "--as", "ada@example.com", "--data-dir", laptop], { env: { ...env, BASALT_REMOTE_KEY: key }, stdout: "ignore", stderr: "ignore" });
        running.push(clone);
        for (let waited = 0; !stalled; waited += 20) {
          if (waited > 20_000) throw new Error("the clone never asked for the records");
          await Bun.sleep(20);
        }
        const staged = join(laptop, "dump-imports");
        expect(readdirSync(staged)).toHaveLength(1);
        clone.kill(9);
        await clone.exited;
      } finally {
        link.stop(true);
      }
      basalt(laptop, ["clone", `http://127.0.0.1:${port}`, "--space", "team", "--as", "ada@example.com"], { BASALT_REMOTE_KEY: key });
      expect(basalt(laptop, ["spaces", "list"]).match(/\bteam\b/g)).toHaveLength(1);
      expect(readdirSync(join(laptop, "dump-imports"))).toEqual([]);
      expect(readdirSync(join(laptop, "clones"))).toEqual([]);
    } finally {
      rmSync(team, { recursive: true, force: true });
      rmSync(laptop, { recursive: true, force: true });
    }
  }, 60_000);

  test("across processes, a field made offline and filled, and a file added to a drive, reach a reviewing team: the field in one proposal with its record; merged there, a pull marks them landed and both hold each once", async () => {
    const team = tempDir("basalt-team-");
    const laptop = tempDir("basalt-laptop-");
    try {
      teamAndLaptop(team, laptop);
      const teamKey = keyFor(team, "team", "write");
      const proposeKey = keyFor(team, "laptop", "changeRequest");
      const laptopKey = keyFor(laptop, "me", "write");
      const teamPort = await freePort();
      await serve(team, teamPort);
      const base = await call(teamPort, teamKey, "POST", "/bases", { slug: "notes", name: "Notes", fields: [{ slug: "title", name: "Title", type: "text" }] });
      const note = await call(teamPort, teamKey, "POST", "/bases/notes/change-requests", { fields: { title: "team note" } });
      const drive = (await call(teamPort, teamKey, "POST", "/file-trees", { type: "drive", slug: "handbook", name: "Handbook", files: [{ path: "a.md", content: "A" }] })).node.id;
      basalt(laptop, ["clone", `http://127.0.0.1:${teamPort}`, "--space", "team", "--as", "ada@example.com"], { BASALT_REMOTE_KEY: proposeKey });
      const laptopPort = await freePort();
      await serve(laptop, laptopPort, ["--sync-every", "off"]);

      // Offline on the laptop: a field, filled at once, and a file added to the drive.
      await call(laptopPort, laptopKey, "POST", `/bases/${base.id}/fields/change-requests`, { operation: "create", slug: "tag", name: "Tag", type: "text" });
      await call(laptopPort, laptopKey, "POST", `/records/${note.id}/change-requests`, { operation: "update", fields: { tag: "offline" } });
      await call(laptopPort, laptopKey, "POST", `/file-trees/${drive}/change-requests`, { operations: [{ kind: "create", path: "b.md", content: "made on the laptop" }] });
      expect(basalt(laptop, ["push", "--space", "team"])).toContain("Pushed: 0 merged on the remote, 3 waiting in its Inbox, 0 refused.");

      // The team's Inbox holds two proposals: the field with the record that fills it, and the file.
      const listed = await call(teamPort, teamKey, "GET", "/change-requests?status=in_review&limit=100");
      const inbox: { id: string }[] = listed.items ?? listed.changeRequests ?? listed;
      const proposals = await Promise.all(inbox.map((cr) => call(teamPort, teamKey, "GET", `/change-requests/${cr.id}`)));
      expect(proposals.map((cr: { operations: { operation: string }[] }) => cr.operations.map((op) => op.operation).join(" ")).sort()).toEqual(["base_add_field record_update", "drive_file_create"]);
      for (const cr of inbox) {
        await call(teamPort, teamKey, "POST", `/change-requests/${cr.id}/reviews`, { verdict: "approved" });
        await call(teamPort, teamKey, "POST", `/change-requests/${cr.id}/merge`);
      }
      expect(basalt(laptop, ["pull", "--space", "team"])).toContain("3 pushed change(s) landed, 0 refused");

      const fieldsOf = async (port: number, key: string) => ((await call(port, key, "GET", `/bases/${base.id}`)).fields as { id: string; slug: string }[]).map((field) => `${field.slug}:${field.id}`).sort();
      expect(await fieldsOf(teamPort, teamKey)).toEqual(await fieldsOf(laptopPort, laptopKey));
      expect((await fieldsOf(teamPort, teamKey)).filter((field) => field.startsWith("tag:"))).toHaveLength(1);
      expect((await call(teamPort, teamKey, "GET", `/records/${note.id}`)).fields.tag).toBe("offline");
      expect((await call(teamPort, teamKey, "GET", `/file-trees/${drive}/files/b.md`)).content).toBe("made on the laptop");
      expect(basalt(laptop, ["status", "--space", "team"])).toMatch(/^origin\s+http:\/\/\S+\s+0\s+0\s+0\s+0\s+0\s/m);
    } finally {
      rmSync(team, { recursive: true, force: true });
      rmSync(laptop, { recursive: true, force: true });
    }
  }, 60_000);
});
