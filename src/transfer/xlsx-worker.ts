/**
 * A worker thread that reads one workbook (`xlsx-sheet.ts`) and answers its JSON lines, or why it
 * was refused: inflating and parsing a large sheet takes seconds, which on the server's event loop
 * would hold every other request. Started by `xlsx.ts`, one a workbook.
 */
import { sheetAsJsonLines, WorkbookRefusal } from "./xlsx-sheet";

declare const self: Worker;

self.onmessage = async ({ data }: MessageEvent<{ bytes: Uint8Array; ceiling: number; most: number }>) => {
  try {
    self.postMessage({ lines: await sheetAsJsonLines(data.bytes, data.ceiling, data.most) });
  } catch (error) {
    const refused = error instanceof WorkbookRefusal ? error : new WorkbookRefusal(400, `The workbook could not be read: ${String((error as Error)?.message ?? error).slice(0, 200)}`);
    self.postMessage({ refused: { status: refused.status, message: refused.message } });
  }
};
