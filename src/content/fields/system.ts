import type { FormulaType } from "./formula/parse";
import { anyOptions, computedKind, type FieldKind, type RecordColumns } from "./kind";

/** A value the record keeps in a column of its own: when and by whom it was made and last changed, and its number in the base. */
const columnKind = (key: keyof RecordColumns, formulaType: FormulaType): FieldKind => computedKind({ checkOptions: anyOptions, formulaType, column: { key, read: (row) => row[key] } });

export const createdTimeKind = columnKind("createdAt", "date");
export const updatedTimeKind = columnKind("updatedAt", "date");
export const createdByKind = columnKind("createdBy", "text");
export const updatedByKind = columnKind("updatedBy", "text");
export const autoNumberKind = columnKind("autoNumber", "number");
