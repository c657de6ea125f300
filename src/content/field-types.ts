import { FIELD_TYPES, type FieldType, holdsMany, isComputed, isEmpty } from "../shared/field-types";
import { attachmentIds, checkAttachmentOptions } from "../assets/values";
import { SEARCHED_TYPES as INDEXED_TYPES } from "../db/search-index";
import { EMAIL_PATTERN } from "../shared/formats";
import { badRequest } from "../shared/errors";
import { nestsDeeperThan, PROTOTYPE_KEYS } from "../shared/json";
import { MAX_VALUE_SIZE, textTooLarge } from "../shared/limits";
import type { FormulaType } from "./formula";

export const FIELD_SLUG_PATTERN = /^[a-z0-9_-]{1,64}$/;

/** How deep a `json` value (and node metadata) may nest: deeper values could break SQLite's JSON functions in later reads. */
export const MAX_JSON_DEPTH = 32;

/** Refuses a stored JSON object (a `json` value, node metadata, field options) that nests too deep. */
export function checkJsonDepth(what: string, value: unknown): void {
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) throw badRequest(`${what} may nest at most ${MAX_JSON_DEPTH} levels.`);
}

export interface FieldDefinition {
  slug: string;
  type: FieldType;
  required: boolean;
  options: Record<string, unknown>;
}

export interface FieldError {
  slug: string;
  /** null for a slug that is not a field of the base. */
  type: string | null;
  message: string;
}

/** The field types whose values full-text search reads: the search index's own list. */
export const SEARCHED_TYPES: readonly FieldType[] = INDEXED_TYPES;

/** The languages whose `code` values are parsed on write (others are any string). */
const PARSED_LANGUAGES: Record<string, (text: string) => unknown> = { json: JSON.parse, yaml: (text) => Bun.YAML.parse(text) };

/** The parse error of `text` in `language`, or null when it parses (or the language is not checked). */
function parseError(language: string, text: string): string | null {
  const parse = PARSED_LANGUAGES[language];
  if (!parse) return null;
  try {
    parse(text);
    return null;
  } catch (error) {
    return `must be valid ${language.toUpperCase()} (${(error as Error).message})`;
  }
}

const languageOf = (options: Record<string, unknown>): string => ((options.code as { language?: string } | undefined)?.language ?? "").toLowerCase();

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))?)?$/;

/** An ISO 8601 date or date-time that names a real moment: no 30 February, no 25 o'clock (Date.parse rolls both over). */
export function isIsoDate(text: string): boolean {
  const parts = DATE_PATTERN.exec(text);
  if (!parts) return false;
  const [year, month, day] = [parts[1], parts[2], parts[3]].map(Number);
  const upTo = (part: string | undefined, max: number) => part === undefined || Number(part) <= max;
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= lastDay && upTo(parts[4], 23) && upTo(parts[5], 59) && upTo(parts[6], 59) && upTo(parts[7], 23) && upTo(parts[8], 59);
}

const PHONE_PATTERN = /^\+?[\d\s().-]{6,}$/;

interface Choice {
  id: string;
  name: string;
}

const choicesOf = (options: Record<string, unknown>): Choice[] => (options.choices as Choice[] | undefined) ?? [];

/** The choices new options rename, matched by id: old name -> new name. */
export function renamedChoices(before: Record<string, unknown>, after: Record<string, unknown>): Map<string, string> {
  const names = new Map(choicesOf(after).map((choice) => [choice.id, choice.name]));
  const renames = new Map<string, string>();
  for (const choice of choicesOf(before)) {
    const name = names.get(choice.id);
    if (name !== undefined && name !== choice.name) renames.set(choice.name, name);
  }
  return renames;
}

/** A select value given by name or id, stored as the choice's name; undefined when it is no choice. */
function choiceName(options: Record<string, unknown>, value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  return choicesOf(options).find((choice) => choice.name === value || choice.id === value)?.name;
}

/** How a record id looks: the shape is checked before any lookup. */
const RECORD_ID = /^rec_[0-9A-Za-z]{1,64}$/;

