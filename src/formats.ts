/** Text formats shared by several domains, each defined once. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;
export const SLUG_PATTERN = /^[a-z0-9-]+$/;

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** A readable slug from a name: `My Research!` → `my-research`; empty names give `space`. */
export function slugify(name: string, fallback: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  return slug || fallback;
}
