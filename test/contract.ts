import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";

type Schema = Record<string, unknown>;
type Operation = { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

interface Route {
  template: string;
  pattern: RegExp;
  operations: Record<string, Operation>;
}

/**
 * The schemas with every object closed, for the tests only: an answer carrying a key the document
 * does not describe fails. The document itself leaves objects open, so clients tolerate additions.
 * `unevaluatedProperties` sees through `allOf`, so it goes on the `allOf`, not on its parts.
 */
function closed<T>(schema: T, inAllOf = false): T {
  if (Array.isArray(schema)) return schema.map((item) => closed(item, inAllOf)) as T;
  if (schema === null || typeof schema !== "object") return schema;
  const node = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, closed(value, key === "allOf")])) as Schema;
  const isObject = node.properties !== undefined || node.allOf !== undefined;
  if (isObject && !inAllOf && node.additionalProperties === undefined && node.patternProperties === undefined) node.unevaluatedProperties = false;
  return node as T;
}

/** Every validation failure (400 BAD_REQUEST) carries `data.issues`, each with the path of the input it is about (API.md section 1). */
function checkIssues(method: string, path: string, body: unknown): void {
  const issues = (body as { data?: { issues?: unknown } }).data?.issues;
  const wellFormed = (issue: unknown) => {
    const { path: at, message } = (issue ?? {}) as { path?: unknown; message?: unknown };
    return Array.isArray(at) && at.every((part) => typeof part === "string" || typeof part === "number") && typeof message === "string";
  };
  if (!Array.isArray(issues) || issues.length === 0 || !issues.every(wellFormed)) throw new Error(`${method} ${path} answered a 400 without data.issues [{ path, message }]: ${JSON.stringify(body).slice(0, 300)}`);
}

/**
 * The server's own `openapi.json` as a checker of answers: every answer the tests receive through
 * `TestServer.call` must be one the document describes for its route and status, body included.
 * A test fails when the code and the document disagree.
 */
export class Contract {
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });

  constructor(private readonly document: Document) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: "basalt", components: closed(document.components) });
    // Literal segments before parameters, so /records/count wins over /records/{recordId}.
    this.routes = Object.entries(document.paths)
      .map(([template, operations]) => ({
        template,
        operations,
        pattern: new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`),
      }))
      .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  }

  private validator(key: string, schema: Schema): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      // References point into the document's components, which the "basalt" schema holds.
      const resolved = closed(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"basalt#/components/')));
      validate = this.ajv.compile(resolved);
      this.validators.set(key, validate);
    }
    return validate;
  }

  /** Throws, naming the route and what disagrees, when an answer is not one the document describes. */
  check(method: string, url: string, status: number, body: unknown, contentType: string | null): void {
    const path = new URL(url, "http://basalt.test").pathname;
    if (status === 400 && (body as { code?: unknown } | null)?.code === "BAD_REQUEST") checkIssues(method, path, body);
    const route = this.routes.find((candidate) => candidate.pattern.test(path));
    const operation = route?.operations[method.toLowerCase()];
    const json = contentType?.startsWith("application/json") ?? false;
    if (!route || !operation) {
      // Outside the documented surface (a wrong method, an unknown path): errors still wear the envelope.
      if (status >= 400 && json) this.expect(`error of ${method} ${path}`, this.document.components.schemas.Error, body, status, method, path);
      return;
    }
    const response = operation.responses?.[String(status)];
    if (!response) throw new Error(`${method} ${route.template} answered ${status}, which openapi.json does not document for it: ${JSON.stringify(body).slice(0, 300)}`);
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) return;
    const media = contentType?.split(";")[0].trim() ?? "";
    const covered = Object.hasOwn(content, media) || Object.hasOwn(content, "*/*") || Object.hasOwn(content, `${media.split("/")[0]}/*`);
    if (!covered) throw new Error(`${method} ${route.template} answered ${status} as ${contentType}, not as ${Object.keys(content).join(" or ")} as openapi.json describes.`);
    const schema = content[media]?.schema;
    if (json && schema) this.expect(`${method} ${route.template} ${status}`, schema, body, status, method, path);
  }

  private expect(key: string, schema: Schema, body: unknown, status: number, method: string, path: string): void {
    const validate = this.validator(key, schema);
    if (validate(body)) return;
    const problems = (validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath || "/"} ${error.message}`);
    throw new Error(`${method} ${path} answered ${status} with a body openapi.json does not describe: ${problems.join("; ")}\n${JSON.stringify(body).slice(0, 500)}`);
  }
}
