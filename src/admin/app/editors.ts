import type { FieldView } from "../../content/bases";
import type { Child } from "./dom";
import { pageKindOf } from "./kinds/registry";

/** A field on a record's page: its input and the value the form holds, asked of its page kind (`kinds/`). */

/** An input for one field; computed fields are not edited. `saveFiles`: an attachment's files are saved as soon as they are chosen. */
export const fieldInput = (field: FieldView, value: unknown, saveFiles?: (field: FieldView, ids: string[]) => Promise<string>): Child => pageKindOf(field.type).input(field, value, saveFiles);

/** The form's value for a field; "" is no value. */
export const readField = (field: FieldView, values: FormData): unknown => pageKindOf(field.type).readInput(field, values);

/** A value as a change compares it (attachments by the ids of their files). */
export const comparable = (field: FieldView, value: unknown) => {
  const { comparable: compared } = pageKindOf(field.type);
  return JSON.stringify(compared ? compared(value) : (value ?? null));
};
