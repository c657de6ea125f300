import { cellContent, cellEditor, editable, editedValue, numeric, toggled } from "./cells";
import { type LayoutHome, MIN_WIDTH, OPEN_WIDTH, orderedColumns, ROW_HEIGHTS, type RowHeight } from "./grid-layout";
import type { ChangeRequestView } from "../../changes/views";
import type { BaseView, FieldView } from "../../content/bases";
import { primaryField, traitsOf } from "../../shared/field-types";
import type { RecordView } from "../../content/records/view";
import { api } from "./api";
import { type Child, fill, h } from "./dom";
import type { LiveEvent } from "./live";
import { confirmDialog, failureText, link, menuDialog, recordName, shown, statusLine } from "./ui";
import { addField, deleteField, editField, type FieldChanges } from "./fields";
import { cellText, parseTsv, pastable, pastedValue, pasteReaders, toTsv } from "./clipboard";
import { gridWrites } from "./grid-writes";
import { cellsOutOfSight } from "./grid-sight";

type Proposed<T> = (T & { materialized: true }) | (ChangeRequestView & { materialized: false });
/** A page of the listing as the grid reads it: its records, how many match, the names of the records they link to. */
export type GridPage = { records: RecordView[]; total: number; linkedRecords?: Record<string, string | null> };

/** Rows a page of the listing brings. */
export const ROWS_A_PAGE = 50;
/** Every row is this tall (the stylesheet says so too), so a row's place is its index times this. */
/** Rows drawn beyond those in view, each way (once the grid is on the screen: its first draw is what is in view). */
const OVERSCAN = 8;
/** The frame's tallest, as a share of the window (the stylesheet's `max-height: 70vh`). */
const FRAME_SHARE = 0.7;
/** How far numbered pages reach (`NUMBERED_PAGE_BOUNDS.reach` of the listing). */
const REACH = 100_000;
/** The rows PageUp and PageDown move by. */
const PAGE_STEP = 10;

export interface GridSetup {
  base: BaseView;
  /** Reads numbered page `page` (from 1, of `ROWS_A_PAGE` records) of the listing with the screen's filter and sort (reversed with `fromEnd`), and how many match. */
  load(page: number, fromEnd?: boolean): Promise<GridPage>;
  /** The first page when the screen read it already (beside the base): its rows are drawn before the grid is shown, so the screen is laid out once, with them. */
  first?: GridPage;
  /** The sort in effect (`slug` or `-slug`), and how to change it (the screen's address follows). */
  sort: string | undefined;
  sortBy(sort: string | undefined): void;
  /** Where a row's record opens (beside the grid). */
  openHref(recordId: string): string;
  /** Starts a filter on a column (its header's button): the screen's filter, with that field chosen. */
  filterBy(slug: string): void;
  /** Whether the caller may propose changes (a read-only level shows the grid without editing). */
  canPropose: boolean;
  /** Where fields are added, edited and deleted from (with `changeRequest` and above). */
  fieldChanges?: FieldChanges;
  /** Where the columns' order, widths and hidden fields and the rows' height are kept. */
  layout: LayoutHome;
  /** Draws the screen again (a column hidden or shown). */
  relayout(): void;
  /** The values open change requests propose for the base's records, by `recordId:slug` (read again as change requests change). */
  pending?: () => Promise<Map<string, PendingValue>>;
  /** How many records the base holds when a filter (the screen's or the view's) narrows the grid: "124 of 2,000 records". */
  unfiltered?: Promise<number>;
  /**
   * Names the listing the grid shows (its base, view, filter and sort): a grid drawn again for the
   * same one (its screen drawn again: a record opened beside it or closed, a column hidden, the rows'
   * height changed, a filter put back) opens where the last one was (`GridPlace`).
   */
  place?: string;
  /** Something else takes the keyboard as the screen is drawn (a record opened beside the grid): the grid gives it back once that is gone. */
  keyboardElsewhere?: boolean;
}

/**
 * Where a grid was: the first row in view (a row, not pixels, as the rows' height may change), how
 * far it was scrolled sideways, its active cell, whether it had the keyboard, and the pages it had
 * read (shown at once, and read again as they come into view).
 */
interface GridPlace {
  topRow: number;
  left: number;
  active: { row: number; col: number };
  keyboard: boolean;
  /** The grid's frame: still on the page while the grid that follows is made only when its own screen is being drawn again. */
  frame: HTMLElement;
  pages: Map<string, RecordView[]>;
  names: Map<string, string | null>;
  total: number;
}
/** The places of the listings shown last, by `GridSetup.place`, the newest last. */
const places = new Map<string, GridPlace>();
const PLACES_KEPT = 10;

/** A value an open change request proposes for a cell: what it is, as text, who proposes it and where. */
export interface PendingValue {
  text: string;
  by: string;
  changeRequestId: string;
}

/** A proposed value beside the cell's own: "→ Done". */
const proposedBeside = (offered: PendingValue) => h("span", { class: "proposed-value" }, ` → ${offered.text || "(empty)"}`);

/**
 * A base as a grid: a column per field (the primary one first), typed cells, keyboard navigation
 * (arrows, Home, End, PageUp, PageDown; Enter or F2 edits, Escape cancels, Enter or Tab saves),
 * and each edit proposed as a change request (merged at once where the level allows, else waiting
 * in the Inbox, and shown so). Only the rows in view are drawn, and only their pages are read:
 * the scroll height stands for every record, so scrolling to row 10,000 reads the pages around it
 * and none before. A row to add a record leads the grid. `live` applies another client's changes.
 */
