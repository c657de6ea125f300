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

/** How long one request to a remote may take, answer included, before it counts as unreachable. */
const REQUEST_MS = 60_000;
/** How long a remote may send nothing (before its answer begins, or in its middle) before it counts as stalled. */
export const QUIET_MS = 15_000;
/** The most one JSON answer of a remote (a page of commits or of a snapshot) may hold: past it, the answer is refused unread. */
export const MOST_PAGE_BYTES = 32 * 1024 * 1024;

/** A refusal of an answer larger than the reader takes: a pull asks again for fewer commits. */
export const tooLargeAnswer = (error: unknown): boolean => error instanceof RemoteRefused && error.code === "ANSWER_TOO_LARGE";

/**
 * One exchange's stop: the caller's signal (a pull whose caller left), the time the whole exchange
 * may take, and a quiet timer that every byte received sets again. What stopped it says why.
 */
class Exchange {
  private readonly quiet = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  readonly signal: AbortSignal;

  constructor(
    private readonly url: string,
    private readonly caller: AbortSignal | undefined,
  ) {
    this.signal = AbortSignal.any([this.quiet.signal, AbortSignal.timeout(REQUEST_MS), ...(caller ? [caller] : [])]);
    this.heard();
  }

  /** Something arrived: the quiet timer starts again. */
  heard(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.quiet.abort(), QUIET_MS);
  }

  done(): void {
    clearTimeout(this.timer);
  }

  /** Why the exchange failed, as a sentence a person reads (never a socket's code alone). */
  failure(error: unknown, midAnswer: boolean): RemoteUnreachable {
    this.done();
    if (this.caller?.aborted) return new RemoteUnreachable(`The exchange with ${this.url} was stopped: the request that began it was closed`);
    if (this.quiet.signal.aborted) return new RemoteUnreachable(`${this.url} stalled: it sent nothing for ${QUIET_MS / 1000} s${midAnswer ? " in the middle of its answer" : ""}`);
    if (this.signal.aborted) return new RemoteUnreachable(`${this.url} did not answer within ${REQUEST_MS / 1000} s`);
    const why = (error as Error)?.message ?? String(error);
    return midAnswer ? new RemoteUnreachable(`${this.url} cut the connection in the middle of its answer (${why.slice(0, 120)})`) : new RemoteUnreachable(`${this.url} cannot be reached (${why.slice(0, 120)})`);
  }
}

export class RemoteClient {
  constructor(
    readonly url: string,
    private readonly key: string,
    readonly spaceId: string,
    /** Stops every exchange when it aborts: a pull or push whose caller has gone stops with it. */
    private readonly signal?: AbortSignal,
  ) {}

  /** A JSON exchange; a body of bytes (a file) is sent as they are. The answer is read up to `MOST_PAGE_BYTES`. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { response, bytes } = await this.exchange(method, path, body, MOST_PAGE_BYTES);
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      throw new RemoteRefused(response.status, "NOT_BASALT", `${this.url} answered ${method} ${path} with ${response.status} and no JSON: is it a Basalt?`);
    }
    if (!response.ok) {
      const envelope = parsed as { code?: string; error?: string; data?: Record<string, unknown> };
      throw new RemoteRefused(response.status, envelope.code ?? "ERROR", envelope.error ?? `${response.status}`, envelope.data);
    }
    return parsed as T;
  }

  /** A file's bytes (`GET /assets/{id}/content`), at most `most` (the largest file this instance keeps). */
  async bytes(path: string, most: number): Promise<Uint8Array> {
    const { response, bytes } = await this.exchange("GET", path, undefined, most);
    if (!response.ok) throw new RemoteRefused(response.status, "ERROR", `${this.url} answered GET ${path} with ${response.status}.`);
    return bytes;
  }

  /** Sends a request and reads its whole answer within `most` bytes, the time allowed and the quiet allowed. */
  private async exchange(method: string, path: string, body: unknown, most: number): Promise<{ response: Response; bytes: Uint8Array }> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, "x-basalt-space": this.spaceId };
    const raw = body instanceof Uint8Array;
    if (body !== undefined) headers["content-type"] = raw ? "application/octet-stream" : "application/json";
    const exchange = new Exchange(this.url, this.signal);
    let response: Response;
    try {
      response = await fetch(`${this.url}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : raw ? (body as Uint8Array<ArrayBuffer>) : JSON.stringify(body), redirect: "error", signal: exchange.signal });
    } catch (error) {
      throw exchange.failure(error, false);
    }
    const announced = Number(response.headers.get("content-length") ?? Number.NaN);
    const tooLarge = () => new RemoteRefused(502, "ANSWER_TOO_LARGE", `${this.url} answered ${method} ${path} with more than ${most} bytes, the most read at once.`);
    if (announced > most) {
      exchange.done();
      void response.body?.cancel().catch(() => undefined);
      throw tooLarge();
    }
    const parts: Uint8Array[] = [];
    let size = 0;
    try {
      for await (const part of response.body ?? []) {
        exchange.heard();
        size += part.byteLength;
        // Leaving the loop cancels the rest of the answer unread.
        if (size > most) {
          exchange.done();
          throw tooLarge();
        }
        parts.push(part);
      }
    } catch (error) {
      if (error instanceof RemoteRefused) throw error;
      throw exchange.failure(error, true);
    }
    exchange.done();
    return { response, bytes: Buffer.concat(parts) };
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
