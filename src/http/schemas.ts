import { t, type TSchema } from "elysia";
import { type IntegerOptions, type TLiteral, type TUnion, Type } from "@sinclair/typebox";

/**
 * Exactly one of `values`. Not `t.UnionEnum`: it silently defaults an omitted optional field to
 * the first value (an omitted key expiration would become "never").
 */
export const oneOf = <const T extends readonly string[]>(values: T) =>
  t.Union(values.map((value) => t.Literal(value)) as TSchema[]) as unknown as TUnion<TLiteral<T[number]>[]>;

/** Documents a query parameter that a route parses by hand (bracket notation) in the OpenAPI document. */
export const queryParameter = (name: string, description: string, required = false) => ({
  name,
  in: "query" as const,
  required,
  schema: { type: "string" as const },
  description,
});

/**
 * A whole number in a JSON body. Not `t.Integer`: Elysia's accepts numeric strings too, and the
 * contract never coerces (`"3"` is not a number). Query parameters, which are always strings, keep
 * `t.Integer`.
 */
export const WholeNumber = (options?: IntegerOptions) => Type.Integer(options);
