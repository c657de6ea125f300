import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { BUN, freePort, REPO, tempDir } from "./helpers";

/**
 * An import is a job a client can read; cut short by a crash it says so, and the same file sent
 * again with the same Idempotency-Key finishes it without a row twice (issue 35, item 10). A real
 * server process, killed with SIGKILL in the middle of an import.
 */
const dir = tempDir("basalt-imports-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const basalt = (...args: string[]) => Bun.spawnSync([BUN, join(REPO, "src/main.ts"), ...args, "--data-dir", dir]).stdout.toString().trim();

async function serve() {
  const port = await freePort();
  const process = Bun.spawn([BUN, join(REPO, "src/main.ts"), "serve", "--port", String(port), "--data-dir", dir], { stdout: "ignore", stderr: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 400; tries++) {
    if (await fetch(`${url}/api/health`).then((reply) => reply.ok, () => false)) break;
    await Bun.sleep(25);
  }
  return { process, url };
}

test("an import cut short by a kill is marked failed with the rows it merged; sent again with its key it ends with every row once", async () => {
  basalt("users", "create", "--email", "ada@example.com", "--name", "Ada", "--password", "correct horse");
  basalt("spaces", "create", "--name", "Lab", "--slug", "lab", "--owner", "ada@example.com");
  const key = basalt("keys", "create", "--email", "ada@example.com", "--name", "w", "--level", "write");
  const headers = { authorization: `Bearer ${key}` };
  const ROWS = 30_000;
  const csv = `title,n\n${Array.from({ length: ROWS }, (_, i) => `Row ${i},${i}`).join("\n")}\n`;

  let server = await serve();
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, { method, headers: { ...headers, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) }).then((reply) => reply.json());
  await call("POST", "/api/v1/bases", { slug: "rows", name: "Rows", fields: [{ slug: "title", name: "Title", type: "text" }, { slug: "n", name: "N", type: "number" }] });
  const send = () => fetch(`${server.url}/api/v1/bases/rows/imports`, { method: "POST", headers: { ...headers, "content-type": "text/csv", "idempotency-key": "rows-file-1" }, body: csv });
  void send().catch(() => undefined);
  let running: { id: string; status: string; rowsMerged: number } | undefined;
  for (let tries = 0; tries < 2000 && !(running && running.rowsMerged > 0); tries++) {
    running = (await call("GET", "/api/v1/bases/rows/imports"))[0];
    if (!(running && running.rowsMerged > 0)) await Bun.sleep(5);
  }
  expect(running).toMatchObject({ status: "running" });
  server.process.kill("SIGKILL");
  await server.process.exited;

  server = await serve();
  const cut = await call("GET", `/api/v1/imports/${running!.id}`);
  expect(cut).toMatchObject({ status: "failed", rowCount: ROWS, idempotencyKey: "rows-file-1", reason: expect.stringContaining("same Idempotency-Key") });
  expect(cut.rowsMerged).toBeGreaterThan(0);
  expect(cut.rowsMerged).toBeLessThan(ROWS);
  const kept = (await call("GET", "/api/v1/records/count?baseId=rows")).total;
  expect(kept).toBeGreaterThanOrEqual(cut.rowsMerged);

  const again = await send();
  expect(again.status).toBe(201);
  const finished = await again.json();
  expect(finished.importId).toBe(running!.id);
  expect((await call("GET", "/api/v1/records/count?baseId=rows")).total).toBe(ROWS);
  expect(await call("GET", `/api/v1/imports/${running!.id}`)).toMatchObject({ status: "done", rowsMerged: ROWS, reason: null });
  // Sent once more: answered as it ended, nothing added.
  expect((await (await send()).json()).importId).toBe(running!.id);
  expect((await call("GET", "/api/v1/records/count?baseId=rows")).total).toBe(ROWS);
  server.process.kill();
  await server.process.exited;
}, 120_000);
