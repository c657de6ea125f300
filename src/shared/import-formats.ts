/** The file formats an import reads, and how one is told: its own module, so the admin page reads them by the same rule. */
export const IMPORT_FORMATS = ["csv", "json", "jsonl"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** What a file is read as, from its declared type or its name. */
export function formatOf(contentType: string, fileName = ""): ImportFormat | null {
  const media = contentType.split(";")[0].trim().toLowerCase();
  if (media === "text/csv" || media === "text/tab-separated-values" || /\.(csv|tsv|txt)$/i.test(fileName)) return "csv";
  if (media === "application/x-ndjson" || media === "application/jsonl" || media === "application/x-jsonlines" || /\.(jsonl|ndjson)$/i.test(fileName)) return "jsonl";
  if (media === "application/json" || /\.json$/i.test(fileName)) return "json";
  return null;
}
