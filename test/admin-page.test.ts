import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { issueSetupToken } from "../src/spaces/setup";
import { browserAvailable, launchBrowser } from "./browser";
import { REPO, TestServer } from "./helpers";
import { Receiver } from "./receiver";
import { workbook, XLSX } from "./workbook";

const EMAIL = "ada@example.com";
const PASSWORD = "correct horse battery";
/** `BASALT_SCREENSHOTS=1 bun test test/admin-page.test.ts` writes docs/screenshots/ (the README shows them). */
const SCREENSHOTS = process.env.BASALT_SCREENSHOTS ? join(REPO, "docs", "screenshots") : null;

let server: TestServer;
let browser: Browser;
let receiver: Receiver;
/** What the browser reported as an error (or a request to another host) since the test began. */
const consoleErrors: string[] = [];
beforeEach(() => {
  consoleErrors.length = 0;
});

beforeAll(async () => {
  if (!browserAvailable) return;
  server = new TestServer({ webhookAllow: "127.0.0.1/32" });
  receiver = new Receiver();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  receiver?.stop();
  await server?.stop();
});

async function newPage(width = 1440): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(`${page.url()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
  page.on("request", (request) => {
    if (!request.url().startsWith(server.url) && !request.url().startsWith("data:")) consoleErrors.push(`request to another host: ${request.url()}`);
  });
  return page;
}

/** A screen reached in the middle of a flow: no horizontal overflow at either width, and its screenshots. */
async function atBothWidths(page: Page, name: string): Promise<void> {
  for (const width of [375, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} at ${width} px`).toBeLessThanOrEqual(0);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  }
}

