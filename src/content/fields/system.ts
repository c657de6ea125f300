import { anyOptions, computedKind, type FieldKind, type RecordColumns } from "./kind";

/** A value the record keeps in a column of its own: when and by whom it was made and last changed, and its number in the base. */
const columnKind = (name: NonNullable<FieldKind["column"]>["name"], read: (row: RecordColumns) => unknown): FieldKind => computedKind({ checkOptions: anyOptions, column: { name, read } });

export const createdTimeKind = columnKind("created_at", (row) => row.createdAt);
export const updatedTimeKind = columnKind("updated_at", (row) => row.updatedAt);
export const createdByKind = columnKind("created_by", (row) => row.createdBy);
export const updatedByKind = columnKind("updated_by", (row) => row.updatedBy);
export const autoNumberKind = columnKind("auto_number", (row) => row.autoNumber);
