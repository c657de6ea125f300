import { eq } from "drizzle-orm";
import type { AppContext, Tx } from "../context";
import { badRequest, notInSpace, payloadTooLarge } from "../shared/errors";
import { readLines } from "../shared/lines";
import { findNode } from "./nodes";
import { checkJsonDepth } from "../shared/json";
import { type DocumentType, nodeDocuments } from "../tables/content";

/**
 * The content of document nodes (contract §3.7): a doc's markdown, and the JSON documents of
 * whiteboards, workflows and html nodes, each checked and filled with its defaults when written,
 * so what is stored is always what a reader gets. A node with nothing stored reads as its empty
 * document.
 */

/** The most bytes a doc's markdown may hold, and a document's JSON (Busabase's bounds). */
export const MAX_DOC_BYTES = 300_000;
export const MAX_DOCUMENT_BYTES = 1_000_000;
const MAX_HTML_SOURCE = 500_000;

type Json = Record<string, unknown>;

interface DocumentKind {
  /** The operation that changes it. */
  operation: "doc_update" | "whiteboard_document_update" | "workflow_document_update" | "html_document_update";
  /** What a new node of the type holds. */
  empty(): unknown;
  /** The content as given, checked and with its defaults: what is stored and read back. */
  check(content: unknown): unknown;
}

const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

function objectOf(value: unknown, what: string): Json {
  if (!isObject(value)) throw badRequest(`${what} must be an object.`);
  return value;
}

function stringOf(value: unknown, what: string, max: number, fallback: string, min = 0): string {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || value.length < min || value.length > max) throw badRequest(`${what} must be a string of ${min} to ${max} characters.`);
  return value;
}

function oneOfValues<T extends string>(value: unknown, what: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly unknown[]).includes(value)) throw badRequest(`${what} must be one of ${allowed.join(", ")}.`);
  return value as T;
}

function integerOf(value: unknown, what: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) throw badRequest(`${what} must be a whole number from ${min} to ${max}.`);
  return value as number;
}

function versionOf(document: Json, version: number, what: string): void {
  if (document.version !== undefined && document.version !== version) throw badRequest(`A ${what} document has version ${version}.`);
}

const EMPTY_HTML = '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Untitled</title>\n</head>\n<body>\n</body>\n</html>\n';

const WORKFLOW_NODE_KINDS: Record<string, (node: Json, at: string) => Json> = {
  trigger: (node, at) => ({ eventName: stringOf(node.eventName, `${at}.eventName`, 160, "manual") }),
  webhook: (node, at) => ({ method: oneOfValues(node.method, `${at}.method`, ["GET", "POST", "PUT", "PATCH", "DELETE"], "POST"), url: stringOf(node.url, `${at}.url`, 2000, "") }),
  function: (node, at) => ({ webhookRuleId: stringOf(node.webhookRuleId, `${at}.webhookRuleId`, 160, ""), functionName: stringOf(node.functionName, `${at}.functionName`, 160, "") }),
  condition: (node, at) => ({ expression: stringOf(node.expression, `${at}.expression`, 2000, "") }),
  wait: (node, at) => ({ duration: integerOf(node.duration, `${at}.duration`, 0, 525_600, 1), unit: oneOfValues(node.unit, `${at}.unit`, ["minutes", "hours", "days"], "hours") }),
  approval: (node, at) => ({ approver: stringOf(node.approver, `${at}.approver`, 500, "") }),
  action: (node, at) => ({ actionName: stringOf(node.actionName, `${at}.actionName`, 500, "") }),
  end: (node, at) => ({ outcome: stringOf(node.outcome, `${at}.outcome`, 500, "completed") }),
};

function workflowNode(value: unknown, index: number): Json {
  const at = `document.nodes[${index}]`;
  const node = objectOf(value, at);
  const kind = oneOfValues(node.kind, `${at}.kind`, Object.keys(WORKFLOW_NODE_KINDS), "" as string);
  const position = objectOf(node.position, `${at}.position`);
  if (!Number.isFinite(position.x) || !Number.isFinite(position.y)) throw badRequest(`${at}.position needs finite x and y.`);
  return {
    id: stringOf(node.id, `${at}.id`, 200, "", 1),
    kind,
    position: { x: position.x, y: position.y },
    label: stringOf(node.label, `${at}.label`, 120, "", 1),
    description: stringOf(node.description, `${at}.description`, 500, ""),
    ...WORKFLOW_NODE_KINDS[kind](node, at),
  };
}

const arrayOf = (value: unknown, what: string): unknown[] => {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > 10_000) throw badRequest(`${what} must be a list of at most 10000.`);
  return value;
};

const EMPTY_WORKFLOW = () => ({
  version: 2,
  nodes: [{ id: "trigger", kind: "trigger", position: { x: 0, y: 0 }, label: "Manual trigger", description: "", eventName: "manual" }],
  edges: [],
  settings: { executionMode: "manual", concurrency: 1, timeoutMs: 30_000, errorPolicy: "stop" },
});

