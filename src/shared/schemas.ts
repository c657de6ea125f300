import { t, type TSchema } from "elysia";
import { type IntegerOptions, Kind, type TLiteral, type TObject, type TUnion, Type } from "@sinclair/typebox";

/** A name of anything (user, space, node, base, field); `checkName` refuses a blank one. */
export const Name = t.String({ minLength: 1, maxLength: 200 });
export const Email = t.String({ minLength: 3, maxLength: 320 });
export const Password = t.String({ minLength: 1, maxLength: 1024 });

/** A space, node or field slug; the domain checks its characters (`checkSlug`, `checkFieldSlug`). */
export const Slug = t.String({ minLength: 1, maxLength: 64 });

/**
 * Exactly one of `values`, documented as a string `enum` as well as the union that validates it.
 * Not `t.UnionEnum`: it silently defaults an omitted optional field to the first value (an omitted
 * key expiration would become "never").
 */
export const oneOf = <const T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  t.Union(values.map((value) => t.Literal(value)) as TSchema[], { type: "string", enum: [...values], ...options }) as unknown as TUnion<TLiteral<T[number]>[]>;

/** Documents a query parameter that a route parses by hand (bracket notation) in the OpenAPI document. */
export const queryParameter = (name: string, description: string, required = false) => ({
  name,
  in: "query" as const,
  required,
  schema: { type: "string" as const },
  description,
});

/**
 * A whole number in a JSON body or answer. Not `t.Integer`: Elysia's accepts numeric strings too, and the
 * contract never coerces (`"3"` is not a number). Query parameters, which are always strings, keep
 * `t.Integer`.
 */
export const WholeNumber = (options?: IntegerOptions) => Type.Integer(options);

/** Marks every object of a schema as open, so a union can still pick its variant when extra keys come along. */
function tolerant(schema: TSchema): TSchema {
  const node = schema as TSchema & { properties?: Record<string, TSchema>; items?: TSchema; anyOf?: TSchema[] };
  if (node[Kind] === "Object") {
    const properties = Object.fromEntries(Object.entries(node.properties ?? {}).map(([key, value]) => [key, tolerant(value)]));
    return { ...node, properties, additionalProperties: true };
  }
  if (node[Kind] === "Array" && node.items) return { ...node, items: tolerant(node.items) };
  if (node[Kind] === "Union" && node.anyOf) return { ...node, anyOf: node.anyOf.map(tolerant) };
  return schema;
}

/**
 * A body that is one of several shapes (told apart by `operation` or `kind`). Unknown keys are
 * ignored as in every other body: the variants accept them, and validation then strips them
 * (a closed union would refuse any extra key with "Expected union value").
 */
export const variants = <const T extends TObject[]>(shapes: T) => t.Union(shapes.map(tolerant)) as unknown as TUnion<T>;

// ---- Answer shapes: the types the views are written against, and the document's response schemas ----

/** A value or null; the views answer null, never an omitted key, where there is nothing. */
export const Nullable = <T extends TSchema>(schema: T, options: { description?: string } = {}) => t.Union([schema, t.Null()], options);

/** An instant as the API writes one: ISO 8601 in UTC with milliseconds. */
export const Timestamp = t.String({ format: "date-time" });

/** An object whose keys are the caller's (field values, metadata, headers…). */
export const JsonObject = t.Record(t.String(), t.Unknown());

/** The answer of a route that removes something and has nothing else to say. */
export const Success = t.Object({ success: t.Boolean() }, { $id: "Success" });

/** The contract's error envelope (section 1). */
export const ErrorSchema = t.Object(
  {
    error: t.String({ description: "What went wrong and what to do, in a sentence." }),
    code: t.String({ description: "Stable upper-case code, e.g. BAD_REQUEST, FORBIDDEN." }),
    reason: t.Optional(t.String({ description: "A finer reason where the contract defines one; also in data.reason." })),
    path: t.Optional(t.String({ description: "On an unknown route (404): the path asked for." })),
    data: t.Optional(t.Record(t.String(), t.Unknown(), { description: "Machine-readable detail: on every 400 BAD_REQUEST, issues ([{ path, message }], path the input's keys and indexes, [] for the request as a whole); required/effective levels, allowed methods…" })),
  },
  { $id: "Error" },
);
