import type { FieldType } from "../../../shared/field-types";
import { attachmentKind } from "./attachment";
import { checkboxKind } from "./checkbox";
import { multiselectKind, selectKind } from "./choice";
import { dateKind } from "./date";
import { formulaKind } from "./formula";
import { jsonKind } from "./json";
import type { PageKind } from "./kind";
import { lookupKind } from "./lookup";
import { numberKind } from "./number";
import { ratingKind } from "./rating";
import { relationKind } from "./relation";
import { autoNumberKind, computedKind, momentKind } from "./system";
import { codeKind, documentKind, emailKind, longTextKind, phoneKind, textKind, urlKind } from "./text";

/** Every field type's page kind: a type without one does not compile (the server's half is `content/fields/registry.ts`). */
export const PAGE_KINDS: { readonly [T in FieldType]: PageKind } = {
  text: textKind,
  longtext: longTextKind,
  markdown: documentKind,
  html: documentKind,
  code: codeKind,
  yaml: documentKind,
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
  created_time: momentKind,
  updated_time: momentKind,
  created_by: computedKind,
  updated_by: computedKind,
  auto_number: autoNumberKind,
  lookup: lookupKind,
  formula: formulaKind,
};

/** The page kind of a type read as text (an answer's); an unknown type is shown as text. */
export const pageKindOf = (type: string): PageKind => PAGE_KINDS[type as FieldType] ?? textKind;
