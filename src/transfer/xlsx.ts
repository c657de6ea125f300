import { unzipSync } from "fflate";
import { readSheet } from "read-excel-file/node";
import { type Upload, uploadBytes } from "../assets/storage";
import { ApiError, badRequest } from "../shared/errors";

/**
 * An Excel workbook (`.xlsx`) read for an import: its first sheet, the first row naming the
 * columns, each other row a record, written as JSON lines for the import's own reader (numbers,
 * booleans and text as they are; a date as an ISO date, with its time when it has one). The file is
 * held whole (a zip must be), within `--max-import`; what it would inflate to is checked against
 * its central directory first, so a small archive of a huge sheet is refused before it is read.
 */

/** The most a workbook may inflate to, whatever its size: 8 times the import bound, at most 512 MB. */
const inflatedLimit = (limit: number) => Math.min(limit * 8, 512 * 1024 * 1024);

/** The declared inflated size of every entry, read from the archive's directory without inflating any. */
function inflatedSize(bytes: Uint8Array): number {
  let total = 0;
  try {
    unzipSync(bytes, {
      filter(file) {
        total += file.originalSize;
        return false;
      },
    });
  } catch {
    throw badRequest("The file is not an .xlsx workbook (it is not a zip archive).");
  }
  return total;
}

const cellJson = (value: unknown): unknown => {
  if (!(value instanceof Date)) return value;
  const iso = value.toISOString();
  return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
};

export async function xlsxAsJsonLines(upload: Upload, limit: number, tooLarge: () => ApiError): Promise<Blob> {
  const bytes = await uploadBytes(upload, limit, tooLarge);
  if (inflatedSize(bytes) > inflatedLimit(limit)) throw new ApiError(413, "PAYLOAD_TOO_LARGE", `The workbook inflates to more than ${inflatedLimit(limit)} bytes, the most an import reads from one.`);
  let rows: unknown[][];
  try {
    rows = await readSheet(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    throw badRequest(`The workbook could not be read: ${(error as Error).message.slice(0, 200)}`);
  }
  const [header = [], ...data] = rows;
  const names = header.map((cell, i) => (cell === null || cell === undefined || String(cell).trim() === "" ? `Column ${i + 1}` : String(cell).trim()));
  // Line n is the sheet's row n (the header's line left blank, as an empty row is), so an error names the row a person sees.
  const lines = data.map((row) => (row.every((cell) => cell === null || cell === undefined || cell === "") ? "" : JSON.stringify(Object.fromEntries(names.flatMap((name, i) => (row[i] === null || row[i] === undefined ? [] : [[name, cellJson(row[i])]]))))));
  return new Blob([["", ...lines].join("\n")], { type: "application/x-ndjson" });
}
