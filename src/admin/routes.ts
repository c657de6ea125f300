import { Elysia } from "elysia";
import type { AppContext } from "../context";
import { access } from "../http/access";
import css from "./admin.css" with { type: "file" };
import script from "./admin.js" with { type: "file" };
import page from "./index.html" with { type: "file" };

/**
 * The page loads nothing from another host and may not be framed by any page (no clickjacking of
 * its approve and delete buttons).
 */
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** The admin page: static files embedded in the binary; everything it does goes through /api/v1. */
export function adminRoutes(ctx: AppContext) {
  const html = () => new Response(Bun.file(page as unknown as string), { headers: PAGE_HEADERS });
  const hidden = { public: true, detail: { hide: true } } as const;
  return new Elysia()
    .use(access(ctx))
    .get("/admin", html, hidden)
    .get("/admin/*", html, hidden)
    .get("/admin/assets/admin.js", () => new Response(Bun.file(script), { headers: { "content-type": "text/javascript; charset=utf-8" } }), hidden)
    .get("/admin/assets/admin.css", () => new Response(Bun.file(css), { headers: { "content-type": "text/css; charset=utf-8" } }), hidden);
}
