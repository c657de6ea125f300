import { checkJsonDepth, PROTOTYPE_KEYS } from "../shared/json";
import { FIELD_TYPES, type FieldType, isComputed, isEmpty } from "../shared/field-types";
import { badRequest, invalid } from "../shared/errors";
import { textTooLarge } from "../shared/limits";
import { type Checked, type FieldDefinition, TOO_LARGE } from "./fields/kind";
import { FIELD_KINDS } from "./fields/registry";

export const FIELD_SLUG_PATTERN = /^[a-z0-9_-]{1,64}$/;


export interface FieldError {
  slug: string;
  /** null for a slug that is not a field of the base. */
  type: string | null;
  message: string;
}

/** One value a client sent, checked by its field's kind: null is every field's "unset", and no text may pass the size bound. */
function checkValue(field: FieldDefinition, value: unknown): Checked {
  if (value === null) return { value: null };
  if (typeof value === "string" && textTooLarge(value)) return TOO_LARGE;
  return FIELD_KINDS[field.type].checkValue(value, field);
}

/** Whether one of `fields` has `slug`: a loop, since every value of every write asks it (`some` made a closure a value). */
function hasSlug(fields: FieldDefinition[], slug: string): boolean {
  for (const field of fields) if (field.slug === slug) return true;
  return false;
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
    if (!hasSlug(fields, slug)) errors.push({ slug, type: null, message: `"${slug}" is not a field of this base.` });
  }
  for (const field of fields) {
    if (isComputed(field.type)) continue;
    const given = Object.hasOwn(input, field.slug);
    if (!given && mode === "update") continue;
    const result = checkValue(field, given ? input[field.slug] : null);
    if ("error" in result) errors.push({ slug: field.slug, type: field.type, message: `${field.slug} ${result.error}.` });
    else if (field.required && isEmpty(result.value)) errors.push({ slug: field.slug, type: field.type, message: `${field.slug} is required.` });
    else if (given) values[field.slug] = result.value;
  }
  return { values, errors };
}

/**
 * The 400 for invalid values: `data.errors` lists each one, and `data.issues` each one's path
 * (`fields.<slug>`, or `<list>[index].fields.<slug>` in a bulk request's `list`); when a slug is
 * unknown, `data.fields` lists the base's slugs, so a client that sent a field's name instead learns the fix.
 */
export function invalidValues(fields: FieldDefinition[], errors: (FieldError & { index?: number })[], message: string, list?: string) {
  const unknownSlug = errors.some((error) => error.type === null);
  const issues = errors.map((error) => ({ path: [...(list !== undefined && error.index !== undefined ? [list, error.index] : []), "fields", error.slug], message: error.message }));
  return badRequest(message, { errors, issues, ...(unknownSlug ? { fields: fields.map((field) => field.slug) } : {}) });
}

/** `recordValueErrors`, throwing the 400 when any value is wrong. */
export function checkRecordValues(fields: FieldDefinition[], input: Record<string, unknown>, mode: "create" | "update"): Record<string, unknown> {
  const { values, errors } = recordValueErrors(fields, input, mode);
  if (errors.length > 0) throw invalidValues(fields, errors, `Invalid field values: ${errors.map((e) => e.message).join(" ")}`);
  return values;
}

/** Checks a field definition's type and options (each kind checks its own). */
export function checkFieldOptions(type: FieldType, options: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!Object.hasOwn(FIELD_KINDS, type)) throw invalid(["type"], `"${type}" is not a field type; use one of ${FIELD_TYPES.join(", ")}.`);
  const given = options ?? {};
  checkJsonDepth("Field options", given);
  return FIELD_KINDS[type].checkOptions(given);
}

/** Field slugs are keys of every record's field map, so none may be a prototype key. */
export const isFreeFieldSlug = (slug: string): boolean => FIELD_SLUG_PATTERN.test(slug) && !PROTOTYPE_KEYS.has(slug);

export function checkFieldSlug(slug: string): void {
  if (!FIELD_SLUG_PATTERN.test(slug)) throw invalid(["slug"], `The field slug "${slug}" must match ^[a-z0-9_-]+$ (1 to 64 characters).`);
  if (!isFreeFieldSlug(slug)) throw invalid(["slug"], `The field slug "${slug}" is reserved; choose another.`);
}
