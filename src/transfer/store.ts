import { type Column, getTableName } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { named as n, rawStatement, type ReadStore, type Store } from "../db/client";
import { flushStagedSearch } from "../db/search-index";
import { FIELD_TYPES } from "../shared/field-types";
import { assets, assetTexts } from "../tables/assets";
import { auditEvents } from "../tables/audit";
import { users } from "../tables/auth";
import { CHANGE_STATUSES, changeRequests, COMMENT_SUBJECTS, comments, OPERATION_STATUSES, operations, reviews, VERDICTS } from "../tables/changes";
import { bases, commits, deletedFields, deletedFieldValues, fields, forms, NODE_STATUSES, NODE_TYPES, nodeDocuments, nodeFiles, nodePrincipals, nodes, PRINCIPAL_TYPES, OPERATION_KINDS, recordLinks, records, TARGET_TYPES, VIEW_TYPES, views } from "../tables/content";
import { LEVELS } from "../shared/levels";
import { AUDIT_SOURCES } from "../shared/audit-actions";
import { members, spaces } from "../tables/spaces";
import { webhookRules } from "../tables/webhooks";
import { spacePeople } from "../tables/derived/tables";

/**
 * The dump's raw SQL: a space's rows read and written as SQLite holds them (a dump carries the
 * tables' own rows, by column name), each table and column named from its drizzle declaration.
 */

/** The tables whose ids a row may name (a dump's own, or its users list). */
export type Target = "nodes" | "bases" | "fields" | "views" | "assets" | "records" | "commits" | "change_requests" | "operations" | "users";
const targetOf = (table: SQLiteTable) => getTableName(table) as Target;

export interface DumpTable {
  table: string;
  /**
   * Where the space's rows are: `t` is the table, `?1` the space id. Read in the order of `key`
   * through the table's own key index (`INDEXED BY`), so an export page starts where the last one
   * ended and never sorts the space.
   */
  from: string;
  /** The columns a page is ordered and resumed by (the table's primary key). */
  key: string[];
  /** Each column that names another row, and the table that row must be in (in the same dump). */
  names: Record<string, Target>;
  /** Columns whose value is one of a closed list. */
  oneOf?: Record<string, readonly string[]>;
}

interface Spec {
  /** The column of the row, or of its parent's row (`via`), that holds the space id. */
  space: Column;
  /** The row's column that names its parent, whose `space` column places it. */
  via?: Column;
  /** The key, when it is not `id`; a key without an index of SQLite's own (`WITHOUT ROWID`) is read without `INDEXED BY`. */
  key?: Column[];
  names?: [Column, SQLiteTable][];
  oneOf?: [Column, readonly string[]][];
}

function dumpTable(table: SQLiteTable & { id?: Column }, spec: Spec): DumpTable {
  const name = getTableName(table);
  const indexed = spec.key ? "" : ` INDEXED BY sqlite_autoindex_${name}_1`;
  const key = spec.key ?? [table.id!];
  const parent = spec.space.table as SQLiteTable & { id: Column };
  const placed = spec.via ? ` CROSS JOIN ${n(parent)} p ON p.${n(parent.id)} = t.${n(spec.via)} WHERE p.${n(spec.space)} = ?1` : ` WHERE t.${n(spec.space)} = ?1`;
  return {
    table: name,
    from: `${n(table)} t${spec.space === table.id ? "" : indexed}${placed}`,
    key: key.map((column) => column.name),
    names: Object.fromEntries((spec.names ?? []).map(([column, target]) => [column.name, targetOf(target)])),
    oneOf: spec.oneOf && Object.fromEntries(spec.oneOf.map(([column, values]) => [column.name, values])),
  };
}

/**
 * Each table of a space, in an order that satisfies their references. Webhook rules travel without
 * a secret: the sealed secret is left out and header values emptied, and a loaded rule waits,
 * disabled, for its secret.
 */
