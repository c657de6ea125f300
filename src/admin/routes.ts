import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { access } from "../http/access";
import css from "./admin.css" with { type: "file" };
import { bundleAdminScript } from "./bundle" with { type: "macro" };
import page from "./index.html" with { type: "file" };

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

/** The admin page: one HTML shell for every `/admin` path, its bundled script and its styles; everything it does goes through /api/v1. */
export function adminRoutes(ctx: AppContext) {
  const html = () => new Response(Bun.file(page as unknown as string), { headers: PAGE_HEADERS });
  const hidden = { public: true, detail: { hide: true } } as const;
  return new Elysia()
    .use(access(ctx))
    .get("/", ({ redirect }) => redirect("/admin", 302), hidden)
    .get("/admin", html, hidden)
    .get("/admin/*", html, hidden)
    .get("/admin/assets/admin.js", () => new Response(SCRIPT, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" } }), hidden)
    .get("/admin/assets/admin.css", () => new Response(Bun.file(css), { headers: { "content-type": "text/css; charset=utf-8", "cache-control": "no-cache" } }), hidden);
}
