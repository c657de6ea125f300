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

export function recordList(base: BaseView, load: (page: number) => Promise<Page>, openHref: (id: string) => string): { node: HTMLElement; live(event: LiveEvent): void } {
  const primary = primaryField(base.fields);
  const shown = base.fields.filter((field) => field !== primary).slice(0, SHOWN_FIELDS);
  const list = h("ul", { class: "record-list", "aria-label": `${base.name} records` });
  const count = h("p", { class: "record-count", "aria-live": "polite" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Show more");
  const names = new Map<string, string | null>();
  let pages = 0;
  const item = (record: RecordView) =>
    h(
      "li",
      {},
      h("a", { href: openHref(record.id), class: "record-name" }, recordName(base.fields, record.fields, record.id)),
      h("dl", {}, shown.map((field) => [h("dt", {}, field.name), h("dd", {}, cellContent(field, record.fields[field.slug], names) || "—")])),
    );
  const read = async (reset: boolean) => {
    try {
      const page = await load(reset ? 1 : pages + 1);
      for (const [id, name] of Object.entries(page.linkedRecords ?? {})) names.set(id, name);
      pages = reset ? 1 : pages + 1;
      if (reset) list.replaceChildren();
      list.append(...page.records.map(item));
      count.textContent = `${page.total.toLocaleString()} record${page.total === 1 ? "" : "s"}`;
      more.hidden = pages * LIST_PAGE >= page.total;
      if (page.total === 0) list.replaceChildren(h("li", {}, empty("No records match.")));
    } catch (failure) {
      list.replaceChildren(h("li", {}, notice("error", failureText(failure))));
    }
  };
  more.addEventListener("click", () => void read(false));
  void read(true);
  let due: ReturnType<typeof setTimeout> | null = null;
  return {
    node: h("div", { class: "list-frame" }, count, list, more),
    live(event) {
      if (event.baseId !== base.id || !event.type.startsWith("record") || due) return;
      due = setTimeout(() => {
        due = null;
        void read(true);
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