/** The most records one relation value may hold, on either side of the link. */
export const MAX_LINKS = 1000;

/**
 * A relation value: a record id or a list of them, in order, repeats dropped; a list for a field
 * that holds many, else one id or null. Whether the ids name records is checked against the
 * database (`links.ts`).
 */
function relationValue(field: FieldDefinition, value: unknown): { value: unknown } | { error: string } {
  const ids = typeof value === "string" ? [value] : value;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) return { error: "must be a record id or a list of record ids" };
  const bad = ids.find((id) => !RECORD_ID.test(id));
  if (bad !== undefined) return { error: `names ${JSON.stringify(bad.slice(0, 80))}, which is not a record id` };
  const unique = [...new Set(ids)];
  if (unique.length > MAX_LINKS) return { error: `may link at most ${MAX_LINKS} records` };
  if (holdsMany(field.options)) return { value: unique };
  if (unique.length > 1) return { error: "holds one record (options.multiple is false)" };
  return { value: unique[0] ?? null };
}

const TOO_LARGE = { error: `holds more than ${MAX_VALUE_SIZE}, the most one value may` };

/** Checks one value against its field; answers the stored form, or an error message. */
function normalize(field: FieldDefinition, value: unknown): { value: unknown } | { error: string } {
  if (value === null) return { value: null };
  if (typeof value === "string" ? textTooLarge(value) : typeof value === "object" && field.type === "json" && textTooLarge(JSON.stringify(value))) return TOO_LARGE;
  switch (field.type) {
    case "text":
    case "longtext":
    case "markdown":
    case "html":
      return typeof value === "string" ? { value } : { error: "must be a string" };
    case "code":
    case "yaml": {
      if (typeof value !== "string") return { error: "must be a string" };
      const error = parseError(field.type === "yaml" ? "yaml" : languageOf(field.options), value);
      return error ? { error } : { value };
    }
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? { value } : { error: "must be a finite number" };
    case "checkbox":
      return typeof value === "boolean" ? { value } : { error: "must be true or false" };
    case "date":
      return typeof value === "string" && isIsoDate(value) ? { value } : { error: "must be an ISO 8601 date or date-time" };
    case "select": {
      const name = choiceName(field.options, value);
      return name !== undefined ? { value: name } : { error: `must be one of: ${choicesOf(field.options).map((c) => c.name).join(", ")}` };
    }
    case "multiselect": {
      if (!Array.isArray(value)) return { error: "must be an array of choices" };
      const names = value.map((item) => choiceName(field.options, item));
      return names.every((name) => name !== undefined) ? { value: [...new Set(names)] } : { error: `must hold only: ${choicesOf(field.options).map((c) => c.name).join(", ")}` };
    }
    case "url":
      return typeof value === "string" && /^https?:\/\//i.test(value) && URL.canParse(value) ? { value } : { error: "must be an absolute http(s) URL" };
    case "email":
      return typeof value === "string" && EMAIL_PATTERN.test(value) ? { value } : { error: "must be an e-mail address" };
    case "phone":
      return typeof value === "string" && PHONE_PATTERN.test(value) ? { value } : { error: "must be a phone number" };
    case "json":
      return nestsDeeperThan(value, MAX_JSON_DEPTH) ? { error: `may nest at most ${MAX_JSON_DEPTH} levels` } : { value };
    case "relation":
      return relationValue(field, value);
    case "attachment": {
      const ids = attachmentIds(value);
      return ids ? { value: ids } : { error: "must be a list of files: asset ids, or objects with an id (upload with POST /api/v1/assets)" };
    }
    case "lookup":
    case "formula":
    case "created_time":
    case "updated_time":
    case "created_by":
    case "updated_by":
    case "auto_number":
      return { value };
  }
}

/**
 * Checks the values a client sent for a record against the base's fields: on `create` every
 * required field must be set, on `update` only the fields sent are checked. Values for computed
 * fields are ignored; a slug the base does not have is an error. Answers the stored values, or
 * every error found.
 */
