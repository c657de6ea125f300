/** The field types as every layer and the page know them: their names and what the page and the tables need of them (no server code). */

export const INPUT_TYPES = ["text", "longtext", "markdown", "html", "code", "yaml", "number", "checkbox", "date", "select", "multiselect", "url", "email", "phone", "json", "relation", "attachment"] as const;
export const COMPUTED_TYPES = ["created_time", "updated_time", "created_by", "updated_by", "auto_number", "lookup", "formula"] as const;
export const FIELD_TYPES = [...INPUT_TYPES, ...COMPUTED_TYPES] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** How a listing may filter on a field (section 6.3). */
export const FILTER_OPERATORS = ["eq", "neq", "contains", "gt", "gte", "lt", "lte", "in", "isEmpty", "isNotEmpty"] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** The field that names a record wherever one is shown (the admin page, linked records): the base's first text field. */
export const primaryField = <F extends { type: string }>(fields: readonly F[]): F | undefined => fields.find((field) => field.type === "text");

/** Text that is a document of its own kind, edited as a block: stored as given, never rendered as HTML by Basalt. */
export const DOCUMENT_TYPES: readonly FieldType[] = ["longtext", "markdown", "html", "code", "yaml"];

export const isComputed = (type: FieldType): boolean => (COMPUTED_TYPES as readonly string[]).includes(type);

/** `null`, `""` and `[]` are empty: a required field may hold none of them. */
export const isEmpty = (value: unknown): boolean => value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0);

/** Whether a relation field holds a list of records (`multiple`, the default) or one. */
export const holdsMany = (options: Record<string, unknown>): boolean => options.multiple !== false;

