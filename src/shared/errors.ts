/**
 * The one error type that logic throws. The HTTP layer turns it into the contract's envelope
 * `{ error, code, data?, reason? }`; anything else that escapes is a 500 without internals.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly data?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  /** Where the contract defines a `reason`, it stands at the top level and in `data.reason`. */
  get reason(): string | undefined {
    return typeof this.data?.reason === "string" ? this.data.reason : undefined;
  }
}

type Data = Record<string, unknown>;

export const badRequest = (message: string, data?: Data) => new ApiError(400, "BAD_REQUEST", message, data);

/** One problem of a request's input: where it is (keys and indexes from the body's top, or the query parameter's name; [] for the request as a whole) and what is wrong. */
export type Issue = { path: (string | number)[]; message: string };

/** A path as a message writes it: `config.filters[0].value`. */
export const pathText = (path: Issue["path"]): string => path.map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`)).join("");

/** A validation failure of one input, its path in `data.issues` as the schema's own failures give it. */
export const invalid = (path: Issue["path"], message: string, data?: Data) => badRequest(message, { ...data, issues: [{ path, message }] });

/**
 * Runs a check of one item of a list (`operations[2]`, `fields[0]`): the paths of the issues it
 * refuses with are made the item's (`at` before each), so a check written for one item names where
 * the item is in the body.
 */
export function within<T>(at: Issue["path"], check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "BAD_REQUEST") throw error;
    throw new ApiError(error.status, error.code, error.message, { ...error.data, issues: issuesOf(error).map((issue) => ({ ...issue, path: [...at, ...issue.path] })) }, error.headers);
  }
}

/**
 * The issues a 400 answers in `data.issues` (API.md section 1): those the thrower named, or one for
 * the request as a whole. Every BAD_REQUEST answer goes through it, so none comes without them.
 */
export function issuesOf(error: ApiError): Issue[] {
  const named = error.data?.issues;
  return Array.isArray(named) ? (named as Issue[]) : [{ path: [], message: error.message }];
}
export const unauthorized = (message = "A valid API key or session is required.") =>
  new ApiError(401, "UNAUTHORIZED", message, undefined, { "www-authenticate": "Bearer" });
export const forbidden = (message: string, data?: Data) => new ApiError(403, "FORBIDDEN", message, data);
export const notFound = (message = "Not found") => new ApiError(404, "NOT_FOUND", message);
/**
 * What a lookup of a space's node, base, record, view or change request answers when it finds
 * none, in the words a hidden one is refused with too (spaces/sight.ts), so that no 404 tells the
 * one from the other.
 */
export const notInSpace = (kind: string, ref: string) => notFound(`No ${kind} "${ref}" in this space.`);
export const conflict = (message: string, data?: Data) => new ApiError(409, "CONFLICT", message, data);
export const payloadTooLarge = (message: string) => new ApiError(413, "PAYLOAD_TOO_LARGE", message);
export const tooManyRequests = (retryAfterSeconds: number) =>
  new ApiError(429, "TOO_MANY_REQUESTS", `Too many requests; try again in ${retryAfterSeconds} s.`, undefined, {
    "retry-after": String(retryAfterSeconds),
  });

/** Turns a SQLite unique-constraint failure (thrown or rejected) into a readable 409. */
export function onUniqueViolation<T>(run: () => T, message: string, data?: Data): T {
  const translate = (error: unknown): never => {
    const code = (error as { code?: string }).code;
    if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") throw conflict(message, data);
    throw error;
  };
  try {
    const result = run();
    return result instanceof Promise ? (result.catch(translate) as T) : result;
  } catch (error) {
    return translate(error);
  }
}
