import { badRequest } from "../../shared/errors";
import { holdsMany } from "../../shared/field-types";
import { type FieldKind, listItems, READ_FROM_LINKS } from "./kind";

/** How a record id looks: the shape is checked before any lookup. */
const RECORD_ID = /^rec_[0-9A-Za-z]{1,64}$/;

/** The most records one relation value may hold, on either side of the link. */
export const MAX_LINKS = 1000;

/**
 * A relation's options as a client gives them: its target base (`targetBaseId` or
 * `targetBaseSlug`, resolved in the space when the field is made) and `multiple` (default true).
 * `inverseFieldId` is the server's: it names the field made on the target base, whose slug and name
 * a client may choose when the field is made (`inverseFieldSlug`, `inverseFieldName`).
 */
function checkRelationOptions(options: Record<string, unknown>): Record<string, unknown> {
  const { targetBaseId, targetBaseSlug, multiple, inverseFieldId, inverseFieldSlug, inverseFieldName } = options;
  const target = targetBaseId ?? targetBaseSlug;
  if (typeof target !== "string" || target === "") throw badRequest("A relation field needs options.targetBaseId (or targetBaseSlug): the base its values link to.");
  if (multiple !== undefined && typeof multiple !== "boolean") throw badRequest("options.multiple is true (a list of records, the default) or false (one record).");
  if (inverseFieldSlug !== undefined && typeof inverseFieldSlug !== "string") throw badRequest("options.inverseFieldSlug is the slug of the linked base's field.");
  if (inverseFieldName !== undefined && (typeof inverseFieldName !== "string" || inverseFieldName.trim() === "" || inverseFieldName.length > 200)) throw badRequest("options.inverseFieldName is the linked base's field's name: 1 to 200 characters.");
  return { ...options, multiple: multiple ?? true, ...(inverseFieldId === undefined ? {} : { inverseFieldId }) };
}

/**
 * Records of the target base: a record id or a list of them, in order, repeats dropped; a list for
 * a field that holds many, else one id or null. Whether the ids name records is checked against
 * the database (`records/validate.ts`); exported by the linked records' primary values.
 */
export const relationKind: FieldKind = {
  checkOptions: checkRelationOptions,
  checkValue(value, field) {
    const ids = typeof value === "string" ? [value] : value;
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) return { error: "must be a record id or a list of record ids" };
    const bad = ids.find((id) => !RECORD_ID.test(id));
    if (bad !== undefined) return { error: `names ${JSON.stringify(bad.slice(0, 80))}, which is not a record id` };
    const unique = [...new Set(ids)];
    if (unique.length > MAX_LINKS) return { error: `may link at most ${MAX_LINKS} records` };
    if (holdsMany(field.options)) return { value: unique };
    if (unique.length > 1) return { error: "holds one record (options.multiple is false)" };
    return { value: unique[0] ?? null };
  },
  fromText(text, field) {
    const ids = listItems(text);
    return ids.length > MAX_LINKS ? { error: `links at most ${MAX_LINKS} records` } : { value: holdsMany(field.options) ? ids : ids[0] };
  },
  toText: (value, names) => (Array.isArray(value) ? value : [value]).map((id) => names[String(id)] ?? String(id)).join(", "),
  formulaType: "list",
  searched: false,
  readAtRead: () => READ_FROM_LINKS,
  unlinked: (options) => (holdsMany(options) ? [] : null),
};

/** Whether a field links records: its values are links, kept in `record_links`. */
export const isRelation = (field: { type: string }): boolean => field.type === "relation";
