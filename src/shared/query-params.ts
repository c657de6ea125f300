import { invalid } from "./errors";
import { PROTOTYPE_KEYS } from "./json";

type Nested = string | Nested[] | { [key: string]: Nested };

/** A map that inherits nothing: no key of a query can reach `Object.prototype` through it. */
const emptyMap = (): Record<string, Nested> => Object.create(null);

function arrays(value: Nested): Nested {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(arrays);
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((key) => /^\d+$/.test(key))) {
    return keys.sort((a, b) => Number(a) - Number(b)).map((key) => arrays(value[key]));
  }
  const out = emptyMap();
  for (const key of keys) out[key] = arrays(value[key]);
  return out;
}

/**
 * Bracket notation as the contract uses it: `filters[0][fieldSlug]=x` → `{ filters: [{ fieldSlug: "x" }] }`,
 * `status[0]=a&status[1]=b` and `status[]=a` → arrays, a repeated plain key → an array. Every map
 * is prototype-free, and a key named `__proto__`, `constructor` or `prototype` is a 400.
 */
export function nestedQuery(url: string): Record<string, Nested> {
  const root = emptyMap();
  for (const [key, value] of new URL(url).searchParams) {
    const path = key.replace(/\]/g, "").split("[");
    const refused = path.find((segment) => PROTOTYPE_KEYS.has(segment));
    if (refused !== undefined) throw invalid([key], `The query parameter ${key} names "${refused}", which is not allowed.`);
    let node: Record<string, Nested> | Nested[] = root;
    path.forEach((segment, i) => {
      const last = i === path.length - 1;
      const container = node as Record<string, Nested>;
      const slot = segment === "" && Array.isArray(node) ? String(node.length) : segment;
      if (last) {
        const existing = container[slot];
        if (Array.isArray(node) && segment === "") (node as Nested[]).push(value);
        else if (existing === undefined) container[slot] = value;
        else if (Array.isArray(existing)) existing.push(value);
        else container[slot] = [existing as string, value];
        return;
      }
      const existing = container[slot];
      if (typeof existing === "string") throw invalid([key], `The query parameter ${key} conflicts with another parameter of the same name.`);
      container[slot] = existing ?? (path[i + 1] === "" ? [] : emptyMap());
      node = container[slot] as Record<string, Nested>;
    });
  }
  return arrays(root) as Record<string, Nested>;
}

/** A whole number from `min` to `max` in a query parameter, or the default when absent. */
export function wholeNumberParam(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw invalid([name], `${name} must be a whole number from ${min} to ${max}.`);
  return Number(value);
}

/** A list's `limit`: a whole number in range, or the default when absent. */
export const limitParam = (value: unknown, fallback: number, max = 100): number => wholeNumberParam("limit", value, fallback, 1, max);

export function oneString(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid([name], `The query parameter ${name} must appear once.`);
  return value;
}

/** A single value or an array of values, as an array of strings. */
export function stringList(name: string, value: unknown): string[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((item) => typeof item === "string")) throw invalid([name], `The query parameter ${name} must be a list of values.`);
  return list as string[];
}