export const DUMP_TABLES: DumpTable[] = [
  dumpTable(spaces, { space: spaces.id }),
  dumpTable(nodes, { space: nodes.spaceId, names: [[nodes.parentId, nodes]], oneOf: [[nodes.type, NODE_TYPES], [nodes.status, NODE_STATUSES]] }),
  dumpTable(bases, { space: bases.spaceId, names: [[bases.nodeId, nodes]] }),
  dumpTable(fields, { space: bases.spaceId, via: fields.baseId, names: [[fields.baseId, bases]], oneOf: [[fields.type, FIELD_TYPES]] }),
  dumpTable(deletedFields, { space: bases.spaceId, via: deletedFields.baseId, names: [[deletedFields.baseId, bases]], oneOf: [[deletedFields.type, FIELD_TYPES]] }),
  dumpTable(views, { space: views.spaceId, names: [[views.baseId, bases], [views.createdBy, users]], oneOf: [[views.type, VIEW_TYPES], [views.status, NODE_STATUSES]] }),
  dumpTable(assets, { space: assets.spaceId, names: [[assets.createdBy, users]], oneOf: [[assets.status, ["pending", "ready"]]] }),
  dumpTable(forms, { space: forms.spaceId, names: [[forms.nodeId, nodes], [forms.targetBaseId, bases], [forms.createdBy, users]] }),
  dumpTable(assetTexts, { space: assets.spaceId, via: assetTexts.assetId, key: [assetTexts.assetId], names: [[assetTexts.assetId, assets]], oneOf: [[assetTexts.status, ["present", "none"]]] }),
  dumpTable(nodePrincipals, { space: nodePrincipals.spaceId, names: [[nodePrincipals.nodeId, nodes], [nodePrincipals.grantedBy, users]], oneOf: [[nodePrincipals.principalType, PRINCIPAL_TYPES], [nodePrincipals.role, LEVELS]] }),
  dumpTable(nodeDocuments, { space: nodes.spaceId, via: nodeDocuments.nodeId, key: [nodeDocuments.nodeId], names: [[nodeDocuments.nodeId, nodes]] }),
  dumpTable(nodeFiles, { space: nodes.spaceId, via: nodeFiles.nodeId, key: [nodeFiles.nodeId, nodeFiles.path], names: [[nodeFiles.nodeId, nodes], [nodeFiles.assetId, assets]] }),
  dumpTable(records, { space: records.spaceId, names: [[records.baseId, bases], [records.headCommitId, commits], [records.createdBy, users], [records.updatedBy, users]], oneOf: [[records.status, NODE_STATUSES]] }),
  dumpTable(deletedFieldValues, { space: records.spaceId, via: deletedFieldValues.recordId, key: [deletedFieldValues.fieldId, deletedFieldValues.recordId], names: [[deletedFieldValues.fieldId, fields], [deletedFieldValues.recordId, records]] }),
  dumpTable(commits, {
    space: commits.spaceId,
    names: [[commits.baseId, bases], [commits.nodeId, nodes], [commits.operationId, operations], [commits.recordId, records], [commits.parentCommitId, commits], [commits.authorId, users]],
    oneOf: [[commits.kind, OPERATION_KINDS], [commits.targetType, TARGET_TYPES]],
  }),
  dumpTable(recordLinks, {
    space: recordLinks.spaceId,
    key: [recordLinks.fieldId, recordLinks.sourceRecordId, recordLinks.targetRecordId],
    names: [[recordLinks.fieldId, fields], [recordLinks.sourceRecordId, records], [recordLinks.targetRecordId, records], [recordLinks.baseId, bases], [recordLinks.targetBaseId, bases], [recordLinks.commitId, commits]],
  }),
  dumpTable(changeRequests, { space: changeRequests.spaceId, names: [[changeRequests.baseId, bases], [changeRequests.nodeId, nodes], [changeRequests.submittedBy, users]], oneOf: [[changeRequests.status, CHANGE_STATUSES], [changeRequests.targetType, TARGET_TYPES]] }),
  dumpTable(operations, {
    space: changeRequests.spaceId,
    via: operations.changeRequestId,
    names: [[operations.changeRequestId, changeRequests], [operations.baseId, bases], [operations.nodeId, nodes], [operations.targetRecordId, records], [operations.baseCommitId, commits], [operations.headCommitId, commits], [operations.targetViewId, views]],
    oneOf: [[operations.kind, OPERATION_KINDS], [operations.status, OPERATION_STATUSES], [operations.targetType, TARGET_TYPES]],
  }),
  dumpTable(reviews, { space: changeRequests.spaceId, via: reviews.changeRequestId, names: [[reviews.changeRequestId, changeRequests], [reviews.reviewerId, users]], oneOf: [[reviews.verdict, VERDICTS]] }),
  dumpTable(comments, {
    space: comments.spaceId,
    names: [[comments.recordId, records], [comments.changeRequestId, changeRequests], [comments.operationId, operations], [comments.commitId, commits], [comments.authorId, users]],
    oneOf: [[comments.subjectType, COMMENT_SUBJECTS]],
  }),
  dumpTable(auditEvents, { space: auditEvents.spaceId, names: [[auditEvents.actorId, users], [auditEvents.baseId, bases]], oneOf: [[auditEvents.source, AUDIT_SOURCES]] }),
  dumpTable(webhookRules, { space: webhookRules.spaceId, names: [[webhookRules.baseId, bases], [webhookRules.createdBy, users]] }),
];

/** The dump table of `name`, if a dump carries it. */
export const dumpTableNamed = (name: string): DumpTable | undefined => DUMP_TABLES.find((entry) => entry.table === name);

