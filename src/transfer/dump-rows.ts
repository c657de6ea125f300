import { MAX_DOCUMENT_BYTES } from "../content/documents";
import { checkFilePath } from "../content/file-trees";
import { type DumpUser, dumpTableNamed, insertDumpRow, insertUser, markUnsentFiles, rootFolders, rowExists, type Target, userExists, userIdByEmail } from "./store";
import { isAttachment } from "../content/fields/attachment";
import { isRelation } from "../content/fields/relation";
import { COMMENT_SUBJECTS } from "../tables/changes";
import { idsStoodFor } from "../changes/direct";
import { checkFieldOptions, checkFieldSlug, recordValueErrors } from "../content/field-types";
import { type FieldDefinition } from "../content/fields/kind";
import { type FieldType } from "../shared/field-types";
import { storedViewConfig } from "../content/views";
import { checkReviewPolicy, loadFields } from "../content/bases";
import { ApiError, badRequest } from "../shared/errors";
import { checkName, checkSlug } from "../shared/formats";
import { checkMetadata } from "../shared/json";
import { DEFAULT_LIMITS, type Limits } from "../shared/limits";
import { Name, Slug } from "../shared/schemas";
import { MAX_COMMENT } from "../changes/comments";
import type { Store } from "../db/client";
import { newId } from "../db/ids";

/**
 * The one validator of a dump's rows, shared by `basalt load` and the HTTP import: a dump may only
 * describe one space, so every reference in every row must resolve to a row of the same dump (a
 * foreign key only says that a row exists, not whose it is), every user it names must be in its
 * users list, and each row must have a shape the API itself writes. Rows are checked as they are
 * inserted (inside the load's one transaction); references to rows that come later are settled by
 * `finish`, which refuses the dump when any is left. A refusal is a `DumpRefusal`, which the HTTP
 * import answers as a 400 and the command prints.
 */
export class DumpRefusal extends Error {}

const USERS: Target = "users";

const COMMENT_SUBJECT_TABLE: Record<(typeof COMMENT_SUBJECTS)[number], Target> = { record: "records", change_request: "change_requests", operation: "operations", commit: "commits" };
/** The ids an operation's payload (of a node, field or view change) names, by key. */
const PAYLOAD_NAMES: Record<string, Target> = { nodeId: "nodes", parentNodeId: "nodes", fieldId: "fields", viewId: "views" };
const RECORD_KINDS = new Set(["record_create", "record_update", "record_delete", "record_restore"]);
/**
 * A commit's columns that are history: a node purged since takes its subtree's bases, records and
 * operations with it, and the commits that made them still name them (as their payloads do).
 */
const COMMIT_HISTORY = new Set(["node_id", "operation_id", "record_id"]);
const USER_ID = /^usr_[0-9A-Za-z]+$/;
/** The API's bounds of a name and a slug (its body schemas'). */
const NAME_BOUND = Name.maxLength!;
const SLUG_BOUND = Slug.maxLength!;
const USER_IDS = /usr_[0-9A-Za-z]+/g;

type Row = Record<string, unknown>;

/**
 * Who a dump's people become here. An instance admin (and the operator's `basalt load`) matches
 * them to the accounts of the same e-mail, or makes accounts no one can sign in to; anyone else
 * maps each of them to an id that names no account (as a deleted person's rows do), except the
 * importer's own e-mail, which is the importer.
 */
export type DumpPeople = { accounts: true; password: string } | { accounts: false; self: { id: string; email: string } };

export class DumpLoader {
  /** The ids of the dump's rows, by table. */
  private readonly ids = new Map<string, Set<string>>();
  /** References to settle in `finish`; `history`: a commit's account of what was, which may name what was purged since. */
  private readonly pending: { table: string; id: string; column: string; target: Target; value: string; history: boolean }[] = [];
  private readonly userMap = new Map<string, string>();
  private readonly fieldsByBase = new Map<string, FieldDefinition[]>();
  private readonly goneSlugs = new Map<string, Set<string>>();
  private readonly recordChecks: { id: string; baseId: string; data: Row }[] = [];
  private readonly viewChecks: { id: string; baseId: string; config: Row }[] = [];
  private sawUsers = false;
  rows = 0;
  /** How many times a dump without a users list named a person, each taken as the importer. */
  unlistedPeople = 0;

  constructor(
    private readonly store: Store,
    private readonly spaceId: string,
    private readonly people: DumpPeople,
    private readonly now: string,
    /** Over HTTP, the importer: Busabase's backup sends no users list, and the people its rows name become the importer. */
    private readonly importerId?: string,
    /** The instance's limits (metadata bytes), as the API applies them. */
    private readonly limits: Limits = DEFAULT_LIMITS,
  ) {}

