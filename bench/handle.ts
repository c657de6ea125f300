/**
 * `bun bench/handle.ts`: the routes of `bun run bench`, measured in process: each request handed to
 * the app (`app.handle`) and to the floor's handler (`bench/floor.ts`), 50 at a time, without HTTP
 * or wrk. Microseconds a request and the ratio, less sensitive to what else loads the machine than
 * a wrk run. `BENCH_ROUTE=<part of a name>` runs only the matching routes and `BENCH_SECONDS` sets
 * each one's time (default 2): with `bun --cpu-prof-md bench/handle.ts` the profile is one route's.
 * `BENCH_LISTED` is the listing base's size (default 20,000); `BENCH_DATA=<folder>` keeps the data
 * made there and reuses it in later runs, so a profile holds the requests and not the seeding.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

process.env.NODE_ENV ??= "production";
const { inProcessApp, benchKey, wireRequest } = await import("./in-process");
const { floorHandler } = await import("./floor");

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const LISTED = Number(process.env.BENCH_LISTED ?? 20_000);
const ONLY = process.env.BENCH_ROUTE;
const CONCURRENCY = 50;

const kept = process.env.BENCH_DATA;
const dir = kept ?? mkdtempSync(join(tmpdir(), "basalt-handle-"));
if (kept) mkdirSync(kept, { recursive: true });
const seeded = join(dir, "seeded.json");
const reused = existsSync(seeded);
const { ctx, app, fieldUpkeep, close } = await inProcessApp(dir);

const recordFields = { f1: "a title", f2: 42, f3: "some text", f4: 7, f5: "more text" };
type Seed = { apiKey: string; sample: string; listingBase: string; view: string };
const seed: Seed = reused ? JSON.parse(readFileSync(seeded, "utf8")) : await made();
const auth = { authorization: `Bearer ${seed.apiKey}` };
const inSpace = { ...auth, "x-basalt-space": "bench" };

/** The data of `bun run bench`: a user, space and write key, a base "papers" with one record, a base "listing" of `LISTED` records and a view of it. */
async function made(): Promise<Seed> {
  const apiKey = await benchKey(ctx);
  const headers = { authorization: `Bearer ${apiKey}`, "x-basalt-space": "bench", "content-type": "application/json" };
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await app.handle(new Request(`http://localhost${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const FIELDS = [1, 2, 3, 4, 5].map((i) => ({ slug: `f${i}`, name: `Field ${i}`, type: i % 2 ? "text" : "number" }));
  await api("POST", "/api/v1/bases", { slug: "papers", name: "Papers", fields: FIELDS });
  const sample = await api("POST", "/api/v1/bases/papers/change-requests", { fields: recordFields });
  await api("POST", "/api/v1/bases", { slug: "listing", name: "Listing", fields: FIELDS });
  for (let made = 0; made < LISTED; made += 1000) {
    await api("POST", "/api/v1/bases/listing/records/bulk-change-request", { records: Array.from({ length: 1000 }, (_, i) => ({ fields: { ...recordFields, f2: made + i } })) });
}
const listingBase = (await api("GET", "/api/v1/bases/listing")).id;
const view = await api("POST", "/api/v1/views/change-requests", {
  operation: "create",
  baseId: "listing",
  name: "Upper half",
  config: { filters: [{ fieldSlug: "f2", operator: "gte", value: LISTED / 2 }], sorts: [{ fieldSlug: "f2", direction: "desc" }] },
});
await fieldUpkeep.settled();
const seed = { apiKey, sample: sample.id, listingBase, view: view.id };
if (kept) writeFileSync(seeded, JSON.stringify(seed));
return seed;
}

const request = (url: string, headers: Record<string, string>, body?: unknown) =>
  body === undefined ? wireRequest(url, { headers }) : wireRequest(url, { headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });
const floor = floorHandler(join(dir, "basalt.db"));
/** The view's field, which the floor's view page walks as Basalt's does. */
const sorted = ((await (await app.handle(request("http://localhost/api/v1/bases/listing", inSpace))).json()) as { fields: { id: string; slug: string }[] }).fields.find((field) => field.slug === "f2")!.id;

const routes = [
  { name: "health", path: "/api/health", floorPath: "/health", headers: {} },
  { name: "auth", path: "/api/v1/auth", floorPath: "/auth", headers: auth },
  { name: "nodes", path: "/api/v1/nodes", floorPath: "/nodes", headers: inSpace },
  { name: "record", path: `/api/v1/records/${seed.sample}`, floorPath: `/records/${seed.sample}`, headers: inSpace },
  { name: "page", path: "/api/v1/records?baseId=listing", floorPath: `/list?baseId=${seed.listingBase}`, headers: inSpace },
  // The full shape less one of its parts, against the same floor: what each part of a record costs (`include=`).
  { name: "page-base", path: "/api/v1/records?baseId=listing&include=base", floorPath: `/list?baseId=${seed.listingBase}`, headers: inSpace },
  { name: "page-head", path: "/api/v1/records?baseId=listing&include=headCommit", floorPath: `/list?baseId=${seed.listingBase}`, headers: inSpace },
  { name: "lean", path: "/api/v1/records?baseId=listing&include=none", floorPath: `/list?baseId=${seed.listingBase}`, headers: inSpace },
  { name: "view", path: `/api/v1/records?viewId=${seed.view}`, floorPath: `/view?baseId=${seed.listingBase}&fieldId=${sorted}&min=${LISTED / 2}`, headers: inSpace },
  { name: "create", path: "/api/v1/bases/papers/change-requests", floorPath: "/records", headers: inSpace, body: { fields: recordFields } },
];

/**
 * CPU microseconds a request (the process's user and system time, which other load on the machine
 * changes less than the wall clock): batches of 50 at once (so writes group-commit as under wrk),
 * for `SECONDS`.
 */
async function measure(handle: (request: Request) => Promise<Response>, url: string, headers: Record<string, string>, body?: unknown): Promise<number> {
  const batch = async () => {
    const responses = await Promise.all(Array.from({ length: CONCURRENCY }, () => handle(request(url, headers, body))));
    for (const response of responses) {
      if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    }
  };
  for (let i = 0; i < 20; i++) await batch();
  let done = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  while (performance.now() - start < SECONDS * 1000) {
    await batch();
    done += CONCURRENCY;
  }
  const spent = process.cpuUsage(cpu);
  return (spent.user + spent.system) / done;
}

/** Rounds of each route, Basalt and the floor alternating; the least of each is kept (what load added is never less). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
console.log("| route | Basalt CPU µs | floor CPU µs | vs floor |\n|---|---|---|---|");
for (const route of routes.filter((one) => !ONLY || ONLY.split(",").includes(one.name))) {
  let basalt = Number.POSITIVE_INFINITY;
  let bare = process.env.BENCH_FLOOR === "0" ? Number.NaN : Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS; round++) {
    basalt = Math.min(basalt, await measure((one) => app.handle(one), `http://localhost${route.path}`, route.headers, route.body));
    if (!Number.isNaN(bare)) bare = Math.min(bare, await measure(floor, `http://localhost${route.floorPath}`, route.headers, route.body));
  }
  console.log(`| ${route.name} | ${basalt.toFixed(1)} | ${bare.toFixed(1)} | ${((bare / basalt) * 100).toFixed(0)}% |`);
}
await close();
if (!kept) rmSync(dir, { recursive: true, force: true });
