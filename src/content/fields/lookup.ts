import { LOOKUP_ROLLUPS } from "../../shared/field-types";
import { badRequest, invalid } from "../../shared/errors";
import { computedKind, READ_FROM_LINKS } from "./kind";

export type Rollup = (typeof LOOKUP_ROLLUPS)[number];

export interface LookupOptions {
  relationFieldSlug: string;
  targetFieldSlug: string;
  rollup: Rollup;
  limit: "all" | "first";
}

export const lookupOf = (options: Record<string, unknown>): LookupOptions => options.lookup as LookupOptions;

/** A lookup's options: `lookup { relationFieldSlug, targetFieldSlug, rollup (values), limit (all) }`; the slugs are checked against the bases when the field is made. */
function checkLookupOptions(options: Record<string, unknown>): Record<string, unknown> {
  const lookup = options.lookup as Partial<Record<keyof LookupOptions, unknown>> | undefined;
  const shape = 'A lookup field needs options.lookup: { "relationFieldSlug": "…", "targetFieldSlug": "…", "rollup"?: values|count|sum|average|min|max|concatenate, "limit"?: all|first }.';
  if (typeof lookup !== "object" || lookup === null || Array.isArray(lookup)) throw badRequest(shape);
  const { relationFieldSlug, targetFieldSlug, rollup = "values", limit = "all" } = lookup;
  if (typeof relationFieldSlug !== "string" || typeof targetFieldSlug !== "string") throw badRequest(shape);
  if (!(LOOKUP_ROLLUPS as readonly unknown[]).includes(rollup)) throw invalid(["options", "lookup", "rollup"], `options.lookup.rollup must be one of ${LOOKUP_ROLLUPS.join(", ")}.`);
  if (limit !== "all" && limit !== "first") throw invalid(["options", "lookup", "limit"], "options.lookup.limit must be all or first.");
  return { ...options, lookup: { relationFieldSlug, targetFieldSlug, rollup, limit } };
}

/** Values of a field of the linked records, gathered or rolled up (`relations/read.ts` reads them). */
export const lookupKind = computedKind({ checkOptions: checkLookupOptions, formulaType: "any", readAtRead: () => READ_FROM_LINKS, unlinked: () => null });

/** Whether a field is a lookup: its options say which linked field it reads. */
export const isLookup = (field: { type: string }): boolean => field.type === "lookup";