  /** One person of the dump's users list. */
  addUser(user: unknown): void {
    this.sawUsers = true;
    const { id, email, name } = (user ?? {}) as Partial<DumpUser>;
    if (typeof id !== "string" || !USER_ID.test(id) || typeof email !== "string" || typeof name !== "string") throw new DumpRefusal("A user of the dump is not { id, email, name }.");
    if (this.userMap.has(id)) throw new DumpRefusal(`The user ${id} is listed twice.`);
    const address = email.trim().toLowerCase();
    if (!this.people.accounts) return void this.userMap.set(id, address === this.people.self.email.toLowerCase() ? this.people.self.id : newId("usr"));
    const here = userIdByEmail(this.store, address);
    if (here) return void this.userMap.set(id, here);
    const made = userExists(this.store, id) ? newId("usr") : id;
    insertUser(this.store, made, address, name, this.people.password, this.now);
    this.userMap.set(id, made);
  }

  /** Checks one row of `table`, puts it in the space (its ids kept, its people mapped) and inserts it. */
  addRow(table: string, given: Row): void {
    const spec = dumpTableNamed(table);
    if (!spec || table === "spaces") throw new DumpRefusal(`The dump holds rows of a table "${table}" this version does not load.`);
    // A row keyed by what it belongs to (a node's document, a node's file) goes by that id.
    const id = given[spec.key[0]];
    if (typeof id !== "string" || !/^[a-z]{3}_[0-9A-Za-z]+$/.test(id)) throw new DumpRefusal(`A ${table} row has no id of Basalt's form.`);
    const refuse = (why: string) => new DumpRefusal(`The ${table} row ${id} ${why}.`);
    const row: Row = Object.hasOwn(given, "space_id") ? { ...given, space_id: this.spaceId } : { ...given };
    for (const [column, allowed] of Object.entries(spec.oneOf ?? {})) if (!allowed.includes(row[column] as string)) throw refuse(`has a ${column} that is not one of ${allowed.join(", ")}`);
    for (const [column, target] of Object.entries(spec.names)) {
      const value = row[column];
      if (value === null || value === undefined) continue;
      if (typeof value !== "string") throw refuse(`has a ${column} that is not an id`);
      if (target === USERS) row[column] = this.person(value, refuse);
      else this.expect(table, id, column, target, value, table === "commits" && COMMIT_HISTORY.has(column));
    }
    for (const column of JSON_COLUMNS[table] ?? []) if (typeof row[column] === "string") row[column] = this.peopleInText(row[column] as string);
    try {
      this.checkValues(table, row);
    } catch (error) {
      if (error instanceof ApiError) throw refuse(`holds a value the API refuses (${error.message})`);
      throw error;
    }
    this.checkShape(table, id, row, refuse);
    insertDumpRow(this.store, spec, row);
    // A deleted field's id is still named by the history that deleted it.
    this.remember(table === "deleted_fields" ? "fields" : table, id);
    const direct = table === "commits" ? idsStoodFor({ id, sourceAttribution: row.source_attribution }) : undefined;
    if (direct) {
      this.remember("change_requests", direct.changeRequestId);
      this.remember("operations", direct.operationId);
    }
    this.rows++;
  }

  /**
   * Settles what was left for later: each reference resolved in the dump, each record's values
   * valid for its base, one root folder. A file the dump did not bring waits, pending, for its
   * bytes, whether or not this instance stores a file of that hash: an import must not tell.
   * Answers how many files wait.
   */
  finish(sentFiles: ReadonlySet<string>): number {
    this.refuseUnresolved();
    for (const record of this.recordChecks) {
      const fields = this.fieldsByBase.get(record.baseId) ?? [];
      const gone = this.goneSlugs.get(record.baseId) ?? new Set();
      const current = Object.fromEntries(Object.entries(record.data).filter(([slug]) => !gone.has(slug)));
      const { errors } = recordValueErrors(fields, current, "update");
      if (errors.length > 0) throw new DumpRefusal(`The records row ${record.id} holds values its base refuses: ${errors.map((error) => error.message).join(" ")}`);
      for (const field of fields) if (isAttachment(field)) for (const asset of idsIn(current[field.slug])) this.expect("records", record.id, `data.${field.slug}`, "assets", asset);
      if (fields.some((field) => isRelation(field) && current[field.slug] !== undefined)) throw new DumpRefusal(`The records row ${record.id} holds relation values in its data; links travel as record_links rows.`);
    }
    this.refuseUnresolved();
    // Checked as the API checks a view's config against its base, once the dump's fields are all in.
    for (const view of this.viewChecks) {
      try {
        storedViewConfig(loadFields({ store: this.store, db: this.store.db }, view.baseId), view.config);
      } catch (error) {
        if (error instanceof ApiError) throw new DumpRefusal(`The views row ${view.id} has a config the API refuses (${error.message})`);
        throw error;
      }
    }
    const roots = rootFolders(this.store, this.spaceId);
    if (roots !== 1) throw new DumpRefusal(`The dump's nodes have ${roots} root folders; a space has exactly one.`);
    return markUnsentFiles(this.store, this.spaceId, [...sentFiles]);
  }

