/** An answer outside 2xx, in the contract's envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly reason: string | undefined,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
  }
}

const SPACE_KEY = "basalt.space";
const SIGNED_IN_KEY = "basalt.signedIn";

/**
 * The chosen space also travels in a cookie, for what the browser loads without the page's headers
 * (attachment images, downloads); the server reads it only beside a session (`SPACE_COOKIE`).
 */
function keepSpaceCookie(slug: string | null): void {
  document.cookie = slug ? `basalt_space=${encodeURIComponent(slug)}; path=/; SameSite=Lax` : "basalt_space=; path=/; max-age=0; SameSite=Lax";
}

/** What every request carries besides its body: the session's CSRF token and the chosen space. */
export const session = {
  csrfToken: null as string | null,
  /**
   * Whether this browser signed in and did not sign out: without it the page goes straight to
   * sign-in instead of asking the server and meeting a 401 (which browsers log as an error).
   */
  get remembered(): boolean {
    return localStorage.getItem(SIGNED_IN_KEY) === "1";
  },
  set remembered(value: boolean) {
    if (value) localStorage.setItem(SIGNED_IN_KEY, "1");
    else localStorage.removeItem(SIGNED_IN_KEY);
  },
  get space(): string | null {
    return localStorage.getItem(SPACE_KEY);
  },
  set space(slug: string | null) {
    if (slug) localStorage.setItem(SPACE_KEY, slug);
    else localStorage.removeItem(SPACE_KEY);
    keepSpaceCookie(slug);
  },
};

keepSpaceCookie(localStorage.getItem(SPACE_KEY));

let onUnauthorized: () => void = () => {};

/** Where a 401 sends the person: the sign-in screen (set once by the router). */
export const whenSignedOut = (handler: () => void) => {
  onUnauthorized = handler;
};

/**
 * The one way the page calls the API: the CSRF token on writes, the space header, and a 401 sent
 * back to sign-in. Every failure is an `ApiError` with the server's own sentence. Answers the
 * response of a success, whatever its type (a file's bytes, an export).
 */
/** Requests in flight; past 200 ms with any, the page shows that it is working (`html.working`, a bar at the top). */
let inFlight = 0;
let workingSoon: ReturnType<typeof setTimeout> | undefined;
function working(change: 1 | -1): void {
  inFlight += change;
  if (inFlight > 0 && !workingSoon) workingSoon = setTimeout(() => document.documentElement.classList.toggle("working", inFlight > 0), 200);
  if (inFlight === 0) {
    clearTimeout(workingSoon);
    workingSoon = undefined;
    document.documentElement.classList.remove("working");
  }
}

export async function send(method: string, path: string, body?: BodyInit, contentType?: string, options: { quiet401?: boolean } = {}): Promise<Response> {
  working(1);
  try {
    return await request(method, path, body, contentType, options);
  } finally {
    working(-1);
  }
}

function fetchFromApi(method: string, path: string, body?: BodyInit, contentType?: string): Promise<Response> {
  const headers: Record<string, string> = {};
  if (contentType) headers["content-type"] = contentType;
  if (method !== "GET" && session.csrfToken) headers["x-csrf-token"] = session.csrfToken;
  if (session.space) headers["x-basalt-space"] = session.space;
  return fetch(`/api/v1${path}`, { method, headers, credentials: "same-origin", body });
}

/**
 * Reads a screen starts with, sent before it asks for them (`readEarly`): beside the check of who
 * is signed in instead of one after another. Each is taken once, by the first GET of the same path
 * in the same space; a new screen forgets those not taken.
 */
const early = new Map<string, Promise<Response>>();
const earlyKey = (path: string) => `${session.space ?? ""} ${path}`;

export function readEarly(paths: string[]): void {
  early.clear();
  for (const path of paths) {
    const read = fetchFromApi("GET", path);
    // One never taken must not be reported as an unhandled failure; a taker still meets it.
    read.catch(() => undefined);
    early.set(earlyKey(path), read);
  }
}

/** Forgets the early reads not taken (the screen that named them is drawn): a later read asks the server again. */
export const forgetEarly = (): void => early.clear();

function takeEarly(path: string): Promise<Response> | undefined {
  const key = earlyKey(path);
  const read = early.get(key);
  early.delete(key);
  return read;
}

async function request(method: string, path: string, body: BodyInit | undefined, contentType: string | undefined, options: { quiet401?: boolean }): Promise<Response> {
  const response = await ((method === "GET" ? takeEarly(path) : undefined) ?? fetchFromApi(method, path, body, contentType));
  if (response.ok) return response;
  const answer = await response.json().catch(() => ({}));
  const failure = new ApiError(response.status, answer.code ?? "ERROR", answer.error ?? `The server answered ${response.status}.`, answer.reason, answer.data ?? {});
  if (response.status === 401) session.remembered = false;
  if (response.status === 401 && !options.quiet401) onUnauthorized();
  throw failure;
}

/** `send` with JSON in and out. */
export async function api<T>(method: string, path: string, body?: unknown, options: { quiet401?: boolean } = {}): Promise<T> {
  const response = await send(method, path, body === undefined ? undefined : JSON.stringify(body), body === undefined ? undefined : "application/json", options);
  return (await response.json().catch(() => ({}))) as T;
}

/** A query string from defined values only. */
export const query = (params: Record<string, string | number | boolean | undefined | null>): string => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
};
