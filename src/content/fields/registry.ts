import type { FieldType } from "../../shared/field-types";
import { attachmentKind } from "./attachment";
import { multiselectKind, selectKind } from "./choice";
import { emailKind, phoneKind, urlKind } from "./contact";
import { formulaKind } from "./formula";
import type { FieldKind } from "./kind";
import { lookupKind } from "./lookup";
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
