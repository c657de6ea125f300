import type { BaseView, FieldView } from "../../content/bases";
import type { RecordView } from "../../content/records/view";
import { primaryField } from "../../shared/field-types";
import { cellContent } from "./cells";
import { h } from "./dom";
import type { LiveEvent } from "./live";
import { empty, failureText, notice, recordName } from "./ui";

/**
 * A base's records grouped by a single-choice field (issue 38, item 3): a section per choice, and
 * one for records without a value, each with its count, folded or open, its records as rows of
 * the shown fields (50 at a time, "Show more"), through the same filters and view as the grid.
 * A record opens beside, as from the grid; it is edited there.
 */

export const GROUP_PAGE = 50;
type Page = { records: RecordView[]; total: number; linkedRecords?: Record<string, string | null> };

/** The choices of a field that groups, then "no value". */
const groupsOf = (field: FieldView): (string | null)[] => [...((field.options.choices as { name: string }[] | undefined) ?? []).map((choice) => choice.name), null];

export function groupedTable(base: BaseView, by: FieldView, columns: FieldView[], load: (choice: string | null, page: number) => Promise<Page>, openHref: (id: string) => string): { node: HTMLElement; live(event: LiveEvent): void } {
  const primary = primaryField(base.fields);
  const shown = columns.filter((field) => field !== primary && field !== by);
  const names = new Map<string, string | null>();
  const node = h("div", { class: "grouped" });
  const section = (choice: string | null) => {
    const body = h("tbody", {});
    const count = h("span", { class: "muted" });
    const more = h("button", { type: "button", class: "secondary", hidden: true }, "Show more");
    let pages = 0;
    const row = (record: RecordView) =>
      h("tr", {}, h("th", { scope: "row" }, h("a", { href: openHref(record.id) }, recordName(base.fields, record.fields, record.id))), shown.map((field) => h("td", {}, cellContent(field, record.fields[field.slug], names))));
    const read = async () => {
      try {
        const page = await load(choice, pages + 1);
        for (const [id, name] of Object.entries(page.linkedRecords ?? {})) names.set(id, name);
        pages++;
        body.append(...page.records.map(row));
        count.textContent = ` · ${page.total.toLocaleString()} record${page.total === 1 ? "" : "s"}`;
        more.hidden = pages * GROUP_PAGE >= page.total;
        if (page.total === 0) box.open = false;
      } catch (failure) {
        body.replaceChildren(h("tr", {}, h("td", {}, notice("error", failureText(failure)))));
      }
    };
    more.addEventListener("click", () => void read());
    const label = choice ?? `No ${by.name}`;
    const box = h(
      "details",
      { open: true, class: "group" },
      h("summary", {}, h("strong", {}, label), count),
      h("div", { class: "table-scroll" }, h("table", { class: "grouped-table", "aria-label": `${base.name}: ${label}` }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, primary?.name ?? "Record"), shown.map((field) => h("th", { scope: "col" }, field.name)))), body)),
      more,
    );
    void read();
    return box;
  };
  const draw = () => node.replaceChildren(...(groupsOf(by).length > 1 ? groupsOf(by).map(section) : [empty(`${by.name} has no choices to group by.`)]));
  draw();
  let due: ReturnType<typeof setTimeout> | null = null;
  return {
    node,
    live(event) {
      if (event.baseId !== base.id || !event.type.startsWith("record") || due) return;
      due = setTimeout(() => {
        due = null;
        draw();
      }, 150);
    },
  };
}
