import { ApiError, badRequest } from "./errors";
import { type Limits, requireWithin } from "./limits";

/** Keys that reach an object's prototype when assigned; no body or query may carry them as names. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/**
 * How deep a body may nest. Far above any real request (the contract's own limit for stored JSON
 * is 32), and low enough that nothing that walks a body recursively can run out of stack.
 */
export const MAX_BODY_DEPTH = 64;

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads a request body as text, refusing it (413) once it passes `limit` bytes and refusing bytes
 * that are not UTF-8 (400). A body with a declared length (already checked against the limit) is
 * read in one native call; one streamed without a length is read chunk by chunk and cut off at
 * the limit, so no client can make the server buffer more than that.
 */
export async function readBodyText(request: Request, limit: number, tooLarge: () => ApiError): Promise<string> {
  const bytes = request.headers.has("content-length") ? new Uint8Array(await request.arrayBuffer()) : await readCapped(request.body!, limit, tooLarge);
  if (bytes.byteLength > limit) throw tooLarge();
  try {
    return utf8.decode(bytes);
  } catch {
    throw badRequest("The body is not valid UTF-8.");
  }
}

async function readCapped(body: ReadableStream<Uint8Array>, limit: number, tooLarge: () => ApiError): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
}

/** The deepest nesting of arrays and objects in JSON text, counted without parsing it. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 125 || c === 93) depth--;
  }
  return deepest;
}

class RefusedJson extends Error {}

/** Lone surrogates and prototype keys can only arrive through `\u` escapes or a literal key. */
function refuseUnsafe(key: string, value: unknown): unknown {
  if (key === "__proto__") throw new RefusedJson('The key "__proto__" is not allowed in a body.');
  if (!key.isWellFormed() || (typeof value === "string" && !value.isWellFormed())) throw new RefusedJson("The body holds a lone UTF-16 surrogate.");
  return value;
}

/**
 * Parses a JSON body. Refused with 400: malformed JSON, nesting deeper than `MAX_BODY_DEPTH`, a
 * lone surrogate (`"\ud800"`), and the key `__proto__` anywhere (JSON.parse keeps it as an own
 * key, but any later copy by assignment would turn it into a prototype).
 */
export function parseJsonBody(text: string): unknown {
  if (nestingDepth(text) > MAX_BODY_DEPTH) throw badRequest(`The body nests deeper than ${MAX_BODY_DEPTH} levels.`);
  const needsCheck = text.includes("\\u") || text.includes("__proto__");
  try {
    return needsCheck ? JSON.parse(text, refuseUnsafe) : JSON.parse(text);
  } catch (error) {
    throw badRequest(error instanceof RefusedJson ? error.message : "The body is not valid JSON.");
  }
}

/** Whether a JSON value nests arrays and objects more than `levels` deep (`[]` is one level). */
export function nestsDeeperThan(value: unknown, levels: number): boolean {
  if (value === null || typeof value !== "object") return false;
  if (levels === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (nestsDeeperThan(child, levels - 1)) return true;
  return false;
}

/** How deep a stored JSON value (a `json` value, node or asset metadata, field options) may nest: deeper values could break SQLite's JSON functions in later reads. */
export const MAX_JSON_DEPTH = 32;

/** Refuses a stored JSON value that nests too deep. */
export function checkJsonDepth(what: string, value: unknown): void {
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) throw badRequest(`${what} may nest at most ${MAX_JSON_DEPTH} levels.`);
}

/** Metadata a client stores (a node's, an asset's, an audit event's): at most `MAX_JSON_DEPTH` levels deep and `--max-metadata` of JSON. */
export function checkMetadata(limits: Limits, metadata: Record<string, unknown>): void {
  checkJsonDepth("metadata", metadata);
  requireWithin(limits, "metadataBytes", Buffer.byteLength(JSON.stringify(metadata)));
}
