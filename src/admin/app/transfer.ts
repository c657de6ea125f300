import type { BaseView } from "../../content/bases";
import type { ImportPreview, ImportResult } from "../../transfer/import-plan";
import { formatOf, IMPORT_ACCEPT } from "../../shared/import-formats";
import { FIELD_TRAITS, IMPORTABLE_TYPES, traitsOf } from "../../shared/field-types";
import type { ImportJob } from "../../transfer/import-jobs";
import { api, query, send } from "./api";
import { type Child, h } from "./dom";
import { card, checkbox, failureText, link, shown, statusLine, table } from "./ui";

const FORMATS = [
  { format: "csv", label: "CSV" },
  { format: "json", label: "JSON" },
  { format: "jsonl", label: "JSON lines" },
] as const;


/** Saves an answer's bytes as a file of the person's (the export is read with the session and space headers, which a plain link cannot send). */
async function download(path: string, fileName: string): Promise<void> {
  const bytes = await (await send("GET", path)).blob();
  const href = URL.createObjectURL(bytes);
  const anchor = h("a", { href, download: fileName });
  document.body.appendChild(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

/**
 * Data in and out of a base: export its records as the screen shows them (`shown`: the view, the
 * filter and sort, the visible columns in their order, their names as the CSV's headers) as CSV,
 * JSON or JSON lines; import a file after a preview of its columns, their mapping and every error by line.
 * Committing an import is one change request (merged in parts with write, else one waiting for
 * review); a file with any error imports nothing.
 */
export function transferCard(base: BaseView, shown: () => Record<string, string | undefined>, canPropose: boolean, canWrite: boolean): HTMLElement {
  const status = statusLine("transfer-status");
  const { say, fail } = status;
  const exports = h(
    "p",
    { class: "actions" },
    "Export what is shown: ",
    ...FORMATS.map(({ format, label }) => {
      const button = h("button", { type: "button", class: "secondary" }, label);
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          await download(`/bases/${base.id}/export${query({ ...shown(), format })}`, `${base.slug}.${format}`);
        } catch (failure) {
          fail(failureText(failure));
        } finally {
          button.disabled = false;
        }
      });
      return button;
    }),
  );
  if (!canPropose) return card("Data in and out", exports, status.node);

  const picker = h("input", { type: "file", accept: IMPORT_ACCEPT, "aria-label": "File to import" });
  const createFields = canWrite ? checkbox("Make a field for each column no field matches", "createFields") : null;
  const preview = h("button", { type: "button" }, "Preview import");
  const commit = h("button", { type: "button", disabled: true }, "Import");
  const chosen = () => {
    const file = picker.files?.[0];
    if (!file) throw new Error("Choose a file first.");
    // The server's own rule, told the file's name too (a body carries only its type).
    return { file, format: formatOf(file.type, file.name) ?? undefined };
  };
  const creating = () => (createFields?.querySelector("input") as HTMLInputElement | undefined)?.checked === true;
  // The types chosen in the preview for the columns that make a field, by column: sent with the preview and with the import.
  let types: Record<string, string> = {};
  const typeParams = () => Object.fromEntries(Object.entries(types).map(([column, type]) => [`types[${column}]`, type]));
  const upload = (file: File, format: string | undefined, extra: Record<string, string | boolean | undefined>) =>
    send("POST", `/bases/${base.id}/imports${query({ format, createFields: creating() || undefined, ...typeParams(), ...extra })}`, file, file.type || "text/csv");
  const previewFile = async () => {
    commit.disabled = true;
    try {
      const { file, format } = chosen();
      say("Reading the file…");
      const answer = (await (await upload(file, format, { preview: true })).json()) as ImportPreview;
      say(
        ...previewOf(answer, (column, type) => {
          types[column] = type;
          void previewFile();
        }),
      );
      commit.disabled = answer.errorCount > 0 || answer.rowCount === 0;
    } catch (failure) {
      fail(failureText(failure));
    }
  };
  preview.addEventListener("click", previewFile);
  // Another file, or fields made or not: the types chosen were for the columns seen before.
  picker.addEventListener("change", () => (types = {}));
  createFields?.querySelector("input")!.addEventListener("change", () => (types = {}));
  commit.addEventListener("click", async () => {
    commit.disabled = true;
    try {
      const { file, format } = chosen();
      say("Importing…");
      // The same file chosen again after its import was cut short takes up that job (what it merged is not merged twice); otherwise a new one.
      const sameFile = `file:${encodeURIComponent(file.name).slice(0, 100)}:${file.size}:${file.lastModified}:`;
      const unfinished = (await api<ImportJob[]>("GET", `/bases/${base.id}/imports`)).find((job) => job.status === "failed" && job.idempotencyKey.startsWith(sameFile));
      const idempotencyKey = unfinished?.idempotencyKey ?? `${sameFile}${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
      const answer = (await (await upload(file, format, { idempotencyKey })).json()) as ImportResult;
      const waiting = answer.changeRequests.filter((cr) => cr.status !== "merged");
      say(
        h(
          "p",
          {},
          waiting.length === 0
            ? `Imported ${answer.rowCount} records.`
            : [`${answer.rowCount} records proposed: they wait for review in the Inbox. `, link(`/admin/change-requests/${waiting[0].id}`, "See the change request")],
        ),
      );
    } catch (failure) {
      fail(failureText(failure));
    }
  });
  void api<ImportJob[]>("GET", `/bases/${base.id}/imports`).then(([latest]) => {
    if (latest?.status === "failed" && !status.node.textContent) fail(cutShort(latest));
  }, () => undefined);
  return card("Data in and out", exports, h("div", { class: "import" }, h("label", {}, "Import a CSV, Excel, JSON or JSON lines file "), picker, createFields, h("div", { class: "actions" }, preview, commit)), status.node);
}

/** The base's last import stopped before its end: how far it went, why, and how to finish it. */
function cutShort(job: ImportJob): string {
  return `An import of ${job.rowCount.toLocaleString()} rows stopped after ${job.rowsMerged.toLocaleString()}: ${job.reason ?? "it did not finish"} Choose the same file and Import again to finish it; the rows already imported are not imported twice.`;
}

/**
 * What a preview shows: the columns and where each goes, the first rows, and every error by line.
 * A column that makes a field offers its type, the one its values fit first (`choose`: the file is
 * previewed again with it, its values checked as that type), as "Add a base" from a file does.
 */
function previewOf(answer: ImportPreview, choose: (column: string, type: string) => void): Child[] {
  const typeOf = (column: ImportPreview["columns"][number]): Child => {
    if (column.action !== "create") return column.action === "map" ? traitsOf(column.suggestedType).label : "";
    const pick = h("select", { "aria-label": `Type of ${column.name}` }, ...IMPORTABLE_TYPES.map((type) => h("option", { value: type, selected: type === column.suggestedType }, FIELD_TRAITS[type].label)));
    pick.addEventListener("change", () => choose(column.name, pick.value));
    return pick;
  };
  const columns = table(
    ["Column", "Goes to", "Type"],
    answer.columns.map((column) => [column.name, column.action === "map" ? (column.fieldSlug ?? "") : column.action === "create" ? "a new field" : `skipped${column.reason ? `: ${column.reason}` : ""}`, typeOf(column)]),
    `${answer.rowCount} rows (${answer.format.toUpperCase()})`,
  );
  const errors =
    answer.errorCount > 0
      ? [
          h("p", { class: "error" }, `${answer.errorCount} ${answer.errorCount === 1 ? "error" : "errors"}: nothing is imported until the file is fixed.`),
          table(["Line", "Column", "Error"], answer.errors.map((error) => [String(error.line), error.column ?? "—", error.message]), "Errors by line"),
        ]
      : [h("p", {}, "No errors: the import can go ahead.")];
  const fieldNames = answer.columns.filter((column) => column.action !== "skip").map((column) => column.fieldSlug ?? column.name);
  const rows = table(["Line", ...fieldNames], answer.rows.slice(0, 5).map((row) => [String(row.line), ...fieldNames.map((name) => shown(row.fields[name]))]), "First rows");
  return [columns, ...errors, rows];
}
