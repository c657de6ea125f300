import { t, type TSchema } from "elysia";
import type { TLiteral, TUnion } from "@sinclair/typebox";

/**
 * Exactly one of `values`. Not `t.UnionEnum`: it silently defaults an omitted optional field to
 * the first value (an omitted key expiration would become "never").
 */
export const oneOf = <const T extends readonly string[]>(values: T) =>
  t.Union(values.map((value) => t.Literal(value)) as TSchema[]) as unknown as TUnion<TLiteral<T[number]>[]>;
