import { ApiError } from "./errors";

/** Seconds a caller refused for want of room is told to wait: a body being read ends in seconds. */
const RETRY_SECONDS = 5;

/**
 * The request bodies being read at once, whatever route reads them: their bytes (the announced
 * length, or the route's limit for a body sent without one) within `totalBytes` across the
 * process, and at most `perCaller` of them for one caller (an authenticated key or session, never
 * anything the request merely claims). A body is counted before a byte of it is read, so a slow
 * client holds a place, not memory past the budget; once it is spent, the next is refused at once.
 */
export class BodyBudget {
  private used = 0;
  private readonly byCaller = new Map<string, number>();
  /** What each request being read gives back once answered. */
  private readonly held = new WeakMap<Request, () => void>();
  /** How many requests hold something: while none does, an answered request looks nothing up. */
  private holding = 0;

  constructor(
    readonly totalBytes: number,
    readonly perCaller: number,
  ) {}

  /** Bytes counted now. */
  get inUse(): number {
    return this.used;
  }

  /** Counts a body of `bytes` for `caller` (null: counted in the total only), or throws 429/503 and counts nothing; the answer gives it back. */
  take(caller: string | null, bytes: number): () => void {
    const held = caller === null ? 0 : (this.byCaller.get(caller) ?? 0);
    if (caller !== null && held >= this.perCaller) {
      throw new ApiError(429, "TOO_MANY_REQUESTS", `This caller is already sending ${this.perCaller} request bodies at once; send the next once one is done, or in ${RETRY_SECONDS} s.`, undefined, { "retry-after": String(RETRY_SECONDS) });
    }
    if (this.used + bytes > this.totalBytes) {
      throw new ApiError(503, "SERVER_BUSY", `The server is reading as many request bodies as it holds at once (${this.totalBytes} bytes); try again in ${RETRY_SECONDS} s.`, undefined, {
        "retry-after": String(RETRY_SECONDS),
      });
    }
    this.used += bytes;
    if (caller !== null) this.byCaller.set(caller, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used -= bytes;
      if (caller === null) return;
      const left = (this.byCaller.get(caller) ?? 1) - 1;
      if (left > 0) this.byCaller.set(caller, left);
      else this.byCaller.delete(caller);
    };
  }

  /** As `take`, given back by `giveBack(request)` once the request is answered. */
  takeFor(request: Request, caller: string | null, bytes: number): void {
    const release = this.take(caller, bytes);
    if (!this.held.has(request)) this.holding++;
    this.held.set(request, release);
  }

  /** Gives back what `takeFor` counted for `request`, if anything. */
  giveBack(request: Request): void {
    if (this.holding === 0) return;
    const release = this.held.get(request);
    if (!release) return;
    this.held.delete(request);
    this.holding--;
    release();
  }
}

/**
 * What the body of an upload route is until its route reads it: the bytes it will hold in memory
 * while read (its announced length or the route's limit; 0 for a file streamed to disk).
 */
export class UploadBody {
  constructor(readonly heldBytes: number) {}
}