export function recordGrid(setup: GridSetup): { node: HTMLElement; live(event: LiveEvent): void } {
  const { base } = setup;
  const primary = primaryField(base.fields);
  const home = setup.layout;
  const layout = home.layout;
  const ROW_HEIGHT = ROW_HEIGHTS[layout.rowHeight];
  /** Rows taller than one line wrap a cell's text within them. */
  const tall = layout.rowHeight !== "short";
  const columns = orderedColumns(base, primary, layout.order).filter((field) => !layout.hidden.includes(field.slug));
  const hiddenFields = base.fields.filter((field) => layout.hidden.includes(field.slug));
  const ADD_WIDTH = setup.fieldChanges ? 44 : 0;
  const kept = setup.place ? places.get(setup.place) : undefined;
  const pages = new Map<string, RecordView[]>(kept?.pages);
  /** Pages to read again (records were added, removed or changed, or a grid before this one read them): shown as they were until then. */
  const stale = new Set<string>(kept?.pages.keys());
  const reading = new Map<string, Promise<void>>();
  const proposed = new Map<string, string>();
  const { writeCells, writeCell, created, undo, redo } = gridWrites({ base, say: (...message: Child[]) => say(...message), fail: (...message: Child[]) => fail(...message), reread: () => reread(), waiting: proposed });
  /** What others' open change requests propose for cells, shown beside their values. */
  let pending = new Map<string, PendingValue>();
  const readPending = () =>
    setup
      .pending?.()
      .then((found) => {
        // None before and none now: the rows drawn are right as they are.
        if (found.size > 0 || pending.size > 0) drawSoon();
        pending = found;
      })
      .catch(() => {});
  /** A burst of change-request events (an import's parts, a bulk review) reads the proposals once, 150 ms after its first. */
  let pendingDue: ReturnType<typeof setTimeout> | null = null;
  const readPendingSoon = () => {
    pendingDue ??= setTimeout(() => {
      pendingDue = null;
      void readPending();
    }, 150);
  };
  const names = new Map<string, string | null>(kept?.names);
  /** The rows chosen for a bulk proposal, with the record as it was when chosen (its head commit is the update's base). */
  const selected = new Map<string, RecordView>();
  let total = kept?.total ?? 0;
  let active = kept ? { row: kept.active.row, col: Math.min(kept.active.col, columns.length - 1) } : { row: 0, col: 0 };
  /** Where the frame is to be scrolled to once it is on the page (a grid's kept place): the rows are drawn for it meanwhile. */
  let restoring: number | null = kept ? kept.topRow * ROW_HEIGHT : null;
  /** The cell being edited, with its record as the edit began (its rows may be read again meanwhile). */
  let editing: { row: number; col: number; editor: HTMLInputElement | HTMLSelectElement; element: HTMLTableRowElement; record: RecordView } | null = null;
  let drawn = { first: 0, last: -1 };

  const status = statusLine("grid-status");
  const counter = h("p", { class: "record-count", "aria-live": "polite" });
  let unfiltered: number | undefined;
  setup.unfiltered?.then((all) => ((unfiltered = all), showCount())).catch(() => undefined);
  /** The records shown, and of how many when a filter narrows them. */
  function showCount(): void {
    const records = (n: number) => `${n.toLocaleString()} record${n === 1 ? "" : "s"}`;
    const reach = total > 2 * REACH ? ` (the first ${REACH.toLocaleString()} are shown: filter or sort to reach the others)` : "";
    counter.textContent = `${setup.unfiltered ? `${total.toLocaleString()} of ${unfiltered === undefined ? "…" : records(unfiltered)}` : records(total)}${reach}`;
  }
  const body = h("tbody", {});
  const topSpace = h("tr", { class: "spacer", "aria-hidden": "true" }, h("td", { colspan: columns.length + 2 }));
  const bottomSpace = h("tr", { class: "spacer", "aria-hidden": "true" }, h("td", { colspan: columns.length + 2 }));
  const newRow = setup.canPropose ? newRecordRow() : null;
  const header = h("tr", { role: "row", "aria-rowindex": 1 });
  const widths = h("colgroup", {});
  const table = h("table", { class: `grid rows-${layout.rowHeight}`, role: "grid", "aria-label": `${base.name} records` }, widths, h("thead", {}, header), newRow ? h("tbody", { class: "new-row" }, newRow.row) : null, body);
  let resizing = false;
  const widthOf = (field: FieldView) => layout.widths[field.slug] ?? (field === primary ? 240 : traitsOf(field.type).dated ? 140 : traitsOf(field.type).narrow ? 110 : 180);

  /** The columns' widths, and the table's (the sum: a fixed layout, scrolled sideways when wider than its frame). */
  function sizeColumns(): void {
    // Set through the CSSOM: the page's policy refuses style attributes.
    const col = (width: number) => {
      const node = h("col", {});
      node.style.width = `${width}px`;
      return node;
    };
    fill(widths, col(OPEN_WIDTH), ...columns.map((field) => col(widthOf(field))), ADD_WIDTH ? col(ADD_WIDTH) : null);
    // Where the first field's column stays while the grid scrolls sideways (the stylesheet reads it).
    table.style.setProperty("--open-width", `${OPEN_WIDTH}px`);
    table.style.width = `${OPEN_WIDTH + ADD_WIDTH + columns.reduce((sum, field) => sum + widthOf(field), 0)}px`;
  }

  /** Moves a column by `by` places (the header's drag, or Alt with an arrow on its button); the order is kept where the layout lives. */
  function moveColumn(from: number, to: number): void {
    if (to < 0 || to >= columns.length || from === to) return;
    const [moved] = columns.splice(from, 1);
    columns.splice(to, 0, moved);
    layout.order = columns.map((field) => field.slug);
    home.keep();
    active = { ...active, col: active.col === from ? to : active.col };
    drawHeader();
    draw();
    header.querySelectorAll<HTMLButtonElement>("button.sort")[to]?.focus();
    say(`${moved.name} is now column ${to + 1} of ${columns.length}.`);
  }

  function drawHeader(): void {
    fill(
      header,
      h("th", { scope: "col", class: "open-col" }, h("span", { class: "visually-hidden" }, "Open")),
      ...columns.map((field, col) => {
        const direction = setup.sort === field.slug ? "ascending" : setup.sort === `-${field.slug}` ? "descending" : "none";
        const next = direction === "none" ? field.slug : direction === "ascending" ? `-${field.slug}` : undefined;
        const sort = h(
          "button",
          { type: "button", class: "sort", title: `Sort by ${field.name} (Alt+arrows move the column)`, onclick: () => setup.sortBy(next) },
          field.name,
          direction === "none" ? "" : direction === "ascending" ? " ▲" : " ▼",
        );
        sort.addEventListener("keydown", (event) => {
          const key = (event as KeyboardEvent).key;
          if (!(event as KeyboardEvent).altKey || (key !== "ArrowLeft" && key !== "ArrowRight")) return;
          event.preventDefault();
          moveColumn(col, col + (key === "ArrowLeft" ? -1 : 1));
        });
        const filter = h("button", { type: "button", class: "filter-by", "aria-label": `Filter by ${field.name}`, title: `Filter by ${field.name}`, onclick: () => setup.filterBy(field.slug) });
        const menu = h("button", { type: "button", class: "field-menu", "aria-label": `${field.name}: field menu`, title: "Edit, duplicate, hide or delete this field", "aria-haspopup": "dialog", onclick: () => fieldMenu(field) });
        const cell = h("th", { scope: "col", "aria-sort": direction, class: numeric(field) ? "num" : "", draggable: "true", "data-col": col }, sort, filter, menu, resizer(field));
        cell.addEventListener("dragstart", (event) => {
          // A drag that began on the column's edge resizes it; it does not move it.
          if (resizing) return event.preventDefault();
          (event as DragEvent).dataTransfer?.setData("text/x-basalt-column", String(col));
        });
        cell.addEventListener("dragover", (event) => event.preventDefault());
        cell.addEventListener("drop", (event) => {
          event.preventDefault();
          const from = Number((event as DragEvent).dataTransfer?.getData("text/x-basalt-column"));
          if (Number.isInteger(from)) moveColumn(from, col);
        });
        return cell;
      }),
      // Not a column of the grid: a place for the button that makes one.
      setup.fieldChanges ? h("th", { class: "add-col", role: "presentation" }, h("button", { type: "button", class: "add-field", "aria-label": "Add a field", title: "Add a field", onclick: () => addField(setup.fieldChanges!) })) : null,
    );
    sizeColumns();
  }

  /** A row's menu: open the record, duplicate it (its values a client may write), or archive it (which waits for review). */
  function rowMenu(record: RecordView): void {
    const name = recordName(base.fields, record.fields, record.id);
    const duplicate = () => writeCells(`Duplicated ${name}`, [], [Object.fromEntries(base.fields.filter(pastable).map((field) => [field.slug, record.fields[field.slug] ?? null]))]);
    menuDialog(name, null, [{ label: "Open", href: setup.openHref(record.id) }, { label: "Duplicate", run: duplicate }, { label: "Archive…", run: () => archiveRecords([record], name), danger: true }]);
  }

  /** Archives records after saying so: one change request, which waits for review (an archive always does). */
  async function archiveRecords(records: RecordView[], named: string): Promise<boolean> {
    const confirmed = await confirmDialog(`Archive ${named}?`, `${records.length === 1 ? "It leaves" : "They leave"} every listing once a reviewer merges the change; archived records can be restored.`, "Propose archiving", true);
    if (!confirmed) return false;
    try {
      const answer = await api<ChangeRequestView>("POST", `/bases/${base.id}/records/bulk-lifecycle-change-request`, { operation: "delete", recordIds: records.map((record) => record.id), message: `Archive ${named}` });
      say(`Archiving ${named} is proposed: it waits for review in the Inbox. `, link(`/admin/change-requests/${answer.id}`, "See the change request"));
      return true;
    } catch (failure) {
      fail(failureText(failure));
      return false;
    }
  }

  /** A column's menu: edit, duplicate and delete it (as field change requests), or hide it (in this browser, or in the view shown). */
  function fieldMenu(field: FieldView): void {
    const changes = setup.fieldChanges;
    const hide = () => {
      layout.hidden.push(field.slug);
      home.keep();
      setup.relayout();
    };
    menuDialog(field.name, traitsOf(field.type).label, [
      changes ? { label: "Edit field…", run: () => editField(changes, field) } : null,
      changes ? { label: "Duplicate…", run: () => addField(changes, field) } : null,
      primary?.slug === field.slug ? null : { label: `Hide ${home.where}`, run: hide },
      changes ? { label: "Delete…", run: () => deleteField(changes, field), danger: true } : null,
    ]);
  }

  /** A column's edge: dragged with the pointer, or moved 16 px a press of an arrow once focused; the width is kept where the layout lives. */
  function resizer(field: FieldView): HTMLElement {
    const edge = h("span", { class: "resize", role: "separator", tabindex: "0", "aria-orientation": "vertical", "aria-label": `Resize ${field.name}`, "aria-valuenow": widthOf(field), "aria-valuemin": MIN_WIDTH });
    const set = (width: number) => {
      layout.widths[field.slug] = Math.max(MIN_WIDTH, Math.round(width));
      edge.setAttribute("aria-valuenow", String(layout.widths[field.slug]));
      sizeColumns();
    };
    edge.addEventListener("pointerdown", (event) => {
      resizing = true;
      const start = (event as PointerEvent).clientX;
      const from = widthOf(field);
      edge.setPointerCapture((event as PointerEvent).pointerId);
      const move = (moved: Event) => set(from + (moved as PointerEvent).clientX - start);
      edge.addEventListener("pointermove", move);
      edge.addEventListener(
        "pointerup",
        () => {
          resizing = false;
          edge.removeEventListener("pointermove", move);
          home.keep();
        },
        { once: true },
      );
      event.preventDefault();
    });
    // Put back on this edge after a redraw, it shows what a press on the edge it replaced made.
    edge.addEventListener("focus", () => {
      edge.setAttribute("aria-valuenow", String(widthOf(field)));
      sizeColumns();
    });
    edge.addEventListener("keydown", (event) => {
      const key = (event as KeyboardEvent).key;
      if (key !== "ArrowLeft" && key !== "ArrowRight") return;
      event.preventDefault();
      set(widthOf(field) + (key === "ArrowLeft" ? -16 : 16));
      home.keep();
    });
    return edge;
  }
  drawHeader();
  const scroller = h("div", { class: "grid-scroll" }, table);

  /** Numbered pages reach `REACH` records from the start; past it rows are read from the end (the sort reversed), so a base of up to twice that scrolls to its last record. */
  const reachable = () => (total <= 2 * REACH ? total : REACH);
  const sourceOf = (index: number) => {
    const fromEnd = index >= REACH;
    const place = fromEnd ? total - 1 - index : index;
    const page = Math.floor(place / ROWS_A_PAGE);
    return { key: `${fromEnd ? "e" : "f"}${page}`, page, fromEnd, at: place % ROWS_A_PAGE };
  };
  const recordAt = (index: number) => {
    const source = sourceOf(index);
    return pages.get(source.key)?.[source.at];
  };
  // Of the pages a grid before this one read, those around its place and its active row are kept, to show at once; the others are read again when they come into view.
  if (kept) {
    const near = new Set([active.row, ...Array.from({ length: 3 * ROWS_A_PAGE }, (_, i) => Math.floor(kept.topRow) - ROWS_A_PAGE + i)].filter((index) => index >= 0 && index < reachable()).map((index) => sourceOf(index).key));
    for (const key of [...pages.keys()]) {
      if (near.has(key)) continue;
      pages.delete(key);
      stale.delete(key);
    }
  }

  /** News in the status line (politely); an error in it at once. */
  function say(...message: Child[]): void {
    status.say(...message);
  }
  function fail(...message: Child[]): void {
    status.fail(...message);
  }

  function rowElement(index: number): HTMLTableRowElement | null {
    return body.querySelector<HTMLTableRowElement>(`tr[data-row="${index}"]`);
  }

  function cellAt(row: number, col: number): HTMLElement | null {
    return (rowElement(row)?.children[col + 1] as HTMLElement | undefined) ?? null;
  }

  function renderRow(record: RecordView, index: number): HTMLTableRowElement {
    const name = recordName(base.fields, record.fields, record.id);
    return h(
      "tr",
      { role: "row", "aria-rowindex": index + 2, "data-row": index },
      h(
        "th",
        { scope: "row", class: "open-col" },
        setup.canPropose ? h("input", { type: "checkbox", class: "select-row", "aria-label": `Select ${name}`, checked: selected.has(record.id), "data-record": record.id }) : null,
        link(setup.openHref(record.id), h("span", { "aria-hidden": "true" }, "↗"), h("span", { class: "visually-hidden" }, `Open ${name}`)),
        setup.canPropose ? h("button", { type: "button", class: "row-menu", "aria-label": `${name}: row menu`, "aria-haspopup": "dialog", onclick: () => rowMenu(record) }) : null,
      ),
      ...columns.map((field, col) => {
        const offered = pending.get(`${record.id}:${field.slug}`);
        const waiting = proposed.get(`${record.id}:${field.slug}`) ?? offered?.changeRequestId;
        const isActive = index === active.row && col === active.col;
        return h(
          "td",
          {
            role: "gridcell",
            tabindex: isActive ? "0" : "-1",
            class: [numeric(field) ? "num" : "", waiting ? "proposed" : "", editable(field) && setup.canPropose ? "editable" : "", inRange(index, col) ? "in-range" : ""].join(" ").trim(),
            title: offered ? `${offered.by} proposes ${offered.text}: waits for review in the Inbox` : waiting ? "Proposed: waits for review in the Inbox" : undefined,
            "data-col": col,
          },
          tall ? h("div", { class: "clip" }, cellContent(field, record.fields[field.slug], names), offered ? proposedBeside(offered) : null) : [cellContent(field, record.fields[field.slug], names), offered ? proposedBeside(offered) : null],
        );
      }),
    );
  }

  /** A row whose page is being read. */
  const placeholder = (index: number) =>
    h("tr", { role: "row", "aria-rowindex": index + 2, "data-row": index, "aria-busy": "true" }, h("th", { scope: "row", class: "open-col" }), ...columns.map(() => h("td", { role: "gridcell", class: "loading" }, "…")));

  /** A page read: its records, the names of those they link to, and the count it says. */
  function keepPage(key: string, answer: GridPage): void {
    for (const [id, name] of Object.entries(answer.linkedRecords ?? {})) names.set(id, name);
    pages.set(key, answer.records);
    stale.delete(key);
    total = answer.total;
    showCount();
  }

  /** Reads the pages of rows `first`..`last` that are not here yet, then draws again. */
  function readPages(first: number, last: number): void {
    const wanted = new Map<string, ReturnType<typeof sourceOf>>();
    for (let index = first; index <= last; index++) {
      const source = sourceOf(index);
      if ((!pages.has(source.key) || stale.has(source.key)) && !reading.has(source.key)) wanted.set(source.key, source);
    }
    for (const source of wanted.values()) {
      reading.set(
        source.key,
        setup
          .load(source.page + 1, source.fromEnd)
          .then((answer) => keepPage(source.key, answer))
          .catch((failure) => fail(failureText(failure)))
          .finally(() => {
            reading.delete(source.key);
            draw();
          }),
      );
    }
  }

  /** Draws the rows in view (and a few more), keeping the one being edited and the keyboard's place. */
  function draw(): void {
    // A cell removed while it had the keyboard leaves it on the page's body: it comes back to its cell.
    const orphaned = keyboardInGrid && document.activeElement === document.body;
    // Only a cell's keyboard comes back: one on a header's control (a column's edge, its menu) stays where it is.
    const hadFocus = body.contains(document.activeElement) || orphaned;
    const count = reachable();
    // The frame grows with its rows (up to 70% of the window): before it has grown, draw for its tallest.
    const view = Math.max(scroller.clientHeight, window.innerHeight * FRAME_SHARE);
    // The first rows drawn are those in view, no more: they are what the first paint waits for.
    const overscan = drawn.last < 0 ? 0 : OVERSCAN;
    const scrolled = restoring ?? scroller.scrollTop;
    const first = Math.max(0, Math.floor(scrolled / ROW_HEIGHT) - overscan);
    const last = Math.min(count - 1, Math.ceil((scrolled + view) / ROW_HEIGHT) - 1 + overscan);
    readPages(first, last);
    const rows: HTMLTableRowElement[] = [];
    for (let index = first; index <= last; index++) {
      if (editing?.row === index) rows.push(editing.element);
      else {
        const record = recordAt(index);
        rows.push(record ? renderRow(record, index) : placeholder(index));
      }
    }
    (topSpace.firstChild as HTMLElement).style.height = `${first * ROW_HEIGHT}px`;
    (bottomSpace.firstChild as HTMLElement).style.height = `${Math.max(0, count - 1 - last) * ROW_HEIGHT}px`;
    // The row being edited is kept, but moving it takes the keyboard from its editor: it goes back.
    const typing = editing !== null && document.activeElement === editing.editor;
    body.replaceChildren(topSpace, ...rows, bottomSpace);
    if (typing) editing!.editor.focus({ preventScroll: true });
    drawn = { first, last };
    table.setAttribute("aria-rowcount", String(count + 1));
    if (hadFocus && !editing) cellAt(active.row, active.col)?.focus({ preventScroll: orphaned });
    if (count === 0 && reading.size === 0) say(total === 0 ? (setup.unfiltered ? "No records match this filter." : "No records yet.") : "");

  }

  /** Whether the keyboard is in the grid: a row drawn again under it must not lose it. */
  let keyboardInGrid = false;
  table.addEventListener("focusin", () => (keyboardInGrid = keeping.keyboard = true));
  table.addEventListener("focusout", (event) => {
    const next = (event as FocusEvent).relatedTarget as Node | null;
    if (!next || table.contains(next)) return;
    keyboardInGrid = false;
    // Beside an open record the keyboard leaves for it, and comes back to the grid when it closes.
    if (!setup.keyboardElsewhere) keeping.keyboard = false;
  });

  /** This grid's place, kept for the next grid of the same listing. */
  const keeping: GridPlace = {
    topRow: kept?.topRow ?? 0,
    left: kept?.left ?? 0,
    get active() {
      return active;
    },
    keyboard: kept?.keyboard ?? false,
    frame: scroller,
    pages,
    names,
    get total() {
      return total;
    },
  };
  if (setup.place) {
    places.delete(setup.place);
    places.set(setup.place, keeping);
    for (const old of places.keys()) if (places.size > PLACES_KEPT) places.delete(old);
  }
  scroller.addEventListener("scroll", () => {
    if (restoring !== null) return;
    keeping.topRow = scroller.scrollTop / ROW_HEIGHT;
    keeping.left = scroller.scrollLeft;
  });

  let frame = 0;
  /** Draws once at the next frame, however many changes come before it (a paste's 500 events are one draw). */
  const drawSoon = () => {
    if (!frame) frame = requestAnimationFrame(() => ((frame = 0), draw()));
  };
  scroller.addEventListener("scroll", drawSoon);
  // The frame changes size with the window (a taller window, a phone turned): the rows it then shows are drawn at once.
  new ResizeObserver(() => {
    if (!scroller.isConnected) return;
    // On the page at last: scrolled to the place kept (the rows there are drawn already).
    if (restoring !== null) {
      scroller.scrollTop = restoring;
      scroller.scrollLeft = keeping.left;
      restoring = null;
    }
    const top = Math.floor(scroller.scrollTop / ROW_HEIGHT);
    const bottom = Math.min(reachable() - 1, Math.ceil((scroller.scrollTop + scroller.clientHeight) / ROW_HEIGHT) - 1);
    if (top < drawn.first || bottom > drawn.last) draw();
  }).observe(scroller);

  function focusCell(row: number, col: number): void {
    const count = reachable();
    if (count === 0) return;
    row = Math.max(0, Math.min(count - 1, row));
    col = Math.max(0, Math.min(columns.length - 1, col));
    active = { row, col };
    // Bring the row into view first: drawing makes its cell (or its placeholder) exist.
    const top = row * ROW_HEIGHT;
    if (top < scroller.scrollTop) scroller.scrollTop = top;
    else if (top + ROW_HEIGHT > scroller.scrollTop + scroller.clientHeight) scroller.scrollTop = top + ROW_HEIGHT - scroller.clientHeight;
    if (row < drawn.first || row > drawn.last || !cellAt(row, col)) draw();
    body.querySelectorAll("td[tabindex='0']").forEach((cell) => cell.setAttribute("tabindex", "-1"));
    const cell = cellAt(row, col);
    cell?.setAttribute("tabindex", "0");
    cell?.focus();
  }

  function startEdit(row: number, col: number, typed?: string): void {
    const field = columns[col];
    const record = recordAt(row);
    if (!record || !setup.canPropose) return;
    if (!editable(field)) {
      say(`${field.name} is edited on the record's page.`);
      return;
    }
    if (toggled(field)) {
      void save(row, col, record.fields[field.slug] !== true);
      return;
    }
    const cell = cellAt(row, col)!;
    const editor = cellEditor(field, record.fields[field.slug]);
    editing = { row, col, editor, element: rowElement(row)!, record };
    fill(cell, editor);
    // A key typed on the cell starts its new value, as in a spreadsheet.
    if (typed !== undefined && editor instanceof HTMLInputElement) editor.value = typed;
    editor.focus();
    // The caret after what was typed (an input that keeps no caret, a date, has none to place).
    if (typed !== undefined && editor instanceof HTMLInputElement && editor.selectionStart !== null) editor.setSelectionRange(typed.length, typed.length);
    editor.addEventListener("keydown", (event) => {
      const key = (event as KeyboardEvent).key;
      if (key === "Escape") {
        event.preventDefault();
        event.stopPropagation();
        stopEdit();
      } else if (key === "Enter" || key === "Tab") {
        event.preventDefault();
        event.stopPropagation();
        const edited = editedValue(field, editor);
        if ("refused" in edited) return void fail(edited.refused);
        const moveTo = key === "Tab" ? { row, col: col + ((event as KeyboardEvent).shiftKey ? -1 : 1) } : { row: row + 1, col };
        void save(row, col, edited.value, moveTo);
      }
    });
  }

  /** Ends the edit in progress (its value saved or given up), the keyboard on `next` (the edited cell by default). */
  function stopEdit(next?: { row: number; col: number }): void {
    const at = next ?? (editing ? { row: editing.row, col: editing.col } : null);
    editing = null;
    draw();
    if (at) focusCell(at.row, at.col);
  }

  /**
   * A click on another cell while one is edited: a value that reads is saved (as a spreadsheet
   * does); one its field refuses is given up, and said so, rather than keeping an editor open that
   * would take the keys (Ctrl+V, Delete, Ctrl+C) meant for the cell clicked.
   */
  function leaveEdit(next: { row: number; col: number }): void {
    if (!editing) return;
    const field = columns[editing.col];
    const edited = editedValue(field, editing.editor);
    if ("refused" in edited) {
      stopEdit(next);
      fail(`Not saved: ${field.name} keeps its value (${edited.refused})`);
      return;
    }
    void save(editing.row, editing.col, edited.value, next, true);
  }

  /** The record of row `row` is now `record` (a save, or another client's change). */
  function replaceRecord(row: number, record: RecordView): void {
    const source = sourceOf(row);
    const page = pages.get(source.key);
    if (page) page[source.at] = record;
  }

  /**
   * Proposes one cell's new value; answers whether it was taken (merged or waiting for review).
   * The keyboard then goes to `next` (the edited cell by default).
   */
  async function save(row: number, col: number, value: unknown, next = { row, col }, leaving = false): Promise<boolean> {
    const record = editing?.record ?? recordAt(row);
    if (!record) return false;
    const field = columns[col];
    if (JSON.stringify(value) === JSON.stringify(record.fields[field.slug] ?? null)) {
      stopEdit(next);
      return true;
    }
    const message = `${recordName(base.fields, record.fields, record.id)}: ${field.name} ${shown(record.fields[field.slug])} → ${shown(value)}`;
    const written = await writeCell(record, field, value, message);
    if (written === null) {
      // Refused (and said): the editor stays with what was typed, unless the person clicked away.
      if (leaving) stopEdit(next);
      else editing?.editor.focus();
      return false;
    }
    if (written !== "waiting") replaceRecord(row, written);
    stopEdit(next);
    return true;
  }

  function newRecordRow() {
    const slug = primary?.slug;
    const entry = h("input", { type: "text", "aria-label": `New record${primary ? `: ${primary.name}` : ""}`, placeholder: primary ? `New record: ${primary.name}, then Enter` : "New record: Enter" });
    entry.addEventListener("keydown", async (event) => {
      if ((event as KeyboardEvent).key !== "Enter") return;
      event.preventDefault();
      const text = entry.value.trim();
      say("Saving…");
      try {
        const answer = await api<Proposed<RecordView>>("POST", `/bases/${base.id}/change-requests`, { fields: slug && text ? { [slug]: text } : {} });
        entry.value = "";
        if (answer.materialized) {
          created(`Added ${recordName(base.fields, answer.fields, answer.id)}`, answer.id);
          say(`Added ${recordName(base.fields, answer.fields, answer.id)}.`);
          reread();
        } else say("The new record is proposed: it waits for review in the Inbox. ", link(`/admin/change-requests/${answer.id}`, "See the change request"));
      } catch (failure) {
        fail(failureText(failure));
      }
    });
    return { row: h("tr", {}, h("td", { colspan: columns.length + 2 }, entry)), entry };
  }

  /** Records were added or removed: every row may have moved, so the pages in view are read again. */
  let rereadDue: ReturnType<typeof setTimeout> | null = null;
  /**
   * Rows are shown as they were until their page is read again, so the grid never blanks and the
   * keyboard keeps its cell (keys typed meanwhile are not lost).
   */
  function reread(): void {
    rereadDue ??= setTimeout(() => {
      rereadDue = null;
      for (const key of pages.keys()) stale.add(key);
      draw();
    }, 100);
  }

  /** The row and column of a cell a pointer event reached, or null. */
  function placeOf(target: EventTarget | null): { row: number; col: number } | null {
    const cell = (target as HTMLElement | null)?.closest<HTMLElement>("td[role=gridcell]");
    if (!cell || (editing && cell.contains(editing.editor)) || !cell.parentElement?.dataset.row) return null;
    return { row: Number(cell.parentElement.dataset.row), col: Number(cell.dataset.col) };
  }

  table.addEventListener("keydown", (event) => {
    if (editing || (event.target as HTMLElement).closest(".new-row")) return;
    const key = (event as KeyboardEvent).key;
    if (!(event.target as HTMLElement).matches("td[role=gridcell]")) return;
    const to = moveOf(event as KeyboardEvent);
    if (to) {
      event.preventDefault();
      const { shiftKey, ctrlKey, metaKey } = event as KeyboardEvent;
      // Up from the first row, alone, goes to the line that adds a record.
      if (key === "ArrowUp" && active.row === 0 && newRow && !shiftKey && !ctrlKey && !metaKey) {
        anchor = null;
        draw();
        return newRow.entry.focus();
      }
      // With Shift every move stretches the range from where it began; without, it leaves it.
      const hadRange = anchor !== null;
      anchor = shiftKey ? (anchor ?? { ...active }) : null;
      focusCell(to.row, to.col);
      if (anchor || hadRange) draw();
      return;
    }
    if (spreadsheetKey(event as KeyboardEvent)) return void event.preventDefault();
    if (key !== "Enter" && key !== "F2") return;
    event.preventDefault();
    if (anchor) {
      anchor = null;
      draw();
    }
    startEdit(active.row, active.col);
  });

  /**
   * Where a key moves the active cell: an arrow by one (with Ctrl or ⌘, to the edge), Home and End
   * to the row's ends (with Ctrl or ⌘, to the first and the last cell), PageUp and PageDown by
   * `PAGE_STEP` rows; null for a key that does not move.
   */
  function moveOf(event: KeyboardEvent): { row: number; col: number } | null {
    const command = event.ctrlKey || event.metaKey;
    const { row, col } = active;
    const lastRow = reachable() - 1;
    const lastCol = columns.length - 1;
    const moves: Record<string, { row: number; col: number }> = {
      ArrowDown: { row: command ? lastRow : row + 1, col },
      ArrowUp: { row: command ? 0 : row - 1, col },
      ArrowRight: { row, col: command ? lastCol : col + 1 },
      ArrowLeft: { row, col: command ? 0 : col - 1 },
      Home: command ? { row: 0, col: 0 } : { row, col: 0 },
      End: command ? { row: lastRow, col: lastCol } : { row, col: lastCol },
      PageDown: { row: row + PAGE_STEP, col },
      PageUp: { row: row - PAGE_STEP, col },
    };
    return moves[event.key] ?? null;
  }

  // ---- a spreadsheet's keys: ranges, jumps, typing, clearing, filling down, copy and paste, undo ----

  /** The range the keyboard chose: from `anchor` (Shift with arrows) to the active cell; the active cell alone without one. */
  let anchor: { row: number; col: number } | null = null;
  function range() {
    const from = anchor ?? active;
    return { top: Math.min(from.row, active.row), bottom: Math.max(from.row, active.row), left: Math.min(from.col, active.col), right: Math.max(from.col, active.col) };
  }
  function inRange(row: number, col: number): boolean {
    if (!anchor) return false;
    const { top, bottom, left, right } = range();
    return row >= top && row <= bottom && col >= left && col <= right;
  }

  /** Handles a spreadsheet's key that changes cells (undo, redo, fill down, clear, a key typed); answers whether it was one. */
  function spreadsheetKey(event: KeyboardEvent): boolean {
    const { key, shiftKey } = event;
    const command = event.ctrlKey || event.metaKey;
    if (!setup.canPropose) return false;
    const letter = key.toLowerCase();
    const commands: Record<string, () => unknown> = {
      z: () => (shiftKey ? redo() : undo()),
      y: redo,
      d: fillDown,
    };
    if (command && commands[letter]) {
      void commands[letter]();
      return true;
    }
    if (key === "Delete" || key === "Backspace") {
      void clearRange();
      return true;
    }
    if (key.length === 1 && !command && !event.altKey) {
      anchor = null;
      startEdit(active.row, active.col, key);
      return true;
    }
    return false;
  }

  /** The records of rows `first` to `last` (those past the end are missing), reading the pages not yet here. */
  async function recordsOf(first: number, last: number): Promise<(RecordView | undefined)[]> {
    const wanted = new Map<string, ReturnType<typeof sourceOf>>();
    for (let index = first; index <= Math.min(last, reachable() - 1); index++) {
      const source = sourceOf(index);
      if (!pages.has(source.key) || stale.has(source.key)) wanted.set(source.key, source);
    }
    await Promise.all([...wanted.values()].map((source) => setup.load(source.page + 1, source.fromEnd).then((answer) => keepPage(source.key, answer))));
    return Array.from({ length: last - first + 1 }, (_, i) => (first + i < reachable() ? recordAt(first + i) : undefined));
  }

  /** The range's cells with the records they belong to (reading pages as needed), and the fields a value may be written in. */
  async function cellsOfRange() {
    const { top, bottom, left, right } = range();
    const records = await recordsOf(top, bottom);
    const fields = columns.slice(left, right + 1);
    return { records, fields, writable: fields.filter(pastable) };
  }

  /** Delete or Backspace: the range's values cleared; when some of its cells are out of sight, after saying how many values that changes. */
  async function clearRange(): Promise<void> {
    const out = cellsOutOfSight(range(), cellAt, scroller, header);
    const { records, writable } = await cellsOfRange();
    if (writable.length === 0) return void say("These cells are computed, links or files: they are edited elsewhere.");
    const held = records.filter((record) => record && writable.some((field) => record.fields[field.slug] != null));
    const values = held.reduce((sum, record) => sum + writable.filter((field) => record!.fields[field.slug] != null).length, 0);
    const plural = (n: number, word: string) => `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`;
    if (out > 0 && values > 0 && !(await confirmDialog(`Clear ${plural(values, "value")} in ${plural(held.length, "record")}?`, `${plural(out, "cell")} of the range ${out === 1 ? "is" : "are"} out of sight.`, "Clear them", true))) {
      return void say("Nothing cleared.");
    }
    await writeCells(`Cleared ${writable.map((field) => field.name).join(", ")}`, records.flatMap((record) => (record ? writable.map((field) => ({ record, field, value: null })) : [])));
  }

  /** Ctrl+D: the range's first row copied into the rows below it. */
  async function fillDown(): Promise<void> {
    const { records, writable } = await cellsOfRange();
    const [first, ...rest] = records;
    if (!first || rest.length === 0) return void say("Choose cells below the one to copy (Shift with the arrows), then Ctrl+D.");
    await writeCells(`Filled down ${writable.map((field) => field.name).join(", ")}`, rest.flatMap((record) => (record ? writable.map((field) => ({ record, field, value: first.fields[field.slug] ?? null })) : [])));
  }

  // Copy: the range as tab-separated text, which spreadsheets paste cell for cell.
  table.addEventListener("copy", (event) => {
    if (editing || !(event.target as HTMLElement).closest?.("td[role=gridcell]")) return;
    const { top, bottom, left, right } = range();
    const rows: string[][] = [];
    for (let row = top; row <= bottom; row++) {
      const record = recordAt(row);
      rows.push(columns.slice(left, right + 1).map((field) => (record ? cellText(field, record.fields[field.slug]) : "")));
    }
    (event as ClipboardEvent).clipboardData?.setData("text/plain", toTsv(rows));
    event.preventDefault();
    say(`Copied ${rows.length * (right - left + 1)} cell${rows.length * (right - left + 1) === 1 ? "" : "s"}.`);
  });

  /**
   * Paste: a spreadsheet's cells from the active cell down and right, proposed as one bulk change;
   * rows past the last record become new records. One copied cell pasted on a range fills it.
   */
  table.addEventListener("paste", async (event) => {
    if (editing || !setup.canPropose || !(event.target as HTMLElement).closest?.("td[role=gridcell]")) return;
    event.preventDefault();
    let matrix = parseTsv((event as ClipboardEvent).clipboardData?.getData("text/plain") ?? "");
    if (matrix.length === 0) return;
    const { top, bottom, left, right } = range();
    if (matrix.length === 1 && matrix[0].length === 1 && (bottom > top || right > left)) matrix = Array.from({ length: bottom - top + 1 }, () => Array.from({ length: right - left + 1 }, () => matrix[0][0]));
    const fields = columns.slice(left, left + Math.max(...matrix.map((row) => row.length)));
    const records = await recordsOf(top, top + matrix.length - 1);
    const cells: { record: RecordView; field: FieldView; value: unknown }[] = [];
    const creates: Record<string, unknown>[] = [];
    const refused: string[] = [];
    const skipped = fields.filter((field) => !pastable(field)).map((field) => field.name);
    let readers: Awaited<ReturnType<typeof pasteReaders>>;
    try {
      readers = await pasteReaders(fields, matrix);
    } catch (failure) {
      return void fail(`Nothing was pasted: ${failureText(failure)}`);
    }
    matrix.forEach((row, i) => {
      const values: Record<string, unknown> = {};
      row.forEach((text, j) => {
        const field = fields[j];
        if (!field || !pastable(field)) return;
        const read = pastedValue(field, text, readers);
        if ("refused" in read) return void refused.push(`line ${i + 1} of the pasted text (${records[i] ? recordName(base.fields, records[i].fields, records[i].id) : "a new record"}): ${read.refused}`);
        values[field.slug] = read.value;
      });
      const record = records[i];
      if (record) for (const [slug, value] of Object.entries(values)) cells.push({ record, field: fields.find((field) => field.slug === slug)!, value });
      else if (Object.values(values).some((value) => value !== null)) creates.push(values);
    });
    if (refused.length > 0) return void fail(`Nothing was pasted: ${refused.slice(0, 3).join("; ")}${refused.length > 3 ? ` and ${refused.length - 3} more` : ""}.`);
    const written = await writeCells(`Pasted ${matrix.length} row${matrix.length === 1 ? "" : "s"}`, cells, creates);
    if (written && skipped.length) say(`Pasted; ${skipped.join(", ")} ${skipped.length === 1 ? "is" : "are"} edited elsewhere and kept ${skipped.length === 1 ? "its" : "their"} values.`);
  });
  // A click starts a new selection (Shift+click stretches the one there is), and leaves a cell being edited.
  body.addEventListener("click", (event) => {
    const link = (event.target as HTMLElement).closest("a");
    // A record opened from its row: that row is where the grid's keyboard is when the record closes.
    const opened = link?.closest<HTMLElement>("th.open-col")?.parentElement?.dataset.row;
    if (opened) active = { row: Number(opened), col: active.col };
    const place = placeOf(event.target);
    if (!place || link) return;
    if (editing) return leaveEdit(place);
    if ((event as MouseEvent).shiftKey) anchor ??= { ...active };
    else anchor = null;
    focusCell(place.row, place.col);
    draw();
  });
  body.addEventListener("dblclick", (event) => {
    const place = placeOf(event.target);
    if (place) startEdit(place.row, place.col);
  });
  newRow?.entry.addEventListener("keydown", (event) => {
    if ((event as KeyboardEvent).key === "ArrowDown" && reachable() > 0) {
      event.preventDefault();
      focusCell(0, active.col);
    }
  });

  // The first page (or the pages a grid of the same listing had, shown at once and read again), then rows as they come into view.
  if (setup.first) keepPage("f0", setup.first);
  if (setup.first || kept) {
    draw();
    // The keyboard comes back to the cell it was on (the screen's `data-focus`) when this screen is drawn again, unless something else takes it.
    const cell = kept?.keyboard && kept.frame.isConnected && !setup.keyboardElsewhere ? cellAt(active.row, active.col) : null;
    if (cell?.hasAttribute("tabindex")) cell.setAttribute("data-focus", "");
  } else
    setup
      .load(1)
      .then((answer) => {
        keepPage("f0", answer);
        draw();
      })
      .catch((failure) => fail(failureText(failure)));

  // ---- bulk: one change request setting a field on every row chosen ----
  const bulkField = h("select", { "aria-label": "Field to set" }, ...columns.filter(editable).filter((field) => !toggled(field)).map((field) => h("option", { value: field.slug }, field.name)));
  const bulkValue = h("span", { class: "bulk-value" });
  const bulkCount = h("strong", {});
  /** The rows' height (short, medium or tall: taller rows show more of a long text), kept with the layout. */
  function rowHeightPick(): HTMLElement {
    const pick = h("select", { "aria-label": "Row height" }, (Object.keys(ROW_HEIGHTS) as RowHeight[]).map((height) => h("option", { value: height, selected: height === layout.rowHeight }, `${height[0].toUpperCase()}${height.slice(1)} rows`)));
    pick.addEventListener("change", () => {
      layout.rowHeight = pick.value as RowHeight;
      home.keep();
      setup.relayout();
    });
    return pick;
  }

  /** Which fields are hidden, and how to show them again. */
  function hiddenNote(): HTMLElement {
    const show = h("button", { type: "button", class: "secondary" }, "Show them");
    show.addEventListener("click", () => {
      layout.hidden = [];
      home.keep();
      setup.relayout();
    });
    return h("p", { class: "hidden-fields" }, `Hidden ${home.where}: ${hiddenFields.map((field) => field.name).join(", ")}. `, show);
  }

  const bulkBar = h("div", { class: "bulk", role: "region", "aria-label": "Selected records", hidden: true }, bulkCount, " ", bulkField, bulkValue);
  const fieldOfBulk = () => columns.find((field) => field.slug === bulkField.value)!;
  let bulkEditor = cellEditor(fieldOfBulk() ?? columns[0], null);
  const showBulk = () => {
    bulkBar.hidden = selected.size === 0;
    bulkCount.textContent = `${selected.size} selected:`;
  };
  const resetEditor = () => {
    bulkEditor = cellEditor(fieldOfBulk(), null);
    bulkEditor.setAttribute("aria-label", `New value of ${fieldOfBulk().name}`);
    fill(bulkValue, bulkEditor);
  };
  bulkField.addEventListener("change", resetEditor);
  const proposeBulk = h("button", { type: "button" }, "Propose for the selected");
  const clearBulk = h("button", { type: "button", class: "secondary" }, "Clear selection");
  const archiveBulk = h("button", { type: "button", class: "danger" }, "Archive the selected…");
  bulkBar.append(" ", proposeBulk, " ", archiveBulk, " ", clearBulk);
  archiveBulk.addEventListener("click", () => {
    const records = [...selected.values()];
    void archiveRecords(records, `${records.length} record${records.length === 1 ? "" : "s"}`).then((proposed) => {
      if (!proposed) return;
      selected.clear();
      showBulk();
      draw();
    });
  });
  clearBulk.addEventListener("click", () => {
    selected.clear();
    showBulk();
    draw();
  });
  proposeBulk.addEventListener("click", async () => {
    const field = fieldOfBulk();
    const edited = editedValue(field, bulkEditor);
    if ("refused" in edited) return void fail(edited.refused);
    proposeBulk.disabled = true;
    const records = [...selected.values()];
    if (await writeCells(`Set ${field.name} on ${records.length} records`, records.map((record) => ({ record, field, value: edited.value })))) {
      selected.clear();
      showBulk();
      draw();
    }
    proposeBulk.disabled = false;
  });
  body.addEventListener("change", (event) => {
    const box = event.target as HTMLInputElement;
    if (!box.matches("input.select-row")) return;
    const record = [...pages.values()].flat().find((row) => row.id === box.dataset.record);
    if (box.checked && record) selected.set(record.id, record);
    else selected.delete(box.dataset.record ?? "");
    showBulk();
  });
  if (columns.some((field) => editable(field) && !toggled(field))) resetEditor();
  readPending();

  return {
    node: h("div", { class: "grid-frame" }, hiddenFields.length ? hiddenNote() : null, h("div", { class: "grid-bar" }, counter, rowHeightPick()), status.node, setup.canPropose ? bulkBar : null, scroller),
    live(event: LiveEvent) {
      if (event.type.startsWith("change_request.")) readPendingSoon();
      // Rows whose lookups or links another record's change altered: read again if any is loaded.
      if (event.type === "records.recomputed" && event.baseId === base.id) {
        const named = new Set(event.data.recordIds as string[]);
        if ([...pages.values()].some((records) => records.some((row) => named.has(row.id)))) reread();
        return;
      }
      const record = event.data.record as RecordView | undefined;
      if (!record || event.baseId !== base.id) return;
      if (event.type === "record.created" || event.type === "record.deleted" || event.type === "record.restored") {
        total += event.type === "record.deleted" ? -1 : 1;
        showCount();
        reread();
        return;
      }
      for (const [key, records] of pages) {
        const at = records.findIndex((row) => row.id === record.id);
        if (at < 0) continue;
        const place = Number(key.slice(1)) * ROWS_A_PAGE + at;
        const index = key.startsWith("e") ? total - 1 - place : place;
        if (editing?.row === index) return;
        records[at] = { ...records[at], ...record };
        for (const field of columns) proposed.delete(`${record.id}:${field.slug}`);
        drawSoon();
      }
    },
  };
}
