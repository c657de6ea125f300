import { badRequest } from "../http/errors";
import { nestsDeeperThan, PROTOTYPE_KEYS } from "../http/json-body";


/** One row of a file: where it starts (1-based line of the file; for a JSON array, the item's place) and its values by column. */
export interface ImportRow {
  line: number;
  values: Record<string, unknown>;
}


/** The delimiters a CSV may use; the header line's most frequent one (outside quotes) wins. */
const DELIMITERS = [",", ";", "\t", "|"] as const;

function detectDelimiter(headerLine: string): string {
  let best = ",";
  let bestCount = 0;
  for (const delimiter of DELIMITERS) {
    let count = 0;
    let quoted = false;
    for (const char of headerLine) {
      if (char === '"') quoted = !quoted;
      else if (!quoted && char === delimiter) count++;
    }
    if (count > bestCount) (best = delimiter), (bestCount = count);
  }
  return best;
}

/** How much text is held before the header line must have ended (for detecting the delimiter). */
const HEADER_WINDOW = 1 << 20;

type CsvState = "start" | "plain" | "quoted" | "quoteInQuoted";

/**
 * A CSV read as it arrives: RFC 4180 quoting (`""` inside quotes), any line end (CRLF, LF, CR),
 * blank lines skipped, the delimiter detected from the header line. Its state carries over from
 * chunk to chunk, so a chunk may end anywhere. `push` answers the rows a chunk completes, `end`
 * the last one. A quote left open, or text after a closing quote, is a 400 naming the line.
 */
export class CsvReader {
  delimiter: string | null = null;
  private held = "";
  private state: CsvState = "start";
  private cell = "";
  private row: string[] = [];
  private line = 1;
  private rowLine = 1;
  private quoteLine = 1;
  private afterCr = false;
  private rows: { line: number; cells: string[] }[] = [];

  constructor(private readonly maxColumns: number) {}

  push(text: string): { line: number; cells: string[] }[] {
    if (this.delimiter === null) {
      this.held += text;
      const end = this.held.search(/[\r\n]/);
      if (end < 0 && this.held.length < HEADER_WINDOW) return [];
      this.delimiter = detectDelimiter(end < 0 ? this.held : this.held.slice(0, end));
      text = this.held;
      this.held = "";
    }
    for (const char of text) this.step(char);
    return this.rows.splice(0);
  }

  end(): { line: number; cells: string[] }[] {
    if (this.delimiter === null) this.push(this.held === "" ? "" : "\n");
    if (this.state === "quoted") throw badRequest(`Line ${this.quoteLine}: a quoted cell is never closed.`);
    if (this.state !== "start" || this.row.length > 0) this.finishRow();
    return this.rows.splice(0);
  }

  private finishRow(): void {
    this.row.push(this.cell);
    if (this.row.length > this.maxColumns) throw badRequest(`Line ${this.rowLine} has ${this.row.length} columns; an import takes at most ${this.maxColumns} (the fields a base may have).`);
    if (this.row.length > 1 || this.row[0] !== "") this.rows.push({ line: this.rowLine, cells: this.row });
    this.row = [];
    this.cell = "";
    this.state = "start";
  }

  private endCell(): void {
    this.row.push(this.cell);
    this.cell = "";
    this.state = "start";
  }

  private step(char: string): void {
    const lineEnd = char === "\n" || char === "\r";
    if (char === "\n" && this.afterCr) {
      // The LF of a CRLF: the line already ended at its CR.
      this.afterCr = false;
      if (this.state === "quoted") this.cell += char;
      return;
    }
    this.afterCr = char === "\r";
    switch (this.state) {
      case "quoted":
        if (char === '"') this.state = "quoteInQuoted";
        else {
          if (lineEnd) this.line++;
          this.cell += char;
        }
        return;
      case "quoteInQuoted":
        if (char === '"') {
          this.cell += '"';
          this.state = "quoted";
          return;
        }
        if (char !== this.delimiter && !lineEnd) throw badRequest(`Line ${this.line}: text follows a closing quote; a quote inside a quoted cell is written "".`);
        break;
      case "start":
        if (char === '"') {
          this.state = "quoted";
          this.quoteLine = this.line;
          return;
        }
        break;
      case "plain":
        break;
    }
    if (char === this.delimiter) this.endCell();
    else if (lineEnd) {
      this.finishRow();
      this.line++;
      this.rowLine = this.line;
    } else {
      this.cell += char;
      this.state = "plain";
    }
  }
}

/** A JSON object usable as a row: plain, not nested deeper than a stored value may. */
function rowObject(value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw badRequest(`${where} is not an object of column values.`);
  for (const key of Object.keys(value)) if (PROTOTYPE_KEYS.has(key)) throw badRequest(`${where} has the key "${key}", which is not allowed.`);
  if (nestsDeeperThan(value, 32)) throw badRequest(`${where} nests deeper than 32 levels.`);
  return value as Record<string, unknown>;
}

/** A JSON array of objects: the row's "line" is the item's place, from 1. */
export function jsonRows(text: string): ImportRow[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw badRequest(`The file is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw badRequest("A JSON import is an array of objects, one per record.");
  return parsed.map((item, index) => ({ line: index + 1, values: rowObject(item, `Item ${index + 1}`) }));
}

/** One JSON object per line; blank lines are skipped. */
export function jsonLine(text: string, line: number): ImportRow | null {
  if (text.trim() === "") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw badRequest(`Line ${line} is not valid JSON: ${(error as Error).message}`);
  }
  return { line, values: rowObject(parsed, `Line ${line}`) };
}
