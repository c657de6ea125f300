import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { brotliCompress, gzip as gzipCompress } from "node:zlib";
import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { access } from "../access";
import css from "../../admin/admin.css" with { type: "file" };
import { bundleAdminScript } from "../admin-bundle" with { type: "macro" };
import page from "../../admin/index.html" with { type: "file" };

/**
 * The page loads nothing from another host, runs no inline script or style, and may not be framed
 * by any page (no clickjacking of its approve and delete buttons).
 */
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

const SCRIPT: string = bundleAdminScript();

/**
 * A file of the page, named by its content's hash (so a browser may keep it for a year: a new
 * version is a new name) and compressed with Brotli and gzip once per process, on zlib's threads,
 * when the page is first asked for: Brotli at its best quality takes most of a second of CPU on a
 * 2-core machine, which neither the server's start nor every server a test starts should wait for.
 */
interface Asset {
  path: string;
  type: string;
  identity: Blob;
  compressed?: Promise<Record<"br" | "gzip", Blob>>;
}

function asset(name: string, extension: string, type: string, text: string): Asset {
  const bytes = Buffer.from(text);
  const hash = new Bun.CryptoHasher("sha256").update(bytes).digest("hex").slice(0, 16);
  return { path: `/admin/assets/${name}.${hash}.${extension}`, type, identity: new Blob([bytes]) };
}

const brotli = promisify(brotliCompress);
const gzip = promisify(gzipCompress);

async function compress(file: Asset): Promise<Record<"br" | "gzip", Blob>> {
  const bytes = await file.identity.bytes();
  const [br, gzipped] = await Promise.all([brotli(bytes), gzip(bytes)]);
  return { br: new Blob([br]), gzip: new Blob([gzipped]) };
}

const compressedOf = (file: Asset) => (file.compressed ??= compress(file));

const script = asset("admin", "js", "text/javascript; charset=utf-8", SCRIPT);
const styles = asset("admin", "css", "text/css; charset=utf-8", readFileSync(css as unknown as string, "utf8"));
// The shell names the files by their hashed names; it is read again on every visit (no-cache).
const shell = readFileSync(page as unknown as string, "utf8").replace("/admin/assets/admin.js", script.path).replace("/admin/assets/admin.css", styles.path);

/** The encoding a request accepts best, of those kept (Brotli, then gzip, else none). */
function encodingFor(request: Request): "br" | "gzip" | null {
  const accepted = request.headers.get("accept-encoding") ?? "";
  if (/\bbr\b/.test(accepted)) return "br";
  if (/\bgzip\b/.test(accepted)) return "gzip";
  return null;
}

async function serveAsset(file: Asset, request: Request): Promise<Response> {
  const encoding = encodingFor(request);
  const headers: Record<string, string> = { "content-type": file.type, "cache-control": "public, max-age=31536000, immutable", vary: "accept-encoding", "x-content-type-options": "nosniff" };
  if (!encoding) return new Response(file.identity, { headers });
  headers["content-encoding"] = encoding;
  return new Response((await compressedOf(file))[encoding], { headers });
}

/** The admin page: one HTML shell for every `/admin` path, its bundled script and its styles; everything it does goes through /api/v1. */
export function adminRoutes(ctx: AppContext) {
  const html = () => {
    // The browser asks for the script and the styles next: their compression starts now.
    void compressedOf(script);
    void compressedOf(styles);
    return new Response(shell, { headers: { ...PAGE_HEADERS, "cache-control": "no-cache" } });
  };
  const hidden = { public: true, detail: { hide: true } } as const;
  return new Elysia()
    .use(access(ctx))
    .get("/", ({ redirect }) => redirect("/admin", 302), hidden)
    .get("/admin", html, hidden)
    .get("/admin/*", html, hidden)
    .get(script.path, ({ request }) => serveAsset(script, request), hidden)
    .get(styles.path, ({ request }) => serveAsset(styles, request), hidden);
}