  /**
   * Refuses the dump when a reference names a row it does not hold. A commit's history may name a
   * row purged since, which is a row no space here holds: one another space holds is refused.
   */
  private refuseUnresolved(): void {
    const missing = this.pending.find((ref) => !this.ids.get(ref.target)?.has(ref.value) && !(ref.history && !rowExists(this.store, ref.target, ref.value)));
    if (missing) throw new DumpRefusal(`The ${missing.table} row ${missing.id} names ${missing.value} in ${missing.column}, which the dump does not hold: rows may only name rows of the same dump.`);
  }

  private remember(target: string, id: string): void {
    let set = this.ids.get(target);
    if (!set) this.ids.set(target, (set = new Set()));
    set.add(id);
  }

  private expect(table: string, id: string, column: string, target: Target, value: string, history = false): void {
    if (!this.ids.get(target)?.has(value)) this.pending.push({ table, id, column, target, value, history });
  }

  /** The person a user id of the dump is here; an id its users list does not hold is refused. */
  private person(id: string, refuse: (why: string) => Error): string {
    const mapped = this.userMap.get(id);
    if (mapped !== undefined) return mapped;
    if (this.sawUsers || this.importerId === undefined) throw refuse(`names the user ${id}, who is not in the dump's users list`);
    this.unlistedPeople++;
    return this.importerId;
  }

  /** User ids inside the server's own JSON (attributions, audit details): those of the users list are mapped, any other becomes an id that names no account. */
  private peopleInText(text: string): string {
    return text.replace(USER_IDS, (id) => {
      let mapped = this.userMap.get(id);
      if (mapped === undefined) this.userMap.set(id, (mapped = newId("usr")));
      return mapped;
    });
  }

  /**
   * The API's own checks of what a client writes, run on the row as it would have written it: the
   * names, slugs, metadata, review policy and comment bodies every route refuses past its bounds.
   * (Views and record values are checked against their base's fields once all are in, by `finish`.)
   */
  private checkValues(table: string, row: Row): void {
    const text = (column: string, bound: number) => {
      if (typeof row[column] !== "string" || (row[column] as string).length > bound) throw badRequest(`${column} must be text of at most ${bound} characters.`);
      return row[column] as string;
    };
    const named = () => checkName(text("name", NAME_BOUND));
    switch (table) {
      case "nodes":
        named();
        checkSlug(text("slug", SLUG_BOUND), "node slug");
        for (const column of ["metadata", "settings"]) if (row[column] !== null && row[column] !== undefined) checkMetadata(this.limits, parsed(row[column], (why) => badRequest(why), column));
        return;
      case "fields":
        named();
        checkFieldSlug(text("slug", SLUG_BOUND));
        return;
      case "views":
        named();
        checkSlug(text("slug", SLUG_BOUND), "view slug");
        return;
      case "bases":
        if (row.review_policy !== null && row.review_policy !== undefined) checkReviewPolicy(parsed(row.review_policy, (why) => badRequest(why), "review_policy"));
        return;
      case "comments":
        if (text("body", MAX_COMMENT).trim() === "") throw badRequest("A comment's body is empty.");
        return;
    }
  }

