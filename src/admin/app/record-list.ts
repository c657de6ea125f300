import type { BaseView } from "../../content/bases";
import type { RecordView } from "../../content/records/view";
import { primaryField } from "../../shared/field-types";
import { cellContent } from "./cells";
import { h } from "./dom";
import type { LiveEvent } from "./live";
import { empty, failureText, notice, recordName } from "./ui";

/**
 * A base's records as a list, for a phone (issue 38, item 8): each record its name (opening it
 * beside, which is the whole screen there) and its next fields as label and value, 50 at a time
 * with "Show more". The same listing as the grid (filters, view, sort); another client's change
 * reads it again.
 */

const SHOWN_FIELDS = 3;
export const LIST_PAGE = 50;

type Page = { records: RecordView[]; total: number; linkedRecords?: Record<string, string | null> };

/** Where a list was: the records it showed (its pages read), the names they link to, and the record opened last (the keyboard goes back to it). */
interface ListPlace {
  records: RecordView[];
  total: number;
  names: Map<string, string | null>;
  opened: string | null;
}
/** The places of the lists shown last, by listing (as the grid's, `GridSetup.place`), the newest last. */
const places = new Map<string, ListPlace>();
const PLACES_KEPT = 10;

/**
 * `place` names the listing: a list drawn again for the same one (a record opened over it and
 * closed) shows the records it showed at once, so the window stays where it was, and reads them
 * again; the record opened gets the keyboard back unless something else takes it (`keyboardElsewhere`).
 */
export function recordList(base: BaseView, load: (page: number) => Promise<Page>, openHref: (id: string) => string, place?: string, keyboardElsewhere = false): { node: HTMLElement; live(event: LiveEvent): void } {
  const primary = primaryField(base.fields);
  const shown = base.fields.filter((field) => field !== primary).slice(0, SHOWN_FIELDS);
  const list = h("ul", { class: "record-list", "aria-label": `${base.name} records` });
  const count = h("p", { class: "record-count", "aria-live": "polite" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Show more");
  const kept = place ? places.get(place) : undefined;
  const keeping: ListPlace = { records: [], total: 0, names: new Map(kept?.names), opened: kept?.opened ?? null };
  if (place) {
    places.delete(place);
    places.set(place, keeping);
    for (const old of places.keys()) if (places.size > PLACES_KEPT) places.delete(old);
  }
  const names = keeping.names;
  let pages = 0;
  const item = (record: RecordView) =>
    h(
      "li",
      {},
      h("a", { href: openHref(record.id), class: "record-name", "data-record": record.id }, recordName(base.fields, record.fields, record.id)),
      h("dl", {}, shown.map((field) => [h("dt", {}, field.name), h("dd", {}, cellContent(field, record.fields[field.slug], names) || "—")])),
    );
  list.addEventListener("click", (event) => {
    const opened = (event.target as HTMLElement).closest<HTMLElement>("a[data-record]");
    if (opened) keeping.opened = opened.dataset.record ?? null;
  });
  /** Shows `records` of `total` (the pages read so far). */
  const showRecords = (records: RecordView[], total: number) => {
    keeping.records = records;
    keeping.total = total;
    count.textContent = `${total.toLocaleString()} record${total === 1 ? "" : "s"}`;
    more.hidden = pages * LIST_PAGE >= total;
    // A record's link that had the keyboard gives it to the same record's new link.
    const focused = list.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset.record : undefined;
    list.replaceChildren(...(total === 0 ? [h("li", {}, empty("No records match."))] : records.map(item)));
    if (focused) list.querySelector<HTMLElement>(`a[data-record="${CSS.escape(focused)}"]`)?.focus({ preventScroll: true });
  };
  /** Reads pages 1 to `through` again, together, and shows them in one go (the list does not shrink meanwhile). */
  const read = async (through: number) => {
    try {
      const answers = await Promise.all(Array.from({ length: Math.max(1, through) }, (_, i) => load(i + 1)));
      for (const page of answers) for (const [id, name] of Object.entries(page.linkedRecords ?? {})) names.set(id, name);
      pages = answers.length;
      showRecords(answers.flatMap((page) => page.records), answers[answers.length - 1].total);
    } catch (failure) {
      list.replaceChildren(h("li", {}, notice("error", failureText(failure))));
    }
  };
  more.addEventListener("click", async () => {
    try {
      const page = await load(pages + 1);
      for (const [id, name] of Object.entries(page.linkedRecords ?? {})) names.set(id, name);
      pages += 1;
      showRecords([...keeping.records, ...page.records], page.total);
    } catch (failure) {
      list.replaceChildren(h("li", {}, notice("error", failureText(failure))));
    }
  });
  if (kept && kept.records.length > 0) {
    pages = Math.ceil(kept.records.length / LIST_PAGE);
    showRecords(kept.records, kept.total);
    // The keyboard comes back to the record opened (the screen's `data-focus`), unless something else takes it.
    if (kept.opened && !keyboardElsewhere) list.querySelector(`a[data-record="${CSS.escape(kept.opened)}"]`)?.setAttribute("data-focus", "");
  }
  void read(pages);
  let due: ReturnType<typeof setTimeout> | null = null;
  return {
    node: h("div", { class: "list-frame" }, count, list, more),
    live(event) {
      if (event.baseId !== base.id || !event.type.startsWith("record") || due) return;
      due = setTimeout(() => {
        due = null;
        void read(pages);
      }, 150);
    },
  };
}

/** How the records are laid out on this screen: a list on a phone unless the person chose the grid (kept per browser). */
const LAYOUT_KEY = "basalt.records.layout";
const narrowScreen = () => matchMedia("(max-width: 40rem)").matches;
export const wantsList = () => (localStorage.getItem(LAYOUT_KEY) ?? (narrowScreen() ? "list" : "grid")) === "list";
export function layoutSwitch(list: boolean, reload: () => void): HTMLElement {
  const pick = (to: "list" | "grid") => () => {
    localStorage.setItem(LAYOUT_KEY, to);
    reload();
  };
  return h("p", { class: "layout-switch" }, list ? h("button", { type: "button", class: "secondary", onclick: pick("grid") }, "Show as a grid") : h("button", { type: "button", class: "secondary", onclick: pick("list") }, "Show as a list"));
}
