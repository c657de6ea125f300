import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { browserAvailable, launchBrowser } from "./browser";
import { freshWorkspace, type TestServer, type Workspace } from "./helpers";

/**
 * Nothing a person does on the page loses data without saying so (issue 47, items 1 to 6): a
 * range, a conversion, a review, two people on one record, a restore, an undo. Chromium against a
 * real server, as test/admin-page.test.ts does.
 */

let server: TestServer;
let ws: Workspace;
let browser: Browser;
const consoleErrors: string[] = [];

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ server, ws } = await freshWorkspace());
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});
beforeEach(() => {
  consoleErrors.length = 0;
});

async function signedIn(path: string, email = "ada@example.com"): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on("pageerror", (error) => consoleErrors.push(error.message));
  await page.goto(server.url + path);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill("correct horse");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  return page;
}

/** A base made over HTTP with a write key, its records made in order (the grid shows the newest first). */
async function baseWith(slug: string, fields: unknown[], rows: Record<string, unknown>[]): Promise<{ id: string; recordIds: string[] }> {
  const base = (await server.call("POST", "/api/v1/bases", { key: ws.write, body: { slug, name: slug[0].toUpperCase() + slug.slice(1), fields } })).body;
  const recordIds: string[] = [];
  for (const fields of rows) recordIds.push((await server.call("POST", `/api/v1/bases/${slug}/change-requests`, { key: ws.write, body: { fields } })).body.id);
  return { id: base.id, recordIds };
}

const valueOf = async (recordId: string, slug: string) => (await server.call("GET", `/api/v1/records/${recordId}`, { key: ws.read })).body.fields[slug];

describe.skipIf(!browserAvailable)("nothing a person does on the page loses data without saying so", () => {
  test("a single select becomes a multiple select keeping every choice; the change request says what it does as the proposer saw it", async () => {
    const choices = [{ name: "infra, p1" }, { name: "ops" }];
    const { id, recordIds } = await baseWith("moves", [{ slug: "task", name: "Task", type: "text" }, { slug: "status", name: "Status", type: "select", options: { choices } }], [
      { task: "Rack servers", status: "infra, p1" },
      { task: "Page on-call", status: "ops" },
      { task: "Plan" },
    ]);
    const page = await signedIn(`/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Moves records" });
    await grid.getByRole("button", { name: "Status: field menu" }).click();
    await page.getByRole("dialog", { name: "Status" }).getByRole("button", { name: "Edit field…" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit Status" });
    await dialog.getByLabel("Type").selectOption({ label: "Multiple select" });
    const said = "Status: Single select → Multiple select. Of 3 records, 2 keep their value, 0 change in form, 0 lose it (it becomes empty).";
    await dialog.getByText(said).waitFor();
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.waitForURL(/\/admin\/change-requests\/crq_/);
    await page.getByRole("heading", { name: "1. Field conversion" }).waitFor();
    await page.getByText(said).waitFor();
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByRole("button", { name: "Merge" }).click();
    await page.getByText("Merged", { exact: true }).first().waitFor();
    await server.fieldUpkeep.settled();
    expect(await valueOf(recordIds[0], "status")).toEqual(["infra, p1"]);
    expect(await valueOf(recordIds[1], "status")).toEqual(["ops"]);

    // What a conversion cannot keep is named before it is proposed.
    await page.goto(`${server.url}/admin/bases/${id}`);
    await grid.getByRole("button", { name: "Task: field menu" }).click();
    await page.getByRole("dialog", { name: "Task" }).getByRole("button", { name: "Edit field…" }).click();
    const task = page.getByRole("dialog", { name: "Edit Task" });
    await task.getByLabel("Type").selectOption({ label: "Number" });
    const preview = task.getByRole("status");
    await preview.filter({ hasText: /./ }).waitFor();
    expect(await preview.textContent()).toBe("Task: Text → Number. Of 3 records, 0 keep their value, 0 change in form, 3 lose it (it becomes empty): “Rack servers”, “Page on-call”, “Plan”. The conversion waits for review.");
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);
});
