import type { BaseView, FieldView } from "../../content/bases";
import { primaryField, traitsOf } from "../../shared/field-types";
import type { RecordView } from "../../content/records/view";
import { h } from "./dom";
import { fileButton, type ShownFile } from "./preview";
import type { LiveEvent } from "./live";
import { empty, failureText, link, notice, recordName, shown } from "./ui";

/** Cards a gallery or a calendar month reads at once. */
export const CARDS_AT_ONCE = 100;

/** The first image of an attachment value, as its card's cover. */
function coverOf(value: unknown): ShownFile | null {
  if (!Array.isArray(value)) return null;
  return (value as ShownFile[]).find((file) => typeof file === "object" && file !== null && String(file.mimeType).startsWith("image/") && file.url) ?? null;
}

/** Redraws after a burst of record events of the base (once per 150 ms). */
function redrawOnEvents(base: BaseView, load: () => void) {
  let due: ReturnType<typeof setTimeout> | null = null;
  return (event: LiveEvent) => {
    if (event.baseId !== base.id || !event.type.startsWith("record.") || due) return;
    due = setTimeout(() => {
      due = null;
      load();
    }, 150);
  };
}

/** A gallery: a card per record (the newest `CARDS_AT_ONCE` through the view), its cover the first image of the view's cover field. */
export function gallery(base: BaseView, cover: FieldView | undefined, read: () => Promise<RecordView[]>): { node: HTMLElement; live(event: LiveEvent): void } {
  const primary = primaryField(base.fields);
  const details = base.fields.filter((field) => field !== primary && field !== cover && !traitsOf(field.type).holdsFiles).slice(0, 3);
  const node = h("div", { class: "gallery" });
  const load = () =>
    void read()
      .then((records) =>
        node.replaceChildren(
          ...(records.length === 0
            ? [empty("No records yet.")]
            : records.map((record) => {
                const image = cover ? coverOf(record.fields[cover.slug]) : null;
                const name = recordName(base.fields, record.fields, record.id);
                return h(
                  "article",
                  { class: "gallery-card", "aria-label": name },
                  image ? fileButton(image) : h("div", { class: "no-cover", "aria-hidden": "true" }),
                  h("h3", {}, link(`/admin/records/${record.id}`, name)),
                  ...details.map((field) => h("p", { class: "muted" }, `${field.name}: ${shown(record.fields[field.slug])}`)),
                );
              })),
        ),
      )
      .catch((failure) => node.replaceChildren(notice("error", failureText(failure))));
  load();
  return { node, live: redrawOnEvents(base, load) };
}

const DAY = 86_400_000;

/**
 * A calendar: the month of `month` (YYYY-MM, this month by default), a week a row from Monday, each
 * record on the day of its date field (read through the view, that month only), with links to the
 * month before and after.
 */
export function calendar(base: BaseView, dateField: FieldView, month: string | null, here: (month: string) => string, read: (from: string, to: string) => Promise<RecordView[]>): { node: HTMLElement; live(event: LiveEvent): void } {
  const now = new Date();
  const [year, monthIndex] = month && /^\d{4}-\d{2}$/.test(month) ? [Number(month.slice(0, 4)), Number(month.slice(5)) - 1] : [now.getUTCFullYear(), now.getUTCMonth()];
  const first = Date.UTC(year, monthIndex, 1);
  const next = Date.UTC(year, monthIndex + 1, 1);
  const key = (time: number) => new Date(time).toISOString().slice(0, 10);
  const monthKey = (time: number) => new Date(time).toISOString().slice(0, 7);
  const title = new Date(first).toLocaleDateString(undefined, { month: "long", year: "numeric", timeZone: "UTC" });
  const node = h("div", { class: "calendar" });
  const load = () =>
    void read(key(first), key(next - DAY))
      .then((records) => {
        const byDay = new Map<string, RecordView[]>();
        for (const record of records) {
          const value = record.fields[dateField.slug];
          if (typeof value !== "string") continue;
          const day = value.slice(0, 10);
          byDay.set(day, [...(byDay.get(day) ?? []), record]);
        }
        // From the Monday on or before the first, to the Sunday on or after the last day.
        const start = first - ((new Date(first).getUTCDay() + 6) % 7) * DAY;
        const weeks: HTMLElement[] = [];
        for (let week = start; week < next; week += 7 * DAY) {
          const days = Array.from({ length: 7 }, (_, i) => week + i * DAY).map((day) =>
            h(
              "td",
              { class: monthKey(day) === monthKey(first) ? "" : "other-month" },
              h("span", { class: "day" }, String(new Date(day).getUTCDate())),
              h("ul", {}, ...(byDay.get(key(day)) ?? []).map((record) => h("li", {}, link(`/admin/records/${record.id}`, recordName(base.fields, record.fields, record.id))))),
            ),
          );
          weeks.push(h("tr", {}, ...days));
        }
        const weekdays = Array.from({ length: 7 }, (_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toLocaleDateString(undefined, { weekday: "short", timeZone: "UTC" }));
        // A phone shows the month as an agenda: the days that hold records, in order (the stylesheet picks one of the two).
        const agenda = [...byDay.keys()]
          .filter((day) => day.startsWith(monthKey(first)))
          .sort()
          .map((day) =>
            h(
              "li",
              {},
              h("h3", {}, new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, { weekday: "long", day: "numeric", month: "long", timeZone: "UTC" })),
              h("ul", {}, ...byDay.get(day)!.map((record) => h("li", {}, link(`/admin/records/${record.id}`, recordName(base.fields, record.fields, record.id))))),
            ),
          );
        node.replaceChildren(
          h("p", { class: "pager" }, link(here(monthKey(first - DAY)), "← Month before"), h("strong", {}, title), link(here(monthKey(next)), "Month after →")),
          h("ol", { class: "agenda", "aria-label": `${title}: agenda` }, agenda.length ? agenda : h("li", {}, empty("Nothing on this month."))),
          h("div", { class: "calendar-scroll" }, h("table", { class: "month", "aria-label": `${title} by ${dateField.name}` }, h("thead", {}, h("tr", {}, ...weekdays.map((day) => h("th", { scope: "col" }, day)))), h("tbody", {}, ...weeks))),
        );
      })
      .catch((failure) => node.replaceChildren(notice("error", failureText(failure))));
  load();
  return { node, live: redrawOnEvents(base, load) };
}
