import type { LoadedBase } from "../bases";
import { formulasReading } from "../fields/formula/plan";
import { isLookup, lookupOf } from "../fields/lookup";
import { isRelation } from "../fields/relation";
import { targetBaseOf } from "../relations/schema";
import type { Sight } from "../../spaces/sight";

/** The bases `seenBase` narrowed, each to the base it was made from. */
const wholeOf = new WeakMap<LoadedBase, LoadedBase>();

/**
 * A base as a caller sees it: without its links to a base hidden from them, the lookups through
 * those links and the formulas reading either, whose values are the hidden base's content; the
 * base itself when it has none. Reads take it in place of the base, so its records, filters, sorts
 * and link listings know only the fields left (docs/visibility.md).
 */
export function seenBase(loaded: LoadedBase, sight: Sight): LoadedBase {
  if (sight.hiddenBases.size === 0) return loaded;
  const hidden = new Set(loaded.fields.filter((field) => isRelation(field) && sight.hiddenBases.has(targetBaseOf(field))).map((field) => field.slug));
  if (hidden.size === 0) return loaded;
  for (const field of loaded.fields) if (isLookup(field) && hidden.has(lookupOf(field.options).relationFieldSlug)) hidden.add(field.slug);
  for (const field of formulasReading(loaded.fields, hidden)) hidden.add(field.slug);
  const seen = { ...loaded, fields: loaded.fields.filter((field) => !hidden.has(field.slug)) };
  wholeOf.set(seen, loaded);
  return seen;
}

/** The whole base a seen one was made from (itself when it is whole): what caches shared by every caller are filled from. */
export const wholeBase = (loaded: LoadedBase): LoadedBase => wholeOf.get(loaded) ?? loaded;