  /** The shapes the API writes, and the references inside JSON columns. */
  private checkShape(table: string, id: string, row: Row, refuse: (why: string) => Error): void {
    switch (table) {
      case "nodes":
        if (row.parent_id === null && row.type !== "folder") throw refuse("is a root that is not a folder");
        return;
      case "node_documents":
        if (typeof row.body !== "string" || Buffer.byteLength(row.body) > MAX_DOCUMENT_BYTES) throw refuse(`has a body that is not text of at most ${MAX_DOCUMENT_BYTES} bytes`);
        return;
      case "node_files":
        try {
          checkFilePath(String(row.path));
        } catch (error) {
          throw refuse(`has a path a file tree refuses (${(error as Error).message})`);
        }
        return;
      case "fields": {
        const options = parsed(row.options, refuse, "options");
        const type = row.type as FieldType;
        try {
          checkFieldOptions(type, options);
        } catch (error) {
          throw refuse(`has options its type refuses (${(error as Error).message})`);
        }
        if (isRelation({ type })) {
          if (typeof options.targetBaseId !== "string") throw refuse("is a relation without options.targetBaseId");
          this.expect(table, id, "options.targetBaseId", "bases", options.targetBaseId);
          if (typeof options.inverseFieldId === "string") this.expect(table, id, "options.inverseFieldId", "fields", options.inverseFieldId);
        }
        const baseId = row.base_id as string;
        const list = this.fieldsByBase.get(baseId) ?? [];
        list.push({ slug: String(row.slug), type, required: Boolean(row.required), options });
        this.fieldsByBase.set(baseId, list);
        return;
      }
      case "deleted_fields": {
        const gone = this.goneSlugs.get(row.base_id as string) ?? new Set<string>();
        gone.add(String(row.slug));
        this.goneSlugs.set(row.base_id as string, gone);
        return;
      }
      case "views":
        this.viewChecks.push({ id, baseId: row.base_id as string, config: parsed(row.config, refuse, "config") });
        return;
      case "records":
        this.recordChecks.push({ id, baseId: row.base_id as string, data: parsed(row.data, refuse, "data") });
        return;
      case "commits":
      case "operations": {
        // A proposal's commits name their operation, whose target is the record; a record's states name the record.
        const kind = row.kind as string;
        if (RECORD_KINDS.has(kind) && (row.base_id === null || row.base_id === undefined)) throw refuse(`is a ${kind} without a base`);
        if (table === "operations" && RECORD_KINDS.has(kind) && kind !== "record_create" && (row.target_record_id === null || row.target_record_id === undefined)) throw refuse(`is a ${kind} without a record`);
        if (table === "commits" && row.payload !== null && row.payload !== undefined) this.checkPayload(table, id, kind, parsed(row.payload, refuse, "payload"));
        return;
      }
      case "comments": {
        const target = COMMENT_SUBJECT_TABLE[row.subject_type as (typeof COMMENT_SUBJECTS)[number]];
        if (typeof row.subject_id !== "string") throw refuse("has no subject");
        this.expect(table, id, "subject_id", target, row.subject_id);
        return;
      }
      case "audit_events":
        // Keys are not carried: the key that acted is one of another instance.
        row.actor_key_id = null;
        return;
      case "webhook_rules":
        Object.assign(row, secretless(row));
        return;
    }
  }

  /** The ids a proposal's payload names: nodes, fields and views of its change, and the records and files of its values (history: they may have been purged since). */
  private checkPayload(table: string, id: string, kind: string, payload: Row): void {
    if (!RECORD_KINDS.has(kind)) {
      for (const [key, target] of Object.entries(PAYLOAD_NAMES)) if (typeof payload[key] === "string") this.expect(table, id, `payload.${key}`, target, payload[key] as string, true);
      if (Array.isArray(payload.fieldIds)) for (const fieldId of payload.fieldIds) this.expect(table, id, "payload.fieldIds", "fields", String(fieldId), true);
      return;
    }
    for (const value of Object.values(payload)) {
      for (const ref of idsIn(value)) {
        if (ref.startsWith("rec_")) this.expect(table, id, "payload", "records", ref, true);
        else if (ref.startsWith("ast_")) this.expect(table, id, "payload", "assets", ref, true);
      }
    }
  }
}

/** Columns of JSON the server writes, whose user ids are mapped (payloads and records' values are people's text, left as written). */
const JSON_COLUMNS: Record<string, string[]> = {
  nodes: ["metadata", "settings"],
  commits: ["source_attribution", "review_policy_snapshot"],
  change_requests: ["source_attribution", "source_meta", "review_policy_snapshot", "merge_summary"],
  reviews: ["visible_operation_heads"],
  audit_events: ["metadata"],
  bases: ["review_policy"],
};

/** Record ids and file ids a value names: a relation's id or list, an attachment's list of ids or objects with an id. */
function idsIn(value: unknown): string[] {
  const items = Array.isArray(value) ? value : [value];
  return items.flatMap((item) => (typeof item === "string" ? [item] : typeof item === "object" && item !== null && typeof (item as { id?: unknown }).id === "string" ? [(item as { id: string }).id] : []));
}

function parsed(text: unknown, refuse: (why: string) => Error, column: string): Row {
  let value: unknown;
  try {
    value = typeof text === "string" ? JSON.parse(text) : undefined;
  } catch {
    value = undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw refuse(`has a ${column} that is not a JSON object`);
  return value as Row;
}

/** A webhook rule as a dump carries it and loads it: no secret, header values emptied, disabled until its secret is entered again. */
export function secretless(row: Row): Row {
  let headers: Record<string, unknown> = {};
  try {
    headers = JSON.parse(String(row.headers)) ?? {};
  } catch {
    headers = {};
  }
  return {
    ...row,
    secret_sealed: null,
    enabled: 0,
    disabled_reason: "Loaded from a dump: enter the secret again (PATCH the rule) and enable it.",
    headers: JSON.stringify(Object.fromEntries(Object.keys(headers).map((name) => [name, ""]))),
  };
}
