import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { browserAvailable as available, launchBrowser } from "./browser";
import { TestServer } from "./helpers";

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!available) return;
  server = new TestServer();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe.skipIf(!available)("the admin page in a real browser", () => {
  test("a person signs in on the device screen and approves a command line's request", async () => {
    await server.user("Ada");
    const grant = await server.call("POST", "/api/v1/device/code", { body: { clientName: "basalt-cli on laptop" } });
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(server.url)) outside.push(request.url());
    });
    await page.goto(`${server.url}/admin/device?code=${grant.body.userCode}`);

    await page.getByLabel("E-mail").fill("ada@example.com");
    await page.getByLabel("Password").fill("correct horse");
    await page.getByRole("button", { name: "Sign in" }).click();

    await page.getByText(grant.body.userCode).waitFor();
    await page.getByText("basalt-cli on laptop asks for an API key").waitFor();
    await page.getByLabel("Key name").fill("laptop agent");
    await page.getByLabel("Level").selectOption("write");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Device connected").waitFor();

    server.clock.advance(5_000);
    const credential = await server.call("POST", "/api/v1/device/finalize", { body: { deviceCode: grant.body.deviceCode } });
    expect(credential.status).toBe(200);
    const auth = await server.call("GET", "/api/v1/auth", { key: credential.body.apiKey });
    expect(auth.body.credential).toMatchObject({ name: "laptop agent", level: "write" });
    expect(outside).toEqual([]);
    await page.close();
  });

  test("the keys screen creates a key and shows its value once", async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/admin/login`);
    await page.getByLabel("E-mail").fill("ada@example.com");
    await page.getByLabel("Password").fill("correct horse");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "New API key" }).waitFor();
    await page.getByLabel("Name").fill("from the browser");
    await page.getByRole("button", { name: "Create key" }).click();
    const value = await page.locator(".notice code").textContent();
    expect(value).toMatch(/^bsk_[0-9A-Za-z]{42}$/);
    expect((await server.call("GET", "/api/v1/users/me", { key: value! })).status).toBe(200);
    await page.reload();
    await page.getByRole("cell", { name: "from the browser" }).waitFor();
    expect(await page.content()).not.toContain(value!);
    await page.close();
  });
});
