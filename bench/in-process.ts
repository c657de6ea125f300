/**
 * Basalt's app over a database in a folder, in this process, as the in-process benches drive it
 * (`handle.ts`, `statements.ts`, `allocations.ts`). Its modules are imported when it is made, so a
 * bench may first set `NODE_ENV` or patch bun:sqlite. `BENCH_DELIVERIES=1` also starts the webhook
 * delivery loop, as `serve` does: each batch of writes then wakes it to read the events they wrote.
 */
import { join } from "node:path";
import type { AppContext } from "../src/context";

export async function inProcessApp(dir: string) {
  process.env.NODE_ENV ??= "production";
  const { createApp } = await import("../src/http/app");
  const { wire } = await import("../src/cli/wiring");
  const { migrate, openStore, closeStore } = await import("../src/db/client");
  const { loadConfig } = await import("../src/shared/config");
  const { systemClock } = await import("../src/shared/clock");
  const store = openStore(join(dir, "basalt.db"));
  migrate(store);
  const config = loadConfig({ "data-dir": dir, "public-url": "http://localhost" }, {});
  const { ctx, fieldUpkeep, deliveries } = wire(store, config, systemClock, { info: () => {}, error: (line) => console.error(line) });
  fieldUpkeep.start(ctx);
  const delivering = process.env.BENCH_DELIVERIES === "1";
  if (delivering) deliveries.start(ctx);
  const app = createApp(ctx);
  const close = async () => {
    await fieldUpkeep.stop();
    if (delivering) await deliveries.stop();
    await closeStore(ctx.store);
  };
  return { ctx, app, fieldUpkeep, close };
}

/** The benches' user, their space "bench" and a write key in it: the key. */
export async function benchKey(ctx: AppContext): Promise<string> {
  const { write } = await import("../src/db/tx");
  const { createUser } = await import("../src/auth/users");
  const { createApiKey } = await import("../src/auth/api-keys");
  const { createSpace } = await import("../src/spaces/spaces");
  const user = await createUser(ctx, { email: "bench@example.com", name: "Bench", password: "bench password" });
  await write(ctx, (tx) => createSpace(tx, user.id, { name: "Bench", slug: "bench" }));
  return (await write(ctx, (tx) => createApiKey(tx, user.id, { name: "bench", level: "write", expiration: "30d" }))).apiKey;
}

/**
 * A request as a client on the wire sends it (wrk, curl, an SDK): a body comes with its
 * `content-length`, which `new Request` alone does not set, and the server reads such a body in
 * one native call instead of as a stream (`readBodyText`).
 */
export function wireRequest(url: string, init: { method?: string; headers: Record<string, string>; body?: string }): Request {
  const headers = init.body === undefined ? init.headers : { ...init.headers, "content-length": String(Buffer.byteLength(init.body)) };
  return new Request(url, { method: init.method ?? (init.body === undefined ? "GET" : "POST"), headers, body: init.body });
}

/**
 * The direct create of `bun run bench` in process, on a new app in `dir`: its key, its base
 * "papers" of five fields, and `createOne`, a create as a client on the wire sends it (with
 * `BENCH_FLOOR=1`, the floor's create on the same data instead).
 */
export async function benchCreates(dir: string) {
  const { ctx, app, close } = await inProcessApp(dir);
  const headers = { authorization: `Bearer ${await benchKey(ctx)}`, "x-basalt-space": "bench", "content-type": "application/json" };
  const fields = [1, 2, 3, 4, 5].map((i) => ({ slug: `f${i}`, name: `Field ${i}`, type: i % 2 ? "text" : "number" }));
  await app.handle(wireRequest("http://localhost/api/v1/bases", { headers, body: JSON.stringify({ slug: "papers", name: "Papers", fields }) }));
  const { floorHandler } = await import("./floor");
  const floor = process.env.BENCH_FLOOR === "1" ? floorHandler(join(dir, "basalt.db")) : undefined;
  const body = JSON.stringify({ fields: { f1: "a title", f2: 42, f3: "some text", f4: 7, f5: "more text" } });
  const createOne = () =>
    floor ? floor(wireRequest("http://localhost/records", { headers, body })) : app.handle(wireRequest("http://localhost/api/v1/bases/papers/change-requests", { headers, body }));
  return { ctx, app, close, createOne };
}