export type DumpUser = { id: string; email: string; name: string };
type Row = Record<string, unknown>;

/** The columns of the dump's tables that name a person: each is kept in `space_people` by a trigger (migrations/0043). */
export const PERSON_COLUMNS: { table: string; column: string }[] = DUMP_TABLES.flatMap(({ table, names }) => Object.entries(names).filter(([, target]) => target === targetOf(users)).map(([column]) => ({ table, column })));

/**
 * The people who share the space, by id after `after` (null: from the first), at most `limit`
 * (-1: all): its members, and those its rows name as actors (authors, reviewers, creators), as
 * `space_people` keeps them; id, e-mail and name, never a password. Read by the space's key, it
 * costs the space's people, not its rows. Ids in free text (a record's values) are not people of
 * the space, so a value cannot turn any user id into an e-mail.
 */
export const usersNamed = (store: ReadStore, spaceId: string, after: string | null = null, limit = -1): DumpUser[] =>
  rawStatement<DumpUser, [string, string, number]>(store, PEOPLE_OF_SPACE).all(spaceId, after ?? "", limit);

/** `usersNamed`'s statement: ?1 the space, ?2 the id to start after, ?3 the most rows. */
export const PEOPLE_OF_SPACE = `SELECT ${n(users.id)}, ${n(users.email)}, ${n(users.name)} FROM ${n(users)} WHERE ${n(users.id)} IN (${[
  `SELECT ${n(members.userId)} FROM ${n(members)} WHERE ${n(members.spaceId)} = ?1 AND ${n(members.userId)} > ?2`,
  `SELECT ${n(spacePeople.userId)} FROM ${n(spacePeople)} WHERE ${n(spacePeople.spaceId)} = ?1 AND ${n(spacePeople.userId)} > ?2`,
].join(" UNION ")}) ORDER BY ${n(users.id)} LIMIT ?3`;

export const spaceRow = (store: ReadStore, spaceId: string): Row | null => rawStatement<Row, [string]>(store, `SELECT * FROM ${n(spaces)} WHERE ${n(spaces.id)} = ?1`).get(spaceId);

/** Every row of the space in `table`, in key order. */
export const rowsOfSpace = (store: Store, table: DumpTable, spaceId: string): Iterable<Row> => rawStatement<Row, [string]>(store, `SELECT t.* FROM ${table.from}`).iterate(spaceId);

/** A page of the space's rows in `table` after the key `after` (none: from the start). */
export function pageOfSpace(store: ReadStore, table: DumpTable, spaceId: string, after: string[] | null, limit: number): Row[] {
  const columns = table.key.map((column) => `t."${column}"`).join(", ");
  const resume = after === null ? "" : ` AND (${columns}) > (${table.key.map((_, i) => `?${i + 3}`).join(", ")})`;
  return rawStatement<Row, (string | number)[]>(store, `SELECT t.* FROM ${table.from}${resume} ORDER BY ${columns} LIMIT ?2`).all(spaceId, limit, ...(after ?? []));
}

/** The hashes of the files the space's assets hold. */
export const fileHashesOf = (store: Store, spaceId: string): string[] =>
  rawStatement<{ hash: string }, [string]>(store, `SELECT DISTINCT ${n(assets.contentHash)} AS "hash" FROM ${n(assets)} WHERE ${n(assets.spaceId)} = ?1 AND ${n(assets.contentHash)} IS NOT NULL`)
    .all(spaceId)
    .map((row) => row.hash);

export const spaceExists = (store: Store, spaceId: string): boolean => rawStatement(store, `SELECT 1 FROM ${n(spaces)} WHERE ${n(spaces.id)} = ?1`).get(spaceId) !== null;

export const userIdByEmail = (store: Store, email: string): string | undefined => rawStatement<{ id: string }, [string]>(store, `SELECT ${n(users.id)} AS "id" FROM ${n(users)} WHERE ${n(users.email)} = ?1`).get(email)?.id;

/** Whether any space of the instance holds a row of `target` with this id. */
export const rowExists = (store: Store, target: Target, id: string): boolean => rawStatement(store, `SELECT 1 FROM "${target}" WHERE "id" = ?1`).get(id) !== null;

export const userExists = (store: Store, id: string): boolean => rawStatement(store, `SELECT 1 FROM ${n(users)} WHERE ${n(users.id)} = ?1`).get(id) !== null;

const USER_COLUMNS = [users.id, users.email, users.name, users.passwordHash, users.admin, users.banned, users.createdAt, users.updatedAt].map(n).join(", ");

/** An account no one can sign in to (`passwordHash` is a password no one knows), for a person a loaded history names. */
export const insertUser = (store: Store, id: string, email: string, name: string, passwordHash: string, at: string) =>
  void rawStatement(store, `INSERT INTO ${n(users)} (${USER_COLUMNS}) VALUES (?1, ?2, ?3, ?4, 0, 0, ?5, ?5)`).run(id, email, name, passwordHash, at);

