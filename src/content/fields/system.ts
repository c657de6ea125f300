import type { FormulaType } from "./formula/parse";
import { anyOptions, computedKind, type FieldKind, type RecordColumns } from "./kind";

/** A value the record keeps in a column of its own: when and by whom it was made and last changed, and its number in the base. */
const columnKind = (name: NonNullable<FieldKind["column"]>["name"], formulaType: FormulaType, read: (row: RecordColumns) => unknown): FieldKind =>
  computedKind({ checkOptions: anyOptions, formulaType, column: { name, read } });

export const createdTimeKind = columnKind("created_at", "date", (row) => row.createdAt);
export const updatedTimeKind = columnKind("updated_at", "date", (row) => row.updatedAt);
export const createdByKind = columnKind("created_by", "text", (row) => row.createdBy);
export const updatedByKind = columnKind("updated_by", "text", (row) => row.updatedBy);
export const autoNumberKind = columnKind("auto_number", "number", (row) => row.autoNumber);
