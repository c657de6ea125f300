import type { FieldView } from "../../content/bases";
import type { Read } from "./kinds/kind";
import { pageKindOf } from "./kinds/registry";

/**
 * Cells to and from spreadsheets: tab-separated text, as Excel, Numbers, LibreOffice and Google
 * Sheets copy and paste it (a cell holding a tab, a line break or a quote is quoted, quotes
 * doubled). What a pasted text becomes is each field's: its page kind reads a cell's text.
 */

/** The rows of tab-separated text, each a list of cells (a final line break ends the last row, it adds none). */
export function parseTsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"' && cell === "") quoted = true;
    else if (char === "\t") row.push(cell), (cell = "");
    else if (char === "\n" || char === "\r") {
      if (char === "\r" && text[i + 1] === "\n") i++;
      row.push(cell);
      rows.push(row);
      (row = []), (cell = "");
    } else cell += char;
  }
  if (cell !== "" || row.length > 0) rows.push([...row, cell]);
  return rows;
}

const quoted = (text: string) => (/[\t\n\r"]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

/** Rows of cells as tab-separated text, a line each. */
export const toTsv = (rows: string[][]): string => rows.map((row) => row.map(quoted).join("\t")).join("\n");

/** A value as a spreadsheet's cell holds it, by its field's kind; nothing is empty. */
export const cellText = (field: FieldView, value: unknown): string => (value === null || value === undefined ? "" : pageKindOf(field.type).copied(value));

/** Whether a pasted cell may be written in this field (the others are computed or files: edited elsewhere). */
export const pastable = (field: FieldView): boolean => pageKindOf(field.type).pasted !== undefined || pageKindOf(field.type).pastedTogether !== undefined;

type Reader = (text: string) => Read;

/** The readers of the pasted columns whose kind reads a paste's cells together (a link's names, matched by the server), by field slug. */
export async function pasteReaders(fields: FieldView[], matrix: string[][]): Promise<Map<string, Reader>> {
  const readers = new Map<string, Reader>();
  for (const [j, field] of fields.entries()) {
    const { pastedTogether } = pageKindOf(field.type);
    if (pastedTogether) readers.set(field.slug, await pastedTogether(field, matrix.map((row) => row[j] ?? "").filter((text) => text.trim() !== "")));
  }
  return readers;
}

/** A pasted cell's text as the field's value (the server checks it as any value), or why it cannot be one. */
export function pastedValue(field: FieldView, text: string, readers: Map<string, Reader> = new Map()): Read {
  if (text.trim() === "") return { value: null };
  const read = readers.get(field.slug) ?? pageKindOf(field.type).pasted?.bind(null, field);
  return read ? read(text) : { value: text };
}
