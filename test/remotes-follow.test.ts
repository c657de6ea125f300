import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { findUserByEmail } from "../src/auth/users";
import { Follower } from "../src/remotes/follow";
import { cloneSpace } from "../src/remotes/remotes";
import { parseSyncEvery } from "../src/shared/config";
import { BUN, REPO, TestServer } from "./helpers";

/**
 * `serve` follows its remotes (docs/remotes.md, "When sync runs"): two real servers, the laptop's
 * follow driven by its `ManualClock`, and a link between them that goes down and comes back up.
 */
let team: TestServer;
let laptop: TestServer;
let teamKey: string;
let laptopKey: string;
let teamSpace: string;
let local: string;

/** The link to the team: a proxy on a port of its own, cut by stopping it and restored on the same port. */
let teamPort: number;
let link: ReturnType<typeof Bun.serve> | null = null;
let requests = 0;
const linkUp = (port = 0) => {
  link = Bun.serve({
    port,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      requests++;
      const url = new URL(request.url);
      return fetch(`http://127.0.0.1:${teamPort}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body: request.method === "GET" ? undefined : await request.arrayBuffer() });
    },
  });
  return link.port;
};

const teamCall = (method: string, path: string, body?: unknown) => team.call(method, path, { key: teamKey, space: teamSpace, body });
const laptopCall = (method: string, path: string, body?: unknown) => laptop.call(method, path, { key: laptopKey, space: local, body });
const titles = async (call: typeof teamCall) => ((await call("GET", "/api/v1/records?baseId=notes&limit=100")).body.records as { fields: { title: string } }[]).map((record) => record.fields.title).sort();
const origin = async () => (await laptopCall("GET", "/api/v1/remotes")).body[0];

test("--sync-every: a minute by default, a time in s, m or h, or off", () => {
  expect([parseSyncEvery("1m"), parseSyncEvery("30s"), parseSyncEvery("45"), parseSyncEvery("2h"), parseSyncEvery("off")]).toEqual([60_000, 30_000, 45_000, 7_200_000, null]);
  for (const wrong of ["0", "soon", "1d", "-5s"]) expect(() => parseSyncEvery(wrong)).toThrow(`--sync-every "${wrong}" is not "off" or a time such as 30s, 1m or 2h.`);
});

describe("two servers, the laptop following the team", () => {
  beforeEach(async () => {
    team = new TestServer();
    laptop = new TestServer();
    teamPort = Number(new URL(team.url).port);
    const ada = await team.user("Ada");
    teamSpace = (await team.space(ada.id, "Team", "team")).id;
    teamKey = await team.key(ada.id, "write");
    await teamCall("POST", "/api/v1/bases", { slug: "notes", name: "Notes", fields: [{ slug: "title", name: "Title", type: "text" }] });
    await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "team 1" } });
    const localAda = await laptop.user("Ada");
    laptopKey = await laptop.key(localAda.id, "write");
    const owner = findUserByEmail(laptop.ctx, "ada@example.com")!;
    local = (await cloneSpace(laptop.ctx, { url: `http://127.0.0.1:${linkUp()}`, key: teamKey, remoteSpace: teamSpace, owner, actor: { userId: owner.id, keyId: null } })).spaceId;
  });

  afterEach(async () => {
    link?.stop(true);
    await laptop.stop();
    await team.stop();
  });

  test("serve pulls and pushes each remote every interval, backs off while the team cannot be reached, and resumes when it comes back", async () => {
    const follower = new Follower(laptop.ctx, 60_000);
    const start = laptop.clock.now();
    await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "team 2" } });
    await laptopCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "laptop 1" } });

    // The first tick syncs both ways, and says when it did and when it syncs next.
    await follower.tick();
    expect(await titles(laptopCall)).toEqual(["laptop 1", "team 1", "team 2"]);
    expect(await titles(teamCall)).toEqual(["laptop 1", "team 1", "team 2"]);
    expect(await origin()).toMatchObject({ ahead: 0, behind: 0, conflicts: 0, lastError: null, lastSyncAt: new Date(start).toISOString(), nextSyncAt: new Date(start + 60_000).toISOString() });

    // Before its time, nothing is asked of the team.
    const asked = requests;
    laptop.clock.advance(59_000);
    await follower.tick();
    expect(requests).toBe(asked);

    // The team goes away: each attempt fails, and the next waits twice as long (2 min, then 4 min).
    link!.stop(true);
    await laptopCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "laptop offline" } });
    laptop.clock.advance(1_000);
    await follower.tick();
    const down = await origin();
    expect(down).toMatchObject({ ahead: 1, lastSyncAt: new Date(start).toISOString(), nextSyncAt: new Date(start + 180_000).toISOString(), lastError: expect.stringContaining("cannot be reached") });
    laptop.clock.advance(60_000);
    await follower.tick();
    expect((await origin()).nextSyncAt).toBe(down.nextSyncAt);
    laptop.clock.advance(60_000);
    await follower.tick();
    expect((await origin()).nextSyncAt).toBe(new Date(start + 180_000 + 240_000).toISOString());
    expect(laptop.logs).toContainEqual(expect.stringMatching(/^follow: origin of space spc_\w+ did not sync \(.*cannot be reached.*\); next try in 240 s$/));

    // The team comes back: at the next attempt the laptop's offline change reaches it, and the wait is a minute again.
    linkUp(Number(new URL(down.url).port));
    await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "team while away" } });
    laptop.clock.advance(240_000);
    await follower.tick();
    const now = laptop.clock.now();
    expect(await titles(teamCall)).toEqual(["laptop 1", "laptop offline", "team 1", "team 2", "team while away"]);
    expect(await titles(laptopCall)).toEqual(await titles(teamCall));
    expect(await origin()).toMatchObject({ ahead: 0, behind: 0, lastError: null, lastSyncAt: new Date(now).toISOString(), nextSyncAt: new Date(now + 60_000).toISOString() });
  });

  test("basalt status shows when a remote last synced, when serve syncs it next, and what waits", async () => {
    await new Follower(laptop.ctx, 60_000).tick();
    link!.stop(true);
    await laptopCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "laptop offline" } });
    const status = Bun.spawnSync([BUN, `${REPO}/src/main.ts`, "status", "--space", local, "--data-dir", laptop.dir], { stdout: "pipe", stderr: "pipe" });
    const [header, row] = status.stdout.toString().trim().split("\n");
    expect(header).toMatch(/^NAME\s+URL\s+BEHIND\s+AHEAD\s+PENDING\s+REFUSED\s+CONFLICTS\s+LAST SYNC\s+NEXT SYNC\s+LAST CONTACT\s+LAST ERROR$/);
    const at = laptop.clock.now();
    expect(row).toMatch(new RegExp(`^origin\\s+http://\\S+\\s+0\\s+1\\s+0\\s+0\\s+0\\s+${new Date(at).toISOString()}\\s+${new Date(at + 60_000).toISOString()}\\s+.*cannot be reached`));
  });
});
