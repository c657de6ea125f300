import { EMAIL_PATTERN, slugify } from "../shared/formats";
import { rmSync } from "node:fs";
import { type Static, t } from "elysia";
import { type Upload, uploadStream, writeTemporary } from "../assets/storage";
import { FIELD_KINDS } from "../content/fields/registry";
import { listItems } from "../content/fields/kind";
import { foldCase } from "../db/functions";
import { isIsoDate, readsAsFlag, readsAsNumber } from "../content/fields/scalar";
import { FIELD_TRAITS, type FieldType, IMPORTABLE_TYPES, isComputed } from "../shared/field-types";
import { recordInputErrors } from "../content/records/validate";
import type { FieldRow, LoadedBase } from "../tables/content";
import type { AppContext } from "../context";
import { ApiError, badRequest } from "../shared/errors";
import { Nullable } from "../shared/schemas";
import type { ImportFormat } from "../shared/import-formats";
import { xlsxAsJsonLines } from "./xlsx";
import { CsvReader, type ImportRow, JsonArrayReader, jsonLine, MAX_ROW_CHARS, rowTooLong } from "./parse";

/** An import read: a file checked row by row as it arrives, against the base (or for the fields it would make), with its columns' suggested types. */


/** The 413 for a file past `--max-import`. */
export const uploadRefusal = (max: number) => new ApiError(413, "PAYLOAD_TOO_LARGE", `The file is larger than ${max} bytes, the most an import reads (the operator sets it with --max-import).`);

/**
 * An import's bounds. Merged at once, its rows are proposed in change requests of `part` rows (one
 * merge of a part holds the writer and the server's thread about 20 ms); waiting for review, in one
 * change request of at most `review` rows (the bulk route's bound). A preview keeps only what it
 * shows, whatever the file's length (within `--max-import`).
 */
export const IMPORT_BOUNDS = { part: 250, review: 1000, previewRows: 20, errors: 100 } as const;

/** Columns an export writes that are not fields: skipped unless a field has that slug or name. */
const EXPORT_COLUMNS = new Set(["id", "createdat", "updatedat"]);

const ColumnSchema = t.Object({
  name: t.String(),
  action: t.Union([t.Literal("map"), t.Literal("create"), t.Literal("skip")], { description: "map: into fieldSlug; create: a new field of suggestedType (with createFields=true); skip: not imported." }),
  fieldSlug: Nullable(t.String()),
  suggestedType: t.String({ description: "The field type the column's values fit best." }),
  reason: Nullable(t.String({ description: "Why a column is skipped." })),
});

const LineError = t.Object({ line: t.Integer({ description: "The file's line (for a JSON array, the item's place from 1)." }), column: Nullable(t.String()), message: t.String() });

export const ImportPreviewSchema = t.Object(
  {
    format: t.String(),
    delimiter: Nullable(t.String()),
    rowCount: t.Integer(),
    columns: t.Array(ColumnSchema),
    rows: t.Array(t.Object({ line: t.Integer(), fields: t.Record(t.String(), t.Unknown()), errors: t.Array(LineError) }), { description: `The first ${IMPORT_BOUNDS.previewRows} rows as they would be written.` }),
    errors: t.Array(LineError, { description: `The first ${IMPORT_BOUNDS.errors} errors, by line.` }),
    errorCount: t.Integer(),
  },
  { $id: "ImportPreview" },
);
export type ImportPreview = Static<typeof ImportPreviewSchema>;

export const ImportResultSchema = t.Object(
  {
    importId: t.String({ description: "The import's job: GET /api/v1/imports/{id} reads how far it went." }),
    rowCount: t.Integer(),
    changeRequests: t.Array(t.Object({ id: t.String(), status: t.String(), operationCount: t.Integer() }), {
      description: `In the file's order: parts of ${IMPORT_BOUNDS.part} rows merged at once, or one change request waiting for review; read each with GET /change-requests/{id}.`,
    }),
  },
  { $id: "ImportResult" },
);
export type ImportResult = Static<typeof ImportResultSchema>;
type LineErrorView = Static<typeof LineError>;

