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