async function signIn(page: Page, next = "/admin"): Promise<void> {
  await page.goto(server.url + next);
  await page.getByLabel("E-mail").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

/** A new member of Ada's space with the contributor role (changeRequest), signed in on a page of their own at `path`. */
async function contributorPage(name: string, path: string): Promise<Page> {
  const session = await server.signIn(EMAIL, PASSWORD);
  const [space] = (await server.call("GET", "/api/v1/spaces", { session })).body;
  const email = `${name.toLowerCase()}@example.com`;
  await server.user(name, { password: PASSWORD });
  await server.call("POST", `/api/v1/spaces/${space.id}/members`, { session, body: { email, role: "contributor" } });
  const page = await newPage();
  await page.goto(server.url + path);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  return page;
}

async function sessionKey(level: "changeRequest" | "write"): Promise<string> {
  const session = await server.signIn(EMAIL, PASSWORD);
  return (await server.call("POST", "/api/v1/api-keys", { session, body: { name: `${level} over HTTP`, level } })).body.apiKey;
}

/** Only a wrong code's expected 404 may show in the console; nothing else may. */
const WRONG_CODE_404 = /device\?code=WRONG-CODE: Failed to load resource: the server responded with a status of 404/;

describe.skipIf(!browserAvailable)("the admin page in a real browser", () => {
  test("before any user: the page says how to get the setup link; the link creates the first user and space", async () => {
    const page = await newPage();
    const root = await fetch(`${server.url}/`, { redirect: "manual" });
    expect([root.status, root.headers.get("location")]).toEqual([302, "/admin"]);
    await page.goto(`${server.url}/`);
    await page.getByRole("heading", { name: "Welcome to Basalt" }).waitFor();
    expect(await page.getByText("/admin/setup?token=…").isVisible()).toBe(true);
    await atBothWidths(page, "welcome");

    const token = issueSetupToken(server.ctx)!;
    await page.goto(`${server.url}/admin/setup?token=${token}`);
    await page.getByLabel("Your name").waitFor();
    await atBothWidths(page, "setup");
    await page.getByLabel("Your name").fill("Ada");
    await page.getByLabel("E-mail").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByLabel("First space").fill("Research");
    await page.getByRole("button", { name: "Create account" }).click();
    // The first screen leads to the data: an empty space says how to bring some in.
    await page.getByRole("heading", { name: "Data" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/admin/data");
    await page.getByText("This space holds nothing yet. Add a base: start empty, or from a CSV or JSON file you already have.").waitFor();
    await page.getByRole("button", { name: "Add a base" }).waitFor();
    expect(await page.getByText("Research").first().isVisible()).toBe(true);
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("sign in with the keyboard alone, the URL follows the screen, and sign out is a real button", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/admin/keys`);
    await page.getByLabel("E-mail").waitFor();
    await page.getByLabel("E-mail").focus();
    await page.keyboard.type(EMAIL);
    await page.keyboard.press("Tab");
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/admin/keys");
    await page.getByRole("link", { name: "Data" }).click();
    await page.getByRole("heading", { name: "Data" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/admin/data");
    await page.goBack();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.goto(`${server.url}/admin/inbox`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("API keys: create one, use it over HTTP, raise it through the confirmation, delete it", async () => {
    const page = await newPage();
    await signIn(page, "/admin/keys");
    await page.getByLabel("Name", { exact: true }).fill("research agent");
    await page.getByLabel(/^Read-view-only/).check();
    expect(await page.getByLabel("Expires after").inputValue()).toBe("30d");
    await page.getByLabel("Expires after").selectOption({ label: "90 days" });
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByText("you will not see it again").waitFor();
    const value = (await page.locator(".secret").textContent())!;
    expect(value).toMatch(/^bsk_/);

    expect((await server.call("GET", "/api/v1/nodes", { key: value })).status).toBe(200);
    expect((await server.call("POST", "/api/v1/bases", { key: value, body: { slug: "x", name: "X", fields: [] } })).status).toBe(403);

    const row = page.getByRole("row", { name: /research agent/ });
    await row.getByRole("cell", { name: "Read-view-only" }).waitFor();
    await row.getByRole("button", { name: "Edit" }).click();
    await page.getByRole("dialog").getByLabel("Level").selectOption("write");
    await page.getByRole("dialog").getByRole("button", { name: "Save" }).click();
    const confirm = page.getByRole("dialog", { name: "Raise research agent to Write data?" });
    await confirm.getByText("Every holder of this key gains the new permissions at once").waitFor();
    await confirm.getByRole("button", { name: "Raise to Write data" }).click();
    await page.getByRole("row", { name: /research agent/ }).getByRole("cell", { name: "Write data" }).waitFor();
    expect((await server.call("GET", "/api/v1/auth", { key: value })).body.credential.level).toBe("write");

    await page.getByRole("row", { name: /research agent/ }).getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete key" }).click();
    await page.getByRole("row", { name: /research agent/ }).waitFor({ state: "detached" });
    expect((await server.call("GET", "/api/v1/auth", { key: value })).status).toBe(401);
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("a device flow started over HTTP is approved on the page; a wrong code offers to try again", async () => {
    const grant = await server.call("POST", "/api/v1/device/code", { body: { clientName: "basalt-cli on laptop" } });
    const page = await newPage();
    await signIn(page, "/admin/device?code=WRONG-CODE");
    await page.getByText("No device request has the code WRONG-CODE").waitFor();
    await page.getByLabel("Code shown by the device").fill(grant.body.userCode);
    await page.getByRole("button", { name: "Try this code" }).click();
    await page.getByText(grant.body.userCode).waitFor();
    await page.getByText("basalt-cli on laptop asks for an API key").waitFor();
    await atBothWidths(page, "device-approval");
    await page.getByLabel("Key name").fill("laptop agent");
    await page.getByLabel(/^Write data/).check();
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByRole("heading", { name: "Device connected" }).waitFor();

    server.clock.advance(5_000);
    const credential = await server.call("POST", "/api/v1/device/finalize", { body: { deviceCode: grant.body.deviceCode } });
    expect(credential.status).toBe(200);
    const auth = await server.call("GET", "/api/v1/auth", { key: credential.body.apiKey });
    expect(auth.body.credential).toMatchObject({ name: "laptop agent", level: "write" });
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("a proposal made over HTTP with a Change Request key is approved and merged in the Inbox", async () => {
    const write = await sessionKey("write");
    const propose = await sessionKey("changeRequest");
    await server.call("POST", "/api/v1/bases", {
      key: write,
      body: { slug: "papers", name: "Papers", fields: [{ slug: "title", name: "Title", type: "text", required: true }, { slug: "year", name: "Year", type: "number" }] },
    });
    const created = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: write, body: { fields: { title: "Attention", year: 2016 } } });
    const update = await server.call("POST", `/api/v1/records/${created.body.id}/change-requests`, { key: propose, body: { operation: "update", fields: { year: 2017 } } });
    expect(update.body.materialized).toBe(false);

    const page = await newPage();
    await signIn(page, "/admin/inbox");
    await page.getByRole("link", { name: /To review 1/ }).waitFor();
    // Titled by what it does: one field of one record, from and to.
    await page.getByRole("link", { name: "Year: 2016 → 2017 in Papers" }).click();
    await page.getByText("through the key “changeRequest over HTTP” (api)").waitFor();
    const diff = page.getByRole("row", { name: /Year/ });
    await diff.getByRole("cell", { name: "2017" }).waitFor();
    expect(await diff.getByRole("cell").allInnerTexts()).toEqual(["Year", "2016", "2017"]);
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Approved: merge it to apply the change.").waitFor();
    await page.getByRole("button", { name: "Merge" }).click();
    await page.locator(".badge", { hasText: "Merged" }).waitFor();
    expect((await server.call("GET", `/api/v1/records/${created.body.id}`, { key: write })).body.fields.year).toBe(2017);
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("the Inbox titles a change request by its proposer's message, and every page names a record by its primary value", async () => {
    const write = await sessionKey("write");
    const propose = await sessionKey("changeRequest");
    // The primary value is the first text field, here not the first field.
    await server.call("POST", "/api/v1/bases", {
      key: write,
      body: { slug: "people", name: "People", fields: [{ slug: "born", name: "Born", type: "number" }, { slug: "name", name: "Name", type: "text" }, { slug: "bio", name: "Bio", type: "html" }] },
    });
    const grace = (await server.call("POST", "/api/v1/bases/people/change-requests", { key: write, body: { fields: { born: 1907, name: "Grace Hopper", bio: '<img src=x onerror="window.injected=1">Rear admiral' } } })).body;
    await server.call("POST", `/api/v1/records/${grace.id}/change-requests`, { key: propose, body: { operation: "update", fields: { born: 1906 }, message: "Fix Grace's birth year\nShe was born on 9 December 1906." } });
    await server.call("POST", "/api/v1/bases/people/change-requests", { key: propose, body: { fields: { born: 1815, name: "Ada Lovelace" } } });

    const page = await newPage();
    await signIn(page, "/admin/inbox");
    await page.getByRole("link", { name: "New record “Ada Lovelace” in People" }).waitFor();
    await page.getByRole("link", { name: "Fix Grace's birth year" }).click();
    await page.getByRole("heading", { name: "Fix Grace's birth year" }).waitFor();
    await page.getByText("She was born on 9 December 1906.").waitFor();
    await page.getByRole("link", { name: "Grace Hopper" }).click();
    await page.getByRole("heading", { name: "Grace Hopper" }).waitFor();
    // An html value is text on every screen: never parsed, never run.
    expect(await page.getByLabel("Bio").inputValue()).toBe('<img src=x onerror="window.injected=1">Rear admiral');
    expect(await page.evaluate(() => [document.querySelectorAll("main img").length, (window as { injected?: number }).injected ?? 0])).toEqual([0, 0]);
    await page.getByRole("link", { name: "People" }).first().click();
    await page.getByRole("heading", { name: "People" }).waitFor();
    const row = page.getByRole("row", { name: /Grace Hopper/ });
    expect(await row.getByRole("gridcell").first().innerText()).toBe("Grace Hopper");
    expect(await page.getByRole("columnheader").nth(1).innerText()).toBe("Name");
    expect(await page.locator("main").innerText()).not.toContain(grace.id);
    expect(await page.getByRole("row", { name: /Grace Hopper/ }).innerText()).toContain('<img src=x onerror="window.injected=1">Rear admiral');
    expect(await page.evaluate(() => [document.querySelectorAll("main img").length, (window as { injected?: number }).injected ?? 0])).toEqual([0, 0]);
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("a base opens as a grid: typed cells, pages as it scrolls, keyboard edits merged with a write level and waiting in the Inbox with a contributor's", async () => {
    const write = await sessionKey("write");
    const fields = [
      { slug: "title", name: "Title", type: "text" },
      { slug: "pages", name: "Pages", type: "number" },
      { slug: "read", name: "Read", type: "checkbox" },
      { slug: "genre", name: "Genre", type: "select", options: { choices: [{ name: "novel" }, { name: "essay" }] } },
    ];
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "books", name: "Books", fields } });
    const records = Array.from({ length: 60 }, (_, i) => ({ fields: { title: `Book ${i + 1}`, pages: 100 + i, read: i % 2 === 0, genre: "novel" } }));
    await server.call("POST", "/api/v1/bases/books/records/bulk-change-request", { key: write, body: { records } });

    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("link", { name: "Books" }).click();
    const grid = page.getByRole("grid", { name: "Books records" });
    await grid.waitFor();
    expect(await grid.getByRole("columnheader").allInnerTexts()).toEqual(["Open", "Title", "Pages", "Read", "Genre"]);
    // The newest first; a number right-aligned, a select as a chip.
    const first = grid.getByRole("row", { name: /Book 60/ });
    expect(await first.getByRole("gridcell").nth(1).getAttribute("class")).toContain("num");
    expect(await first.locator(".chip").innerText()).toBe("novel");
    // Only the rows in view are drawn; the grid counts them all (and its header).
    expect(await grid.getAttribute("aria-rowcount")).toBe("61");
    expect(await grid.locator("tr[data-row]").count()).toBeLessThan(50);
    expect(await grid.locator("tr[data-row]").first().evaluate((row) => row.getBoundingClientRect().height)).toBe(34);
    await page.locator(".grid-scroll").evaluate((scroller) => scroller.scrollTo(0, scroller.scrollHeight));
    await grid.getByRole("row", { name: /Book 1\b/ }).waitFor();
    await page.locator(".grid-scroll").evaluate((scroller) => scroller.scrollTo(0, 0));
    await first.waitFor();

    // Keyboard alone: into the grid, right to Pages, Enter edits, Enter saves; a write level merges at once.
    await first.getByRole("gridcell").first().click();
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("Enter");
    // Text the field's type refuses keeps the stored value and says why.
    const pagesBefore = (await server.call("GET", "/api/v1/records?baseId=books&limit=1", { key: write })).body.records[0].fields.pages;
    await page.keyboard.press("Control+A");
    await page.keyboard.type("many");
    await page.keyboard.press("Enter");
    await page.getByRole("alert").filter({ hasText: 'Pages keeps its value: "many" is not a number.' }).waitFor();
    expect((await server.call("GET", "/api/v1/records?baseId=books&limit=1", { key: write })).body.records[0].fields.pages).toBe(pagesBefore);
    await page.keyboard.press("Control+A");
    await page.keyboard.type("321");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Saved Pages." }).waitFor();
    const book60 = (await server.call("GET", "/api/v1/records?baseId=books&limit=1", { key: write })).body.records[0];
    expect([book60.fields.title, book60.fields.pages]).toEqual(["Book 60", 321]);
    // Escape leaves a cell as it was.
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("Enter");
    await page.keyboard.type("999");
    await page.keyboard.press("Escape");
    expect(await first.getByRole("gridcell").nth(1).innerText()).toBe("321");

    // A record opens beside the grid: edited there, its save stays beside the grid.
    await grid.getByRole("link", { name: "Open Book 58" }).click();
    const panel = page.getByRole("complementary", { name: "Record Book 58" });
    await panel.waitFor();
    expect(await grid.isVisible()).toBe(true);
    await panel.getByLabel("Pages").fill("580");
    await panel.getByRole("button", { name: "Save changes" }).click();
    await panel.getByText("Saved.").waitFor();
    await grid.getByRole("row", { name: /Book 58/ }).getByText("580").waitFor();
    await panel.getByRole("link", { name: "Close" }).click();
    await panel.waitFor({ state: "detached" });

    // A column's header starts a filter on it.
    await grid.getByRole("button", { name: "Filter by Genre" }).click();
    expect(await page.getByLabel("Field", { exact: true }).inputValue()).toBe("genre");
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).name)).toBe("value");

    // Rows chosen together get one change request: here merged at once.
    await grid.getByRole("checkbox", { name: "Select Book 57" }).check();
    await grid.getByRole("checkbox", { name: "Select Book 56" }).check();
    const bulk = page.getByRole("region", { name: "Selected records" });
    await bulk.getByText("2 selected:").waitFor();
    await bulk.getByLabel("Field to set").selectOption("genre");
    await bulk.getByLabel("New value of Genre").selectOption("essay");
    await bulk.getByRole("button", { name: "Propose for the selected" }).click();
    await page.getByRole("status").filter({ hasText: "Set Genre on 2 records: saved." }).waitFor();
    const genres = (await server.call("GET", "/api/v1/records?baseId=books&limit=10", { key: write })).body.records.filter((row: { fields: { title: string } }) => ["Book 57", "Book 56"].includes(row.fields.title));
    expect(genres.map((row: { fields: { genre: string } }) => row.fields.genre)).toEqual(["essay", "essay"]);
    await grid.getByRole("row", { name: /Book 57/ }).locator(".chip", { hasText: "essay" }).waitFor();

    // Columns are resized and moved with the keyboard too, and stay so for this browser.
    const widthOfPages = () => grid.getByRole("columnheader", { name: /Pages/ }).evaluate((cell) => cell.getBoundingClientRect().width);
    const before = await widthOfPages();
    await grid.getByRole("separator", { name: "Resize Pages" }).focus();
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    const after = await widthOfPages();
    expect(after).toBeGreaterThan(before);
    expect(await grid.getByRole("separator", { name: "Resize Pages" }).getAttribute("aria-valuenow")).toBe("142");
    // The move redraws the grid; wait for the drawing rather than reading the one before it. A live
    // event of the bulk edit above may redraw the grid between the focus and the press, which then
    // lands on the grid it replaced: the person presses again.
    const headers = () => grid.getByRole("columnheader").allInnerTexts();
    const moved = async () => {
      for (const until = Date.now() + 2000; Date.now() < until; await Bun.sleep(50)) if ((await headers()).join("|") === "Open|Title|Pages|Genre|Read") return true;
      return false;
    };
    for (let attempt = 0; attempt < 3; attempt++) {
      await grid.getByRole("button", { name: "Genre", exact: true }).focus();
      await page.keyboard.press("Alt+ArrowLeft");
      if (await moved()) break;
    }
    expect(await grid.getByRole("columnheader").allInnerTexts()).toEqual(["Open", "Title", "Pages", "Genre", "Read"]);
    expect(await first.getByRole("gridcell").nth(2).innerText()).toBe("novel");
    await page.reload();
    await grid.getByRole("row", { name: /Book 60/ }).waitFor();
    expect(await grid.getByRole("columnheader").allInnerTexts()).toEqual(["Open", "Title", "Pages", "Genre", "Read"]);
    expect(await widthOfPages()).toBe(after);

    // A contributor's edit is a change request that waits in the Inbox, and the cell says so.
    const other = await contributorPage("Cy", `/admin/bases/${book60.baseId}`);
    const theirs = other.getByRole("grid", { name: "Books records" });
    await theirs.getByRole("row", { name: /Book 59/ }).getByRole("gridcell").first().dblclick();
    await other.keyboard.press("Control+A");
    await other.keyboard.type("Book 59, second edition");
    await other.keyboard.press("Enter");
    await other.getByRole("status").filter({ hasText: "Title proposed: it waits for review in the Inbox." }).waitFor();
    expect(await theirs.getByRole("row", { name: /Book 59/ }).getByRole("gridcell").first().getAttribute("class")).toContain("proposed");
    const waiting = (await server.call("GET", "/api/v1/change-requests?status=in_review", { key: write })).body;
    expect(JSON.stringify(waiting)).toContain("Book 59, second edition");
    expect(JSON.stringify(waiting)).toContain("Book 59: Title Book 59 → Book 59, second edition");
    expect((await server.call("GET", `/api/v1/records?baseId=books&filters[0][fieldSlug]=title&filters[0][operator]=eq&filters[0][value]=Book 59`, { key: write })).body.records).toHaveLength(1);
    await other.close();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  }, 60_000);

  test("a base's address reads its base, views, first page and open proposals beside the check of who is signed in, each once", async () => {
    const write = await sessionKey("write");
    const base = (await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "reading-list", name: "Reading list", fields: [{ slug: "title", name: "Title", type: "text" }] } })).body;
    await server.call("POST", "/api/v1/bases/reading-list/change-requests", { key: write, body: { fields: { title: "First on the list" } } });
    const page = await newPage();
    await signIn(page, "/admin/data");
    // Who is signed in is held back: the screen's own reads must not wait for it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/api/v1/auth", async (route) => {
      await held;
      await route.continue();
    });
    const asked: string[] = [];
    page.on("request", (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith("/api/v1/") && !path.endsWith("/events/stream")) asked.push(`${path}${path === "/api/v1/change-requests" ? "?open" : ""}`);
    });
    const firstReads = [`/api/v1/bases/${base.id}`, `/api/v1/bases/${base.id}/views`, "/api/v1/records/page", "/api/v1/change-requests?open", "/api/v1/users/me"];
    const allAsked = Promise.all(firstReads.map((wanted) => page.waitForRequest((request) => new URL(request.url()).pathname === wanted.replace("?open", ""), { timeout: 10_000 })));
    await page.goto(`${server.url}/admin/bases/${base.id}`);
    await allAsked;
    expect(asked).toContain("/api/v1/auth");
    release();
    await page.getByRole("grid", { name: "Reading list records" }).getByRole("row", { name: /First on the list/ }).waitFor();
    // Each read once: the screen took the answers sent early instead of asking again.
    for (const path of firstReads) expect(asked.filter((candidate) => candidate === path)).toHaveLength(1);
    await page.close();
  });

  test("a base's screen appears with its first rows already in it, only those its frame shows; the others are drawn as it scrolls", async () => {
    const write = await sessionKey("write");
    const base = (await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "long-list", name: "Long list", fields: [{ slug: "title", name: "Title", type: "text" }] } })).body;
    const records = Array.from({ length: 80 }, (_, i) => ({ fields: { title: `Entry ${i + 1}` } }));
    await server.call("POST", "/api/v1/bases/long-list/records/bulk-change-request", { key: write, body: { records } });
    const page = await newPage();
    await signIn(page, "/admin/data");
    // What the screen held the moment its heading appeared: no empty grid laid out first, then its rows.
    await page.addInitScript(() => {
      new MutationObserver((_, observer) => {
        if (!document.querySelector("main h1")) return;
        observer.disconnect();
        const rows = document.querySelectorAll("main table[role=grid] tr[data-row]");
        Object.assign(window, { firstScreen: { rows: rows.length, withValues: document.querySelectorAll("main tr[data-row] td[role=gridcell]:not(.loading)").length } });
      }).observe(document, { subtree: true, childList: true });
    });
    await page.goto(`${server.url}/admin/bases/${base.id}`);
    const grid = page.getByRole("grid", { name: "Long list records" });
    await grid.locator('tr[data-row="0"] td[role=gridcell]:not(.loading)').first().waitFor();
    const first = await page.evaluate(() => (window as unknown as { firstScreen: { rows: number; withValues: number } }).firstScreen);
    expect(first.withValues).toBeGreaterThan(0);
    // The frame is at most 70% of the 900 px window: 19 rows of 34 px, one of them cut.
    expect(first.rows).toBeGreaterThan(0);
    expect(first.rows).toBeLessThanOrEqual(Math.ceil((900 * 0.7) / 34));
    await page.locator(".grid-scroll").evaluate((scroller) => scroller.scrollTo(0, scroller.scrollHeight));
    await grid.locator('tr[data-row="79"] td[role=gridcell]:not(.loading)').first().waitFor();
    await page.close();
    expect(consoleErrors).toEqual([]);
  });

  test("views are tabs over a base; a kanban drag proposes the change, merged with write and waiting in the Inbox for a contributor", async () => {
    const write = await sessionKey("write");
    const stage = { slug: "stage", name: "Stage", type: "select", options: { choices: [{ name: "todo" }, { name: "doing" }, { name: "done" }] } };
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "tasks", name: "Tasks", fields: [{ slug: "task", name: "Task", type: "text" }, stage] } });
    for (const task of ["Write", "Review", "Ship"]) await server.call("POST", "/api/v1/bases/tasks/change-requests", { key: write, body: { fields: { task, stage: "todo" } } });

    // Saving a view is a change request (merged at once with Ada's level); it becomes a tab.
    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("link", { name: "Tasks" }).click();
    await page.getByRole("heading", { name: "Tasks" }).waitFor();
    await page.getByRole("button", { name: "+ Save as a view" }).click();
    await page.getByLabel("Name").fill("Board");
    await page.getByLabel("Type").selectOption("kanban");
    await page.getByRole("button", { name: "Save view" }).click();
    await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "Board kanban" }).waitFor();
    const todo = page.getByRole("region", { name: "todo" });
    const doing = page.getByRole("region", { name: "doing" });
    await todo.getByRole("article", { name: "Write" }).waitFor();

    // Dragged by the card itself (its corner), not by its list or link.
    await todo.getByRole("article", { name: "Write" }).dragTo(doing, { sourcePosition: { x: 4, y: 4 } });
    await page.getByRole("status").filter({ hasText: "Moved Write to doing." }).waitFor();
    await doing.getByRole("article", { name: "Write" }).waitFor();
    // Each column says how many records it holds.
    await todo.getByRole("heading", { name: "todo 2" }).waitFor();
    await doing.getByRole("heading", { name: "doing 1" }).waitFor();
    const rows = (await server.call("GET", "/api/v1/records?baseId=tasks", { key: write })).body.records;
    expect(rows.find((row: { fields: { task: string } }) => row.fields.task === "Write").fields.stage).toBe("doing");

    // A contributor's move (here with the card's own list, the keyboard's way) waits for review.
    const other = await contributorPage("Di", await page.evaluate(() => location.pathname + location.search));
    await other.getByLabel("Move Ship to").selectOption("done");
    await other.getByRole("status").filter({ hasText: "Moving Ship to done is proposed: it waits for review in the Inbox." }).waitFor();
    await other.getByRole("region", { name: "todo" }).getByRole("article", { name: "Ship" }).getByText("Proposed: to done").waitFor();
    const waiting = (await server.call("GET", "/api/v1/change-requests?status=in_review", { key: write })).body;
    expect(JSON.stringify(waiting)).toContain('"stage":"done"');
    // The Inbox titles it by what it does.
    await other.goto(`${server.url}/admin/inbox`);
    await other.getByRole("link", { name: "Ship: Stage todo → done" }).waitFor();
    await other.close();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  }, 60_000);

  test("an import previews its columns and reports a bad row by its line, imports nothing until fixed; an export downloads what the grid shows", async () => {
    const write = await sessionKey("write");
    const shelf = (await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "shelf", name: "Shelf", fields: [{ slug: "title", name: "Title", type: "text" }, { slug: "pages", name: "Pages", type: "number" }] } })).body;
    // An earlier import the server's stop cut short, as `serve` marks it when it starts again.
    const at = new Date().toISOString();
    server.ctx.store.sqlite.run(
      "INSERT INTO imports (id, space_id, base_id, created_by, idempotency_key, status, row_count, rows_merged, change_requests, reason, created_at, updated_at) VALUES ('imp_CUT', ?, ?, 'usr_x', 'k', 'failed', 30000, 12250, '[]', 'The server stopped while this import ran.', ?, ?)",
      [(server.ctx.store.sqlite.query("SELECT space_id FROM bases WHERE id = ?1").get(shelf.id) as { space_id: string }).space_id, shelf.id, at, at],
    );
    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("link", { name: "Shelf" }).click();
    await page.getByRole("grid", { name: "Shelf records" }).waitFor();
    await page.getByRole("alert").filter({ hasText: "An import of 30,000 rows stopped after 12,250: The server stopped while this import ran." }).waitFor();
    const file = (text: string) => ({ name: "shelf.csv", mimeType: "text/csv", buffer: Buffer.from(text) });

    await page.getByLabel("File to import").setInputFiles(file("title,pages\nDune,412\nEmma,many\nKim,368\n"));
    await page.getByRole("button", { name: "Preview import" }).click();
    const errors = page.getByRole("table", { name: "Errors by line" });
    await errors.waitFor();
    expect(await errors.getByRole("row").nth(1).getByRole("cell").allInnerTexts()).toEqual(["3", "pages", expect.stringContaining("number")]);
    expect(await page.getByRole("button", { name: "Import", exact: true }).isDisabled()).toBe(true);
    expect((await server.call("GET", "/api/v1/records?baseId=shelf", { key: write })).body.records).toEqual([]);

    await page.getByLabel("File to import").setInputFiles(file("title,pages\nDune,412\nEmma,474\nKim,368\n"));
    await page.getByRole("button", { name: "Preview import" }).click();
    await page.getByText("No errors: the import can go ahead.").waitFor();
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByText("Imported 3 records.").waitFor();
    await page.getByRole("row", { name: /Emma/ }).waitFor();

    // An export writes what the screen shows: its filter, its visible columns, the fields' names as headers.
    await page.goto(`${server.url}/admin/bases/${shelf.id}?field=pages&op=gt&value=400`);
    await page.getByText("2 of 3 records").waitFor();
    await page.getByRole("button", { name: "Pages: field menu" }).click();
    await page.getByRole("dialog", { name: "Pages" }).getByRole("button", { name: "Hide in this browser" }).click();
    await page.getByRole("columnheader", { name: /Pages/ }).waitFor({ state: "detached" });
    const downloading = page.waitForEvent("download");
    await page.getByRole("button", { name: "CSV" }).click();
    const exported = await (await downloading).path();
    const lines = (await Bun.file(exported!).text()).replace(/^\uFEFF/, "").trimEnd().split("\r\n");
    expect(lines[0]).toBe("id,Title,Created,Last modified");
    expect(lines.slice(1).map((line) => line.split(",")[1]).sort()).toEqual(["Dune", "Emma"]);
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("a record's page links a record picked from another base, uploads a file shown in the grid, and takes comments", async () => {
    const write = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "writers", name: "Writers", fields: [{ slug: "name", name: "Name", type: "text" }] } });
    await server.call("POST", "/api/v1/bases", {
      key: write,
      body: {
        slug: "essays",
        name: "Essays",
        fields: [
          { slug: "title", name: "Title", type: "text" },
          { slug: "writers", name: "Writers", type: "relation", options: { targetBaseSlug: "writers" } },
          { slug: "cover", name: "Cover", type: "attachment" },
          { slug: "shout", name: "Shout", type: "formula", options: { formula: { expression: "UPPER({title})" } } },
        ],
      },
    });
    for (const name of ["Ada Lovelace", "Alan Turing"]) await server.call("POST", "/api/v1/bases/writers/change-requests", { key: write, body: { fields: { name } } });
    const essay = (await server.call("POST", "/api/v1/bases/essays/change-requests", { key: write, body: { fields: { title: "Notes on the engine" } } })).body;

    const page = await newPage();
    await signIn(page, `/admin/records/${essay.id}`);
    await page.getByRole("heading", { name: "Notes on the engine" }).waitFor();
    await page.getByRole("searchbox", { name: "Find a record to link in Writers" }).fill("Ada");
    await page.getByRole("button", { name: "Link Ada Lovelace" }).click();
    await page.getByRole("list", { name: "Writers: linked records" }).getByText("Ada Lovelace").waitFor();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 31, 21, 196, 137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 240, 31, 0, 5, 0, 1, 255, 137, 153, 61, 29, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130]);
    await page.getByLabel("Upload to Cover").setInputFiles({ name: "cover.png", mimeType: "image/png", buffer: png });
    await page.getByRole("list", { name: "Cover: files" }).getByText("cover.png").waitFor();
    // A file is saved as soon as it is chosen; the link picked before waits for the form's button.
    await page.getByText("cover.png added: saved.").waitFor();
    expect((await server.call("GET", `/api/v1/records/${essay.id}`, { key: write })).body.fields.cover).toMatchObject([{ fileName: "cover.png" }]);
    await page.getByRole("list", { name: "Cover: files" }).getByRole("button", { name: "Open cover.png" }).click();
    await page.getByRole("dialog", { name: "cover.png" }).getByRole("img", { name: "cover.png" }).waitFor();
    expect(await page.getByRole("dialog", { name: "cover.png" }).getByRole("link", { name: "Download" }).getAttribute("download")).toBe("cover.png");
    await page.getByRole("dialog", { name: "cover.png" }).getByRole("button", { name: "Close" }).click();
    await page.getByRole("button", { name: "Save changes" }).click();
    // The notice of the saved form (the file's own status says "saved." too).
    await page.getByText("Saved.", { exact: true }).waitFor();
    const saved = (await server.call("GET", `/api/v1/records/${essay.id}`, { key: write })).body;
    const writers = (await server.call("GET", "/api/v1/records?baseId=writers", { key: write })).body.records;
    expect(saved.fields.writers).toEqual([writers.find((row: { fields: { name: string } }) => row.fields.name === "Ada Lovelace").id]);
    expect(saved.fields.cover).toMatchObject([{ fileName: "cover.png", mimeType: "image/png" }]);

    await page.getByLabel("Comment").fill("The diagram needs a caption.");
    await page.getByRole("button", { name: "Comment" }).click();
    await page.getByText("The diagram needs a caption.").waitFor();
    // Comments say who and when; the history says each field's old and new value.
    await page.getByRole("listitem").filter({ hasText: "The diagram needs a caption." }).getByText("Ada", { exact: true }).waitFor();
    // A formula is shown, not edited; the linked record's page says what links to it.
    expect(await page.getByRole("definition").innerText()).toBe("NOTES ON THE ENGINE");
    // Another client's comment draws the page again in place; the keyboard stays on the control it was on.
    await page.getByRole("button", { name: "Save changes" }).focus();
    expect((await server.call("POST", "/api/v1/comments", { key: write, body: { subjectType: "record", subjectId: essay.id, body: "Seen from elsewhere." } })).status).toBe(201);
    await page.getByText("Seen from elsewhere.").waitFor({ timeout: 2000 });
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Save changes");
    await page.goto(`${server.url}/admin/records/${saved.fields.writers[0]}`);
    await page.getByRole("heading", { name: "Ada Lovelace" }).waitFor();
    await page.getByRole("link", { name: "Notes on the engine" }).waitFor();

    await page.goto(`${server.url}/admin/bases/${essay.baseId}`);
    const row = page.getByRole("grid", { name: "Essays records" }).getByRole("row", { name: /Notes on the engine/ });
    await row.locator(".link-chip", { hasText: "Ada Lovelace" }).waitFor();
    expect(await row.locator("img.thumb").evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth)).toBe(1);

    // A gallery view shows each record's first image as its cover.
    const cover = (await server.call("POST", "/api/v1/views/change-requests", { key: write, body: { operation: "create", baseId: "essays", name: "Covers", type: "gallery", config: { coverFieldSlug: "cover" } } })).body;
    await page.goto(`${server.url}/admin/bases/${essay.baseId}?view=${cover.id}`);
    const card = page.getByRole("article", { name: "Notes on the engine" });
    await card.waitFor();
    expect(await card.locator("img").evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth)).toBe(1);

    // A proposal that changes links and files is reviewed by the linked records' names and the files' names.
    const propose = await sessionKey("changeRequest");
    const turing = writers.find((writer: { fields: { name: string } }) => writer.fields.name === "Alan Turing").id;
    const proposal = (await server.call("POST", `/api/v1/records/${essay.id}/change-requests`, { key: propose, body: { operation: "update", fields: { writers: [turing], cover: [] } } })).body;
    await page.goto(`${server.url}/admin/change-requests/${proposal.id}`);
    await page.getByRole("row", { name: /Writers/ }).waitFor();
    expect(await page.getByRole("row", { name: /Writers/ }).getByRole("cell").allInnerTexts()).toEqual(["Writers", "Ada Lovelace", "Alan Turing"]);
    expect(await page.getByRole("row", { name: /Cover/ }).getByRole("cell").allInnerTexts()).toEqual(["Cover", "cover.png", "—"]);
    await page.getByLabel("Comment").fill("Why Turing?");
    await page.getByRole("button", { name: "Comment" }).click();
    await page.getByText("Why Turing?").waitFor();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  }, 60_000);

  test("a calendar view places each record on its date's day, a month at a time", async () => {
    const write = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "meetings", name: "Meetings", fields: [{ slug: "topic", name: "Topic", type: "text" }, { slug: "on", name: "On", type: "date" }] } });
    for (const [topic, on] of [["Kick-off", "2026-03-02"], ["Review", "2026-03-19"], ["Retro", "2026-04-01"]]) await server.call("POST", "/api/v1/bases/meetings/change-requests", { key: write, body: { fields: { topic, on } } });
    const view = (await server.call("POST", "/api/v1/views/change-requests", { key: write, body: { operation: "create", baseId: "meetings", name: "Agenda", type: "calendar", config: { dateFieldSlug: "on" } } })).body;
    const page = await newPage();
    await signIn(page, `/admin/bases/${view.baseId}?view=${view.id}&month=2026-03`);
    const month = page.getByRole("table", { name: "March 2026 by On" });
    await month.waitFor();
    await month.getByRole("cell", { name: /^19\s*Review$/ }).waitFor();
    await month.getByRole("cell", { name: /^2\s*Kick-off$/ }).waitFor();
    expect(await month.innerText()).not.toContain("Retro");
    await page.getByRole("link", { name: "Month after →" }).click();
    await page.getByRole("table", { name: "April 2026 by On" }).getByRole("link", { name: "Retro" }).waitFor();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("on a phone: records as a list (the grid a button away), a calendar month as an agenda, dates picked natively", async () => {
    const write = await sessionKey("write");
    const views = (await server.call("GET", "/api/v1/bases/meetings/views", { key: write })).body;
    for (let i = 0; i < 60; i++) await server.call("POST", "/api/v1/bases/meetings/change-requests", { key: write, body: { fields: { topic: `Stand-up ${i + 1}`, on: "2026-05-04" } } });
    const phone = await browser.newContext({ viewport: { width: 375, height: 800 } });
    const page = await phone.newPage();
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    await page.goto(`${server.url}/admin/bases/meetings`);
    await page.getByLabel("E-mail").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    const list = page.getByRole("list", { name: "Meetings records" });
    await list.getByRole("link", { name: "Stand-up 60" }).waitFor();
    expect(await list.locator(":scope > li").count()).toBe(50);
    await page.getByText("63 records").waitFor();
    await page.getByRole("button", { name: "Show more" }).click();
    await list.getByRole("link", { name: "Kick-off" }).waitFor();
    expect(await page.getByRole("grid").count()).toBe(0);
    await list.getByRole("link", { name: "Kick-off" }).click();
    const panel = page.getByRole("complementary", { name: "Record Kick-off" });
    await panel.waitFor();
    expect(await panel.getByLabel("On").getAttribute("type")).toBe("date");
    expect(await panel.getByLabel("On").inputValue()).toBe("2026-03-02");
    // The record takes the whole screen of a phone; Close goes back to the list.
    await panel.getByRole("link", { name: "Close" }).click();
    await page.getByRole("button", { name: "Show as a grid" }).click();
    await page.getByRole("grid", { name: "Meetings records" }).waitFor();
    await page.getByRole("button", { name: "Show as a list" }).click();
    await page.getByRole("list", { name: "Meetings records" }).waitFor();

    await page.goto(`${server.url}/admin/bases/meetings?view=${views[0].id}&month=2026-03`);
    const agenda = page.getByRole("list", { name: "March 2026: agenda" });
    await agenda.getByRole("link", { name: "Review" }).waitFor();
    expect(await agenda.innerText()).toMatch(/2[\s\S]*Kick-off[\s\S]*19[\s\S]*Review/);
    expect(await page.getByRole("table", { name: "March 2026 by On" }).isVisible()).toBe(false);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, "phone-agenda-375.png"), fullPage: true });
    await phone.close();
  });

  test("a rating shows its stars in the grid, is edited in its cell, and is picked from stars on the record's page", async () => {
    const write = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "films", name: "Films", fields: [{ slug: "title", name: "Title", type: "text" }, { slug: "stars", name: "Stars", type: "rating", options: { max: 5 } }] } });
    await server.call("POST", "/api/v1/bases/films/change-requests", { key: write, body: { fields: { title: "Metropolis", stars: 3 } } });
    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("link", { name: "Films" }).click();
    const grid = page.getByRole("grid", { name: "Films records" });
    const row = grid.getByRole("row", { name: /Metropolis/ });
    await row.getByLabel("3 of 5").waitFor();
    expect(await row.getByRole("gridcell").nth(1).innerText()).toBe("★★★");
    expect(await row.getByRole("gridcell").nth(1).getAttribute("class")).toContain("num");
    await row.getByRole("gridcell").first().click();
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Control+A");
    await page.keyboard.type("5");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Saved Stars." }).waitFor();
    await row.getByLabel("5 of 5").waitFor();
    await grid.getByRole("link", { name: "Open Metropolis" }).click();
    const panel = page.getByRole("complementary", { name: "Record Metropolis" });
    await panel.getByLabel("Stars").selectOption({ label: "★★" });
    await panel.getByRole("button", { name: "Save changes" }).click();
    await panel.getByText("Saved.").waitFor();
    const saved = (await server.call("GET", "/api/v1/records?baseId=films&limit=1", { key: write })).body.records[0];
    expect(saved.fields.stars).toBe(2);
    await panel.getByRole("listitem").filter({ hasText: "Stars: 5 → 2" }).waitFor();
    await panel.getByRole("listitem").filter({ hasText: "Stars: 3 → 5" }).waitFor();
    // Another client's change to the open record shows in the panel, without a reload.
    expect((await server.call("POST", `/api/v1/records/${saved.id}/change-requests`, { key: write, body: { operation: "update", fields: { stars: 4 } } })).status).toBe(201);
    await page.getByRole("complementary", { name: "Record Metropolis" }).getByRole("listitem").filter({ hasText: "Stars: 2 → 4" }).waitFor({ timeout: 2000 });
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("fields are managed from the grid's header: added with their options, edited, hidden and shown, duplicated, and deleted through review", async () => {
    const write = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "tracker", name: "Tracker", fields: [{ slug: "task", name: "Task", type: "text" }, { slug: "hours", name: "Hours", type: "number" }] } });
    await server.call("POST", "/api/v1/bases/tracker/change-requests", { key: write, body: { fields: { task: "Ship dashboard", hours: 3 } } });
    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("link", { name: "Tracker" }).click();
    const grid = page.getByRole("grid", { name: "Tracker records" });

    // A select with coloured choices, its slug made from its name.
    await grid.getByRole("button", { name: "Add a field" }).click();
    let dialog = page.getByRole("dialog", { name: "New field in Tracker" });
    await dialog.getByLabel("Name").fill("Status of work");
    expect(await dialog.getByLabel("Slug").inputValue()).toBe("status-of-work");
    await dialog.getByLabel("Type").selectOption({ label: "Single select" });
    await dialog.getByLabel("Choice", { exact: true }).first().fill("Backlog");
    await dialog.getByRole("button", { name: "Add a choice" }).click();
    await dialog.getByLabel("Choice", { exact: true }).nth(1).fill("Done");
    await dialog.getByLabel("Colour of the choice").nth(1).selectOption("green");
    await dialog.getByRole("button", { name: "Add field" }).click();
    await grid.getByRole("button", { name: "Status of work: field menu" }).waitFor();
    let base = (await server.call("GET", "/api/v1/bases/tracker", { key: write })).body;
    expect(base.fields.find((field: { slug: string }) => field.slug === "status-of-work")).toMatchObject({ type: "select", options: { choices: [{ name: "Backlog", color: "blue" }, { name: "Done", color: "green" }] } });

    // A formula, checked as it is typed.
    await grid.getByRole("button", { name: "Add a field" }).click();
    dialog = page.getByRole("dialog", { name: "New field in Tracker" });
    await dialog.getByLabel("Name").fill("Days");
    await dialog.getByLabel("Type").selectOption({ label: "Formula" });
    await dialog.getByLabel("Formula").fill("{task} * 2");
    await dialog.getByText(/needs numbers, not text/).waitFor();
    await dialog.getByLabel("Formula").fill("{hours} / 8");
    await dialog.getByText("Gives number.").waitFor();
    await dialog.getByRole("button", { name: "Add field" }).click();
    await grid.getByRole("button", { name: "Days: field menu" }).waitFor();
    await grid.getByRole("row", { name: /Ship dashboard/ }).getByRole("gridcell", { name: "0.375" }).waitFor();
    // The grid says how many records it shows, and of how many a filter leaves.
    await page.getByText("1 record", { exact: true }).waitFor();
    await page.getByRole("button", { name: "Filter records…" }).click();
    await page.getByLabel("Field", { exact: true }).selectOption({ label: "Task" });
    await page.getByLabel("Operator", { exact: true }).selectOption("contains");
    await page.getByLabel("Value", { exact: true }).fill("nothing like it");
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await page.getByText("0 of 1 record", { exact: true }).waitFor();
    await page.getByText("No records match this filter.").waitFor();
    await page.getByRole("button", { name: "Clear" }).click();
    await page.getByText("1 record", { exact: true }).waitFor();

    // Renamed through its menu; hidden in this browser, then shown again.
    await grid.getByRole("button", { name: "Hours: field menu" }).click();
    await page.getByRole("dialog", { name: "Hours" }).getByRole("button", { name: "Edit field…" }).click();
    dialog = page.getByRole("dialog", { name: "Edit Hours" });
    await dialog.getByLabel("Name", { exact: true }).fill("Estimate (h)");
    await dialog.getByRole("button", { name: "Save" }).click();
    await grid.getByRole("button", { name: "Estimate (h): field menu" }).click();
    await page.getByRole("dialog", { name: "Estimate (h)" }).getByRole("button", { name: "Hide in this browser" }).click();
    await page.getByText("Hidden in this browser: Estimate (h).").waitFor();
    expect(await grid.getByRole("columnheader", { name: /Estimate/ }).count()).toBe(0);
    await page.getByRole("button", { name: "Show them" }).click();
    await grid.getByRole("button", { name: "Estimate (h): field menu" }).waitFor();

    // Duplicated with its options; a deletion says what it clears and waits for review.
    await grid.getByRole("button", { name: "Status of work: field menu" }).click();
    await page.getByRole("dialog", { name: "Status of work" }).getByRole("button", { name: "Duplicate…" }).click();
    dialog = page.getByRole("dialog", { name: "Duplicate Status of work" });
    expect(await dialog.getByLabel("Slug").inputValue()).toBe("status-of-work-copy");
    await dialog.getByRole("button", { name: "Add field" }).click();
    await grid.getByRole("button", { name: "Status of work copy: field menu" }).click();
    await page.getByRole("dialog", { name: "Status of work copy" }).getByRole("button", { name: "Delete…" }).click();
    dialog = page.getByRole("dialog", { name: "Delete Status of work copy?" });
    await dialog.getByText("Its values in 0 of 1 record are cleared.", { exact: false }).waitFor();
    await dialog.getByRole("button", { name: "Propose deletion" }).click();
    await page.waitForURL(/\/admin\/change-requests\/crq_/);
    base = (await server.call("GET", "/api/v1/bases/tracker", { key: write })).body;
    expect(base.fields.map((field: { name: string }) => field.name)).toEqual(["Task", "Estimate (h)", "Status of work", "Days", "Status of work copy"]);
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("the tree: a folder made, a base made from a CSV file after its preview, renamed, moved by its menu and by dragging", async () => {
    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("button", { name: "New folder" }).click();
    let dialog = page.getByRole("dialog", { name: "New folder" });
    await dialog.getByLabel("Name").fill("Team projects");
    expect(await dialog.getByLabel("Slug").inputValue()).toBe("team-projects");
    await dialog.getByRole("button", { name: "Create folder" }).click();
    await page.getByRole("button", { name: "Team projects: menu" }).waitFor();

    await page.getByRole("button", { name: "Add a base" }).click();
    dialog = page.getByRole("dialog", { name: "Add a base" });
    const csv = "Task,Hours,Status\nShip dashboard,3,Done\nWrite docs,5,Backlog\nFix login,2,Done\n";
    await dialog.getByLabel("Start from a file (CSV, Excel, JSON or JSON lines)").setInputFiles({ name: "project_tracker.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    await dialog.getByText("3 rows; a field for each column, of the type you choose:").waitFor();
    await dialog.getByRole("columnheader", { name: "Hours (Number)" }).waitFor();
    // The preview asks before it guesses: a column's type is chosen, and the file previewed again with it (issue 47, item 8).
    await dialog.getByLabel("Type of Hours").selectOption("text");
    await dialog.getByRole("columnheader", { name: "Hours (Text)" }).waitFor();
    await dialog.getByRole("cell", { name: "Ship dashboard" }).waitFor();
    expect(await dialog.getByLabel("Name").inputValue()).toBe("project tracker");
    await dialog.getByLabel("Name").fill("Project tracker");
    expect(await dialog.getByLabel("Slug").inputValue()).toBe("project-tracker");
    await dialog.getByLabel("In folder").selectOption({ label: "/Team projects" });
    await dialog.getByRole("button", { name: "Create base" }).click();
    const grid = page.getByRole("grid", { name: "Project tracker records" });
    await grid.getByRole("row", { name: /Write docs/ }).waitFor();
    expect(await grid.getByRole("row").count()).toBeGreaterThanOrEqual(4);
    expect((await server.call("GET", "/api/v1/bases/project-tracker", { session: await server.signIn(EMAIL, PASSWORD) })).body.fields.map((field: { type: string }) => field.type)).toEqual(["text", "text", "text"]);
    const session = await server.signIn(EMAIL, PASSWORD);
    const tree = (await server.call("GET", "/api/v1/nodes", { session })).body as { slug: string; children: { slug: string }[] }[];
    expect(tree.find((node) => node.slug === "team-projects")!.children.map((child) => child.slug)).toEqual(["project-tracker"]);

    await page.getByRole("link", { name: "Data" }).click();
    await page.getByRole("button", { name: "Project tracker: menu" }).click();
    await page.getByRole("dialog", { name: "Project tracker" }).getByRole("button", { name: "Rename…" }).click();
    dialog = page.getByRole("dialog", { name: "Rename Project tracker" });
    await dialog.getByLabel("Name").fill("Tracker 2027");
    await dialog.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("button", { name: "Tracker 2027: menu" }).click();
    await page.getByRole("dialog", { name: "Tracker 2027" }).getByRole("button", { name: "Move to…" }).click();
    dialog = page.getByRole("dialog", { name: "Move Tracker 2027" });
    await dialog.getByLabel("In folder").selectOption({ label: "/ (top level)" });
    await dialog.getByRole("button", { name: "Move" }).click();
    await page.getByRole("button", { name: "Tracker 2027: menu" }).waitFor();
    let top = (await server.call("GET", "/api/v1/nodes", { session })).body as { id: string; slug: string; name: string; children: { slug: string }[] }[];
    expect(top.find((node) => node.slug === "project-tracker")?.name).toBe("Tracker 2027");
    expect(top.find((node) => node.slug === "team-projects")!.children).toEqual([]);

    // Dragged onto the folder, it goes in it.
    const idOf = (slug: string) => top.find((node) => node.slug === slug)!.id;
    await page.locator(`ul.tree > li[data-node="${idOf("project-tracker")}"]`).waitFor();
    await page.locator(`li[data-node="${idOf("project-tracker")}"]`).dragTo(page.locator(`li[data-node="${idOf("team-projects")}"]`));
    await page.waitForFunction(() => document.querySelector("li[data-node] li[data-node]") !== null);
    top = (await server.call("GET", "/api/v1/nodes", { session })).body;
    expect(top.find((node) => node.slug === "team-projects")!.children.map((child) => child.slug)).toEqual(["project-tracker"]);
    await atBothWidths(page, "tree");
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("an Excel workbook becomes a base from the tree's Add a base: previewed with its dates and numbers, then its grid", async () => {
    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("button", { name: "Add a base" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a base" });
    const sheet = workbook([["Person", "Joined", "Hours"], ["Ada", new Date(Date.UTC(2026, 2, 1)), 12], ["Grace", new Date(Date.UTC(2026, 5, 15)), 7.5]]);
    await dialog.getByLabel("Start from a file (CSV, Excel, JSON or JSON lines)").setInputFiles({ name: "Crew.xlsx", mimeType: XLSX, buffer: Buffer.from(sheet) });
    await dialog.getByText("2 rows; a field for each column, of the type you choose:").waitFor();
    await dialog.getByRole("columnheader", { name: "Joined (Date)" }).waitFor();
    await dialog.getByRole("cell", { name: "Grace" }).waitFor();
    await dialog.getByRole("button", { name: "Create base" }).click();
    const grid = page.getByRole("grid", { name: "Crew records" });
    await grid.getByRole("row", { name: /Grace/ }).waitFor();
    const session = await server.signIn(EMAIL, PASSWORD);
    const people = (await server.call("GET", "/api/v1/records?baseId=crew&sort=person&include=none", { session })).body.records.map((record: { fields: Record<string, unknown> }) => record.fields);
    expect(people).toEqual([{ person: "Ada", joined: "2026-03-01", hours: 12 }, { person: "Grace", joined: "2026-06-15", hours: 7.5 }]);
    await page.close();
  });

  test("a spreadsheet's keyboard: typing edits, ranges clear and fill down, undo and redo, copy as tab-separated text, a paste adds rows", async () => {
    const write = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "sheet", name: "Sheet", fields: [{ slug: "item", name: "Item", type: "text" }, { slug: "qty", name: "Qty", type: "number" }] } });
    for (const [item, qty] of [["c", 3], ["b", 2], ["a", 1]] as const) await server.call("POST", "/api/v1/bases/sheet/change-requests", { key: write, body: { fields: { item, qty } } });
    const values = async () =>
      ((await server.call("GET", "/api/v1/records?baseId=sheet&sort=item&limit=50&include=none", { key: write })).body.records as { fields: { item: string; qty: number | null } }[]).map((record) => [record.fields.item, record.fields.qty]);
    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("link", { name: "Sheet" }).click();
    const grid = page.getByRole("grid", { name: "Sheet records" });
    const status = page.getByRole("status").filter({ hasText: /saved|Copied/ });
    // Newest first: a, b, c. Typing on a cell starts its new value.
    await grid.getByRole("row", { name: /\ba\b/ }).getByRole("gridcell").first().click();
    await page.keyboard.type("apple");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Saved Item." }).waitFor();
    expect(await values()).toEqual([["apple", 1], ["b", 2], ["c", 3]]);

    // Qty of the three rows chosen with Shift and the arrows, then cleared, then back with Ctrl+Z, and again with Ctrl+Y.
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Shift+ArrowDown");
    expect(await grid.locator("td.in-range").count()).toBe(3);
    await page.keyboard.press("Delete");
    await status.filter({ hasText: "Cleared Qty: saved." }).waitFor();
    expect(await values()).toEqual([["apple", null], ["b", null], ["c", null]]);
    await page.keyboard.press("Control+z");
    await status.filter({ hasText: "Undid: Cleared Qty: saved." }).waitFor();
    expect(await values()).toEqual([["apple", 1], ["b", 2], ["c", 3]]);
    await page.keyboard.press("Control+y");
    await status.filter({ hasText: "Redid: Cleared Qty: saved." }).waitFor();
    expect(await values()).toEqual([["apple", null], ["b", null], ["c", null]]);

    // Ctrl+D copies the range's first row down.
    await page.keyboard.press("Control+Home");
    await page.keyboard.type("9");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Saved Item." }).waitFor();
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Control+d");
    await status.filter({ hasText: "Filled down Item: saved." }).waitFor();
    expect((await values()).map(([item]) => item)).toEqual(["9", "9", "9"]);

    // Copy: the range as tab-separated text.
    const copied = await page.evaluate(() => {
      const data = new DataTransfer();
      document.activeElement!.dispatchEvent(new ClipboardEvent("copy", { clipboardData: data, bubbles: true, cancelable: true }));
      return data.getData("text/plain");
    });
    expect(copied).toBe("9\n9\n9");

    // A paste of 5 rows by 2 columns from the first cell: 3 rows updated, 2 records added, one change each.
    await page.keyboard.press("Control+Home");
    await page.evaluate(() => {
      const data = new DataTransfer();
      data.setData("text/plain", "Pens\t12\nPaper\t500\nInk\t3\nStaples\t1000\n\"Tape, clear\"\t7\n");
      document.activeElement!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    });
    await status.filter({ hasText: "Pasted 5 rows: saved. 2 new records." }).waitFor();
    expect(await values()).toEqual([["Ink", 3], ["Paper", 500], ["Pens", 12], ["Staples", 1000], ["Tape, clear", 7]]);
    await page.getByText("5 records", { exact: true }).waitFor();

    // A row's menu duplicates its record; rows chosen together are archived by one proposal, which waits for review.
    await grid.getByRole("button", { name: "Ink: row menu" }).click();
    await page.getByRole("dialog", { name: "Ink" }).getByRole("button", { name: "Duplicate" }).click();
    await status.filter({ hasText: "Duplicated Ink: saved. 1 new record." }).waitFor();
    await page.getByText("6 records", { exact: true }).waitFor();
    await grid.getByRole("checkbox", { name: "Select Pens" }).check();
    await grid.getByRole("checkbox", { name: "Select Paper" }).check();
    await page.getByRole("button", { name: "Archive the selected…" }).click();
    await page.getByRole("dialog", { name: "Archive 2 records?" }).getByRole("button", { name: "Propose archiving" }).click();
    await page.getByRole("status").filter({ hasText: "Archiving 2 records is proposed: it waits for review in the Inbox." }).waitFor();
    const archive = (await server.call("GET", "/api/v1/change-requests?status=in_review&limit=1", { key: write })).body.changeRequests[0];
    expect([archive.sourceMeta.message, archive.operationCount]).toEqual(["Archive 2 records", 2]);
    // The space's activity says what changed, newest first, by whom, and links to it.
    await page.goto(`${server.url}/admin/activity`);
    await page.getByRole("heading", { name: "Activity" }).waitFor();
    await page.getByRole("listitem").filter({ hasText: "Ada proposed: Archive 2 records in Sheet" }).getByRole("link", { name: "Archive 2 records" }).waitFor();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("a view keeps the filter and sort it was saved with; it is renamed, duplicated, updated and deleted from its menu", async () => {
    const write = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "stock", name: "Stock", fields: [{ slug: "item", name: "Item", type: "text" }, { slug: "qty", name: "Qty", type: "number" }] } });
    for (const [item, qty] of [["Pens", 5], ["Paper", 1], ["Ink", 3]] as const) await server.call("POST", "/api/v1/bases/stock/change-requests", { key: write, body: { fields: { item, qty } } });
    const viewsOf = async () => (await server.call("GET", "/api/v1/bases/stock/views", { key: write })).body as { id: string; name: string; config: Record<string, unknown> }[];
    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("link", { name: "Stock" }).click();
    await page.getByRole("button", { name: "Filter records…" }).click();
    await page.getByLabel("Field", { exact: true }).selectOption({ label: "Qty" });
    await page.getByLabel("Operator", { exact: true }).selectOption("gte");
    await page.getByLabel("Value", { exact: true }).fill("2");
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await page.getByText("2 of 3 records", { exact: true }).waitFor();
    await page.getByRole("grid", { name: "Stock records" }).getByRole("button", { name: "Qty", exact: true }).click();
    await page.getByRole("grid", { name: "Stock records" }).locator('th[aria-sort="ascending"]').waitFor();
    await page.getByRole("button", { name: "+ Save as a view" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Enough");
    await page.getByRole("button", { name: "Save view" }).click();
    const tabs = page.getByRole("navigation", { name: "Views" });
    await tabs.getByRole("link", { name: "Enough table" }).waitFor();
    let [saved] = await viewsOf();
    expect(saved.config).toMatchObject({ filters: [{ fieldSlug: "qty", operator: "gte", value: "2" }], sorts: [{ fieldSlug: "qty", direction: "asc" }] });
    await page.getByText("2 of 3 records", { exact: true }).waitFor();
    const rows = page.getByRole("grid", { name: "Stock records" }).getByRole("row");
    expect(await rows.nth(2).innerText()).toContain("Ink");

    await tabs.getByRole("button", { name: "Enough: view menu" }).click();
    await page.getByRole("dialog", { name: "Enough" }).getByRole("button", { name: "Rename…" }).click();
    await page.getByRole("dialog", { name: "Rename Enough" }).getByLabel("Name").fill("Plenty");
    await page.getByRole("dialog", { name: "Rename Enough" }).getByRole("button", { name: "Rename" }).click();
    await tabs.getByRole("link", { name: "Plenty table" }).waitFor();
    await tabs.getByRole("button", { name: "Plenty: view menu" }).click();
    await page.getByRole("dialog", { name: "Plenty" }).getByRole("button", { name: "Duplicate…" }).click();
    await page.getByRole("dialog", { name: "Duplicate Plenty" }).getByRole("button", { name: "Duplicate" }).click();
    await tabs.getByRole("link", { name: "Plenty copy table" }).waitFor();
    await tabs.getByRole("button", { name: "Plenty copy: view menu" }).click();
    await page.getByRole("dialog", { name: "Plenty copy" }).getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("dialog", { name: "Delete Plenty copy?" }).getByRole("button", { name: "Delete view" }).click();
    await page.waitForURL((url) => !url.search.includes("view="));
    await tabs.getByRole("link", { name: "Plenty copy table" }).waitFor({ state: "detached" });
    [saved] = await viewsOf();
    expect((await viewsOf()).map((view) => view.name)).toEqual(["Plenty"]);
    expect(saved.name).toBe("Plenty");
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("conditions in words, matched any or all, with a group of their own, filter the grid and are saved with a view", async () => {
    const write = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "bugs", name: "Bugs", fields: [{ slug: "title", name: "Title", type: "text" }, { slug: "state", name: "State", type: "select", options: { choices: [{ name: "Open" }, { name: "Fixed" }, { name: "Wontfix" }] } }, { slug: "severity", name: "Severity", type: "number" }] } });
    for (const [title, state, severity] of [["Crash on save", "Open", 5], ["Typo", "Open", 1], ["Slow list", "Fixed", 3], ["Old browser", "Wontfix", 2]] as const) await server.call("POST", "/api/v1/bases/bugs/change-requests", { key: write, body: { fields: { title, state, severity } } });
    const page = await newPage();
    await signIn(page, "/admin/bases/bugs");
    await page.getByRole("button", { name: "Filter records…" }).click();
    const filter = page.getByRole("search", { name: "Filter records" });
    // A title "is" compares in any case; a select's value is picked from its choices.
    await filter.getByLabel("Field", { exact: true }).selectOption({ label: "Title" });
    expect(await filter.getByLabel("Operator", { exact: true }).locator("option").allTextContents()).toEqual(["is", "is not", "contains", "is empty", "is not empty"]);
    await filter.getByLabel("Value", { exact: true }).fill("TYPO");
    await filter.getByRole("button", { name: "+ Condition", exact: true }).click();
    const second = filter.locator(".condition").nth(1);
    await second.getByLabel("Field", { exact: true }).selectOption({ label: "State" });
    await second.getByLabel("Value", { exact: true }).selectOption("Fixed");
    await filter.getByLabel("Match", { exact: true }).selectOption("any");
    await filter.getByRole("button", { name: "Filter", exact: true }).click();
    await page.getByText("2 of 4 records", { exact: true }).waitFor();

    // A group of its own: (State is any of Open, Wontfix) and Severity ≥ 2, beside the rest.
    const builder = page.getByRole("search", { name: "Filter records" });
    await builder.getByRole("button", { name: "+ Group" }).click();
    const group = builder.locator(".condition-group");
    await group.getByLabel("Group match").selectOption("all");
    await group.getByRole("button", { name: "+ Condition in group" }).click();
    await group.getByRole("button", { name: "+ Condition in group" }).click();
    await group.locator(".condition").nth(0).getByLabel("Field", { exact: true }).selectOption({ label: "State" });
    await group.locator(".condition").nth(0).getByLabel("Operator", { exact: true }).selectOption({ label: "is any of" });
    await group.locator(".condition").nth(0).getByLabel("Value", { exact: true }).selectOption(["Open", "Wontfix"]);
    await group.locator(".condition").nth(1).getByLabel("Field", { exact: true }).selectOption({ label: "Severity" });
    await group.locator(".condition").nth(1).getByLabel("Operator", { exact: true }).selectOption({ label: "≥" });
    await group.locator(".condition").nth(1).getByLabel("Value", { exact: true }).fill("2");
    await builder.getByRole("button", { name: "Filter", exact: true }).click();
    await page.getByText("4 of 4 records", { exact: true }).waitFor();
    const titles = async () => (await page.getByRole("grid", { name: "Bugs records" }).getByRole("row").allInnerTexts()).join("\n");
    expect(await titles()).toContain("Crash on save");
    // The same with all: the first two conditions can no longer both hold.
    await page.getByRole("search", { name: "Filter records" }).getByLabel("Match", { exact: true }).selectOption("all");
    await page.getByRole("search", { name: "Filter records" }).getByRole("button", { name: "Filter", exact: true }).click();
    await page.getByText("0 of 4 records", { exact: true }).waitFor();
    await page.getByRole("search", { name: "Filter records" }).getByLabel("Match", { exact: true }).selectOption("any");
    await page.getByRole("search", { name: "Filter records" }).getByRole("button", { name: "Filter", exact: true }).click();
    await page.getByText("4 of 4 records", { exact: true }).waitFor();
    await atBothWidths(page, "grid-conditions");

    await page.getByRole("button", { name: "+ Save as a view" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Triage");
    await page.getByRole("button", { name: "Save view" }).click();
    await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "Triage table" }).waitFor();
    const [saved] = (await server.call("GET", "/api/v1/bases/bugs/views", { key: write })).body;
    expect(saved.config).toMatchObject({ filters: [], groups: [{ match: "any", filters: [{ fieldSlug: "title", operator: "equals", value: "TYPO" }, { fieldSlug: "state", operator: "eq", value: "Fixed" }], groups: [{ match: "all", filters: [{ operator: "in", value: ["Open", "Wontfix"] }, { operator: "gte", value: "2" }] }] }] });
    expect((await server.call("GET", `/api/v1/records/count?baseId=bugs&viewId=${saved.id}`, { key: write })).body.total).toBe(4);
    await page.close();
  });

  test("a view keeps its columns and its rows' height: changed on the page, then saved to the view for everyone", async () => {
    const write = await sessionKey("write");
    const [triage] = (await server.call("GET", "/api/v1/bases/bugs/views", { key: write })).body;
    const page = await newPage();
    await signIn(page, `/admin/bases/bugs?view=${triage.id}`);
    const grid = page.getByRole("grid", { name: "Bugs records" });
    await grid.getByRole("button", { name: "Severity: field menu" }).click();
    await page.getByRole("dialog", { name: "Severity" }).getByRole("button", { name: "Hide in this view" }).click();
    await page.getByText("Hidden in this view: Severity.").waitFor();
    await page.getByLabel("Row height").selectOption("tall");
    await page.getByText("The columns and rows of this view are changed on this page only.").waitFor();
    // Rows are drawn again as their pages come: wait for the one that shows the record, 96 px tall.
    await page.waitForFunction(() => [...document.querySelectorAll("table.grid tr[data-row]")].some((row) => row.textContent?.includes("Crash on save") && row.getBoundingClientRect().height === 96));
    await page.getByRole("button", { name: "Save to the view" }).click();
    await page.getByText("changed on this page only", { exact: false }).waitFor({ state: "hidden" });
    await page.getByText("Hidden in this view: Severity.").waitFor();
    const [saved] = (await server.call("GET", "/api/v1/bases/bugs/views", { key: write })).body;
    expect(saved.config).toMatchObject({ visibleFieldSlugs: ["title", "state"], rowHeight: "tall", groups: triage.config.groups });
    await page.getByText("changed on this page only", { exact: false }).waitFor({ state: "hidden" });
    // Another browser opens the view as saved; the base's own grid keeps its own layout.
    const other = await newPage();
    await signIn(other, `/admin/bases/bugs?view=${triage.id}`);
    await other.getByText("Hidden in this view: Severity.").waitFor();
    expect(await other.getByLabel("Row height").inputValue()).toBe("tall");
    await other.goto(`${server.url}/admin/bases/bugs`);
    await other.getByRole("grid", { name: "Bugs records" }).getByRole("button", { name: "Severity", exact: true }).waitFor();
    await other.close();
    await page.close();
  });

  test("a proposal shows beside the value it would replace; a conflict has its own tab and is resolved in place, field by field", async () => {
    const write = await sessionKey("write");
    const propose = await sessionKey("changeRequest");
    const typo = (await server.call("GET", "/api/v1/records?baseId=bugs&filters[0][fieldSlug]=title&filters[0][operator]=eq&filters[0][value]=Typo", { key: write })).body.records[0];
    const proposal = (await server.call("POST", `/api/v1/records/${typo.id}/change-requests`, { key: propose, body: { operation: "update", fields: { state: "Fixed" }, baseCommitId: typo.headCommitId, autoMerge: false } })).body;
    const page = await newPage();
    await signIn(page, "/admin/bases/bugs");
    const grid = page.getByRole("grid", { name: "Bugs records" });
    await grid.getByRole("row", { name: /Typo/ }).getByRole("gridcell", { name: "Open → Fixed" }).waitFor();
    await page.goto(`${server.url}/admin/bases/bugs?record=${typo.id}`);
    const waiting = page.getByRole("region", { name: "Waiting for review" }).or(page.locator("section", { hasText: "Waiting for review" }));
    await waiting.getByText("proposed by Ada", { exact: false }).waitFor();
    expect(await waiting.locator("li").first().innerText()).toContain("State: Open → Fixed");

    // Someone else sets the state meanwhile: merging the proposal is now a conflict.
    await server.call("POST", `/api/v1/records/${typo.id}/change-requests`, { key: write, body: { operation: "update", fields: { state: "Wontfix" } } });
    await server.call("POST", `/api/v1/change-requests/${proposal.id}/reviews`, { key: write, body: { verdict: "approved" } });
    expect((await server.call("POST", `/api/v1/change-requests/${proposal.id}/merge`, { key: write })).status).toBe(409);
    await page.goto(`${server.url}/admin/inbox?tab=conflicts`);
    await page.getByRole("link", { name: /Conflicts/ }).getByText("1").waitFor();
    await page.getByRole("link", { name: /State: Open → Fixed|Typo/ }).first().click();
    const resolve = page.locator(".resolve");
    await resolve.getByRole("cell", { name: "Wontfix" }).waitFor();
    await resolve.getByRole("radio", { name: "Keep proposed" }).check();
    await resolve.getByRole("button", { name: "Revise against the current values" }).click();
    await page.getByText("In review", { exact: true }).first().waitFor();
    await server.call("POST", `/api/v1/change-requests/${proposal.id}/reviews`, { key: write, body: { verdict: "approved" } });
    expect((await server.call("POST", `/api/v1/change-requests/${proposal.id}/merge`, { key: write })).status).toBe(200);
    expect((await server.call("GET", `/api/v1/records/${typo.id}`, { key: write })).body.fields.state).toBe("Fixed");
    await page.close();
  });

  test("files open from the grid: a text file's text, a PDF in the browser's viewer, each downloaded", async () => {
    const write = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "reports", name: "Reports", fields: [{ slug: "title", name: "Title", type: "text" }, { slug: "files", name: "Files", type: "attachment" }] } });
    const upload = async (name: string, body: string, type: string) => (await server.call("POST", `/api/v1/assets?fileName=${name}`, { key: write, rawBody: body, headers: { "content-type": type } })).body.id;
    const notes = await upload("notes.txt", "Line one\nLine two", "text/plain");
    const pdf = await upload("report.pdf", "%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF", "application/pdf");
    await server.call("POST", "/api/v1/bases/reports/change-requests", { key: write, body: { fields: { title: "Q3", files: [notes, pdf] } } });
    const page = await newPage();
    await signIn(page, "/admin/bases/reports");
    const row = page.getByRole("grid", { name: "Reports records" }).getByRole("row", { name: /Q3/ });
    await row.getByRole("button", { name: "Open notes.txt" }).click();
    await page.getByRole("dialog", { name: "notes.txt" }).getByText("Line two").waitFor();
    await page.getByRole("dialog", { name: "notes.txt" }).getByRole("button", { name: "Close" }).click();
    await row.getByRole("button", { name: "Open report.pdf" }).click();
    const open = page.getByRole("dialog", { name: "report.pdf" }).getByRole("link", { name: "Open the PDF in a new tab" });
    const href = await open.getAttribute("href");
    const served = await page.evaluate(async (url) => {
      const response = await fetch(url!);
      return { type: response.headers.get("content-type"), disposition: response.headers.get("content-disposition"), policy: response.headers.get("content-security-policy") };
    }, href);
    expect(served).toEqual({ type: "application/pdf", disposition: expect.stringMatching(/^inline/), policy: "default-src 'none'; frame-ancestors 'none'" });
    await atBothWidths(page, "file-preview");
    await page.close();
  });

  test("records grouped by a choice: a section each with its count, folding, and the grouping saved with a view", async () => {
    const write = await sessionKey("write");
    const page = await newPage();
    await signIn(page, "/admin/bases/bugs");
    await page.getByLabel("Group by").selectOption({ label: "Group by State" });
    const fixed = page.locator("details.group", { hasText: "Fixed" });
    await fixed.getByText("· 2 records").waitFor();
    expect(await fixed.getByRole("table").getByRole("row").count()).toBe(3);
    await page.locator("details.group", { hasText: "Wontfix" }).getByText("· 1 record").waitFor();
    await page.locator("details.group", { hasText: "No State" }).getByText("· 0 records").waitFor();
    expect(await page.locator("details.group", { hasText: "No State" }).getAttribute("open")).toBeNull();
    await fixed.locator("summary").click();
    expect(await fixed.getAttribute("open")).toBeNull();
    await page.getByRole("button", { name: "+ Save as a view" }).click();
    await page.getByLabel("Name", { exact: true }).fill("By state");
    await page.getByRole("button", { name: "Save view" }).click();
    await page.getByRole("navigation", { name: "Views" }).getByRole("link", { name: "By state table" }).waitFor();
    const saved = (await server.call("GET", "/api/v1/bases/bugs/views", { key: write })).body.find((view: { name: string }) => view.name === "By state");
    expect(saved.config.groupByFieldSlug).toBe("state");
    await page.locator("details.group", { hasText: "Open" }).first().waitFor();
    await atBothWidths(page, "grid-grouped");
    await page.close();
  });

  test("inviting a teammate: a link made on the Spaces screen lets them make their account and land in the space's data", async () => {
    const page = await newPage();
    await signIn(page, "/admin/spaces");
    await page.getByLabel("Role", { exact: true }).last().selectOption("contributor");
    await page.getByRole("button", { name: "Make a link" }).click();
    const url = await page.locator("code.secret").innerText();
    expect(url).toMatch(new RegExp(`^${server.url}/admin/invite\\?token=`));
    await page.reload();
    await page.getByRole("table", { name: "Links waiting to be used" }).getByRole("cell", { name: "Contributor" }).waitFor();

    const teammate = await newPage();
    await teammate.goto(url);
    await teammate.getByRole("heading", { name: "Join Research" }).waitFor();
    await teammate.getByText("You are invited to Research as contributor.", { exact: false }).waitFor();
    await teammate.getByLabel("Your name").fill("Eve");
    await teammate.getByLabel("E-mail").fill("eve@example.com");
    await teammate.getByLabel("Password").fill("eve's long password");
    await teammate.getByRole("button", { name: "Create account and join" }).click();
    await teammate.getByRole("heading", { name: "Data" }).waitFor();
    const session = await server.signIn(EMAIL, PASSWORD);
    const [space] = (await server.call("GET", "/api/v1/spaces", { session })).body;
    const members = (await server.call("GET", `/api/v1/spaces/${space.id}/members`, { session })).body;
    expect(members.find((member: { email: string }) => member.email === "eve@example.com")).toMatchObject({ name: "Eve", role: "contributor" });
    // The link is used up.
    await teammate.goto(url);
    await teammate.getByText("This invitation link is not valid", { exact: false }).waitFor();
    await teammate.close();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error) && !/invite\?token=.*404/.test(error))).toEqual([]);
  });

  test("search from the top bar finds a record by a word of its text and a base by its name, and opens them", async () => {
    const page = await newPage();
    await signIn(page, "/admin/inbox");
    await page.getByRole("searchbox", { name: "Search the space" }).fill("grace");
    await page.getByRole("searchbox", { name: "Search the space" }).press("Enter");
    await page.getByRole("heading", { name: "Search: grace" }).waitFor();
    await page.getByRole("link", { name: "Grace Hopper" }).click();
    await page.getByRole("heading", { name: "Grace Hopper" }).waitFor();
    await page.getByRole("searchbox", { name: "Search the space" }).fill("tasks");
    await page.getByRole("searchbox", { name: "Search the space" }).press("Enter");
    await page.getByRole("heading", { name: "Search: tasks" }).waitFor();
    await page.getByRole("link", { name: "Tasks" }).click();
    await page.getByRole("grid", { name: "Tasks records" }).waitFor();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("the Inbox, its count and a base's table follow another client's writes within a second, without a reload", async () => {
    const write = await sessionKey("write");
    const propose = await sessionKey("changeRequest");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "live", name: "Live", fields: [{ slug: "title", name: "Title", type: "text" }] } });
    const waiting = async () => Number((await server.call("GET", "/api/v1/change-requests/counts", { key: write })).body.review);
    const page = await newPage();
    await signIn(page, "/admin/inbox");
    await page.getByRole("heading", { name: "Inbox" }).waitFor();
    await page.evaluate(() => Object.assign(window, { sameDocument: true }));

    await server.call("POST", "/api/v1/bases/live/change-requests", { key: propose, body: { fields: { title: "Arrived live" }, message: "Proposed by an agent" } });
    await page.getByRole("link", { name: "Proposed by an agent" }).waitFor({ timeout: 1000 });
    await page.getByRole("link", { name: `Inbox ${await waiting()} to review` }).waitFor({ timeout: 1000 });

    await page.getByRole("link", { name: "Data" }).click();
    await page.getByRole("link", { name: "Live" }).click();
    await page.getByRole("heading", { name: "Live" }).waitFor();
    await server.call("POST", "/api/v1/bases/live/change-requests", { key: write, body: { fields: { title: "Written elsewhere" } } });
    await page.getByRole("row", { name: /Written elsewhere/ }).waitFor({ timeout: 1000 });
    expect(await page.evaluate(() => (window as { sameDocument?: boolean }).sameDocument)).toBe(true);

    // A second browser's edit shows in this one within a second.
    const second = await newPage();
    await signIn(second, page.url().slice(server.url.length));
    const theirs = second.getByRole("grid", { name: "Live records" });
    await theirs.getByRole("row", { name: /Written elsewhere/ }).getByRole("gridcell").first().dblclick();
    await second.keyboard.press("Control+A");
    await second.keyboard.type("Edited in another browser");
    await second.keyboard.press("Enter");
    await page.getByRole("row", { name: /Edited in another browser/ }).waitFor({ timeout: 1000 });
    expect(await page.evaluate(() => (window as { sameDocument?: boolean }).sameDocument)).toBe(true);
    await second.close();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("a webhook rule created on the page is test-fired at a local receiver", async () => {
    const page = await newPage();
    await signIn(page, "/admin/webhooks");
    await page.getByRole("link", { name: "New rule" }).click();
    await page.getByLabel("Name").fill("to the receiver");
    await page.getByLabel("Event").selectOption("record.created");
    await page.getByLabel("Target URL").fill(receiver.url);
    await page.getByLabel("Headers").fill("X-Team: research");
    await page.getByRole("button", { name: "Create rule" }).click();
    await page.getByRole("heading", { name: "to the receiver" }).waitFor();
    await page.getByRole("button", { name: "Send a test event" }).click();
    await page.getByText(/Test event: delivered \(HTTP 200\)/).waitFor();
    await atBothWidths(page, "webhook-test-fired");
    expect(receiver.received.at(-1)!.headers["x-team"]).toBe("research");
    await page.reload();
    await page.getByRole("row", { name: /webhook\.test|\(test\)/ }).first().waitFor();
    await page.close();
    expect(consoleErrors.filter((error) => !WRONG_CODE_404.test(error))).toEqual([]);
  });

  test("a doc opens from the tree drawn from its markdown, and is edited on the page as markdown; a skill's files open one by one", async () => {
    const key = await sessionKey("write");
    const body = "# Handbook\n\nWelcome **aboard**.\n\n- [x] Read this\n- Ask `Ada`\n\n| Day | Task |\n|---|---|\n| 1 | Setup |\n\n<script>alert(1)</script>\n\n[Home](/admin) and [bad](javascript:alert(1))";
    const doc = (await server.call("POST", "/api/v1/docs", { key, body: { slug: "handbook", name: "Handbook", body } })).body.node;
    await server.call("POST", "/api/v1/file-trees", { key, body: { type: "skill", slug: "triage", name: "Triage skill" } });
    const page = await newPage();
    await signIn(page, "/admin/data");
    await page.getByRole("link", { name: "Handbook" }).click();
    await page.getByRole("heading", { name: "Handbook", level: 1 }).waitFor();
    const drawn = page.locator(".markdown");
    await drawn.getByRole("heading", { name: "Handbook", level: 2 }).waitFor();
    expect(await drawn.locator("strong").textContent()).toBe("aboard");
    expect(await drawn.getByRole("checkbox", { name: "done" }).isChecked()).toBe(true);
    expect(await drawn.getByRole("cell", { name: "Setup" }).count()).toBe(1);
    expect(await drawn.locator("script").count()).toBe(0);
    expect(await drawn.textContent()).toContain("<script>alert(1)</script>");
    expect(await drawn.getByRole("link", { name: "Home" }).getAttribute("href")).toBe("/admin");
    expect(await drawn.getByRole("link", { name: "bad" }).count()).toBe(0);
    await page.getByLabel("Markdown").fill("# Handbook\n\nWelcome aboard, edited.");
    await page.getByRole("button", { name: "Save" }).click();
    await drawn.getByText("Welcome aboard, edited.").waitFor();
    expect((await server.call("GET", `/api/v1/docs/${doc.id}/lines?startLine=3`, { key })).body.lines).toEqual(["Welcome aboard, edited."]);

    await page.goto(`${server.url}/admin/data`);
    await page.getByRole("link", { name: "Triage skill" }).click();
    await page.getByRole("link", { name: "SKILL.md" }).click();
    await page.locator("pre.doc", { hasText: "name: triage" }).waitFor();
    await atBothWidths(page, "skill-files");
    await page.close();
  });

  test("a form is designed on a base, shared by its link, and a visitor's answer waits in the Inbox", async () => {
    const key = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key, body: { slug: "requests", name: "Requests", fields: [{ slug: "title", name: "Title", type: "text" }, { slug: "kind", name: "Kind", type: "select", options: { choices: [{ name: "Bug" }, { name: "Idea" }] } }, { slug: "votes", name: "Votes", type: "number" }, { slug: "internal", name: "Internal note", type: "text" }] } });
    const page = await newPage();
    await signIn(page, "/admin/bases/requests");
    await page.getByRole("button", { name: "New form" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Name").fill("Tell us");
    await dialog.getByLabel("Ask for Internal note").uncheck();
    await dialog.getByRole("group", { name: "Title" }).getByLabel("Required").check();
    await dialog.getByRole("button", { name: "Create form" }).click();
    const link = await page.locator(".forms code.secret").innerText();
    expect(link).toMatch(new RegExp(`^${server.url}/admin/f/nod_`));

    const visitor = await browser.newContext();
    const stranger = await visitor.newPage();
    await stranger.goto(link);
    await stranger.getByRole("heading", { name: "Tell us" }).waitFor();
    expect(await stranger.getByLabel("Internal note").count()).toBe(0);
    await stranger.getByLabel("Title (required)").fill("Dark mode");
    await stranger.getByLabel("Kind").selectOption("Idea");
    await stranger.getByLabel("Votes").fill("3");
    await stranger.getByRole("button", { name: "Send" }).click();
    await stranger.getByText("Thank you: your answer was sent, and waits for review.").waitFor();
    await visitor.close();

    const waiting = (await server.call("GET", "/api/v1/change-requests?status=in_review&limit=100", { key })).body;
    const answer = waiting.changeRequests.find((cr: { sourceAttribution: { channel: string } }) => cr.sourceAttribution.channel === "form");
    expect(answer.operations[0].headCommit.payload).toEqual({ title: "Dark mode", kind: "Idea", votes: 3 });
    await page.reload();
    await page.getByText("1 answer · each waits for review").waitFor();
    await atBothWidths(page, "base-forms");
    // The answer is the visitor's, not the form maker's key.
    await page.goto(`${server.url}/admin/change-requests/${answer.id}`);
    await page.getByText('A visitor of the form "Tell us", through its public link').waitFor();
    expect(await page.getByText(/through the key/).count()).toBe(0);
    await page.close();
  });

  test("plain words: a lookup shows its values, a history names linked records, Activity names people once per change", async () => {
    const write = await sessionKey("write");
    await server.call("POST", "/api/v1/bases", { key: write, body: { slug: "crews", name: "Crews", fields: [{ slug: "name", name: "Name", type: "text" }] } });
    const staff = (
      await server.call("POST", "/api/v1/bases", {
        key: write,
        body: { slug: "staff", name: "Staff", fields: [{ slug: "name", name: "Name", type: "text" }, { slug: "crew", name: "Crew", type: "relation", options: { targetBaseSlug: "crews" } }] },
      })
    ).body;
    await server.call("POST", "/api/v1/bases/staff/fields", { key: write, body: { slug: "crew_name", name: "Crew name", type: "lookup", options: { lookup: { relationFieldSlug: "crew", targetFieldSlug: "name" } } } });
    const platform = (await server.call("POST", "/api/v1/bases/crews/change-requests", { key: write, body: { fields: { name: "Platform" } } })).body.id;
    const lena = (await server.call("POST", "/api/v1/bases/staff/change-requests", { key: write, body: { fields: { name: "Lena Berg" } } })).body;
    // Lena, an editor of the space, links herself to a crew.
    const session = await server.signIn(EMAIL, PASSWORD);
    const [space] = (await server.call("GET", "/api/v1/spaces", { session })).body;
    await server.user("Lena", { password: PASSWORD });
    await server.call("POST", `/api/v1/spaces/${space.id}/members`, { session, body: { email: "lena@example.com", role: "editor" } });
    const lenaSession = await server.signIn("lena@example.com", PASSWORD);
    const edit = await server.call("POST", `/api/v1/records/${lena.id}/change-requests`, { session: lenaSession, body: { operation: "update", fields: { crew: [platform] }, baseCommitId: lena.headCommitId, message: "Lena Berg: Crew → Platform" } });
    expect(edit.status).toBe(201);

    const page = await newPage();
    await signIn(page, `/admin/bases/${staff.id}`);
    const row = page.getByRole("row", { name: /Lena Berg/ });
    await row.getByRole("gridcell", { name: "Platform", exact: true }).first().waitFor();
    expect(await row.innerText()).not.toContain('["');

    await page.goto(`${server.url}/admin/records/${lena.id}`);
    await page.getByRole("listitem").filter({ hasText: "Crew: — → Platform" }).waitFor();
    expect(await page.getByRole("table").last().innerText()).not.toContain("rec_");

    await page.goto(`${server.url}/admin/activity`);
    const lines = page.getByRole("listitem").filter({ hasText: "Lena Berg: Crew → Platform" });
    await lines.first().waitFor();
    expect(await lines.count()).toBe(1);
    expect(await lines.innerText()).toContain("Lena changed");
    expect(await page.locator("ol.activity").innerText()).not.toContain("usr_");
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  test("the first screen is the data: the filter folds into a toolbar, views sit together, nothing is cut short, a typed 1,234 is a number, a doc is made from the page; removing a choice says how many records hold it", async () => {
    const write = await sessionKey("write");
    const roadmap = (
      await server.call("POST", "/api/v1/bases", {
        key: write,
        body: {
          slug: "roadmap",
          name: "Roadmap",
          fields: [
            { slug: "name", name: "Name", type: "text" },
            { slug: "due", name: "Estimated completion date", type: "date" },
            { slug: "budget", name: "Budget", type: "number" },
            { slug: "status", name: "Status", type: "select", options: { choices: [{ name: "Waiting for the design review" }, { name: "Done" }] } },
          ],
        },
      })
    ).body;
    const launch = (await server.call("POST", "/api/v1/bases/roadmap/change-requests", { key: write, body: { fields: { name: "Launch", due: "2026-12-31", status: "Done" } } })).body;
    for (const name of ["Everything waiting for review", "Planned for the next quarter", "Done last year"]) {
      await server.call("POST", "/api/v1/views/change-requests", { key: write, body: { operation: "create", baseId: "roadmap", name, type: "table", config: {} } });
    }
    const page = await newPage();
    await signIn(page, `/admin/bases/${roadmap.id}`);
    const grid = page.getByRole("grid", { name: "Roadmap records" });
    await grid.getByRole("row", { name: /Launch/ }).waitFor();
    // The grid starts high on a 900 px screen: the filter is a button in the records' toolbar until opened.
    expect((await grid.boundingBox())!.y).toBeLessThan(450);
    expect(await page.getByRole("search", { name: "Filter records" }).isVisible()).toBe(false);
    await page.getByRole("button", { name: "Filter records…" }).click();
    await page.getByRole("search", { name: "Filter records" }).waitFor();
    // "Save as a view" is with the views.
    await page.getByRole("navigation", { name: "Views" }).getByRole("button", { name: "+ Save as a view" }).waitFor();
    // Headers and dates are whole.
    const cut = (element: HTMLElement) => element.scrollWidth > element.clientWidth + 1;
    expect(await grid.getByRole("button", { name: "Estimated completion date", exact: true }).evaluate(cut)).toBe(false);
    const dateCell = grid.getByRole("row", { name: /Launch/ }).getByRole("gridcell").nth(1);
    expect(await dateCell.evaluate(cut)).toBe(false);
    // A number typed with a thousands separator is taken, as a pasted one is.
    await grid.getByRole("row", { name: /Launch/ }).getByRole("gridcell").nth(2).click();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Control+A");
    await page.keyboard.type("1,234");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Saved Budget." }).waitFor();
    expect((await server.call("GET", `/api/v1/records/${launch.id}`, { key: write })).body.fields.budget).toBe(1234);
    // A choice's name box is wide enough to read.
    await grid.getByRole("button", { name: "Status: field menu" }).click();
    await page.getByRole("dialog", { name: "Status" }).getByRole("button", { name: "Edit field…" }).click();
    const choice = page.getByRole("dialog", { name: "Edit Status" }).getByLabel("Choice", { exact: true }).first();
    expect((await choice.boundingBox())!.width).toBeGreaterThan(120);
    // Removing a choice records hold says how many and what becomes of them first (item 8).
    await page.getByRole("dialog", { name: "Edit Status" }).getByRole("button", { name: "Remove Done" }).click();
    const removing = page.locator("dialog").filter({ hasText: "1 record holds “Done”." });
    await removing.getByText("it is no longer a choice").waitFor();
    await removing.getByRole("button", { name: "Cancel" }).click();
    expect(await page.getByRole("dialog", { name: "Edit Status" }).getByLabel("Choice", { exact: true }).count()).toBe(2);
    await page.keyboard.press("Escape");
    // On a phone the view tabs scroll in one row, each name on one line.
    await page.setViewportSize({ width: 375, height: 800 });
    const tabs = page.getByRole("navigation", { name: "Views" });
    const heights = await tabs.getByRole("link").evaluateAll((links) => links.map((link) => link.getBoundingClientRect().height));
    expect(Math.max(...heights)).toBeLessThan(40);
    expect((await tabs.locator("ul").boundingBox())!.height).toBeLessThan(60);
    await page.setViewportSize({ width: 1440, height: 900 });
    // A doc is made from the Data screen.
    await page.goto(`${server.url}/admin/data`);
    await page.getByRole("button", { name: "New doc" }).click();
    const dialog = page.getByRole("dialog", { name: "New doc" });
    await dialog.getByLabel("Name").fill("Onboarding notes");
    await dialog.getByRole("button", { name: "Create doc" }).click();
    await page.getByRole("link", { name: "Onboarding notes" }).click();
    await page.getByRole("heading", { name: "Onboarding notes" }).waitFor();
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  test("a space is cloned from another Basalt on the Remotes screen, then pulled and pushed from it", async () => {
    const team = new TestServer();
    try {
      const lead = await team.user("Ada");
      const teamSpace = await team.space(lead.id, "Team", "team");
      const teamKey = await team.key(lead.id, "write");
      const teamCall = (method: string, path: string, body?: unknown) => team.call(method, path, { key: teamKey, space: teamSpace.id, body });
      await teamCall("POST", "/api/v1/bases", { slug: "notes", name: "Notes", fields: [{ slug: "title", name: "Title", type: "text" }] });
      await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "Written by the team" } });
      const page = await newPage();
      await signIn(page, "/admin/remotes");
      const clone = page.locator("section", { hasText: "Clone a space from another Basalt" });
      await clone.getByLabel("Address").fill(team.url);
      await clone.getByLabel("The remote's space").fill("team");
      await clone.getByLabel("API key of the remote").fill(teamKey);
      await clone.getByLabel("Slug here").fill("team-copy");
      await clone.getByRole("button", { name: "Clone" }).click();
      await page.getByText("Cloned. This space now follows the remote origin.").waitFor();
      await page.getByRole("heading", { name: "origin" }).waitFor();
      await teamCall("POST", "/api/v1/bases/notes/change-requests", { fields: { title: "Merged there later" } });
      await page.getByRole("button", { name: "Pull" }).click();
      await page.getByText(/Pulled: 1 applied/).waitFor();
      const session = await server.signIn(EMAIL, PASSWORD);
      const here = (await server.call("GET", "/api/v1/records?baseId=notes", { session, space: "team-copy" })).body.records.map((record: { fields: { title: string } }) => record.fields.title);
      expect(here.sort()).toEqual(["Merged there later", "Written by the team"]);
      await server.call("POST", "/api/v1/bases/notes/change-requests", { session, space: "team-copy", body: { fields: { title: "Made on the laptop" } } });
      await page.getByRole("button", { name: "Push" }).click();
      await page.getByText(/Pushed: 1 merged on the remote/).waitFor();
      await atBothWidths(page, "remotes-pulled-pushed");
      const there = (await teamCall("GET", "/api/v1/records?baseId=notes")).body.records.map((record: { fields: { title: string } }) => record.fields.title);
      expect(there).toContain("Made on the laptop");
      const copy = (await server.call("GET", "/api/v1/spaces", { session })).body.find((space: { slug: string }) => space.slug === "team-copy");
      expect((await server.call("DELETE", `/api/v1/spaces/${copy.id}`, { session, body: { confirm: "team-copy" } })).status).toBe(200);
      await page.close();
      expect(consoleErrors).toEqual([]);
    } finally {
      await team.stop();
    }
  });

  test("every screen fits 375 px and 1440 px without horizontal overflow, and no page logged an error", async () => {
    const session = await server.signIn(EMAIL, PASSWORD);
    const record = (await server.call("GET", "/api/v1/records?baseId=papers", { session })).body.records[0];
    const change = (await server.call("GET", "/api/v1/change-requests", { session })).body.changeRequests[0];
    const rule = (await server.call("GET", "/api/v1/webhooks", { session })).body;
    const base = record.baseId;
    const books = (await server.call("GET", "/api/v1/bases/books", { session })).body;
    const tasks = (await server.call("GET", "/api/v1/bases/tasks", { session })).body;
    const [board] = (await server.call("GET", `/api/v1/bases/${tasks.id}/views`, { session })).body;
    const [book] = (await server.call("GET", "/api/v1/records?baseId=books&limit=1", { session })).body.records;
    const meetings = (await server.call("GET", "/api/v1/bases/meetings", { session })).body;
    const [agenda] = (await server.call("GET", `/api/v1/bases/${meetings.id}/views`, { session })).body;
    const essays = (await server.call("GET", "/api/v1/bases/essays", { session })).body;
    const [covers] = (await server.call("GET", `/api/v1/bases/${essays.id}/views`, { session })).body;
    const screens: [string, string, string?][] = [
      ["inbox", "/admin/inbox"],
      ["change-request", `/admin/change-requests/${change.id}`],
      ["data", "/admin/data"],
      ["doc", "/admin/docs/handbook"],
      ["base", `/admin/bases/${base}`],
      // A phone shows a base's records as a list, a wider screen as the grid.
      ["grid", `/admin/bases/${books.id}`, 'tr[data-row="0"] td[role=gridcell], ul.record-list > li'],
      ["record-panel", `/admin/bases/${books.id}?record=${book.id}`, ".record-panel"],
      ["kanban", `/admin/bases/${tasks.id}?view=${board.id}`, ".board-card"],
      ["gallery", `/admin/bases/${essays.id}?view=${covers.id}`, ".gallery-card"],
      ["calendar", `/admin/bases/${meetings.id}?view=${agenda.id}&month=2026-03`, "table.month, ol.agenda"],
      ["record", `/admin/records/${record.id}`],
      ["new-record", `/admin/bases/${base}/new`],
      ["keys", "/admin/keys"],
      ["device", "/admin/device"],
      ["webhooks", "/admin/webhooks"],
      ["webhook", `/admin/webhooks/${rule[0].id}`],
      ["remotes", "/admin/remotes"],
      ["spaces", "/admin/spaces"],
      ["search", "/admin/search?q=book"],
      ["activity", "/admin/activity"],
      ["users", "/admin/users"],
    ];
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
    for (const width of [375, 1440]) {
      const page = await newPage(width);
      const check = async (name: string, path: string, drawn?: string) => {
        await page.goto(server.url + path);
        await page.locator("main h1").waitFor();
        if (drawn) await page.locator(drawn).filter({ visible: true }).first().waitFor();
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${name} at ${width} px`).toBeLessThanOrEqual(0);
        if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
      };
      await check("sign-in", "/admin/login");
      await signIn(page);
      if (width === 375) {
        // On a phone the navigation folds behind one button.
        const dataLink = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Data" });
        expect(await dataLink.isVisible()).toBe(false);
        await page.getByRole("button", { name: "Menu", exact: true }).click();
        await dataLink.waitFor();
        expect(await page.getByRole("button", { name: "Menu", exact: true }).getAttribute("aria-expanded")).toBe("true");
      }
      for (const [name, path, drawn] of screens) await check(name, path, drawn);
      await page.close();
    }
    expect(consoleErrors).toEqual([]);
  }, 120_000);
});
