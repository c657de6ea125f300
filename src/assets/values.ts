import { badRequest } from "../shared/errors";

// What an attachment field's options and values look like, checked without the database (`field-types.ts`); `assets.ts` resolves the ids.

/** An attachment field's options as a client gives them: `maxFiles` (1..100, default 10), `allowedMimeTypes` (`image/*` wildcards), `maxFileSize` (bytes). */
export function checkAttachmentOptions(options: Record<string, unknown>): Record<string, unknown> {
  const { maxFiles = 10, allowedMimeTypes, maxFileSize } = options;
  if (!Number.isInteger(maxFiles) || (maxFiles as number) < 1 || (maxFiles as number) > 100) throw badRequest("options.maxFiles is a whole number from 1 to 100.");
  if (allowedMimeTypes !== undefined && (!Array.isArray(allowedMimeTypes) || !allowedMimeTypes.every((type) => typeof type === "string" && /^[a-z0-9.+-]+\/(\*|[a-z0-9.+-]+)$/i.test(type)))) {
    throw badRequest('options.allowedMimeTypes is a list of types such as "application/pdf" or "image/*".');
  }
  if (maxFileSize !== undefined && (!Number.isInteger(maxFileSize) || (maxFileSize as number) < 1)) throw badRequest("options.maxFileSize is a whole number of bytes.");
  return { ...options, maxFiles };
}

export const allows = (patterns: string[], type: string) => patterns.some((pattern) => (pattern.endsWith("/*") ? type.startsWith(pattern.slice(0, -1)) : pattern.toLowerCase() === type));

/** The ids an attachment value names: a list of ids, or of objects with `id`, `assetId` or `attachmentId`. */
export function attachmentIds(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  const ids = value.map((item) => (typeof item === "string" ? item : typeof item === "object" && item !== null ? ((item as Record<string, unknown>).id ?? (item as Record<string, unknown>).assetId ?? (item as Record<string, unknown>).attachmentId) : undefined));
  return ids.every((id): id is string => typeof id === "string" && /^ast_[0-9A-Za-z]+$/.test(id)) ? ids : null;
}

