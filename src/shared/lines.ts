import { t } from "elysia";
import { wholeNumberParam } from "./query-params";
import { WholeNumber } from "./schemas";

/** The most lines, and about the most bytes, one read of lines answers (Busabase's caps). */
export const MAX_LINES_READ = 2000;
const MAX_LINES_BYTES = 2 * 1024 * 1024;

export const ReadLinesSchema = t.Object(
  {
    lines: t.Array(t.String()),
    startLine: WholeNumber({ minimum: 1 }),
    endLine: WholeNumber({ minimum: 1, description: "The last line answered (startLine - 1 when none is)." }),
    totalLines: WholeNumber(),
    truncated: t.Boolean({ description: "True when the range asked for reached past what one answer holds (2000 lines, about 2 MiB)." }),
  },
  { $id: "ReadLines" },
);

/**
 * Lines `startLine`..`endLine` (from 1; both optional) of a text, at most 2000 lines and about
 * 2 MiB: an empty text has no lines, and a range past the end answers none.
 */
export function readLines(text: string, startLine = 1, endLine?: number) {
  const all = text === "" ? [] : text.split(/\r?\n/);
  if (all.length > 0 && all.at(-1) === "" && text.endsWith("\n")) all.pop();
  const last = Math.min(endLine ?? all.length, all.length);
  const lines: string[] = [];
  let bytes = 0;
  let truncated = false;
  for (let at = startLine; at <= last; at++) {
    const line = all[at - 1];
    bytes += Buffer.byteLength(line) + 1;
    if (lines.length === MAX_LINES_READ || bytes > MAX_LINES_BYTES) {
      truncated = true;
      break;
    }
    lines.push(line);
  }
  return { lines, startLine, endLine: Math.max(startLine, startLine + lines.length - 1), totalLines: all.length, truncated };
}

/** The query of a read of lines: `startLine` and `endLine`, from 1. */
export const LinesQuery = t.Object({ startLine: t.Optional(t.String({ description: "From 1; default 1." })), endLine: t.Optional(t.String({ description: "Default: the last line." })) });

/** The range a read of lines asks for. */
export const lineRangeOf = (query: { startLine?: string; endLine?: string }): [number, number | undefined] => [
  wholeNumberParam("startLine", query.startLine, 1, 1, Number.MAX_SAFE_INTEGER),
  query.endLine === undefined ? undefined : wholeNumberParam("endLine", query.endLine, 1, 1, Number.MAX_SAFE_INTEGER),
];