/** What a column's values look like, gathered row by row, for the type it is suggested. */
class ColumnStats {
  filled = 0;
  number = true;
  boolean = true;
  date = true;
  email = true;
  url = true;
  long = false;
  list = true;
  nested = false;
  /** The values seen, one per spelling in any case (its first spelling): "Review", "review" and "REVIEW" are one choice. */
  distinct = new Map<string, string>();
  /** Text values holding a comma, and the comma-separated items of every text value, one per spelling in any case. */
  commas = 0;
  items = new Map<string, string>();

  private note(into: Map<string, string>, text: string): void {
    const key = foldCase(text);
    if (into.size <= CHOICES_MAX && !into.has(key)) into.set(key, text);
  }

  add(value: unknown): void {
    if (value === null || value === undefined || value === "") return;
    this.filled++;
    if (typeof value === "string") {
      const text = value.trim();
      this.number &&= readsAsNumber(text);
      this.boolean &&= readsAsFlag(text);
      this.date &&= isIsoDate(text);
      this.email &&= EMAIL_PATTERN.test(text);
      this.url &&= /^https?:\/\/\S+$/i.test(text) && URL.canParse(text);
      this.long ||= value.length > 255 || /[\r\n]/.test(value);
      this.list = false;
      this.note(this.distinct, text);
      if (text.includes(",")) this.commas++;
      for (const item of listItems(text)) this.note(this.items, item);
      return;
    }
    this.number &&= typeof value === "number";
    this.boolean &&= typeof value === "boolean";
    this.date = this.email = this.url = false;
    this.list &&= Array.isArray(value) && value.every((item) => typeof item === "string");
    this.nested ||= typeof value === "object";
    if (this.list) for (const item of value as string[]) this.note(this.distinct, item);
  }

  /** The type these values fit, with its options (a select's choices are the values seen). */
  suggestion(chosen?: FieldType): { type: FieldType; options: Record<string, unknown> } {
    const choices = (names = this.distinct) => ({ choices: [...names.values()].map((name) => ({ name })) });
    // A type the person chose in the preview; a choice field's choices are the values seen.
    if (chosen) return { type: chosen, options: FIELD_TRAITS[chosen].choices === "many" ? choices(this.list ? this.distinct : this.items) : FIELD_TRAITS[chosen].choices === "one" ? choices() : {} };
    if (this.filled === 0) return { type: "text", options: {} };
    if (this.number) return { type: "number", options: {} };
    if (this.boolean) return { type: "checkbox", options: {} };
    if (this.date) return { type: "date", options: {} };
    if (this.email) return { type: "email", options: {} };
    if (this.url) return { type: "url", options: {} };
    if (this.list) return this.distinct.size <= CHOICES_MAX ? { type: "multiselect", options: choices() } : { type: "json", options: {} };
    if (this.nested) return { type: "json", options: {} };
    if (this.long) return { type: "longtext", options: {} };
    // A few items, comma-separated and repeated across many rows, are several choices each ("infra, p1").
    if (this.commas > 0 && this.items.size <= CHOICES_MAX && this.filled >= this.items.size * 2) return { type: "multiselect", options: choices(this.items) };
    // A few values repeated across many rows are choices, not free text.
    if (this.distinct.size <= CHOICES_MAX && this.filled >= this.distinct.size * 2) return { type: "select", options: choices() };
    return { type: "text", options: {} };
  }
}

const CHOICES_MAX = 20;

/** A CSV cell as a value of the field's type: the text read as its kind reads it, or why it cannot be. */
function cellValue(field: FieldRow, text: string): { value: unknown } | { error: string } {
  return text.trim() === "" ? { value: null } : FIELD_KINDS[field.type].fromText(text, field);
}

export interface Column {
  name: string;
  field: FieldRow | null;
  action: "map" | "create" | "skip";
  reason: string | null;
  stats: ColumnStats;
  /** The type the person chose for a column that makes a field (`types[<column>]`), instead of the suggested one. */
  chosen?: FieldType;
}

