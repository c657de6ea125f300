import type { ViewConfig, ViewFilterGroup } from "../tables/content";

/** The keys of a view's configuration that name one field (each checked against the base). */
export const FIELD_KEYS = ["groupByFieldSlug", "stackByFieldSlug", "dateFieldSlug", "startFieldSlug", "endFieldSlug", "coverFieldSlug"] as const;
export type FieldKey = (typeof FIELD_KEYS)[number];

type FieldRef = { fieldSlug: string; fieldId?: string };

/**
 * A view's configuration (or a view change's payload, which holds part of one) as a caller sees it:
 * nothing that names a field hidden from them (`hiddenFieldsOf`: a link into a base they cannot see,
 * its lookups, the formulas reading them). Only what is shown is narrowed: a listing through the view
 * still applies its filters and sort as the owner saved them.
 */
export function seenViewConfig<C extends Partial<ViewConfig>>(config: C, hidden: { slugs: ReadonlySet<string>; ids: ReadonlySet<string> }): C {
  if (hidden.slugs.size === 0) return config;
  const shown = (ref: FieldRef) => !hidden.slugs.has(ref.fieldSlug) && !(ref.fieldId && hidden.ids.has(ref.fieldId));
  const groups = (list: ViewFilterGroup[]): ViewFilterGroup[] => list.map((group) => ({ ...group, filters: group.filters.filter(shown), ...(group.groups ? { groups: groups(group.groups) } : {}) }));
  const narrowed: Record<string, unknown> = { ...config };
  if (Array.isArray(config.filters)) narrowed.filters = config.filters.filter(shown);
  if (Array.isArray(config.sorts)) narrowed.sorts = config.sorts.filter(shown);
  if (Array.isArray(config.groups)) narrowed.groups = groups(config.groups);
  if (Array.isArray(config.visibleFieldSlugs)) narrowed.visibleFieldSlugs = (config.visibleFieldSlugs as string[]).filter((slug) => !hidden.slugs.has(slug));
  if (config.fieldWidths && typeof config.fieldWidths === "object") narrowed.fieldWidths = Object.fromEntries(Object.entries(config.fieldWidths).filter(([slug]) => !hidden.slugs.has(slug)));
  for (const key of FIELD_KEYS) if (typeof config[key] === "string" && hidden.slugs.has(config[key] as string)) narrowed[key] = null;
  return narrowed as C;
}
