import type { Static } from "@sinclair/typebox";
import { and, asc, eq } from "drizzle-orm";
import { t } from "elysia";
import type { AppContext } from "../../context";
import { badRequest } from "../../shared/errors";
import { WholeNumber } from "../../shared/schemas";
import { primaryField } from "../../shared/field-types";
import { foldName } from "../../shared/formats";
import { records } from "../../tables/content";
import type { LoadedBase } from "../bases";
import { listItems, textOf } from "../fields/kind";

/**
 * Names matched to records: a text value becomes links by naming records of the target base by
 * their primary value, case and accents folded (`foldName`), as a conversion to a relation does.
 * A name several records bear does not say which: it links none and is said (`ambiguous`), as a
 * name no record bears is (`unmatched`); nothing is linked by a guess.
 */
export interface LinkMatcher {
  /** The ids a value's names match (in order, repeats dropped), the names that match none, and those that match several. */
  match(value: unknown): { ids: string[]; unmatched: string[]; ambiguous: string[] };
  /** The active records that bear a name (oldest first). */
  named(name: string): string[];
}

/** The names a value holds: a list's items, text split on its commas when the person asked, else the whole text. */
export function namesIn(value: unknown, split: boolean): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.map(textOf).map((name) => name.trim()).filter(Boolean);
  const text = textOf(value);
  return split ? listItems(text) : [text.trim()].filter(Boolean);
}

/** The active records of `target` by their folded primary value; a base without a text field has no names to match (400). */
export function linkMatcher(ctx: AppContext, target: LoadedBase, split: boolean): LinkMatcher {
  const primary = primaryField(target.fields);
  if (!primary) throw badRequest(`The base "${target.node.slug}" has no text field to match names against: add one first.`);
  const byName = new Map<string, string[]>();
  const rows = ctx.db
    .select({ id: records.id, data: records.data })
    .from(records)
    .where(and(eq(records.baseId, target.base.id), eq(records.status, "active")))
    .orderBy(asc(records.autoNumber))
    .all();
  for (const { id, data } of rows) {
    const name = data[primary.slug];
    if (typeof name !== "string" || name.trim() === "") continue;
    const key = foldName(name);
    const bearers = byName.get(key);
    if (bearers) bearers.push(id);
    else byName.set(key, [id]);
  }
  const named = (name: string) => byName.get(foldName(name)) ?? [];
  return {
    named,
    match(value) {
      const ids: string[] = [];
      const unmatched: string[] = [];
      const ambiguous: string[] = [];
      for (const name of namesIn(value, split)) {
        const bearers = named(name);
        if (bearers.length === 0) unmatched.push(name);
        else if (bearers.length > 1) ambiguous.push(name);
        else if (!ids.includes(bearers[0])) ids.push(bearers[0]);
      }
      return { ids, unmatched, ambiguous };
    },
  };
}

/** The most names one match asks about: a paste of a screenful of cells and more. */
export const MATCH_NAMES_LIMIT = 5000;

export const NameMatchesSchema = t.Object(
  {
    matches: t.Array(
      t.Object({
        name: t.String(),
        recordId: t.Union([t.String(), t.Null()], { description: "The active record the name names, or null when none does or several do (`recordCount` says which)." }),
        recordCount: WholeNumber({ description: "How many active records bear the name: 0, 1 (`recordId`), or several, when the name does not say which and links none." }),
      }),
    ),
  },
  { description: "Each name asked, in order, and the record of the base it names by its primary field (case and accents folded), as a conversion to links matches them." },
);

/** `POST /bases/{id}/records/match`: the record each name names, as a paste into a link column asks before writing. */
export function matchNames(ctx: AppContext, loaded: LoadedBase, names: string[]): Static<typeof NameMatchesSchema> {
  const matcher = linkMatcher(ctx, loaded, false);
  return {
    matches: names.map((name) => {
      const bearers = matcher.named(name);
      return { name, recordId: bearers.length === 1 ? bearers[0] : null, recordCount: bearers.length };
    }),
  };
}
