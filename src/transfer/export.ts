import { isRelation } from "../content/fields/relation";
import { t } from "elysia";
import { plainText } from "../content/fields/kind";
import { FIELD_KINDS } from "../content/fields/registry";
import { recordNames } from "../content/relations/read";
import { listRecords } from "../content/records/list";
import { type RecordQuery } from "../content/records/query";
import { type RecordShape, type RecordView, requireShapeFields } from "../content/records/view";
import type { FieldRow, LoadedBase } from "../tables/content";
import type { AppContext } from "../context";
import { Timestamp } from "../shared/schemas";
import type { Sight } from "../spaces/sight";

export const EXPORT_FORMATS = ["csv", "json", "jsonl"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_MEDIA: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8",
  json: "application/json; charset=utf-8",
  jsonl: "application/x-ndjson; charset=utf-8",
};

/** One record as exported in JSON and JSON lines: relation values are record ids. */
export const ExportedRecordSchema = t.Object(
  { id: t.String(), createdAt: Timestamp, updatedAt: Timestamp, fields: t.Record(t.String(), t.Unknown()) },
  { $id: "ExportedRecord" },
);

/** A CSV's header row: the fields' slugs (for the API and a re-import) or their names (as a screen shows them). */
export const EXPORT_HEADERS = ["slugs", "names"] as const;
export type ExportHeaders = (typeof EXPORT_HEADERS)[number];

/** Records read per step: one listing page, so an export holds one page in memory whatever the base's size. */
export const EXPORT_PAGE = 500;

const LEAN: RecordShape = { base: false, headCommit: false, fields: null };

/**
 * A text a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a carriage return
 * first) is written with a leading `'`, which spreadsheets show as text (OWASP's advice against CSV
 * injection). Numbers are written as numbers, so `-5` stays a number.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) || value !== value.trim() ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * A value as one CSV cell's text: lists joined with ", ", objects as JSON, linked records by their
 * primary value (else their id), files by name. Every text that is not a number is made safe the
 * same way, whatever made it: a linked record's name or a file's is text someone typed too.
 */
function csvText(value: unknown, field: FieldRow | null, names: Record<string, string | null>): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  const text = cellText(value, field, names);
  return FORMULA_START.test(text) ? `'${text}` : text;
}

const cellText = (value: unknown, field: FieldRow | null, names: Record<string, string | null>): string => (field ? FIELD_KINDS[field.type].toText(value, names) : plainText(value));

function relationIds(records: RecordView[], relations: FieldRow[]): string[] {
  const ids: string[] = [];
  for (const record of records) {
    for (const field of relations) {
      const value = record.fields[field.slug];
      if (Array.isArray(value)) ids.push(...value.map(String));
      else if (typeof value === "string") ids.push(value);
    }
  }
  return ids;
}

/**
 * The text of an export, in parts: the header (or opening bracket), then one part per listing page
 * of `EXPORT_PAGE` records walked by its cursor, then the closing. Each page is its own read: a
 * record written while an export runs appears in it if the cursor has not passed its place yet.
 * The first page is read when this is called, so a bad query fails before anything is sent.
 */
export function exportParts(ctx: AppContext, loaded: LoadedBase, query: RecordQuery & { shape?: RecordShape }, format: ExportFormat, spaceId: string, sight: Sight, headers: ExportHeaders = "slugs"): Iterator<string> {
  // The fields asked for (`fields=`), in their order, as a screen shows them; else every field.
  const picked = query.shape?.fields ?? null;
  const shape: RecordShape = { ...LEAN, fields: picked };
  requireShapeFields(loaded, shape);
  let page: { records: RecordView[]; nextCursor: string | null } | null = listRecords(ctx, loaded, { ...query, limit: EXPORT_PAGE, shape });
  const fields = picked ? picked.map((slug) => loaded.fields.find((field) => field.slug === slug)!) : loaded.fields;
  const relations = fields.filter(isRelation);
  let stage: "head" | "rows" | "done" = "head";
  let wroteRecords = false;

  const rows = (records: RecordView[]): string => {
    if (format === "csv") {
      const names = relations.length > 0 ? recordNames(ctx, spaceId, sight, relationIds(records, relations)) : {};
      return records.map((record) => `${[record.id, ...fields.map((field) => csvText(record.fields[field.slug], field, names)), record.createdAt, record.updatedAt].map(csvCell).join(",")}\r\n`).join("");
    }
    const lines = records.map((record) => JSON.stringify({ id: record.id, createdAt: record.createdAt, updatedAt: record.updatedAt, fields: record.fields }));
    if (format === "jsonl") return lines.map((line) => `${line}\n`).join("");
    const joined = lines.join(",\n");
    return joined === "" ? "" : `${wroteRecords ? ",\n" : ""}${joined}`;
  };

  return {
    next(): IteratorResult<string> {
      if (stage === "done") return { done: true, value: undefined };
      let text = "";
      if (stage === "head") {
        // A byte-order mark tells spreadsheets the CSV is UTF-8.
        const head = headers === "names" ? ["id", ...fields.map((field) => field.name), "Created", "Last modified"] : ["id", ...fields.map((field) => field.slug), "createdAt", "updatedAt"];
        text = format === "csv" ? `\uFEFF${head.map(csvCell).join(",")}\r\n` : format === "json" ? "[\n" : "";
        stage = "rows";
      }
      if (page) {
        text += rows(page.records);
        wroteRecords ||= page.records.length > 0;
        page = page.nextCursor ? listRecords(ctx, loaded, { ...query, cursor: page.nextCursor, limit: EXPORT_PAGE, shape: LEAN }) : null;
        if (page) return { done: false, value: text };
      }
      stage = "done";
      return { done: false, value: text + (format === "json" ? "\n]\n" : "") };
    },
  };
}
