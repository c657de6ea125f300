import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { browserAvailable, launchBrowser } from "./browser";
import { fillBase, freshWorkspace, type TestServer, type Workspace } from "./helpers";

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
    await page.getByRole("heading", { name: "Convert Status from Single select to Multiple select in Moves" }).waitFor();
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
    await task.getByRole("button", { name: "Cancel" }).click();

    // A deletion's change request says what the proposer was told: the field, its type, the values it takes.
    await grid.getByRole("button", { name: "Status: field menu" }).click();
    await page.getByRole("dialog", { name: "Status" }).getByRole("button", { name: "Delete…" }).click();
    const deletion = page.getByRole("dialog", { name: "Delete Status?" });
    await deletion.getByText("Its values in 2 of 3 records are cleared.", { exact: false }).waitFor();
    await deletion.getByRole("button", { name: "Propose deletion" }).click();
    await page.waitForURL(/\/admin\/change-requests\/crq_/);
    await page.getByRole("heading", { name: "Delete the field Status of Moves" }).waitFor();
    await page.getByText("Deletes Status (Multiple select): 2 of 3 records lose their value; a deleted field can be restored with its values.").waitFor();
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);
  test("imported names become links: the dialog picks the base, says which names match no record or several, and the merge links the rest", async () => {
    const people = await baseWith("people", [{ slug: "name", name: "Name", type: "text" }], [{ name: "Zoë Müller" }, { name: "Grace Hopper" }, { name: "Ada Lovelace" }, { name: "Ada Lovelace" }]);
    const { id, recordIds } = await baseWith("tracker", [{ slug: "task", name: "Task", type: "text" }, { slug: "owner", name: "Owner", type: "text" }], [
      { task: "Rack servers", owner: "ZOE MULLER" },
      { task: "Page on-call", owner: "grace hopper, Nobody" },
      { task: "Plan", owner: "Someone Else" },
      { task: "Write", owner: "ada lovelace" },
    ]);
    const page = await signedIn(`/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Tracker records" });
    await grid.getByRole("button", { name: "Owner: field menu" }).click();
    await page.getByRole("dialog", { name: "Owner" }).getByRole("button", { name: "Edit field…" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit Owner" });
    await dialog.getByLabel("Type").selectOption({ label: "Link to records" });
    await dialog.getByLabel("Links to records of").selectOption({ label: "People" });
    await dialog.getByLabel("Split text on commas: “a, b” names two records").check();
    const said =
      "Owner: Text → Link to records. Of 4 records, 1 keep their value, 1 change in form, 2 lose it (it becomes empty): “Someone Else”, “ada lovelace”. 2 names match no record and are dropped: “Nobody”, “Someone Else”. 1 name matches several records, which it does not tell apart, and is dropped (give those records names of their own to link them): “ada lovelace”.";
    await dialog.getByText(said).waitFor();
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.waitForURL(/\/admin\/change-requests\/crq_/);
    await page.getByText(said).waitFor();
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByRole("button", { name: "Merge" }).click();
    await page.getByText("Merged", { exact: true }).first().waitFor();
    expect(await valueOf(recordIds[0], "owner")).toEqual([people.recordIds[0]]);
    expect(await valueOf(recordIds[1], "owner")).toEqual([people.recordIds[1]]);
    expect(await valueOf(recordIds[2], "owner")).toEqual([]);
    expect(await valueOf(recordIds[3], "owner")).toEqual([]);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  test("names pasted into a link column link the records they name; a name matching none, or several, is said, and nothing is written", async () => {
    const crew = await baseWith("crew", [{ slug: "name", name: "Name", type: "text" }], [{ name: "Zoë Müller" }, { name: "Grace Hopper" }, { name: "Ada Lovelace" }, { name: "ADA LOVELACE" }]);
    const { id, recordIds } = await baseWith("jobs", [{ slug: "job", name: "Job", type: "text" }, { slug: "lead", name: "Lead", type: "relation", options: { targetBaseId: crew.id } }], [{ job: "first" }, { job: "second" }]);
    const page = await signedIn(`/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Jobs records" });
    // The newest record is the first row: "second", then "first".
    await grid.getByRole("row", { name: /\bsecond\b/ }).getByRole("gridcell").nth(1).click();
    const paste = (text: string) =>
      page.evaluate((text) => {
        const data = new DataTransfer();
        data.setData("text/plain", text);
        document.activeElement!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
      }, text);
    await paste("ZOE MULLER\nNobody\n");
    await page.getByRole("alert").filter({ hasText: "Nothing was pasted: line 2 of the pasted text (first): “Nobody” names no record of Crew." }).waitFor();
    expect(await valueOf(recordIds[1], "lead")).toEqual([]);
    // Two records bear this name: which one is meant is asked, not guessed.
    await paste("ZOE MULLER\nada lovelace\n");
    await page.getByRole("alert").filter({ hasText: "Nothing was pasted: line 2 of the pasted text (first): “ada lovelace” names several records of Crew" }).waitFor();
    expect(await valueOf(recordIds[1], "lead")).toEqual([]);
    expect(await valueOf(recordIds[0], "lead")).toEqual([]);
    await paste("ZOE MULLER\ngrace hopper, zoë müller\n");
    await page.getByRole("status").filter({ hasText: "Pasted 2 rows: saved." }).waitFor();
    expect(await valueOf(recordIds[1], "lead")).toEqual([crew.recordIds[0]]);
    expect(await valueOf(recordIds[0], "lead")).toEqual([crew.recordIds[1], crew.recordIds[0]]);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  test("a base's own import offers each new column's type, previews again with the one chosen and makes the field so", async () => {
    const { id } = await baseWith("stock", [{ slug: "item", name: "Item", type: "text" }], []);
    const page = await signedIn(`/admin/bases/${id}`);
    await page.getByLabel("File to import").setInputFiles({ name: "stock.csv", mimeType: "text/csv", buffer: Buffer.from("item,sku\nBolts,0012\nNuts,0340\n") });
    await page.getByLabel("Make a field for each column no field matches").check();
    await page.getByRole("button", { name: "Preview import" }).click();
    const sku = page.getByLabel("Type of sku");
    await sku.waitFor();
    // Its values fit a number first; as a number "0012" would lose its zeros, so the person keeps it text.
    expect(await sku.inputValue()).toBe("number");
    await sku.selectOption({ label: "Text" });
    await page.getByText("No errors: the import can go ahead.").waitFor();
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByText("Imported 2 records.").waitFor();
    const base = (await server.call("GET", `/api/v1/bases/${id}`, { key: ws.read })).body;
    expect(base.fields.find((field: { slug: string }) => field.slug === "sku")).toMatchObject({ type: "text" });
    const records = (await server.call("GET", `/api/v1/records?baseId=${id}&sort=item`, { key: ws.read })).body.records;
    expect(records.map((record: { fields: Record<string, unknown> }) => record.fields.sku)).toEqual(["0012", "0340"]);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  test("a click starts a new selection; a clear reaching cells out of sight says how many values it changes first", async () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({ item: `Item ${30 - i}`, qty: 30 - i }));
    const { id } = await baseWith("ranges", [{ slug: "item", name: "Item", type: "text" }, { slug: "qty", name: "Qty", type: "number" }], rows);
    const qty = async () => ((await server.call("GET", "/api/v1/records?baseId=ranges&sort=qty&limit=50&include=none", { key: ws.read })).body.records as { fields: { qty: number | null } }[]).map((record) => record.fields.qty);
    const page = await signedIn(`/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Ranges records" });
    const cell = (item: string) => grid.getByRole("row", { name: new RegExp(`\\b${item}\\b`) }).getByRole("gridcell").nth(1);
    await cell("Item 1").click();
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Shift+ArrowDown");
    expect(await grid.locator("td.in-range").count()).toBe(3);
    // A click elsewhere: the keyboard's range is gone, and Delete clears the one cell clicked.
    await cell("Item 5").click();
    expect(await grid.locator("td.in-range").count()).toBe(0);
    await page.keyboard.press("Delete");
    await page.getByRole("status").filter({ hasText: "Cleared Qty: saved." }).waitFor();
    expect((await qty()).filter((value) => value === null)).toHaveLength(1);
    expect(await qty()).toContain(1);

    // To the last row: most of the range is out of sight, so the clear asks first, and Cancel keeps every value.
    await cell("Item 1").click();
    await page.keyboard.press("Control+Shift+ArrowDown");
    await page.keyboard.press("Delete");
    const ask = page.getByRole("dialog", { name: "Clear 29 values in 29 records?" });
    await ask.getByText(/cells? of the range (is|are) out of sight/).waitFor();
    await ask.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("status").filter({ hasText: "Nothing cleared." }).waitFor();
    expect((await qty()).filter((value) => value === null)).toHaveLength(1);
    await page.keyboard.press("Delete");
    await page.getByRole("dialog", { name: "Clear 29 values in 29 records?" }).getByRole("button", { name: "Clear them" }).click();
    await page.getByRole("status").filter({ hasText: "Cleared Qty: saved." }).waitFor();
    expect((await qty()).every((value) => value === null)).toBe(true);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  test("every grid edit is undone by Ctrl+Z, Enter-typed ones too; a refused value is given up by clicking away, which then takes the keys", async () => {
    const { id } = await baseWith("undoing", [{ slug: "item", name: "Item", type: "text" }, { slug: "qty", name: "Qty", type: "number" }], [{ item: "b", qty: 2 }, { item: "a", qty: 1 }]);
    const values = async () => ((await server.call("GET", "/api/v1/records?baseId=undoing&sort=item&include=none", { key: ws.read })).body.records as { fields: { item: string; qty: number | null } }[]).map((record) => [record.fields.item, record.fields.qty]);
    const page = await signedIn(`/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Undoing records" });
    const status = page.getByRole("status").filter({ hasText: /./ });
    // Click, Enter, type, Enter: saved, and Ctrl+Z undoes it.
    await grid.getByRole("row", { name: /\ba\b/ }).getByRole("gridcell").nth(1).click();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Control+a");
    await page.keyboard.type("7");
    await page.keyboard.press("Enter");
    await status.filter({ hasText: "Saved Qty." }).waitFor();
    expect(await values()).toEqual([["a", 7], ["b", 2]]);
    await page.keyboard.press("Control+z");
    await status.filter({ hasText: "Undid: a: Qty 1 → 7: saved." }).waitFor();
    expect(await values()).toEqual([["a", 1], ["b", 2]]);

    // A value the field refuses keeps its editor until the person clicks away, which gives it up and says so.
    await grid.getByRole("row", { name: /\bb\b/ }).getByRole("gridcell").nth(1).dblclick();
    await page.keyboard.press("Control+a");
    await page.keyboard.type("many");
    await page.keyboard.press("Enter");
    await page.getByRole("alert").filter({ hasText: "not a number" }).waitFor();
    await grid.getByRole("row", { name: /\ba\b/ }).getByRole("gridcell").nth(1).click();
    await page.getByRole("alert").filter({ hasText: "Not saved: Qty keeps its value" }).waitFor();
    expect(await grid.locator("td[role=gridcell] input").count()).toBe(0);
    // The keys now reach the cell clicked.
    await page.keyboard.press("Delete");
    await status.filter({ hasText: "Cleared Qty: saved." }).waitFor();
    expect(await values()).toEqual([["a", null], ["b", 2]]);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  test("rows added on the grid are undone by Ctrl+Z: a paste's new records and a row typed in are proposed for archiving, through review", async () => {
    const { id, recordIds } = await baseWith("adding", [{ slug: "item", name: "Item", type: "text" }], [{ item: "kept" }]);
    const active = async () => ((await server.call("GET", "/api/v1/records?baseId=adding&sort=item&include=none", { key: ws.read })).body.records as { fields: { item: string } }[]).map((record) => record.fields.item);
    const page = await signedIn(`/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Adding records" });
    const status = page.getByRole("status").filter({ hasText: /./ });
    // A paste on the last row changes it and adds the rows past it.
    await grid.getByRole("row", { name: /\bkept\b/ }).getByRole("gridcell").first().click();
    await page.evaluate((text) => {
      const data = new DataTransfer();
      data.setData("text/plain", text);
      document.activeElement!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    }, "changed\nnew one\nnew two");
    await status.filter({ hasText: "Pasted 3 rows: saved. 2 new records." }).waitFor();
    expect(await active()).toEqual(["changed", "new one", "new two"]);
    // Ctrl+Z writes the changed cell back and proposes archiving the two new records (an archive always waits for review).
    await grid.getByRole("row", { name: /\bchanged\b/ }).getByRole("gridcell").first().click();
    await page.keyboard.press("Control+z");
    await status.filter({ hasText: "archiving the 2 new records waits for review in the Inbox" }).waitFor();
    expect(await valueOf(recordIds[0], "item")).toBe("kept");
    const waiting = (await server.call("GET", "/api/v1/change-requests?baseId=adding&status[0]=in_review", { key: ws.read })).body.changeRequests as { id: string }[];
    expect(waiting).toHaveLength(1);
    await server.call("POST", `/api/v1/change-requests/${waiting[0].id}/reviews`, { key: ws.write, body: { verdict: "approved" } });
    await server.call("POST", `/api/v1/change-requests/${waiting[0].id}/merge`, { key: ws.write });
    expect(await active()).toEqual(["kept"]);

    // A row added by its new-record line is undone the same way.
    await page.getByRole("textbox", { name: "New record: Item" }).fill("typed in");
    await page.keyboard.press("Enter");
    await status.filter({ hasText: "Added typed in." }).waitFor();
    await grid.getByRole("row", { name: /\bkept\b/ }).getByRole("gridcell").first().click();
    await page.keyboard.press("Control+z");
    await status.filter({ hasText: "Undid: Added typed in: archiving the 1 new record waits for review in the Inbox" }).waitFor();
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  test("two people on one record: the second save offers their value and yours, field by field, instead of refusing again", async () => {
    const { id, recordIds } = await baseWith("shared", [{ slug: "title", name: "Title", type: "text" }, { slug: "owner", name: "Owner", type: "text" }], [{ title: "Launch plan", owner: "Ada" }]);
    const page = await signedIn(`/admin/records/${recordIds[0]}`);
    await page.getByLabel("Title").fill("Launch plan v2");
    // Meanwhile someone else changes the same field.
    await server.call("POST", `/api/v1/records/${recordIds[0]}/change-requests`, { key: ws.write, body: { operation: "update", fields: { title: "Launch plan (final)" } } });
    await page.getByLabel("Title").press("Enter");
    const dialog = page.getByRole("dialog", { name: "Someone changed this record meanwhile" });
    await dialog.getByText("Launch plan (final)", { exact: true }).waitFor();
    await dialog.getByText("Launch plan v2", { exact: true }).waitFor();
    await dialog.getByLabel("Keep yours for Title").check();
    await dialog.getByRole("button", { name: "Save the values kept" }).click();
    await page.getByText("Saved.").waitFor();
    expect(await valueOf(recordIds[0], "title")).toBe("Launch plan v2");

    // In the grid: a cell being edited while another client changes it; keeping theirs saves nothing.
    await page.goto(`${server.url}/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Shared records" });
    await grid.getByRole("row", { name: /Launch plan v2/ }).getByRole("gridcell").nth(1).dblclick();
    await page.keyboard.press("Control+a");
    await page.keyboard.type("Grace");
    await server.call("POST", `/api/v1/records/${recordIds[0]}/change-requests`, { key: ws.write, body: { operation: "update", fields: { owner: "Lena" } } });
    await page.keyboard.press("Enter");
    const again = page.getByRole("dialog", { name: "Someone changed this record meanwhile" });
    await again.getByLabel("Keep theirs for Owner").check();
    await again.getByRole("button", { name: "Save the values kept" }).click();
    await page.getByRole("status").filter({ hasText: "Owner keeps the value someone else gave it." }).waitFor();
    expect(await valueOf(recordIds[0], "owner")).toBe("Lena");
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);
  test("archived records, deleted fields with their values and deleted views are seen and restored from the page, through review where removing was", async () => {
    const { id, recordIds } = await baseWith("keep", [{ slug: "title", name: "Title", type: "text" }, { slug: "priority", name: "Priority", type: "text" }], [{ title: "Old idea", priority: "p1" }, { title: "Live idea", priority: "p2" }]);
    const merge = async (changeRequestId: string) => {
      await server.call("POST", `/api/v1/change-requests/${changeRequestId}/reviews`, { key: ws.write, body: { verdict: "approved" } });
      expect((await server.call("POST", `/api/v1/change-requests/${changeRequestId}/merge`, { key: ws.write })).status).toBe(200);
    };
    await merge((await server.call("POST", `/api/v1/records/${recordIds[0]}/change-requests`, { key: ws.write, body: { operation: "delete" } })).body.id);
    const priority = (await server.call("GET", "/api/v1/bases/keep", { key: ws.read })).body.fields.find((field: { slug: string }) => field.slug === "priority");
    await merge((await server.call("POST", "/api/v1/bases/keep/fields/change-requests", { key: ws.write, body: { operation: "delete", fieldId: priority.id } })).body.id);
    await server.fieldUpkeep.settled();
    const view = (await server.call("POST", "/api/v1/views/change-requests", { key: ws.write, body: { operation: "create", baseId: id, name: "Triage", type: "table" } })).body;
    expect((await server.call("POST", "/api/v1/views/change-requests", { key: ws.write, body: { operation: "delete", viewId: view.id } })).status).toBe(201);

    const page = await signedIn(`/admin/bases/${id}`);
    await page.getByRole("link", { name: "Archived and deleted" }).click();
    await page.getByRole("heading", { name: "Archived and deleted in Keep" }).waitFor();
    // A record's restore waits for review, as its archive did.
    await page.getByRole("button", { name: "Restore Old idea" }).click();
    await page.getByText("Restoring Old idea is proposed: it waits for review in the Inbox.").waitFor();
    const waiting = (await server.call("GET", "/api/v1/change-requests?status=in_review&limit=1", { key: ws.read })).body.changeRequests[0];
    expect(waiting.operations[0]).toMatchObject({ operation: "record_restore", targetRecordId: recordIds[0] });
    await merge(waiting.id);
    expect((await server.call("GET", `/api/v1/records/${recordIds[0]}`, { key: ws.read })).body.status).toBe("active");
    // The merge elsewhere draws the screen again: the record leaves the list, what was said stays.
    await page.getByText("No archived records.").waitFor();
    await page.getByText("Restoring Old idea is proposed").waitFor();
    // A field's too, and it comes back with its values.
    await page.getByRole("button", { name: "Restore Priority" }).click();
    await page.getByText("Restoring Priority is proposed: it waits for review in the Inbox.").waitFor();
    await merge((await server.call("GET", "/api/v1/change-requests?status=in_review&limit=1", { key: ws.read })).body.changeRequests[0].id);
    await server.fieldUpkeep.settled();
    expect(await valueOf(recordIds[1], "priority")).toBe("p2");
    expect(await valueOf(recordIds[0], "priority")).toBe("p1");
    // A view's is merged at once with write, as its deletion was; the screen then lists it no more.
    await page.reload();
    await page.getByRole("button", { name: "Restore Triage" }).click();
    await page.getByText("No deleted views.").waitFor();
    expect((await server.call("GET", `/api/v1/views/${view.id}`, { key: ws.read })).body.status).toBe("active");
    await page.getByText("No archived records.").waitFor();
    await page.getByText("No deleted fields.").waitFor();
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 90_000);
});

/** A base of `count` records titled "Entry 1" to "Entry <count>" (the grid shows the newest first: row 0 is the last made). */
async function longBase(slug: string, count: number): Promise<string> {
  const base = (await server.call("POST", "/api/v1/bases", { key: ws.write, body: { slug, name: slug[0].toUpperCase() + slug.slice(1), fields: [{ slug: "title", name: "Title", type: "text" }] } })).body;
  await fillBase(server, ws.write, slug, count, (i) => ({ title: `Entry ${i + 1}` }));
  return base.id;
}

describe.skipIf(!browserAvailable)("the grid keeps what it shows", () => {
  test("a frame made taller draws the rows it then shows at once, before and after a cell is clicked, and when a phone is turned", async () => {
    const id = await longBase("tall", 200);
    const page = await signedIn(`/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Tall records" });
    await grid.locator('tr[data-row="0"] td[role=gridcell]:not(.loading)').first().waitFor();
    /** The frame's last visible line is a drawn row's, not the blank that stands for rows not drawn (no scroll happens meanwhile). */
    const bottomDrawn = () =>
      page.waitForFunction(
        () => {
          const box = document.querySelector(".grid-scroll")!.getBoundingClientRect();
          return !!document.elementFromPoint(box.left + 120, Math.min(box.bottom, innerHeight) - 6)?.closest("tr[data-row]");
        },
        null,
        { timeout: 3000 },
      );
    await page.setViewportSize({ width: 1440, height: 1600 });
    await bottomDrawn();
    await page.setViewportSize({ width: 1440, height: 900 });
    await grid.locator('tr[data-row="1"] td[role=gridcell]').first().click();
    await page.setViewportSize({ width: 1440, height: 1600 });
    await bottomDrawn();
    // A phone shown the grid, turned from sideways to upright.
    await page.evaluate(() => localStorage.setItem("basalt.records.layout", "grid"));
    await page.setViewportSize({ width: 667, height: 375 });
    await page.reload();
    await grid.locator('tr[data-row="0"] td[role=gridcell]:not(.loading)').first().waitFor();
    await page.setViewportSize({ width: 375, height: 667 });
    await bottomDrawn();
    expect(await page.locator(".grid-scroll").evaluate((scroller) => scroller.scrollTop)).toBe(0);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);
  test("a record opened beside the grid keeps the grid's place and keyboard, and so does closing it, at 1440 and 375 px; so do an edit, its undo, a proposal arriving, the rows' height changed and a filter put back", async () => {
    const id = await longBase("placed", 300);
    const page = await signedIn(`/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Placed records" });
    const scroller = page.locator(".grid-scroll");
    const rowShown = (row: number) => grid.locator(`tr[data-row="${row}"] td[role=gridcell]:not(.loading)`).first();
    /**
     * The first row the frame shows once the grid has settled: a grid drawn again is scrolled to its
     * kept place when the frame is laid out (a ResizeObserver, before the next paint), so its rows
     * can be on the page a moment before the frame's scroll is.
     */
    const firstInView = async (expected: number, rowHeight = 34) => {
      await page.waitForFunction(([row, height]) => Math.round(document.querySelector(".grid-scroll")!.scrollTop / height) === row, [expected, rowHeight], { timeout: 5000 }).catch(() => undefined);
      return scroller.evaluate((frame, height) => Math.round(frame.scrollTop / height), rowHeight);
    };
    /** The frame's scroll once settled, as `firstInView`. */
    const scrolledTo = async (expected: number) => {
      await page.waitForFunction((top) => document.querySelector(".grid-scroll")!.scrollTop === top, expected, { timeout: 5000 }).catch(() => undefined);
      return scroller.evaluate((frame) => frame.scrollTop);
    };
    const focusedRow = () => page.evaluate(() => document.activeElement?.closest("tr")?.getAttribute("data-row") ?? null);
    await page.evaluate(() => localStorage.setItem("basalt.records.layout", "grid"));
    for (const width of [1440, 375]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.url}/admin/bases/${id}`);
      await rowShown(0).waitFor();
      await scroller.evaluate((frame) => frame.scrollTo(0, 145 * 34));
      await rowShown(145).waitFor();
      await grid.locator('tr[data-row="145"] th a').click();
      const panel = page.getByRole("complementary", { name: "Record Entry 155" });
      await panel.waitFor();
      await rowShown(145).waitFor();
      expect(await firstInView(145)).toBe(145);
      await panel.getByRole("link", { name: "Close" }).click();
      await panel.waitFor({ state: "detached" });
      await rowShown(145).waitFor();
      expect(await firstInView(145)).toBe(145);
      // The keyboard is back on the row whose record was opened.
      expect(await focusedRow()).toBe("145");
      // Ctrl+End: the last record, opened and closed with the keyboard.
      await page.keyboard.press("Control+End");
      await rowShown(299).waitFor();
      expect(await focusedRow()).toBe("299");
      const bottom = await scroller.evaluate((frame) => frame.scrollTop);
      await grid.locator('tr[data-row="299"] th a').click();
      await page.getByRole("complementary", { name: "Record Entry 1" }).waitFor();
      await page.keyboard.press("Escape");
      await page.getByRole("complementary").waitFor({ state: "detached" });
      await rowShown(299).waitFor();
      expect(await scrolledTo(bottom)).toBe(bottom);
      expect(await focusedRow()).toBe("299");
    }
    // What redraws the grid in place keeps it: an edit, its undo, a proposal arriving by the stream.
    await page.setViewportSize({ width: 1440, height: 900 });
    await scroller.evaluate((frame) => frame.scrollTo(0, 100 * 34));
    await rowShown(100).waitFor();
    await grid.locator('tr[data-row="102"] td[role=gridcell]').first().click();
    await page.keyboard.press("Enter");
    await page.keyboard.type(" edited");
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Saved Title." }).waitFor();
    expect([await firstInView(100), await focusedRow()]).toEqual([100, "103"]);
    await page.keyboard.press("Control+z");
    await page.getByRole("status").filter({ hasText: "Undid" }).waitFor();
    await grid.getByRole("gridcell", { name: "Entry 198", exact: true }).waitFor();
    expect([await firstInView(100), await focusedRow()]).toEqual([100, "103"]);
    const proposedId = new URL((await grid.locator('tr[data-row="101"] th a').getAttribute("href"))!, server.url).searchParams.get("record");
    await server.call("POST", `/api/v1/records/${proposedId}/change-requests`, { key: ws.propose, body: { operation: "update", fields: { title: "Entry 199 renamed" } } });
    await grid.locator(".proposed-value").filter({ hasText: "Entry 199 renamed" }).waitFor();
    expect([await firstInView(100), await focusedRow()]).toEqual([100, "103"]);
    // A screen drawn again for another reason keeps it too: the rows' height changed (the place is a row, not pixels).
    await page.getByLabel("Row height").selectOption("medium");
    await grid.locator('tr[data-row="100"] td[role=gridcell]:not(.loading)').first().waitFor();
    expect(await firstInView(100, 56)).toBe(100);
    await page.getByLabel("Row height").selectOption("short");
    await rowShown(100).waitFor();
    // A filter is a listing of its own: it opens at its top, and the grid without it where it was.
    const where = encodeURIComponent(JSON.stringify({ match: "all", conditions: [{ field: "title", op: "contains", value: "Entry 1" }], groups: [] }));
    // Moved to within the page, as its own links and filter do (a load of the page starts at the top).
    await page.evaluate((address) => (history.pushState(null, "", address), dispatchEvent(new PopStateEvent("popstate"))), `${new URL(page.url()).pathname}?where=${where}`);
    await page.getByText("111 of 300 records").waitFor();
    await rowShown(0).waitFor();
    expect(await firstInView(0)).toBe(0);
    await page.goBack();
    await rowShown(100).waitFor();
    expect(await firstInView(100)).toBe(100);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 90_000);
  test("on a phone, the list keeps the records it showed and the window's place when a record opens over it and closes; the keyboard comes back to that record", async () => {
    const id = await longBase("listed", 120);
    const page = await signedIn(`/admin/bases/${id}`);
    await page.setViewportSize({ width: 375, height: 800 });
    await page.evaluate(() => localStorage.removeItem("basalt.records.layout"));
    await page.reload();
    const list = page.getByRole("list", { name: "Listed records" });
    const items = list.locator(":scope > li");
    await page.getByRole("button", { name: "Show more" }).click();
    await page.getByRole("button", { name: "Show more" }).click();
    await page.getByRole("button", { name: "Show more" }).waitFor({ state: "hidden" });
    expect(await items.count()).toBe(120);
    const entry = list.getByRole("link", { name: "Entry 10", exact: true });
    await entry.scrollIntoViewIfNeeded();
    const scrolled = await page.evaluate(() => scrollY);
    expect(scrolled).toBeGreaterThan(1000);
    await entry.click();
    const panel = page.getByRole("complementary", { name: "Record Entry 10" });
    await panel.waitFor();
    expect([await items.count(), await page.evaluate(() => scrollY)]).toEqual([120, scrolled]);
    await panel.getByRole("link", { name: "Close" }).click();
    await panel.waitFor({ state: "detached" });
    expect(await items.count()).toBe(120);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Entry 10");
    expect(await entry.evaluate((link) => link.getBoundingClientRect().top >= 0 && link.getBoundingClientRect().bottom <= innerHeight)).toBe(true);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);
});

describe.skipIf(!browserAvailable)("the page shows what applies, once", () => {
  test("a conversion's dialog shows the options of the type chosen, and only those", async () => {
    await baseWith("owners", [{ slug: "name", name: "Name", type: "text" }], [{ name: "Ada" }]);
    const { id } = await baseWith("converts", [{ slug: "task", name: "Task", type: "text" }, { slug: "owner", name: "Owner", type: "text" }], [{ task: "Plan", owner: "Ada" }]);
    const page = await signedIn(`/admin/bases/${id}`);
    await page.getByRole("grid", { name: "Converts records" }).getByRole("button", { name: "Owner: field menu" }).click();
    await page.getByRole("dialog", { name: "Owner" }).getByRole("button", { name: "Edit field…" }).click();
    const dialog = page.getByRole("dialog", { name: "Edit Owner" });
    const options = {
      addChoices: dialog.getByLabel("Add the values the choices lack as choices"),
      splitChoices: dialog.getByLabel("Split text on commas into several choices"),
      target: dialog.getByLabel("Links to records of"),
      splitNames: dialog.getByLabel("Split text on commas: “a, b” names two records"),
    };
    const shown = async () => Object.fromEntries(await Promise.all(Object.entries(options).map(async ([name, control]) => [name, await control.isVisible()])));
    expect(await shown()).toEqual({ addChoices: false, splitChoices: false, target: false, splitNames: false });
    await dialog.getByLabel("Type").selectOption({ label: "Link to records" });
    await dialog.getByRole("status").filter({ hasText: /./ }).waitFor();
    expect(await shown()).toEqual({ addChoices: false, splitChoices: false, target: true, splitNames: true });
    await dialog.getByLabel("Type").selectOption({ label: "Multiple select" });
    await dialog.getByRole("status").filter({ hasText: "Multiple select" }).waitFor();
    expect(await shown()).toEqual({ addChoices: true, splitChoices: true, target: false, splitNames: false });
    await dialog.getByLabel("Type").selectOption({ label: "Single select" });
    await dialog.getByRole("status").filter({ hasText: "Single select" }).waitFor();
    expect(await shown()).toEqual({ addChoices: true, splitChoices: false, target: false, splitNames: false });
    await dialog.getByLabel("Type").selectOption({ label: "Number" });
    await dialog.getByRole("status").filter({ hasText: "Number" }).waitFor();
    expect(await shown()).toEqual({ addChoices: false, splitChoices: false, target: false, splitNames: false });
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);
  test("Shift stretches a range with every key that moves: arrows, PageUp and PageDown, Home and End, with Ctrl or without", async () => {
    await fillBase(server, ws.write, (await baseWith("stretch", [{ slug: "item", name: "Item", type: "text" }, { slug: "note", name: "Note", type: "text" }], [])).id, 40, (i) => ({ item: `Item ${i + 1}`, note: `Note ${i + 1}` }));
    const page = await signedIn("/admin/data");
    await page.getByRole("link", { name: "Stretch" }).click();
    const grid = page.getByRole("grid", { name: "Stretch records" });
    await grid.locator('tr[data-row="2"] td[role=gridcell]').first().click();
    /** The range's size as a copy says it: rows by columns. */
    const copied = () =>
      page.evaluate(() => {
        const data = new DataTransfer();
        document.activeElement!.dispatchEvent(new ClipboardEvent("copy", { clipboardData: data, bubbles: true, cancelable: true }));
        const rows = data.getData("text/plain").split("\n");
        return [rows.length, rows[0].split("\t").length];
      });
    const steps: [string, number[]][] = [
      ["Shift+ArrowDown", [2, 1]],
      ["Shift+PageDown", [12, 1]],
      ["Shift+End", [12, 2]],
      ["Shift+Control+ArrowDown", [38, 2]],
      ["Shift+PageUp", [28, 2]],
      ["Shift+Home", [28, 1]],
      ["Shift+Control+End", [38, 2]],
      ["Shift+Control+Home", [3, 1]],
      ["PageDown", [1, 1]],
    ];
    for (const [keys, size] of steps) {
      await page.keyboard.press(keys);
      expect([keys, ...(await copied())]).toEqual([keys, ...size]);
    }
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);
  test("a paste's error is said once, by one live region, naming the line of the pasted text and the record it was for", async () => {
    const { id } = await baseWith("shelf", [{ slug: "item", name: "Item", type: "text" }, { slug: "qty", name: "Qty", type: "number" }], [{ item: "Pens", qty: 1 }, { item: "Ink", qty: 2 }]);
    const page = await signedIn(`/admin/bases/${id}`);
    const grid = page.getByRole("grid", { name: "Shelf records" });
    // The newest record is the first row: Ink, then Pens.
    await grid.getByRole("row", { name: /\bInk\b/ }).getByRole("gridcell").nth(1).click();
    await page.evaluate(() => {
      const data = new DataTransfer();
      data.setData("text/plain", "3\nmany\n");
      document.activeElement!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    });
    const said = "Nothing was pasted: line 2 of the pasted text (Pens):";
    await page.getByText(said).waitFor();
    const heard = await page.evaluate((said) => {
      const regions = [...document.querySelectorAll("[role=status], [role=alert], [aria-live]")].filter((region) => region.textContent?.includes(said));
      return { times: document.body.innerText.split(said).length - 1, regions: regions.map((region) => region.getAttribute("role") ?? region.getAttribute("aria-live")) };
    }, said);
    expect(heard).toEqual({ times: 1, regions: ["alert"] });
    expect(await valueOf((await server.call("GET", `/api/v1/records?baseId=${id}`, { key: ws.read })).body.records.find((record: { fields: { item: string } }) => record.fields.item === "Ink").id, "qty")).toBe(2);
    await page.close();
    expect(consoleErrors).toEqual([]);
  }, 60_000);
});
