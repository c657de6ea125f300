import { type Upload, uploadBytes } from "../assets/storage";
import { ApiError, badRequest } from "../shared/errors";
import { unpacking } from "../shared/turns";

/**
 * An Excel workbook (`.xlsx`) read for an import: its first sheet, the first row naming the
 * columns, each other row a record, written as JSON lines for the import's own reader (numbers,
 * booleans and text as they are; a date as an ISO date, with its time when it has one). The file is
 * held whole (a zip must be), within `--max-import`. It is read on a worker thread
 * (`xlsx-worker.ts`), one archive or workbook at a time (`src/shared/turns.ts`), so a large sheet holds no
 * other request; the bytes it inflates are counted as they come out and the read stops past the ceiling, whatever sizes the
 * archive declares (`xlsx-sheet.ts`).
 */

/**
 * The most a workbook may inflate to, whatever its size: 4 times the import bound, at most 32 MB.
 * The sheet reader's time and memory grow with its XML (measured, docs/security.md: 32 MB of XML,
 * 90,000 rows of 6 cells, took 26 s and 445 MB on a loaded machine; past about 60 MB it fails).
 */
export const inflatedLimit = (limit: number) => Math.min(limit * 4, 32 * 1024 * 1024);

/** Where the worker's code is: an entry point of the executable of its own, found by its path from `src/`; from source, beside this file. */
const WORKER = Bun.main.startsWith("/$bunfs/") ? "./transfer/xlsx-worker.ts" : new URL("./xlsx-worker.ts", import.meta.url).href;
/** A read that takes longer is stopped: what the ceiling lets through is read in well under this (docs/security.md). */
const TIME_LIMIT_MS = 120_000;

type WorkerAnswer = { lines: string } | { refused: { status: 400 | 413; message: string } };

function readInWorker(bytes: Uint8Array, ceiling: number, most: number): Promise<string> {
  const worker = new Worker(WORKER);
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(badRequest(`The workbook took longer than ${TIME_LIMIT_MS / 1000} s to read.`)), TIME_LIMIT_MS);
    worker.onmessage = ({ data }: MessageEvent<WorkerAnswer>) => {
      clearTimeout(timer);
      if ("lines" in data) resolve(data.lines);
      else reject(data.refused.status === 413 ? new ApiError(413, "PAYLOAD_TOO_LARGE", data.refused.message) : badRequest(data.refused.message));
    };
    worker.onerror = (event) => {
      clearTimeout(timer);
      reject(badRequest(`The workbook could not be read: ${event.message.slice(0, 200)}`));
    };
    worker.postMessage({ bytes, ceiling, most });
  }).finally(() => worker.terminate());
}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

export async function xlsxAsJsonLines(upload: Upload, limit: number, tooLarge: () => ApiError): Promise<Blob> {
  const bytes = await uploadBytes(upload, limit, tooLarge);
  if (!ZIP_MAGIC.every((byte, i) => bytes[i] === byte)) throw badRequest("The file is not an .xlsx workbook (it is not a zip archive).");
  const lines = await unpacking.run(() => readInWorker(bytes, inflatedLimit(limit), limit));
  return new Blob([lines], { type: "application/x-ndjson" });
}
