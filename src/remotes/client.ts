import { ApiError, badRequest } from "../shared/errors";

/**
 * What this instance says to a remote: its API, with the remote's key and space, over HTTP(S).
 * A remote that cannot be reached is `RemoteUnreachable` (offline is normal: nothing local
 * waits on it); one that answers an error is `RemoteRefused`, with the remote's own code and words.
 */
export class RemoteUnreachable extends Error {}

export class RemoteRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** How long one request to a remote may take before it counts as unreachable. */
const REQUEST_MS = 60_000;
/** The most one answer of a remote may hold (a page of a snapshot, a file): past it, the remote is refused. */
const MOST_ANSWER_BYTES = 512 * 1024 * 1024;

/** An answer's bytes, read up to `MOST_ANSWER_BYTES`. */
async function boundedBytes(response: Response, url: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of response.body ?? []) {
    size += part.byteLength;
    if (size > MOST_ANSWER_BYTES) throw new RemoteRefused(502, "ANSWER_TOO_LARGE", `${url} answered more than ${MOST_ANSWER_BYTES} bytes at once.`);
    parts.push(part);
  }
  return Buffer.concat(parts);
}

export class RemoteClient {
  constructor(
    readonly url: string,
    private readonly key: string,
    readonly spaceId: string,
  ) {}

  /** A JSON exchange; a body of bytes (a file) is sent as they are. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body);
    const text = new TextDecoder().decode(await boundedBytes(response, this.url));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RemoteRefused(response.status, "NOT_BASALT", `${this.url} answered ${method} ${path} with ${response.status} and no JSON: is it a Basalt?`);
    }
    if (!response.ok) {
      const envelope = parsed as { code?: string; error?: string; data?: Record<string, unknown> };
      throw new RemoteRefused(response.status, envelope.code ?? "ERROR", envelope.error ?? `${response.status}`, envelope.data);
    }
    return parsed as T;
  }

  /** A file's bytes (`GET /assets/{id}/content`). */
  async bytes(path: string): Promise<Uint8Array> {
    const response = await this.send("GET", path);
    if (!response.ok) throw new RemoteRefused(response.status, "ERROR", `${this.url} answered GET ${path} with ${response.status}.`);
    return boundedBytes(response, this.url);
  }

  private async send(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, "x-basalt-space": this.spaceId };
    const raw = body instanceof Uint8Array;
    if (body !== undefined) headers["content-type"] = raw ? "application/octet-stream" : "application/json";
    try {
      return await fetch(`${this.url}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : raw ? (body as Uint8Array<ArrayBuffer>) : JSON.stringify(body), redirect: "error", signal: AbortSignal.timeout(REQUEST_MS) });
    } catch (error) {
      throw new RemoteUnreachable(`${this.url} cannot be reached: ${(error as Error).message}`);
    }
  }
}

/** A remote's address as given: http(s), no credentials, no query; its trailing slash dropped. */
export function remoteUrl(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw badRequest(`${given} is not an address; give one such as http://team.example:7431.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw badRequest(`${given} is not an http(s) address.`);
  if (url.username || url.password || url.search || url.hash) throw badRequest(`${given} holds credentials, a query or a fragment; give the instance's address alone (the key is given apart).`);
  return url.origin + url.pathname.replace(/\/+$/, "");
}

/** What a failed exchange with a remote answers here: 503 when it could not be reached (nothing else changed), 502 with the remote's own words when it refused. */
export function remoteFailure(error: unknown, name: string): unknown {
  if (error instanceof RemoteUnreachable) return new ApiError(503, "REMOTE_UNREACHABLE", `${error.message.replace(/[.?!]+$/, "")}. Everything local works; pull and push resume where they stopped.`);
  if (error instanceof RemoteRefused) return new ApiError(502, "REMOTE_REFUSED", `The remote ${name} refused: ${error.message}`, { remoteStatus: error.status, remoteCode: error.code });
  return error;
}
