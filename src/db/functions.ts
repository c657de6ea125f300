import type { Database } from "bun:sqlite";

/**
 * Text as filters compare it in any case, for every script: Unicode's lower case of its composed
 * form. SQLite's own `lower()` folds ASCII letters only ("CAFÉ" stays "cafÉ").
 */
export const foldCase = (text: string): string => text.normalize("NFC").toLowerCase();

/**
 * Text as a filter compares it: without accents (its decomposed form without combining marks) and
 * in lower case, for every script: "ZOË MÜLLER", "Zoë Müller" and "zoe muller" are one. Of ASCII
 * text it is what SQLite's `lower()` gives.
 */
export const foldAccents = (text: string): string => text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

/** The SQL functions every connection of the store has: `fold(text)`, `foldAccents` in a query (anything but text as it is). */
export function addFunctions(sqlite: Database): void {
  sqlite.function("fold", { deterministic: true }, (value: string | number | bigint | Uint8Array | null) => (typeof value === "string" ? foldAccents(value) : value));
}
