import { invalid, type Issue } from "./errors";

/** Text formats shared by several domains, each defined once. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;
export const SLUG_PATTERN = /^[a-z0-9-]{1,64}$/;

/** Space and node slugs: lower-case letters, digits and dashes, 1 to 64 of them. */
/** A slug made from a name, as the page proposes one: lower-case letters and digits, dashes between words. */
export const slugFrom = (name: string): string =>
  name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");

/** `path` is where the body holds it, for `data.issues`. */
export function checkSlug(slug: string, what = "slug", path: Issue["path"] = ["slug"]): string {
  if (!SLUG_PATTERN.test(slug)) throw invalid(path, `The ${what} "${slug}" must match ^[a-z0-9-]+$ (1 to 64 characters).`);
  return slug;
}

/** Names of users, spaces, nodes, bases and fields: trimmed, never empty. */
export function checkName(name: string, path: Issue["path"] = ["name"]): string {
  const trimmed = name.trim();
  if (!trimmed) throw invalid(path, "The name must not be empty.");
  return trimmed;
}

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

/** A name as a link's match compares it: accents stripped (NFD, combining marks dropped), case folded, spaces trimmed; "ZOË Müller" matches "zoe muller". */
export const foldName = (name: string): string =>
  name
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .trim();
