import type { BaseView, FieldView } from "../../content/bases";
import type { ViewView } from "../../content/views";

export const ROW_HEIGHTS = { short: 34, medium: 56, tall: 96 } as const;
export type RowHeight = keyof typeof ROW_HEIGHTS;
const isRowHeight = (value: unknown): value is RowHeight => typeof value === "string" && Object.hasOwn(ROW_HEIGHTS, value);

/** A layout of a base's grid: the columns' order, widths and hidden fields, and the rows' height. */
export interface Layout {
  order: string[];
  widths: Record<string, number>;
  /** Fields not shown (the primary one is always shown). */
  hidden: string[];
  rowHeight: RowHeight;
}

/**
 * Where a grid's layout lives: this browser's for a base's own grid; a view's own (its config's
 * `visibleFieldSlugs`, `fieldWidths` and `rowHeight`) for a view, changed on the page until saved
 * to the view as a change request. `keep` is called after every change the grid makes to it.
 */
export interface LayoutHome {
  layout: Layout;
  keep(): void;
  /** Where a hidden field is hidden: "in this browser" or "in this view". */
  where: string;
  /** A view's layout changed on the page and not saved to the view yet. */
  unsaved: boolean;
  /** Forgets the page's changes to a view's layout. */
  revert(): void;
}

export const OPEN_WIDTH = 84;
export const MIN_WIDTH = 60;
const layoutKey = (baseId: string) => `basalt.grid.${baseId}`;

/**
 * Each base's layout, one object for the page's life: a grid drawn again in place (another
 * client's write) is built while the one it replaces still takes the keyboard, and both must see
 * the same widths and order, or a press made meanwhile is lost.
 */
const layouts = new Map<string, Layout>();

function readLayout(baseId: string): Layout {
  let layout = layouts.get(baseId);
  if (layout) return layout;
  try {
    const saved = JSON.parse(localStorage.getItem(layoutKey(baseId)) ?? "{}") as Partial<Layout>;
    layout = { order: Array.isArray(saved.order) ? saved.order.map(String) : [], widths: typeof saved.widths === "object" && saved.widths ? saved.widths : {}, hidden: Array.isArray(saved.hidden) ? saved.hidden.map(String) : [], rowHeight: isRowHeight(saved.rowHeight) ? saved.rowHeight : "short" };
  } catch {
    layout = { order: [], widths: {}, hidden: [], rowHeight: "short" };
  }
  layouts.set(baseId, layout);
  return layout;
}

/** A base's own grid: its layout is this browser's. */
export function browserLayout(baseId: string): LayoutHome {
  const layout = readLayout(baseId);
  return { layout, keep: () => localStorage.setItem(layoutKey(baseId), JSON.stringify(layout)), where: "in this browser", unsaved: false, revert: () => {} };
}

/** A view's layout as its config says, for the page's life (per version of the view); `changed` is told of every change the grid makes. */
export function viewLayout(base: BaseView, view: ViewView, changed: () => void): LayoutHome {
  const key = `${view.id} ${view.updatedAt}`;
  let layout = layouts.get(key);
  if (!layout) {
    const config = view.config as { visibleFieldSlugs?: string[] | null; fieldWidths?: Record<string, number>; rowHeight?: unknown };
    const shown = config.visibleFieldSlugs ?? null;
    layout = { order: shown ?? [], widths: { ...config.fieldWidths }, hidden: shown ? base.fields.map((field) => field.slug).filter((slug) => !shown.includes(slug)) : [], rowHeight: isRowHeight(config.rowHeight) ? config.rowHeight : "short" };
    layouts.set(key, layout);
  }
  return {
    layout,
    keep: () => {
      unsavedViews.add(key);
      changed();
    },
    where: "in this view",
    get unsaved() {
      return unsavedViews.has(key);
    },
    revert: () => {
      layouts.delete(key);
      unsavedViews.delete(key);
    },
  };
}

/** Views (by id and version) whose layout the page changed and did not save. */
const unsavedViews = new Set<string>();

/** A layout as a view's config keeps it: the fields shown in their order, their widths, the rows' height. */
export const layoutConfig = (base: BaseView, layout: Layout) => ({
  visibleFieldSlugs: orderedColumns(base, undefined, layout.order).map((field) => field.slug).filter((slug) => !layout.hidden.includes(slug)),
  fieldWidths: Object.fromEntries(Object.entries(layout.widths).filter(([slug]) => base.fields.some((field) => field.slug === slug))),
  rowHeight: layout.rowHeight,
});

/** The columns: in the order kept, then the fields it does not name (the primary one first). */
export function orderedColumns(base: BaseView, primary: FieldView | undefined, order: string[]): FieldView[] {
  const fields = [...(primary ? [primary] : []), ...base.fields.filter((field) => field !== primary)];
  const placed = order.map((slug) => fields.find((field) => field.slug === slug)).filter((field): field is FieldView => field !== undefined);
  return [...placed, ...fields.filter((field) => !placed.includes(field))];
}
