/** The three-way merge of a record update: the record at the proposal's base, as it is now, and as proposed. */

export const same = (a: unknown, b: unknown) => Bun.deepEquals(a ?? null, b ?? null);

/** A list both sides changed: ours, less what theirs removed, plus what theirs added (in their order). */
function mergedList(base: unknown, ours: unknown, theirs: unknown): unknown[] {
  const [was, now, wanted] = [base, ours, theirs].map((list) => (Array.isArray(list) ? list : []));
  const removed = new Set(was.filter((item) => !wanted.includes(item)));
  const kept = now.filter((item) => !removed.has(item));
  return [...kept, ...wanted.filter((item) => !was.includes(item) && !kept.includes(item))];
}

/**
 * Three-way merge of a record update: base = the record at `baseCommitId`, ours = the record now,
 * theirs = the proposal. A field both sides changed to different values is a conflict, but for
 * `lists` (a relation's links): there each side's additions and removals are both applied, so two
 * proposals linking different records both land, and removing a link already removed is no change.
 */
export function threeWay(
  base: Record<string, unknown>,
  ours: Record<string, unknown>,
  theirs: Record<string, unknown>,
  lists: ReadonlySet<string> = new Set(),
): { values: Record<string, unknown>; conflicts: string[] } {
  const values: Record<string, unknown> = {};
  const conflicts: string[] = [];
  for (const [slug, value] of Object.entries(theirs)) {
    const oursChanged = !same(base[slug], ours[slug]);
    const theirsChanged = !same(base[slug], value);
    if (oursChanged && theirsChanged && lists.has(slug)) values[slug] = mergedList(base[slug], ours[slug], value);
    else if (oursChanged && theirsChanged && !same(value, ours[slug])) conflicts.push(slug);
    else if (theirsChanged) values[slug] = value;
  }
  return { values, conflicts };
}
