/** The file formats an import reads, and how one is told: its own module, so the admin page reads them by the same rule. */
export const IMPORT_FORMATS = ["csv", "json", "jsonl", "xlsx"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** An Excel workbook's media type. */
export const XLSX_MEDIA = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/** What a file picker of the page offers for an import. */
export const IMPORT_ACCEPT = `.csv,.tsv,.txt,.json,.jsonl,.ndjson,.xlsx,text/csv,application/json,application/x-ndjson,${XLSX_MEDIA}`;

/** What a file is read as, from its declared type or its name. */
export function formatOf(contentType: string, fileName = ""): ImportFormat | null {
  const media = contentType.split(";")[0].trim().toLowerCase();
  if (media === "text/csv" || media === "text/tab-separated-values" || /\.(csv|tsv|txt)$/i.test(fileName)) return "csv";
  if (media === "application/x-ndjson" || media === "application/jsonl" || media === "application/x-jsonlines" || /\.(jsonl|ndjson)$/i.test(fileName)) return "jsonl";
  if (media === "application/json" || /\.json$/i.test(fileName)) return "json";
  if (media === XLSX_MEDIA || /\.xlsx$/i.test(fileName)) return "xlsx";
  return null;
}
