import type { Store } from "../../db/client";
import { flushStagedSearch, stageRecordsWithFieldType } from "../../db/search-index";
import { FIELD_TRAITS, FIELD_TYPES, type FieldType } from "../../shared/field-types";
import { fieldKinds, records } from "../../tables/content";
import { attachmentKind } from "./attachment";
import { multiselectKind, selectKind } from "./choice";
import { emailKind, phoneKind, urlKind } from "./contact";
import { formulaKind } from "./formula/kind";
import type { Compared, FieldKind } from "./kind";
import { lookupKind } from "./lookup";
import { ratingKind } from "./rating";
import { relationKind } from "./relation";
import { checkboxKind, dateKind, jsonKind, numberKind } from "./scalar";
import { autoNumberKind, createdByKind, createdTimeKind, updatedByKind, updatedTimeKind } from "./system";
import { codeKind, textKind, yamlKind } from "./text";

/** Every field type's kind: a type without one does not compile. */
export const FIELD_KINDS: { readonly [T in FieldType]: FieldKind } = {
  text: textKind,
  longtext: textKind,
  markdown: textKind,
  html: textKind,
  code: codeKind,
  yaml: yamlKind,
  number: numberKind,
  rating: ratingKind,
  checkbox: checkboxKind,
  date: dateKind,
  select: selectKind,
  multiselect: multiselectKind,
  url: urlKind,
  email: emailKind,
  phone: phoneKind,
  json: jsonKind,
  relation: relationKind,
  attachment: attachmentKind,
  created_time: createdTimeKind,
  updated_time: updatedTimeKind,
  created_by: createdByKind,
  updated_by: updatedByKind,
  auto_number: autoNumberKind,
  lookup: lookupKind,
  formula: formulaKind,
};

type FieldShape = { type: FieldType; options: Record<string, unknown> };

/** How a listing compares a field's values: by its type's traits, or as its formula's result. */
export function comparisonOf(field: FieldShape): Compared {
  const { compares } = FIELD_TRAITS[field.type];
  if (compares !== "result") return compares;
  const { comparison } = FIELD_KINDS[field.type];
  if (!comparison) throw new Error(`The ${field.type} kind compares as its result but says nothing of it.`);
  return comparison(field.options);
}

/** Why a field's values are computed when read, or undefined when they are stored. */
export const whyReadAtRead = (field: FieldShape): string | undefined => (comparisonOf(field) === "read" ? FIELD_KINDS[field.type].readAtRead?.(field.options) : undefined);

/** The types whose values the field upkeep computes as it fills their index. */
export const FILLED_BY_UPKEEP: readonly FieldType[] = FIELD_TYPES.filter((type) => FIELD_KINDS[type].filledByUpkeep);

/** The types a field converts between. */
export const CONVERTIBLE_TYPES: readonly FieldType[] = FIELD_TYPES.filter((type) => FIELD_KINDS[type].convertsFrom !== undefined);

/** The name of the record's own column a type reads, if any. */
const recordColumnOf = (type: FieldType): string | null => {
  const column = FIELD_KINDS[type].column;
  return column ? records[column.key].name : null;
};

/** What the triggers need of each type (`field_kinds`), from the kinds. */
export const fieldKindRows = () =>
  FIELD_TYPES.map((type) => {
    const { compares } = FIELD_TRAITS[type];
    return { type, recordColumn: recordColumnOf(type), numeric: compares === "number" || compares === "flag", searched: FIELD_KINDS[type].searched };
  });

/**
 * Writes `field_kinds` from the kinds, when the server starts: a type added since the last
 * migration is known to the triggers before any field of it is made. A kind that search reads now
 * and did not (or the reverse) has its records indexed again, in the same transaction.
 */
export function writeFieldKinds(store: Store): void {
  store.db.transaction((tx) => {
    const before = new Map(tx.select({ type: fieldKinds.type, searched: fieldKinds.searched }).from(fieldKinds).all().map((row) => [row.type, row.searched]));
    for (const row of fieldKindRows()) {
      tx.insert(fieldKinds).values(row).onConflictDoUpdate({ target: fieldKinds.type, set: row }).run();
      if (before.has(row.type) && before.get(row.type) !== row.searched) {
        stageRecordsWithFieldType(store.sqlite, row.type);
      }
    }
    flushStagedSearch(store.sqlite);
  });
}

/** The types of which `is` holds (a kind's guard), for a query over the `type` column. */
export const typesWhere = (is: (field: { type: FieldType }) => boolean): FieldType[] => FIELD_TYPES.filter((type) => is({ type }));
