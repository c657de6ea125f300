/**
 * The field types as every layer and the page know them: each type's browser-safe traits (no
 * server code). What the server does with a type lives in its kind (`content/fields/`); this file
 * and that folder are the only places that name a type.
 */

/** How a listing compares a field's values, for sorts and range filters. */
export type Comparison =
  /** as numbers */
  | "number"
  /** as true or false (1 or 0) */
  | "flag"
  /** as moments (milliseconds), shown as ISO text */
  | "moment"
  /** as text (an ISO date is text too) */
  | "text"
  /** a list of choices: `contains` matches one of them; not sorted */
  | "choices"
  /** lists or documents: not sorted */
  | "list"
  /** computed when the record is read (from links, the clock): neither filtered nor sorted */
  | "read"
  /** as its formula's result says (the server's formula kind decides) */
  | "result";

/** The editor a record's page shows for a field. */
export type Editor = "line" | "email" | "url" | "number" | "rating" | "checkbox" | "date" | "document" | "code" | "select" | "multiselect" | "json" | "relation" | "attachment" | "none";

/** What a new field of the type asks for beside its name (the page's field dialog): its options. */
export type OptionsEditor = "none" | "choices" | "link" | "lookup" | "formula" | "stars";

/** How a grid cell shows a value. */
export type Cell = "text" | "number" | "rating" | "checkbox" | "date" | "moment" | "choice" | "choices" | "links" | "files";

export interface FieldTraits {
  /** What people call the type. */
  label: string;
  /** Computed by the server: no client or file writes it. */
  computed: boolean;
  compares: Comparison;
  editor: Editor;
  cell: Cell;
  /** Edited in a grid cell (the others on the record's page). */
  cellEdited: boolean;
  /** Its grid column starts narrow. */
  narrow: boolean;
  /** A calendar or gantt view may place records by it. */
  dated: boolean;
  /** A kanban view may stack records by it (one choice each). */
  stacks: boolean;
  /** Its values are files of the space (asset ids): a gallery's cover, what keeps an asset in use. */
  holdsFiles: boolean;
  options: OptionsEditor;
}

const input = (label: string, compares: Comparison, editor: Editor, cell: Cell, more: Partial<FieldTraits> = {}): FieldTraits => ({
  label,
  computed: false,
  compares,
  editor,
  cell,
  cellEdited: false,
  narrow: false,
  dated: false,
  stacks: false,
  holdsFiles: false,
  options: "none",
  ...more,
});
const computed = (label: string, compares: Comparison, cell: Cell, more: Partial<FieldTraits> = {}): FieldTraits => input(label, compares, "none", cell, { computed: true, ...more });

/** Every field type, in the order the API lists them: what a client may write first, then what the server computes. */
export const FIELD_TRAITS = {
  text: input("Text", "text", "line", "text", { cellEdited: true }),
  longtext: input("Long text", "text", "document", "text", { cellEdited: true }),
  markdown: input("Markdown", "text", "document", "text"),
  html: input("HTML", "text", "document", "text"),
  code: input("Code", "text", "code", "text"),
  yaml: input("YAML", "text", "document", "text"),
  number: input("Number", "number", "number", "number", { cellEdited: true, narrow: true }),
  rating: input("Rating", "number", "rating", "rating", { cellEdited: true, narrow: true, options: "stars" }),
  checkbox: input("Checkbox", "flag", "checkbox", "checkbox", { cellEdited: true, narrow: true }),
  date: input("Date", "text", "date", "date", { cellEdited: true, narrow: true, dated: true }),
  select: input("Single select", "text", "select", "choice", { cellEdited: true, narrow: true, stacks: true, options: "choices" }),
  multiselect: input("Multiple select", "choices", "multiselect", "choices", { options: "choices" }),
  url: input("URL", "text", "url", "text", { cellEdited: true }),
  email: input("Email", "text", "email", "text", { cellEdited: true }),
  phone: input("Phone", "text", "line", "text"),
  json: input("JSON", "list", "json", "text"),
  relation: input("Link to records", "read", "relation", "links", { options: "link" }),
  attachment: input("Attachment", "list", "attachment", "files", { holdsFiles: true }),
  created_time: computed("Created time", "moment", "moment", { dated: true }),
  updated_time: computed("Last modified time", "moment", "moment", { dated: true }),
  created_by: computed("Created by", "text", "text"),
  updated_by: computed("Last modified by", "text", "text"),
  auto_number: computed("Auto number", "number", "number", { narrow: true }),
  lookup: computed("Lookup", "read", "text", { options: "lookup" }),
  formula: computed("Formula", "result", "text", { options: "formula" }),
} as const satisfies Record<string, FieldTraits>;