export const DOCUMENT_KINDS: { readonly [T in DocumentType]: DocumentKind } = {
  doc: {
    operation: "doc_update",
    empty: () => "",
    check(body) {
      if (typeof body !== "string") throw badRequest("A doc's body is markdown text.");
      if (Buffer.byteLength(body) > MAX_DOC_BYTES) throw payloadTooLarge(`A doc's body may hold at most ${MAX_DOC_BYTES} bytes.`);
      return body;
    },
  },
  whiteboard: {
    operation: "whiteboard_document_update",
    empty: () => ({ version: 1, elements: [], appState: {} }),
    check(value) {
      const document = objectOf(value, "document");
      versionOf(document, 1, "whiteboard");
      return { version: 1, elements: arrayOf(document.elements, "document.elements"), appState: document.appState === undefined ? {} : objectOf(document.appState, "document.appState") };
    },
  },
  workflow: {
    operation: "workflow_document_update",
    empty: EMPTY_WORKFLOW,
    check(value) {
      const document = objectOf(value, "document");
      versionOf(document, 2, "workflow");
      const nodes = arrayOf(document.nodes, "document.nodes").map(workflowNode);
      const ids = new Set(nodes.map((node) => node.id));
      // An edge whose ends are not nodes of the document is dropped, as Busabase drops it when it reads one.
      const edges = arrayOf(document.edges, "document.edges").flatMap((value, index) => {
        const at = `document.edges[${index}]`;
        const edge = objectOf(value, at);
        const checked = {
          id: stringOf(edge.id, `${at}.id`, 200, "", 1),
          source: stringOf(edge.source, `${at}.source`, 200, "", 1),
          target: stringOf(edge.target, `${at}.target`, 200, "", 1),
          label: stringOf(edge.label, `${at}.label`, 120, ""),
          outcome: stringOf(edge.outcome, `${at}.outcome`, 120, "default"),
        };
        return ids.has(checked.source) && ids.has(checked.target) ? [checked] : [];
      });
      const settings = document.settings === undefined ? {} : objectOf(document.settings, "document.settings");
      return {
        version: 2,
        nodes,
        edges,
        settings: {
          executionMode: oneOfValues(settings.executionMode, "document.settings.executionMode", ["manual", "event"], "manual"),
          concurrency: integerOf(settings.concurrency, "document.settings.concurrency", 1, 50, 1),
          timeoutMs: integerOf(settings.timeoutMs, "document.settings.timeoutMs", 1000, 300_000, 30_000),
          errorPolicy: oneOfValues(settings.errorPolicy, "document.settings.errorPolicy", ["stop", "continue"], "stop"),
        },
      };
    },
  },
  html: {
    operation: "html_document_update",
    empty: () => ({ version: 1, source: EMPTY_HTML }),
    check(value) {
      const document = objectOf(value, "document");
      versionOf(document, 1, "html");
      if (typeof document.source !== "string") throw badRequest("An html document's source is text.");
      if (document.source.length > MAX_HTML_SOURCE) throw payloadTooLarge(`An html document's source may hold at most ${MAX_HTML_SOURCE} characters.`);
      return { version: 1, source: document.source };
    },
  },
};

/** The document given for a node of `type`, checked and completed; JSON documents within their size and depth. */
export function checkDocument(type: DocumentType, content: unknown): unknown {
  if (type !== "doc") {
    checkJsonDepth("document", content);
    if (Buffer.byteLength(JSON.stringify(content) ?? "") > MAX_DOCUMENT_BYTES) throw payloadTooLarge(`A document may hold at most ${MAX_DOCUMENT_BYTES} bytes of JSON.`);
  }
  return DOCUMENT_KINDS[type].check(content);
}

/** A node's document as stored; its type's empty document when none is, or when what is stored (a loaded dump's) does not hold. */
export function readDocument(ctx: AppContext, nodeId: string, type: DocumentType): unknown {
  const row = ctx.db.select({ body: nodeDocuments.body }).from(nodeDocuments).where(eq(nodeDocuments.nodeId, nodeId)).get();
  if (!row) return DOCUMENT_KINDS[type].empty();
  if (type === "doc") return row.body;
  try {
    return DOCUMENT_KINDS[type].check(JSON.parse(row.body));
  } catch {
    return DOCUMENT_KINDS[type].empty();
  }
}

/** Stores a node's document, checked already by `checkDocument`. */
export function writeDocument(tx: Tx, nodeId: string, type: DocumentType, content: unknown, at: string): void {
  const body = type === "doc" ? (content as string) : JSON.stringify(content);
  tx.db.insert(nodeDocuments).values({ nodeId, body, updatedAt: at }).onConflictDoUpdate({ target: nodeDocuments.nodeId, set: { body, updatedAt: at } }).run();
}

/** `GET /docs/{id}/lines`: a range of an active doc's lines (2000, about 2 MiB, at most). */
export function readDocLines(ctx: AppContext, spaceId: string, ref: string, startLine = 1, endLine?: number) {
  const node = findNode(ctx, spaceId, ref);
  if (node.type !== "doc" || node.status !== "active") throw notInSpace("node", ref);
  return readLines(readDocument(ctx, node.id, "doc") as string, startLine, endLine);
}
