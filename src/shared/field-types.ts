/**
 * The field types as every layer and the page know them: each type's browser-safe traits (no
 * server code). What the server does with a type lives in its kind (`content/fields/`), what the
 * page does with it in its page kind (`admin/app/kinds/`); this file and those folders are the only
 * places that name a type.
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

export interface FieldTraits {
  /** What people call the type. */
  label: string;
  /** Computed by the server: no client or file writes it. */
  computed: boolean;
  compares: Comparison;
  /** Its grid column starts narrow. */
  narrow: boolean;
  /** A calendar or gantt view may place records by it. */
  dated: boolean;
  /** A kanban view may stack records by it (one choice each). */
  stacks: boolean;
  /** Its values are files of the space (asset ids): a gallery's cover, what keeps an asset in use. */
  holdsFiles: boolean;
  /** Its values are choices of its options: one each, several, or none (not a choice field). */
  choices: "none" | "one" | "many";
  /** Where its values come from: stored as given, links to other records, read through a link, a formula over the record. */
  source: "stored" | "links" | "lookup" | "formula";
}

const input = (label: string, compares: Comparison, more: Partial<FieldTraits> = {}): FieldTraits => ({
  label,
  computed: false,
  compares,
  narrow: false,
  dated: false,
  stacks: false,
  holdsFiles: false,
  choices: "none",
  source: "stored",
  ...more,
});
const computed = (label: string, compares: Comparison, more: Partial<FieldTraits> = {}): FieldTraits => input(label, compares, { computed: true, ...more });

/** Every field type, in the order the API lists them: what a client may write first, then what the server computes. */
export const FIELD_TRAITS = {
  text: input("Text", "text"),
  longtext: input("Long text", "text"),
  markdown: input("Markdown", "text"),
  html: input("HTML", "text"),
  code: input("Code", "text"),
  yaml: input("YAML", "text"),
  number: input("Number", "number", { narrow: true }),
  rating: input("Rating", "number", { narrow: true }),
  checkbox: input("Checkbox", "flag", { narrow: true }),
  date: input("Date", "text", { narrow: true, dated: true }),
  select: input("Single select", "text", { narrow: true, stacks: true, choices: "one" }),
  multiselect: input("Multiple select", "choices", { choices: "many" }),
  url: input("URL", "text"),
  email: input("Email", "text"),
  phone: input("Phone", "text"),
  json: input("JSON", "list"),
  relation: input("Link to records", "read", { source: "links" }),
  attachment: input("Attachment", "list", { holdsFiles: true }),
  created_time: computed("Created time", "moment", { dated: true }),
  updated_time: computed("Last modified time", "moment", { dated: true }),
  created_by: computed("Created by", "text"),
  updated_by: computed("Last modified by", "text"),
  auto_number: computed("Auto number", "number", { narrow: true }),
  lookup: computed("Lookup", "read", { source: "lookup" }),
  formula: computed("Formula", "result", { source: "formula" }),
} as const satisfies Record<string, FieldTraits>;

export type FieldType = keyof typeof FIELD_TRAITS;
export const FIELD_TYPES = Object.keys(FIELD_TRAITS) as FieldType[];
/** The types a client may give a field a value of. */
export const INPUT_TYPES = FIELD_TYPES.filter((type) => !FIELD_TRAITS[type].computed);

/** The types a person may choose for an imported column: values a file's text can hold (not links, files or computed values). */
export const IMPORTABLE_TYPES = INPUT_TYPES.filter((type) => FIELD_TRAITS[type].source === "stored" && !FIELD_TRAITS[type].holdsFiles);

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