/** `types[<column>]=<type>`: the types chosen for the file's columns, checked. */
export function chosenTypes(raw: unknown): Record<string, FieldType> {
  if (raw === undefined) return {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw badRequest("types is types[<column>]=<field type>.");
  const types: Record<string, FieldType> = {};
  for (const [column, type] of Object.entries(raw)) {
    if (typeof type !== "string" || !(IMPORTABLE_TYPES as string[]).includes(type)) throw badRequest(`types[${column}] must be one of ${IMPORTABLE_TYPES.join(", ")}.`);
    types[column] = type as FieldType;
  }
  return types;
}

/** A column's field: by slug, by name (any case), or by the slug its name would have. */
function columnOf(loaded: LoadedBase, name: string, createFields: boolean): Column {
  const key = name.trim().toLowerCase();
  const field = loaded.fields.find((candidate) => candidate.slug === name.trim()) ?? loaded.fields.find((candidate) => candidate.name.toLowerCase() === key) ?? loaded.fields.find((candidate) => candidate.slug === newSlug(name));
  const stats = new ColumnStats();
  if (field && isComputed(field.type)) return { name, field: null, action: "skip", reason: `${field.slug} is computed (${field.type}): its values are the server's.`, stats };
  if (field) return { name, field, action: "map", reason: null, stats };
  if (EXPORT_COLUMNS.has(key)) return { name, field: null, action: "skip", reason: "an export's own column, not a field", stats };
  if (createFields) return { name, field: null, action: "create", reason: null, stats };
  return { name, field: null, action: "skip", reason: "no field has this slug or name (send createFields=true to make one)", stats };
}

/**
 * An import read row by row: each row's values converted to its fields' types and checked as a
 * create is, its errors kept by line, what a preview shows; and, reading to commit, each row's
 * values in `kept` until a part of them is proposed.
 */
export class ImportPlan {
  columns: Column[] = [];
  rowCount = 0;
  errorCount = 0;
  readonly errors: LineErrorView[] = [];
  readonly shown: { line: number; fields: Record<string, unknown>; errors: LineErrorView[] }[] = [];
  readonly kept: Record<string, unknown>[] = [];
  delimiter: string | null = null;

  /** The server's requests in flight, which the reading gives way to. */
  get requests(): { inFlight: number } {
    return this.ctx.requests;
  }

  /** The widest a row may be: the fields a base may have. */
  get maxColumns(): number {
    return this.ctx.config.limits.fieldsPerBase;
  }

  constructor(
    private readonly ctx: AppContext,
    private readonly loaded: LoadedBase,
    readonly format: ImportFormat,
    private readonly options: { mode: "preview" | "check" | "commit"; createFields: boolean; types?: Record<string, FieldType> },
  ) {}

  /** The file's columns: a CSV's header, or a JSON row's keys as they first appear. */
  setColumns(names: string[], line: number): void {
    const seen = new Set<string>();
    for (const name of names) {
      const key = name.trim();
      if (key === "") throw badRequest(`Line ${line}: column ${names.indexOf(name) + 1} has no name; every column of the header needs one.`);
      if (seen.has(key)) throw badRequest(`Line ${line}: the column "${key}" appears twice.`);
      seen.add(key);
      if (this.columns.some((column) => column.name === key)) continue;
      const column = columnOf(this.loaded, key, this.options.createFields);
      if (column.action === "create" && this.options.types?.[key]) column.chosen = this.options.types[key];
      this.columns.push(column);
    }
    if (this.columns.length > this.maxColumns) throw badRequest(`The file has ${this.columns.length} columns; an import takes at most ${this.maxColumns} (the fields a base may have).`);
  }

  /** A CSV row: its cells matched to the header, which it must be as wide as. */
  addCells(line: number, cells: string[]): void {
    if (cells.length !== this.columns.length) {
      this.rowCount++;
      this.fail(line, null, `has ${cells.length} cells; the header has ${this.columns.length}.`);
      return;
    }
    this.add({ line, values: Object.fromEntries(this.columns.map((column, i) => [column.name, cells[i]])) });
  }

  add(row: ImportRow): void {
    if (this.format !== "csv") this.setColumns(Object.keys(row.values), row.line);
    this.rowCount++;
    const values: Record<string, unknown> = {};
    const raw: Record<string, unknown> = {};
    const errors: LineErrorView[] = [];
    for (const column of this.columns) {
      if (!Object.hasOwn(row.values, column.name)) continue;
      const given = row.values[column.name];
      column.stats.add(given);
      // Shown under the slug of the field it will make, as `columns[].fieldSlug` names it.
      if (column.action === "create") raw[newSlug(column.name)] = given;
      // A chosen type is checked as the file is read (a suggested one fits every value by its making); a choice field's choices are the values.
      if (column.action === "create" && column.chosen && FIELD_TRAITS[column.chosen].choices === "none" && given !== null && given !== "") {
        const definition = { slug: newSlug(column.name), type: column.chosen, required: false, options: {} };
        const kind = FIELD_KINDS[column.chosen];
        const read = typeof given === "string" ? kind.fromText(given.trim(), definition) : { value: given };
        const checked = "error" in read ? read : kind.checkValue(read.value, definition);
        if ("error" in checked) errors.push({ line: row.line, column: column.name, message: `${column.name} ${checked.error}.` });
      }
      if (column.action !== "map" || !column.field) continue;
      const converted = typeof given === "string" && this.format === "csv" ? cellValue(column.field, given) : { value: given };
      if ("error" in converted) errors.push({ line: row.line, column: column.name, message: `${column.name} ${converted.error}.` });
      else if (converted.value !== null) values[column.field.slug] = converted.value;
    }
    const checked = recordInputErrors(this.ctx, this.loaded, values, "create");
    for (const error of checked.errors) {
      const column = this.columns.find((candidate) => candidate.field?.slug === error.slug)?.name ?? null;
      // A cell that could not be read is already an error; its field's being required is not another.
      if (column === null || !errors.some((earlier) => earlier.column === column)) errors.push({ line: row.line, column, message: error.message });
    }
    for (const error of errors) this.fail(error.line, error.column, error.message);
    if (this.shown.length < IMPORT_BOUNDS.previewRows) this.shown.push({ line: row.line, fields: { ...checked.values, ...raw }, errors });
    if (this.options.mode === "commit" && errors.length === 0) this.kept.push(checked.values);
  }

  private fail(line: number, column: string | null, message: string): void {
    this.errorCount++;
    if (this.errors.length < IMPORT_BOUNDS.errors) this.errors.push({ line, column, message: column === null ? `Line ${line} ${message}` : message });
  }

  preview(): ImportPreview {
    return {
      format: this.format,
      delimiter: this.delimiter,
      rowCount: this.rowCount,
      columns: this.columns.map((column) => ({ name: column.name, action: column.action, fieldSlug: column.field?.slug ?? (column.action === "create" ? newSlug(column.name) : null), suggestedType: column.field?.type ?? column.stats.suggestion(column.chosen).type, reason: column.reason })),
      rows: this.shown,
      errors: this.errors,
      errorCount: this.errorCount,
    };
  }
}


/**
 * Reads a file into the plan as it arrives, a chunk at a time: decoded as UTF-8 (a BOM dropped,
 * invalid bytes a 400 naming where), CSV, JSON lines and a JSON array's items row by row: no
 * file is ever held or parsed whole. Past `limit` bytes it stops with `tooLarge`.
 */
export async function readInto(plan: ImportPlan, body: ReadableStream<Uint8Array>, limit: number, tooLarge: () => ApiError, afterChunk?: () => Promise<void>): Promise<void> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const csv = plan.format === "csv" ? new CsvReader(plan.maxColumns) : null;
  const json = plan.format === "json" ? new JsonArrayReader() : null;
  let headerRead = false;
  let pendingLine = "";
  let line = 1;
  let size = 0;
  const pacer = new Pacer(plan.requests);
  const takeCsv = async (rows: { line: number; cells: string[] }[]) => {
    for (const row of rows) {
      if (headerRead) plan.addCells(row.line, row.cells);
      else (plan.setColumns(row.cells, row.line), (headerRead = true));
      await pacer.breathe();
    }
  };
  const takeRows = async (rows: ImportRow[]) => {
    for (const row of rows) {
      plan.add(row);
      await pacer.breathe();
    }
  };
  const take = async (text: string, last: boolean) => {
    if (csv) await takeCsv(csv.push(text));
    else if (json) await takeRows(json.push(text));
    else {
      const lines = (pendingLine + text).split("\n");
      pendingLine = last ? "" : lines.pop()!;
      if (pendingLine.length > MAX_ROW_CHARS) throw rowTooLong(`Line ${line + lines.length}`);
      await takeRows(lines.map((each) => jsonLine(each, line++)).filter((row): row is ImportRow => row !== null));
    }
  };
  const decode = (bytes?: Uint8Array) => {
    try {
      return bytes ? decoder.decode(bytes, { stream: true }) : decoder.decode();
    } catch {
      throw badRequest(`The file is not valid UTF-8 (within its first ${size.toLocaleString("en")} bytes).`);
    }
  };
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    await take(decode(chunk), false);
    await afterChunk?.();
  }
  await take(decode(), true);
  if (csv) {
    await takeCsv(csv.end());
    plan.delimiter = csv.delimiter;
  } else json?.end();
  await afterChunk?.();
}