export function recordValueErrors(fields: FieldDefinition[], input: Record<string, unknown>, mode: "create" | "update"): { values: Record<string, unknown>; errors: FieldError[] } {
  const values: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  for (const slug of Object.keys(input)) {
    if (!fields.some((field) => field.slug === slug)) errors.push({ slug, type: null, message: `"${slug}" is not a field of this base.` });
  }
  for (const field of fields) {
    if (isComputed(field.type)) continue;
    const given = Object.hasOwn(input, field.slug);
    if (!given && mode === "update") continue;
    const result = normalize(field, given ? input[field.slug] : null);
    if ("error" in result) errors.push({ slug: field.slug, type: field.type, message: `${field.slug} ${result.error}.` });
    else if (field.required && isEmpty(result.value)) errors.push({ slug: field.slug, type: field.type, message: `${field.slug} is required.` });
    else if (given) values[field.slug] = result.value;
  }
  return { values, errors };
}

/**
 * The 400 for invalid values: `data.errors` lists each one; when a slug is unknown, `data.fields`
 * lists the base's slugs, so a client that sent a field's name instead learns the fix.
 */
export function invalidValues(fields: FieldDefinition[], errors: (FieldError & { index?: number })[], message: string) {
  const unknownSlug = errors.some((error) => error.type === null);
  return badRequest(message, { errors, ...(unknownSlug ? { fields: fields.map((field) => field.slug) } : {}) });
}

/** `recordValueErrors`, throwing the 400 when any value is wrong. */
export function checkRecordValues(fields: FieldDefinition[], input: Record<string, unknown>, mode: "create" | "update"): Record<string, unknown> {
  const { values, errors } = recordValueErrors(fields, input, mode);
  if (errors.length > 0) throw invalidValues(fields, errors, `Invalid field values: ${errors.map((e) => e.message).join(" ")}`);
  return values;
}

/** Validates a field definition's options; select and multiselect need `choices: [{ name, id? }]`. */
export function checkFieldOptions(type: FieldType, options: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!(FIELD_TYPES as readonly string[]).includes(type)) throw badRequest(`"${type}" is not a field type; use one of ${FIELD_TYPES.join(", ")}.`);
  const given = options ?? {};
  checkJsonDepth("Field options", given);
  if (type === "code") return checkCodeOptions(given);
  if (type === "relation") return checkRelationOptions(given);
  if (type === "attachment") return checkAttachmentOptions(given);
  if (type === "lookup") return checkLookupOptions(given);
  if (type === "formula") return checkFormulaOptions(given);
  if (type !== "select" && type !== "multiselect") return given;
  const choices = given.choices;
  if (!Array.isArray(choices) || choices.length === 0) throw badRequest(`A ${type} field needs options.choices: [{ "name": "…" }].`);
  const normalized = choices.map((choice: unknown) => {
    const { name, id } = (choice ?? {}) as { name?: unknown; id?: unknown };
    if (typeof name !== "string" || name === "") throw badRequest("Every choice needs a non-empty name.");
    return { ...(choice as object), id: typeof id === "string" && id ? id : name, name };
  });
  if (new Set(normalized.map((c) => c.name)).size !== normalized.length) throw badRequest("Choice names must be unique.");
  return { ...given, choices: normalized };
}

/**
 * A relation's options as a client gives them: its target base (`targetBaseId` or
 * `targetBaseSlug`, resolved in the space when the field is made) and `multiple` (default true).
 * `inverseFieldId` is the server's: it names the field made on the target base.
 */
function checkRelationOptions(options: Record<string, unknown>): Record<string, unknown> {
  const { targetBaseId, targetBaseSlug, multiple, inverseFieldId } = options;
  const target = targetBaseId ?? targetBaseSlug;
  if (typeof target !== "string" || target === "") throw badRequest('A relation field needs options.targetBaseId (or targetBaseSlug): the base its values link to.');
  if (multiple !== undefined && typeof multiple !== "boolean") throw badRequest("options.multiple is true (a list of records, the default) or false (one record).");
  return { ...options, multiple: multiple ?? true, ...(inverseFieldId === undefined ? {} : { inverseFieldId }) };
}