/** A checked row of a dump table, inserted as the dump holds it (`columns` are checked against the table's own). */
export function insertDumpRow(store: Store, table: DumpTable, row: Row): void {
  const columns = Object.keys(row);
  rawStatement(store, `INSERT INTO "${table.table}" (${columns.map((column) => `"${column.replace(/"/g, "")}"`).join(", ")}) VALUES (${columns.map((_, i) => `?${i + 1}`).join(", ")})`).run(
    ...(columns.map((column) => row[column]) as never[]),
  );
}

export const rootFolders = (store: Store, spaceId: string): number =>
  rawStatement<{ n: number }, [string]>(store, `SELECT count(*) AS "n" FROM ${n(nodes)} WHERE ${n(nodes.spaceId)} = ?1 AND ${n(nodes.parentId)} IS NULL`).get(spaceId)!.n;

export const removeRootFolder = (store: Store, spaceId: string) => void rawStatement(store, `DELETE FROM ${n(nodes)} WHERE ${n(nodes.spaceId)} = ?1 AND ${n(nodes.parentId)} IS NULL`).run(spaceId);

/** Marks pending the space's assets whose bytes the dump did not bring (`sent`); answers how many. */
export const markUnsentFiles = (store: Store, spaceId: string, sent: string[]): number =>
  rawStatement(
    store,
    `UPDATE ${n(assets)} SET ${n(assets.status)} = 'pending', ${n(assets.contentHash)} = NULL WHERE ${n(assets.spaceId)} = ?1 AND ${n(assets.contentHash)} IS NOT NULL AND ${n(assets.contentHash)} NOT IN (SELECT "value" FROM json_each(?2))`,
  ).run(spaceId, JSON.stringify(sent)).changes;

/** Makes `userId` the space's owner. */
export const makeOwner = (store: Store, spaceId: string, userId: string, at: string) =>
  void rawStatement(store, `INSERT INTO ${n(members)} (${[members.spaceId, members.userId, members.role, members.createdAt].map(n).join(", ")}) VALUES (?1, ?2, 'owner', ?3) ON CONFLICT DO UPDATE SET ${n(members.role)} = 'owner'`).run(spaceId, userId, at);

/** The space row of a loaded dump: its id, name and slug. */
export const insertSpaceRow = (store: Store, spaceId: string, name: string, slug: string, at: string) =>
  void rawStatement(store, `INSERT INTO ${n(spaces)} (${[spaces.id, spaces.name, spaces.slug, spaces.createdAt, spaces.updatedAt].map(n).join(", ")}) VALUES (?1, ?2, ?3, ?4, ?4)`).run(spaceId, name, slug, at);

/** The columns SQLite has for `table`, to check a row before it is kept. */
export const columnsOf = (store: Store, table: string): Set<string> =>
  new Set(rawStatement<{ name: string }, [string]>(store, `SELECT "name" FROM pragma_table_info(?1)`).all(table).map((column) => column.name));

/** What the space holds besides its root folder, by what a person calls it: an import goes into an empty space only. */
export function heldBySpace(store: Store, spaceId: string): Record<string, number> {
  const counted: [string, SQLiteTable & { spaceId: Column }][] = [["nodes", nodes], ["change requests", changeRequests], ["files", assets], ["webhook rules", webhookRules], ["comments", comments]];
  const text = `SELECT ${counted.map(([what, table]) => `(SELECT count(*) FROM ${n(table)} WHERE ${n(table.spaceId)} = ?1) AS "${what}"`).join(", ")}`;
  return rawStatement<Record<string, number>, [string]>(store, text).get(spaceId)!;
}

/**
 * Runs a load (`work`, which may await its files) in one IMMEDIATE transaction of its own: foreign
 * keys are off while rows go in in the dump's order (`brokenReferences` checks them whole), and the
 * search index takes the rows at COMMIT. Anything thrown rolls it all back. The command that loads
 * is its store's only writer.
 */
export async function inLoadTransaction(store: Store, work: () => Promise<void>): Promise<void> {
  const sqlite = store.sqlite;
  sqlite.run("PRAGMA foreign_keys = OFF");
  sqlite.run("BEGIN IMMEDIATE");
  try {
    await work();
    flushStagedSearch(sqlite);
    sqlite.run("COMMIT");
  } catch (error) {
    sqlite.run("ROLLBACK");
    throw error;
  } finally {
    sqlite.run("PRAGMA foreign_keys = ON");
  }
}

/** How many rows name a row that is not there (SQLite's own check of the foreign keys). */
export const brokenReferences = (store: Store): number => store.sqlite.query("PRAGMA foreign_key_check").all().length;
