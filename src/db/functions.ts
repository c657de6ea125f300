import type { Database } from "bun:sqlite";

/**
 * Text as filters compare it in any case, for every script: Unicode's lower case of its composed
 * form. SQLite's own `lower()` folds ASCII letters only ("CAFÉ" stays "cafÉ").
 */
export const foldCase = (text: string): string => text.normalize("NFC").toLowerCase();

/** Whether `lower()` folds a text as `foldCase` would: it holds ASCII only. */
export const asciiOnly = (text: string): boolean => /^[\x00-\x7f]*$/.test(text);

/** The SQL functions every connection of the store has: `fold(text)`, `foldCase` in a query (anything but text as it is). */
export function addFunctions(sqlite: Database): void {
  sqlite.function("fold", { deterministic: true }, (value: string | number | bigint | Uint8Array | null) => (typeof value === "string" ? foldCase(value) : value));
}