/** A file as the reader takes it: a workbook's first sheet as JSON lines (`xlsx.ts`), any other file as it is. */
async function asText(ctx: AppContext, file: { format: ImportFormat; body: Upload }): Promise<{ format: ImportFormat; body: Upload }> {
  if (file.format !== "xlsx") return file;
  const limit = ctx.config.maxImportBytes;
  return { format: "jsonl", body: await xlsxAsJsonLines(file.body, limit, () => uploadRefusal(limit)) };
}

/** A preview: the file read once, as it arrives, and nothing written. */
export async function previewImport(ctx: AppContext, loaded: LoadedBase, given: { format: ImportFormat; body: Upload }, createFields: boolean, types: Record<string, FieldType> = {}): Promise<ImportPreview> {
  const file = await asText(ctx, given);
  const plan = new ImportPlan(ctx, loaded, file.format, { mode: "preview", createFields, types });
  await readInto(plan, uploadStream(file.body), ctx.config.maxImportBytes, () => uploadRefusal(ctx.config.maxImportBytes));
  return plan.preview();
}

/**
 * A commit's file: written to a temporary file of the data directory as it arrives (within
 * `--max-import`), read once to check it, then handed to `then` with a way to read it again; the
 * temporary file is removed however it ends. Memory holds a chunk and a part, not the file.
 */
