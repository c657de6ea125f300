import { badRequest } from "../shared/errors";
import { nestsDeeperThan, PROTOTYPE_KEYS } from "../shared/json";


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
    if (this.cell.length > MAX_ROW_CHARS) throw rowTooLong(`The cell of line ${this.rowLine}`);
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

/** The most one item of a JSON array, or one line of JSON lines, may hold: a row, not a file. */
export const MAX_ROW_CHARS = 8 * 1024 * 1024;

export const rowTooLong = (where: string) => badRequest(`${where} is longer than ${MAX_ROW_CHARS.toLocaleString("en")} characters: a row that large is no record.`);

/**
 * A JSON array of objects read as it arrives: each item is cut out of the text at its end (its
 * brackets counted outside strings) and parsed alone, so a file is never parsed, nor held, whole.
 * An item's "line" is its place in the array, from 1.
 */
export class JsonArrayReader {
  private state: "before" | "items" | "after" = "before";
  private item = "";
  private depth = 0;
  private inString = false;
  private escaped = false;
  private count = 0;

  push(text: string): ImportRow[] {
    const rows: ImportRow[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (this.state === "before") {
        if (code === 0x5b) (this.state = "items"), (start = i + 1);
        else if (!isSpace(code)) throw badRequest("A JSON import is an array of objects, one per record.");
        continue;
      }
      if (this.state === "after") {
        if (!isSpace(code)) throw badRequest("The file is not valid JSON: there is more after the array's end.");
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (code === 0x5c) this.escaped = true;
        else if (code === 0x22) this.inString = false;
        continue;
      }
      if (code === 0x22) this.inString = true;
      else if (code === 0x7b || code === 0x5b) this.depth++;
      else if (code === 0x7d) this.depth--;
      else if (code === 0x5d && this.depth > 0) this.depth--;
      else if (this.depth === 0 && (code === 0x2c || code === 0x5d)) {
        this.item += text.slice(start, i);
        start = i + 1;
        const row = this.finishItem(code === 0x5d);
        if (row) rows.push(row);
        if (code === 0x5d) this.state = "after";
      }
    }
    if (this.state === "items") {
      this.item += text.slice(start);
      if (this.item.length > MAX_ROW_CHARS) throw rowTooLong(`Item ${this.count + 1}`);
    }
    return rows;
  }

  /** At the end of the file: the array must have closed. */
  end(): void {
    if (this.state !== "after") throw badRequest(this.state === "before" ? "The file is not valid JSON: it is empty." : "The file is not valid JSON: the array is not closed.");
  }

  private finishItem(last: boolean): ImportRow | null {
    const text = this.item;
    this.item = "";
    // `[]`, or `[ ... ]` closing after a trailing item: nothing more to read.
    if (last && text.trim() === "" && this.count === 0) return null;
    this.count++;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw badRequest(`The file is not valid JSON: item ${this.count}: ${(error as Error).message}`);
    }
    return { line: this.count, values: rowObject(parsed, `Item ${this.count}`) };
  }
}

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09 || code === 0xfeff;

/** One JSON object per line; blank lines are skipped. */
export function jsonLine(text: string, line: number): ImportRow | null {
  if (text.trim() === "") return null;
  if (text.length > MAX_ROW_CHARS) throw rowTooLong(`Line ${line}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw badRequest(`Line ${line} is not valid JSON: ${(error as Error).message}`);
  }
  return { line, values: rowObject(parsed, `Line ${line}`) };
}
