import type { FieldView } from "../../content/bases";
import { traitsOf } from "../../shared/field-types";

/**
 * Cells to and from spreadsheets: tab-separated text, as Excel, Numbers, LibreOffice and Google
 * Sheets copy and paste it (a cell holding a tab, a line break or a quote is quoted, quotes
 * doubled). What a pasted text becomes is each field's: its traits say how a cell's text reads.
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

/** A value as a spreadsheet's cell holds it: numbers and text as they are, lists joined, nothing empty. */
export function cellText(field: FieldView, value: unknown): string {
  if (value === null || value === undefined) return "";
  if (traitsOf(field.type).editor === "checkbox") return value === true ? "TRUE" : "FALSE";
  if (Array.isArray(value)) return value.map((item) => (typeof item === "object" && item !== null ? ((item as { fileName?: string }).fileName ?? JSON.stringify(item)) : String(item))).join(", ");
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** Whether a pasted cell may be written in this field (the others are computed, links or files: edited elsewhere). */
export const pastable = (field: FieldView): boolean => {
  const { editor, computed } = traitsOf(field.type);
  return !computed && editor !== "relation" && editor !== "attachment";
};

/** A pasted cell's text as the field's value (the server checks it as any value), or why it cannot be one. */
export function pastedValue(field: FieldView, text: string): { value: unknown } | { refused: string } {
  const trimmed = text.trim();
  if (trimmed === "") return { value: null };
  switch (traitsOf(field.type).editor) {
    case "number":
    case "rating": {
      const number = Number(trimmed.replace(/[\s,](?=\d{3}\b)/g, "").replace(",", "."));
      return Number.isFinite(number) ? { value: number } : { refused: `"${trimmed}" is not a number for ${field.name}` };
    }
    case "checkbox":
      return { value: /^(true|yes|y|1|x|✓|✔)$/i.test(trimmed) };
    case "multiselect":
      return { value: trimmed.split(/\s*[,;]\s*/).filter(Boolean) };
    case "json":
      try {
        return { value: JSON.parse(trimmed) };
      } catch {
        return { refused: `"${trimmed.slice(0, 40)}" is not JSON for ${field.name}` };
      }
    default:
      return { value: text };
  }
}
