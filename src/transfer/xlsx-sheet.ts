import { inflateRawSync } from "node:zlib";
import { Unzip, type UnzipDecoder, zipSync } from "fflate";
import { readSheet } from "read-excel-file/node";

/**
 * A workbook's first sheet as JSON lines, read with a ceiling on the bytes actually inflated (run
 * in `xlsx-worker.ts`, off the server's event loop). The sizes a zip declares, in its directory or
 * its entries' headers, are never believed: each entry's inflated bytes are counted as the
 * inflater makes them, and the read stops as soon as they would pass the ceiling. The sheet
 * reader is then given a zip rebuilt from those checked bytes (stored, not compressed), so it
 * inflates nothing of the original.
 */

/** What a refused workbook answers: 413 past the ceiling, 400 for a file that is not a workbook. */
export class WorkbookRefusal extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** The parts of an .xlsx the sheet reader reads (the rest, images and printer settings, are never inflated). */
const isRead = (name: string) => name.endsWith(".xml") || name.endsWith(".xml.rels");

/**
 * The entries the sheet reader reads, inflated, in all at most `ceiling` bytes. Each entry is
 * inflated by the native zlib, told the most it may put out (what the ceiling has left): it stops
 * there, whatever the entry declares, without making more (measured: 1.6 ms to refuse a 300 MB
 * entry of 300 KB).
 */
export function inflateWithin(bytes: Uint8Array, ceiling: number): Record<string, Uint8Array> {
  const files: Record<string, Uint8Array> = Object.create(null);
  let left = ceiling;
  let over = false;
  let broken = false;
  class BoundedInflate implements UnzipDecoder {
    static readonly compression = 8;
    private readonly compressed: Uint8Array[] = [];
    ondata: UnzipDecoder["ondata"] = () => undefined;
    push(data: Uint8Array, final: boolean): void {
      this.compressed.push(data);
      if (!final) return;
      let inflated: Buffer;
      try {
        inflated = inflateRawSync(Buffer.concat(this.compressed), { maxOutputLength: left + 1 });
      } catch (error) {
        if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") over = true;
        else broken = true;
        return;
      }
      this.ondata(null, new Uint8Array(inflated.buffer as ArrayBuffer, inflated.byteOffset, inflated.byteLength), true);
    }
  }
  const unzip = new Unzip((file) => {
    if (!isRead(file.name) || over || broken) return;
    const chunks: Uint8Array[] = [];
    file.ondata = (error, data, final) => {
      if (error) broken = true;
      if (error || over) return;
      left -= data.byteLength;
      if (left < 0) over = true;
      else chunks.push(data);
      if (final && !over) files[file.name] = Buffer.concat(chunks);
    };
    file.start();
  });
  unzip.register(BoundedInflate);
  try {
    unzip.push(bytes, true);
  } catch {
    broken = true;
  }
  if (over) throw new WorkbookRefusal(413, `The workbook inflates to more than ${ceiling} bytes, the most an import reads from one.`);
  if (broken || Object.keys(files).length === 0) throw new WorkbookRefusal(400, "The file is not an .xlsx workbook (it is not a zip archive).");
  return files;
}

const cellJson = (value: unknown): unknown => {
  if (!(value instanceof Date)) return value;
  const iso = value.toISOString();
  return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
};

/**
 * The first sheet, the first row naming the columns, each other row a JSON line (line n is the
 * sheet's row n), in all at most `most` characters. The lines are counted as they are made, since
 * a cell naming a shared string is a few bytes of XML however long the string: a 10 KB workbook
 * whose 150 rows name one 7 MB string would come to a gigabyte of lines.
 */
export async function sheetAsJsonLines(bytes: Uint8Array, ceiling: number, most: number): Promise<string> {
  const checked = zipSync(inflateWithin(bytes, ceiling), { level: 0 });
  let rows: unknown[][];
  try {
    rows = await readSheet(Buffer.from(checked.buffer, checked.byteOffset, checked.byteLength));
  } catch (error) {
    throw new WorkbookRefusal(400, `The workbook could not be read: ${(error as Error).message.slice(0, 200)}`);
  }
  const [header = [], ...data] = rows;
  const names = header.map((cell, i) => (cell === null || cell === undefined || String(cell).trim() === "" ? `Column ${i + 1}` : String(cell).trim()));
  // The header's line is left blank, as an empty row is, so an error names the row a person sees.
  let left = most;
  const lines = data.map((row) => {
    // A row is counted (its cells and the column names they repeat) before its line is made, so no one line can pass the bound either.
    left -= row.reduce<number>((sum, cell, i) => (cell === null || cell === undefined ? sum : sum + (names[i]?.length ?? 0) + (typeof cell === "string" ? cell.length : 24)), 1);
    if (left < 0) throw new WorkbookRefusal(413, `The workbook's rows come to more than ${most} bytes, the most an import reads (the operator sets it with --max-import).`);
    return row.every((cell) => cell === null || cell === undefined || cell === "") ? "" : JSON.stringify(Object.fromEntries(names.flatMap((name, i) => (row[i] === null || row[i] === undefined ? [] : [[name, cellJson(row[i])]]))));
  });
  return ["", ...lines].join("\n");
}
