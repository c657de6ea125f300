/**
 * What of the grid the person can see: a change to cells out of sight (rows scrolled away, columns
 * scrolled sideways, rows not drawn at all) is said and confirmed before it is made.
 */

/** Whether `inner` lies within `outer` (a pixel's slack for borders). */
const within = (inner: DOMRect, outer: { top: number; bottom: number; left: number; right: number }) =>
  inner.top >= outer.top - 1 && inner.bottom <= outer.bottom + 1 && inner.left >= outer.left - 1 && inner.right <= outer.right + 1;

/**
 * How many cells of rows `top`..`bottom` and columns `left`..`right` are out of sight: `cellAt`
 * answers a drawn cell (null for a row not drawn), `frame` is the scrolling box, `header` its
 * sticky header (which covers the rows under it).
 */
export function cellsOutOfSight(range: { top: number; bottom: number; left: number; right: number }, cellAt: (row: number, col: number) => HTMLElement | null, frame: HTMLElement, header: HTMLElement): number {
  const box = frame.getBoundingClientRect();
  const seen = { top: Math.max(box.top, header.getBoundingClientRect().bottom, 0), bottom: Math.min(box.bottom, window.innerHeight), left: Math.max(box.left, 0), right: Math.min(box.right, window.innerWidth) };
  const all = (range.bottom - range.top + 1) * (range.right - range.left + 1);
  let inSight = 0;
  // Only drawn rows can be in sight: the rest are counted out without being looked at (a range may span 200,000 rows).
  for (let row = range.top; row <= range.bottom; row++) {
    if (!cellAt(row, range.left)) continue;
    for (let col = range.left; col <= range.right; col++) {
      const cell = cellAt(row, col);
      if (cell && within(cell.getBoundingClientRect(), seen)) inSight++;
    }
  }
  return all - inSight;
}
