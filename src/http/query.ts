import { badRequest } from "./errors";

type Nested = string | Nested[] | { [key: string]: Nested };

function arrays(value: Nested): Nested {
  if (typeof value === "string" || Array.isArray(value)) return Array.isArray(value) ? value.map(arrays) : value;
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((key) => /^\d+$/.test(key))) {
    return keys.sort((a, b) => Number(a) - Number(b)).map((key) => arrays(value[key]));
  }
  return Object.fromEntries(keys.map((key) => [key, arrays(value[key])]));
}

/**
 * Bracket notation as the contract uses it: `filters[0][fieldSlug]=x` → `{ filters: [{ fieldSlug: "x" }] }`,
 * `status[0]=a&status[1]=b` and `status[]=a` → arrays, a repeated plain key → an array.
 */
export function nestedQuery(url: string): Record<string, Nested> {
  const root: Record<string, Nested> = {};
  for (const [key, value] of new URL(url).searchParams) {
    const path = key.replace(/\]/g, "").split("[");
    let node: Record<string, Nested> | Nested[] = root;
    path.forEach((segment, i) => {
      const last = i === path.length - 1;
      const container = node as Record<string, Nested>;
      const slot = segment === "" && Array.isArray(node) ? String(node.length) : segment;
      if (last) {
        const existing = container[slot];
        if (Array.isArray(node) && segment === "") (node as Nested[]).push(value);
        else container[slot] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing as string, value];
        return;
      }
      const next = path[i + 1] === "" ? [] : {};
      container[slot] ??= next;
      node = container[slot] as Record<string, Nested>;
    });
  }
  return arrays(root) as Record<string, Nested>;
}

/** A list's `limit`: a whole number in range, or the default when absent. */
export function limitParam(value: unknown, fallback: number, max = 100): number {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) throw badRequest(`limit must be a whole number from 1 to ${max}.`);
  return Number(value);
}

export function oneString(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw badRequest(`The query parameter ${name} must appear once.`);
  return value;
}

/** A single value or an array of values, as an array of strings. */
export function stringList(name: string, value: unknown): string[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((item) => typeof item === "string")) throw badRequest(`The query parameter ${name} must be a list of values.`);
  return list as string[];
}
