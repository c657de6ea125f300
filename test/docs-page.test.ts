import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { browserAvailable, launchBrowser } from "./browser";
import { createBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

let server: TestServer;
let ws: Workspace;
let browser: Browser;

beforeAll(async () => {
  if (!browserAvailable) return;
  ({ server, ws } = await freshWorkspace());
  await createBase(server, ws.write);
  await server.space(ws.owner.id, "Second");
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe.skipIf(!browserAvailable)("the API docs page in a real browser", () => {
  test("Try it out sends the key and the space header, and shows the answer", async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(server.url)) outside.push(request.url());
    });
    await page.goto(`${server.url}/api/v1/docs`);
    await page.getByRole("button", { name: "Authorize" }).first().click();
    const dialog = page.locator(".auth-container").first();
    await dialog.locator("input").first().fill(ws.read);
    await dialog.locator("button.authorize").click();
    await page.getByRole("button", { name: "Close" }).first().click();

    // The page renders a long document's operations as they scroll into view.
    const operation = page.locator("#operations-Nodes-getApiV1Nodes");
    for (let turn = 0; turn < 100 && (await operation.count()) === 0; turn++) {
      await page.mouse.wheel(0, 600);
      await page.waitForTimeout(100);
    }
    await operation.locator(".opblock-summary").click();
    await operation.getByRole("button", { name: "Try it out" }).click();
    // The caller belongs to two spaces: the header picks one.
    await operation.locator("input[placeholder='x-basalt-space']").fill(ws.space.slug);
    await operation.getByRole("button", { name: "Execute" }).click();
    const answer = operation.locator(".live-responses-table");
    const status = answer.locator("tr.response td.response-col_status").first();
    await status.waitFor();
    expect((await status.innerText()).trim()).toBe("200");
    expect(await answer.innerText()).toContain('"slug": "papers"');
    expect(outside).toEqual([]);
    await page.close();
  }, 60_000);
});