export async function checkedUpload<T>(
  ctx: AppContext,
  loaded: LoadedBase,
  given: { format: ImportFormat; body: Upload },
  createFields: boolean,
  then: (checked: ImportPlan, reread: () => ReadableStream<Uint8Array>) => Promise<T>,
  types: Record<string, FieldType> = {},
): Promise<T> {
  const limit = ctx.config.maxImportBytes;
  const file = await asText(ctx, given);
  const spool = await writeTemporary(ctx.config.dataDir, file.body, limit, () => uploadRefusal(limit));
  try {
    const checked = new ImportPlan(ctx, loaded, file.format, { mode: "check", createFields, types });
    await readInto(checked, Bun.file(spool.path).stream(), limit, () => uploadRefusal(limit));
    return await then(checked, () => Bun.file(spool.path).stream());
  } finally {
    rmSync(spool.path, { force: true });
  }
}

export const newSlug = (name: string) => slugify(name, "field").replace(/-/g, "_");

/**
 * An import shares the server's one thread with every other request. While others are being
 * answered, after each slice of work (at least `SLICE_MS`, a part's merge is longer) it pauses
 * twice as long as the slice took, so they keep about two thirds of the thread; alone, it never
 * pauses (docs/performance.md, "Files and data in and out").
 */
export class Pacer {
  static readonly SLICE_MS = 4;
  static readonly PAUSE_PER_MS = 2;
  private since = performance.now();

  constructor(private readonly requests: { inFlight: number }) {}

  async breathe(): Promise<void> {
    const spent = performance.now() - this.since;
    if (spent < Pacer.SLICE_MS) return;
    if (this.requests.inFlight > 1) await Bun.sleep(spent * Pacer.PAUSE_PER_MS);
    else await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}
