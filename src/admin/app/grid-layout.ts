import type { BaseView, FieldView } from "../../content/bases";

/** A person's layout of a base's grid: the columns' order, widths and hidden fields, kept in this browser. */
export interface Layout {
  order: string[];
  widths: Record<string, number>;
  /** Fields this browser does not show (the primary one is always shown). */
  hidden: string[];
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

export function readLayout(baseId: string): Layout {
  let layout = layouts.get(baseId);
  if (layout) return layout;
  try {
    const saved = JSON.parse(localStorage.getItem(layoutKey(baseId)) ?? "{}") as Partial<Layout>;
    layout = { order: Array.isArray(saved.order) ? saved.order.map(String) : [], widths: typeof saved.widths === "object" && saved.widths ? saved.widths : {}, hidden: Array.isArray(saved.hidden) ? saved.hidden.map(String) : [] };
  } catch {
    layout = { order: [], widths: {}, hidden: [] };
  }
  layouts.set(baseId, layout);
  return layout;
}

export const saveLayout = (baseId: string, layout: Layout) => localStorage.setItem(layoutKey(baseId), JSON.stringify(layout));

/** The columns: in the order kept, then the fields it does not name (the primary one first). */
export function orderedColumns(base: BaseView, primary: FieldView | undefined, order: string[]): FieldView[] {
  const fields = [...(primary ? [primary] : []), ...base.fields.filter((field) => field !== primary)];
  const placed = order.map((slug) => fields.find((field) => field.slug === slug)).filter((field): field is FieldView => field !== undefined);
  return [...placed, ...fields.filter((field) => !placed.includes(field))];
}
