import { ApiError } from "./errors";

/**
 * What one account or space may make, set by the operator (`serve` flags or `BASALT_*` variables):
 * a space's schema and tree are read whole by many requests, so they are bounded like a request is.
 */
export interface Limits {
  spacesPerUser: number;
  basesPerSpace: number;
  fieldsPerBase: number;
  /** How deep a node may sit below the root folder (its children are at depth 1). */
  folderDepth: number;
  /** A node's metadata as JSON, in bytes, after every merge into it. */
  metadataBytes: number;
  /** Open event streams: each holds a connection (a file descriptor) for as long as it lasts. */
  streamsPerKey: number;
  streamsPerUser: number;
  streams: number;
}

export const DEFAULT_LIMITS: Limits = { spacesPerUser: 100, basesPerSpace: 1000, fieldsPerBase: 500, folderDepth: 32, metadataBytes: 64 * 1024, streamsPerKey: 16, streamsPerUser: 64, streams: 2000 };

/** Each limit's flag and variable, and how its refusal reads. */
export const LIMIT_SETTINGS: Record<keyof Limits, { flag: string; env: string; says: (max: number) => string }> = {
  spacesPerUser: { flag: "max-spaces-per-user", env: "BASALT_MAX_SPACES_PER_USER", says: (max) => `An account owns at most ${max} spaces` },
  basesPerSpace: { flag: "max-bases-per-space", env: "BASALT_MAX_BASES_PER_SPACE", says: (max) => `A space holds at most ${max} bases` },
  fieldsPerBase: { flag: "max-fields-per-base", env: "BASALT_MAX_FIELDS_PER_BASE", says: (max) => `A base holds at most ${max} fields` },
  folderDepth: { flag: "max-folder-depth", env: "BASALT_MAX_FOLDER_DEPTH", says: (max) => `Nodes sit at most ${max} folders deep` },
  metadataBytes: { flag: "max-metadata", env: "BASALT_MAX_METADATA", says: (max) => `A node's metadata holds at most ${max} bytes of JSON` },
  streamsPerKey: { flag: "max-streams-per-key", env: "BASALT_MAX_STREAMS_PER_KEY", says: (max) => `One key or session holds at most ${max} open event streams` },
  streamsPerUser: { flag: "max-streams-per-user", env: "BASALT_MAX_STREAMS_PER_USER", says: (max) => `One account holds at most ${max} open event streams` },
  streams: { flag: "max-streams", env: "BASALT_MAX_STREAMS", says: (max) => `The server holds at most ${max} open event streams` },
};

/** Refuses what would take `limit` past its maximum: a 409 that names the limit and how to raise it. */
export function requireWithin(limits: Limits, limit: keyof Limits, wouldBe: number): void {
  const max = limits[limit];
  if (wouldBe <= max) return;
  const setting = LIMIT_SETTINGS[limit];
  throw new ApiError(409, "CONFLICT", `${setting.says(max)}; this would make ${wouldBe}. The operator sets the limit with --${setting.flag} (${setting.env}).`, {
    reason: "LIMIT_REACHED",
    limit,
    max,
  });
}

/**
 * The most one value may hold, in bytes: a stored value (whatever route or import writes it) and a
 * computed one (a lookup's linked values, a formula's text) alike, since a page of records is read
 * and answered whole.
 */
export const MAX_VALUE_BYTES = 256 * 1024;
export const MAX_VALUE_SIZE = "256 KB";

/** Whether text is longer than `MAX_VALUE_BYTES` in UTF-8 (counted only when it could be). */
export const textTooLarge = (text: string): boolean => text.length > MAX_VALUE_BYTES || (text.length > MAX_VALUE_BYTES / 3 && Buffer.byteLength(text) > MAX_VALUE_BYTES);

/**
 * The most values one answer embeds, in characters of their text: one value is bounded
 * (`MAX_VALUE_BYTES`), but a page of records times its lookups, or a page of change requests times
 * the names of the records they link, is not. Every answer that embeds values spends one
 * `ValueBudget`: a cursor page ends early past it (always with one item at least) and its cursor
 * goes on from there; linked names past it are left out (the client shows the id).
 */
export const ANSWER_VALUE_BUDGET = 8 * 1024 * 1024;

/** What one answer may still embed (`ANSWER_VALUE_BUDGET`), spent as the answer is made. */
export class ValueBudget {
  private left: number;
  constructor(most: number = ANSWER_VALUE_BUDGET) {
    this.left = most;
  }
  /** Spends `size` if it fits, and says whether it did: what does not fit is left out. */
  spend(size: number): boolean {
    if (size > this.left) return false;
    this.left -= size;
    return true;
  }
}

/** How many of `items`, in order, fit one answer's budget (one at least). */
export function withinBudget<T>(items: readonly T[], sizeOf: (item: T) => number = roughSize): number {
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += sizeOf(items[i]);
    if (total > ANSWER_VALUE_BUDGET && i > 0) return i;
  }
  return items.length;
}

/** About how many characters a value's JSON holds: its text, plus a little for the rest. */
export function roughSize(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (Array.isArray(value)) return value.reduce((size: number, item) => size + roughSize(item), 2);
  if (typeof value !== "object" || value === null) return 8;
  let size = 2;
  for (const key in value) size += key.length + roughSize((value as Record<string, unknown>)[key]);
  return size;
}