export const ROLLUPS = ["values", "count", "sum", "average", "min", "max", "concatenate"] as const;
export type Rollup = (typeof ROLLUPS)[number];

export interface LookupOptions {
  relationFieldSlug: string;
  targetFieldSlug: string;
  rollup: Rollup;
  limit: "all" | "first";
}

export const lookupOf = (options: Record<string, unknown>): LookupOptions => options.lookup as LookupOptions;

/** A lookup's options: `lookup { relationFieldSlug, targetFieldSlug, rollup (values), limit (all) }`; the slugs are checked against the bases when the field is made. */
function checkLookupOptions(options: Record<string, unknown>): Record<string, unknown> {
  const lookup = options.lookup as Partial<Record<keyof LookupOptions, unknown>> | undefined;
  const shape = 'A lookup field needs options.lookup: { "relationFieldSlug": "…", "targetFieldSlug": "…", "rollup"?: values|count|sum|average|min|max|concatenate, "limit"?: all|first }.';
  if (typeof lookup !== "object" || lookup === null || Array.isArray(lookup)) throw badRequest(shape);
  const { relationFieldSlug, targetFieldSlug, rollup = "values", limit = "all" } = lookup;
  if (typeof relationFieldSlug !== "string" || typeof targetFieldSlug !== "string") throw badRequest(shape);
  if (!(ROLLUPS as readonly unknown[]).includes(rollup)) throw badRequest(`options.lookup.rollup must be one of ${ROLLUPS.join(", ")}.`);
  if (limit !== "all" && limit !== "first") throw badRequest("options.lookup.limit must be all or first.");
  return { ...options, lookup: { relationFieldSlug, targetFieldSlug, rollup, limit } };
}

/** What a formula field knows of its formula: the expression the client gave, and what the server found it yields. */
export interface FormulaOptions {
  expression: string;
  /** Set by the server when the field is made: number, text, boolean, date, list or any. */
  resultType?: FormulaType;
  /** Set by the server: the formula reads the clock or linked records, so it is computed when read, never stored, filtered or sorted. */
  computedAtRead?: boolean;
}

export const formulaOf = (options: Record<string, unknown>): FormulaOptions => options.formula as FormulaOptions;

/** A formula's options as a client gives them: `formula { expression }`; the expression is checked against the base when the field is made. */
function checkFormulaOptions(options: Record<string, unknown>): Record<string, unknown> {
  const formula = options.formula as { expression?: unknown } | undefined;
  if (typeof formula !== "object" || formula === null || typeof formula.expression !== "string" || formula.expression.trim() === "") {
    throw badRequest('A formula field needs options.formula: { "expression": "…" }, e.g. "{price} * {quantity}".');
  }
  return { ...options, formula: { expression: formula.expression } };
}

/** A code field's options: `code: { language? }`, a short name such as `typescript`, `json` or `yaml` (those two are parsed on write). */
function checkCodeOptions(options: Record<string, unknown>): Record<string, unknown> {
  const code = options.code;
  if (code === undefined) return options;
  const language = (code as { language?: unknown } | null)?.language;
  if (typeof code !== "object" || code === null || Array.isArray(code) || (language !== undefined && (typeof language !== "string" || !/^[A-Za-z0-9+#._-]{1,32}$/.test(language)))) {
    throw badRequest('A code field\'s options.code is { "language": "…" }: a name of 1 to 32 letters, digits or + # . _ - (json and yaml values are parsed).');
  }
  return options;
}

/** Field slugs are keys of every record's field map, so none may be a prototype key. */
export const isFreeFieldSlug = (slug: string): boolean => FIELD_SLUG_PATTERN.test(slug) && !PROTOTYPE_KEYS.has(slug);

export function checkFieldSlug(slug: string): void {
  if (!FIELD_SLUG_PATTERN.test(slug)) throw badRequest(`The field slug "${slug}" must match ^[a-z0-9_-]+$ (1 to 64 characters).`);
  if (!isFreeFieldSlug(slug)) throw badRequest(`The field slug "${slug}" is reserved; choose another.`);
}
