import type { Comparison, FieldType } from "../../shared/field-types";
import { MAX_VALUE_SIZE } from "../../shared/limits";
import type { FormulaType } from "./formula/parse";

/** A field as its kind sees it: its slug, type and options. */
export interface FieldDefinition {
  slug: string;
  type: FieldType;
  required: boolean;
  options: Record<string, unknown>;
}

/** Where a conversion's values come from: the field's type before, and whether the person asked to split text into several values. */
export interface ConversionSource {
  type: FieldType;
  split: boolean;
}

/** A value checked: its stored form, or why it is refused (the end of "<slug> …"). */
export type Checked = { value: unknown } | { error: string };

/** The record's own columns a system field reads. */
export interface RecordColumns {
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  updatedBy: string;
  autoNumber: number;
}

/**
 * What a type of field is, as the server knows it: one object per type (`registry.ts`), so a rule
 * about a type lives in its kind and nowhere else. The page's half is `shared/field-types.ts`.
 */
export interface FieldKind {
  /** Checks a definition's options as a client gives them; answers the options stored, or throws a 400. */
  checkOptions(options: Record<string, unknown>): Record<string, unknown>;
  /** Checks a value a client sent (never null); computed kinds are never written and take none. */
  checkValue(value: unknown, field: FieldDefinition): Checked;
  /** A cell of an imported file (trimmed, never empty) as the value to check. */
  fromText(text: string, field: FieldDefinition): Checked;
  /** A value (never null) as the text of an exported cell; `names` holds linked records' primary values by id. */
  toText(value: unknown, names: Record<string, string | null>): string;
  /** The record's own column that holds its value (a system field), if any: read from the row, never stored in `data`. */
  column?: { key: keyof RecordColumns; read(row: RecordColumns): unknown };
  /** What a formula that reads the field sees its value as. */
  formulaType: FormulaType;
  /** Whether full-text search reads its values (the `field_kinds` table tells the search index's triggers). */
  searched: boolean;
  /**
   * A value of another type as a candidate for this one, before this kind's `checkValue`
   * (`NOT_CONVERTIBLE` when it cannot be one). A kind without it is neither converted to nor from.
   */
  convertsFrom?: (value: unknown, source: ConversionSource) => unknown;
  /** How a listing compares the values of a field with these options, when its traits say `result`. */
  comparison?: (options: Record<string, unknown>) => Compared;
  /** Why a field's values are computed when read (its traits compare `links`, or its `comparison` says so): the end of a 400. */
  readAtRead?: (options: Record<string, unknown>) => string;
  /** Its values are read from links (`relations/read.ts`), not the record's row: the value of a record that links none. */
  unlinked?: (options: Record<string, unknown>) => unknown;
  /** Its options hold the choices its values name: a conversion keeps or makes them. */
  choices?: true;
  /** Its values are computed and stored by the field upkeep as it fills the field's index (a stored formula): indexed when made, never on demand. */
  filledByUpkeep?: true;
}

/** How a listing compares values, once a formula's result is known. */
export type Compared = Exclude<Comparison, "result">;

/** What `convertsFrom` answers for a value this kind cannot hold. */
export const NOT_CONVERTIBLE = Symbol("not convertible");

/** Any value as text: lists joined by commas, objects as JSON. */
export const textOf = (value: unknown): string => (Array.isArray(value) ? value.map(textOf).join(", ") : typeof value === "object" ? JSON.stringify(value) : String(value));

/** A value past the most one value may hold. */
export const TOO_LARGE = { error: `holds more than ${MAX_VALUE_SIZE}, the most one value may` };

/** Options that need nothing: taken as given. */
export const anyOptions = (options: Record<string, unknown>) => options;

/** Text as it was typed: a cell of an import is the value itself. */
export const asText = (text: string): Checked => ({ value: text });

/** A value written as text: strings as they are, lists of words joined, anything else as JSON. */
export function plainText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.every((item) => typeof item === "string" || typeof item === "number")) return value.join(", ");
  return JSON.stringify(value);
}

/** A list cell: comma-separated items, trimmed, empty ones dropped. */
export const listItems = (text: string): string[] =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

/** The kind of a field that is computed by the server: it takes no value from a client or a file. */
export const computedKind = (kind: Pick<FieldKind, "checkOptions" | "formulaType"> & Partial<FieldKind>): FieldKind => ({
  checkValue: (value) => ({ value }),
  fromText: (text) => ({ value: text }),
  toText: plainText,
  searched: false,
  ...kind,
});

/** Why a value read from links is not in the record's row. */
export const READ_FROM_LINKS = "its values are read from links; read a record's links with GET /records/{recordId}/links.";