export type FieldType = keyof typeof FIELD_TRAITS;
export const FIELD_TYPES = Object.keys(FIELD_TRAITS) as FieldType[];
/** The types a client may give a field a value of. */
export const INPUT_TYPES = FIELD_TYPES.filter((type) => !FIELD_TRAITS[type].computed);

/** The type a field takes when none is said (the page's quick form of a base's fields). */
export const DEFAULT_TYPE: FieldType = "text";

/** The types whose traits say `trait`. */
export const typesWith = (trait: "dated" | "stacks" | "holdsFiles" | "computed"): FieldType[] => FIELD_TYPES.filter((type) => FIELD_TRAITS[type][trait]);

/** The traits of a type, for a field whose type is read as text (the page's, an answer's). */
export const traitsOf = (type: string): FieldTraits => FIELD_TRAITS[type as FieldType] ?? FIELD_TRAITS.text;

/**
 * How a listing may filter on a field: Basalt's (section 6.3), then Busabase's own names (its
 * contract, §2.2), which mean what they mean there: `equals` is whole text equal in any case,
 * `is_empty` and `not_empty` count "-" as empty, `is_false` matches an unset value.
 */
export const FILTER_OPERATORS = ["eq", "neq", "contains", "gt", "gte", "lt", "lte", "in", "isEmpty", "isNotEmpty", "equals", "is_empty", "not_empty", "is_true", "is_false"] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** The operators that take no value. */
export const VALUELESS_OPERATORS: ReadonlySet<FilterOperator> = new Set(["isEmpty", "isNotEmpty", "is_empty", "not_empty", "is_true", "is_false"]);

/**
 * A condition's operators as people read them, for a field of the type (the page's filter
 * builder): text compares in any case (`equals`), a date is before or after, a single choice is or
 * is any of, a multiple choice has, a checkbox is checked or not. Each is an operator of the listing.
 */
export function filterWordsOf(type: string): readonly (readonly [FilterOperator, string])[] {
  const traits = traitsOf(type);
  const empties = [["is_empty", "is empty"], ["not_empty", "is not empty"]] as const;
  if (traits.compares === "read") return [];
  if (traits.compares === "flag") return [["is_true", "is checked"], ["is_false", "is not checked"]];
  if (traits.compares === "choices") return [["contains", "has"], ...empties];
  if (traits.compares === "list") return empties;
  if (traits.stacks) return [["eq", "is"], ["neq", "is not"], ["in", "is any of"], ...empties];
  if (traits.dated) return [["eq", "is"], ["lt", "is before"], ["gt", "is after"], ["lte", "is on or before"], ["gte", "is on or after"], ...empties];
  if (traits.compares === "number") return [["eq", "="], ["neq", "≠"], ["gt", ">"], ["gte", "≥"], ["lt", "<"], ["lte", "≤"], ...empties];
  return [["equals", "is"], ["neq", "is not"], ["contains", "contains"], ...empties];
}

/** The field that names a record wherever one is shown (the admin page, linked records): the base's first text field. */
export const primaryField = <F extends { type: string }>(fields: readonly F[]): F | undefined => fields.find((field) => field.type === "text");

export const isComputed = (type: string): boolean => traitsOf(type).computed;

/** `null`, `""` and `[]` are empty: a required field may hold none of them. */
export const isEmpty = (value: unknown): boolean => value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0);

/** Whether a relation field holds a list of records (`multiple`, the default) or one. */
export const holdsMany = (options: Record<string, unknown>): boolean => options.multiple !== false;

/** The colours a select's choice may be shown in (`options.choices[].color`); a choice without one is shown in the first. */
export const CHOICE_COLORS = ["blue", "green", "yellow", "orange", "red", "pink", "purple", "teal", "gray"] as const;
export type ChoiceColor = (typeof CHOICE_COLORS)[number];

/** A choice's colour as the page shows it: its own when it is one of `CHOICE_COLORS`. */
export const colorOfChoice = (options: Record<string, unknown>, name: unknown): ChoiceColor => {
  const choice = ((options.choices as { name: string; color?: string }[] | undefined) ?? []).find((candidate) => candidate.name === name);
  return (CHOICE_COLORS as readonly string[]).includes(choice?.color ?? "") ? (choice!.color as ChoiceColor) : CHOICE_COLORS[0];
};

/** How a lookup may sum up the values it reads (`options.lookup.rollup`): `values` lists them. */
export const LOOKUP_ROLLUPS = ["values", "count", "sum", "average", "min", "max", "concatenate"] as const;

/** The most stars a rating field may have (its `max` option); 5 when not given. */
export const RATING_MAX = { default: 5, most: 10 } as const;
