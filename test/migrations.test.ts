import { SEES_ALL } from "../src/spaces/sight";
import { afterAll, describe, expect, test } from "bun:test";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { join } from "node:path";
import { getChangeRequest } from "../src/changes/lifecycle";
import { ManualClock } from "../src/shared/clock";
import { loadConfig } from "../src/shared/config";
import { wire } from "../src/cli/wiring";
import { findBase } from "../src/content/bases";
import { listRecords } from "../src/content/records/list";
import { getRecord, recordHistory } from "../src/content/records/read";
import { closeStore, migrate, openStore } from "../src/db/client";
import { REPO, tempDir } from "./helpers";

// A database as the version before integer timestamps left it: every moment as ISO text.
const OLD_ROWS = [
  "INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES ('usr_a', 'a@example.com', 'Ada', 'x', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
  "INSERT INTO spaces (id, name, slug, created_at, updated_at) VALUES ('spc_a', 'A', 'a', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
  "INSERT INTO nodes (id, space_id, parent_id, type, slug, name, created_at, updated_at) VALUES ('nod_root', 'spc_a', NULL, 'folder', 'root', 'Root', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
  "INSERT INTO nodes (id, space_id, parent_id, type, slug, name, created_at, updated_at) VALUES ('nod_b', 'spc_a', 'nod_root', 'base', 'papers', 'Papers', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
  `INSERT INTO bases (id, space_id, node_id, review_policy, last_auto_number, created_at, updated_at) VALUES ('bse_b', 'spc_a', 'nod_b', '{"kind":"single","requiredApprovals":1}', 2, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
  "INSERT INTO fields (id, base_id, slug, name, type, position, created_at) VALUES ('fld_t', 'bse_b', 'title', 'Title', 'text', 0, '2026-01-01T00:00:00.000Z')",
  "INSERT INTO fields (id, base_id, slug, name, type, position, created_at) VALUES ('fld_c', 'bse_b', 'made', 'Made', 'created_time', 1, '2026-01-01T00:00:00.000Z')",
  `INSERT INTO change_requests (id, space_id, base_id, node_id, target_type, status, submitted_by, source_attribution, source_meta, review_policy_snapshot, merge_summary, reviewed_at, merged_at, created_at, updated_at)
   VALUES ('crq_01M00000000000000001', 'spc_a', 'bse_b', 'nod_b', 'base', 'merged', 'usr_a', '{"displayName":"k","ownerName":"Ada","channel":"api"}', '{}', '{"kind":"single","requiredApprovals":2}', '{}', '2026-02-01T10:00:00.250Z', '2026-02-01T10:00:00.500Z', '2026-02-01T09:00:00.125Z', '2026-02-01T10:00:00.500Z')`,
  `INSERT INTO operations (id, change_request_id, base_id, node_id, target_type, kind, status, target_record_id, head_commit_id, merged_record_id, position, created_at, updated_at)
   VALUES ('opr_1', 'crq_01M00000000000000001', 'bse_b', 'nod_b', 'base', 'record_create', 'merged', 'rec_1', 'cmt_1', 'rec_1', 0, '2026-02-01T09:00:00.125Z', '2026-02-01T10:00:00.500Z')`,
  `INSERT INTO reviews (id, change_request_id, reviewer_id, verdict, visible_operation_heads, created_at) VALUES ('rev_1', 'crq_01M00000000000000001', 'usr_a', 'approved', '{"opr_1":"cmt_1"}', '2026-02-01T10:00:00.250Z')`,
  `INSERT INTO commits (id, space_id, base_id, node_id, operation_id, record_id, author_id, target_type, kind, payload, created_at)
   VALUES ('cmt_1', 'spc_a', 'bse_b', 'nod_b', 'opr_1', 'rec_1', 'usr_a', 'base', 'record_create', NULL, '2026-02-01T09:00:00.125Z')`,
  `INSERT INTO records (id, space_id, base_id, status, data, auto_number, head_commit_id, created_by, updated_by, created_at, updated_at)
   VALUES ('rec_1', 'spc_a', 'bse_b', 'active', '{"title":"First"}', 1, 'cmt_1', 'usr_a', 'usr_a', '2026-02-01T10:00:00.500Z', '2026-02-01T10:00:00.500Z')`,
  `INSERT INTO commits (id, space_id, base_id, node_id, record_id, author_id, target_type, kind, payload, created_at)
   VALUES ('cmt_2', 'spc_a', 'bse_b', 'nod_b', 'rec_2', 'usr_a', 'base', 'record_create', NULL, '2026-03-01T08:30:00.999Z')`,
  `INSERT INTO records (id, space_id, base_id, status, data, auto_number, head_commit_id, created_by, updated_by, created_at, updated_at, archived_at)
   VALUES ('rec_2', 'spc_a', 'bse_b', 'archived', '{"title":"Second"}', 2, 'cmt_2', 'usr_a', 'usr_a', '2026-03-01T08:30:00.999Z', '2026-03-02T00:00:00.001Z', '2026-03-02T00:00:00.001Z')`,
  `INSERT INTO webhook_rules (id, space_id, name, event_type, action_kind, target_url, headers, enabled, created_by, created_at, updated_at)
   VALUES ('whk_1', 'spc_a', 'hook', '*', 'webhook', 'https://hooks.example.com/', '{}', 1, 'usr_a', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
  "INSERT INTO webhook_jobs (id, rule_id, event_seq, attempt, due_at) VALUES ('job_1', 'whk_1', 1, 2, 1767225600000)",
];

describe("migrating a database of an earlier version", () => {
  const dir = tempDir("basalt-migrate-");
  const store = openStore(join(dir, "basalt.db"));
  const all = readMigrationFiles({ migrationsFolder: join(REPO, "migrations") });
  // Up to 0007: the version before integer timestamps (0008) and before field_values (0010).
  migrate(store, all.slice(0, 8));
  for (const row of OLD_ROWS) store.sqlite.run(row);
  // That version kept one index per field, made by the server at start.
  store.sqlite.run(`CREATE INDEX "records_f_fld_t" ON "records" ("status", coalesce(json_extract("data", '$."title"'), ''), "created_at", "id") WHERE "base_id" = 'bse_b'`);
  migrate(store, all);
  const { ctx } = wire(store, loadConfig({ "data-dir": dir }, {}), new ManualClock(), { info() {}, error() {} });
  afterAll(() => closeStore(store));

  test("moments become integers and read back as the same ISO text", () => {
    expect(store.sqlite.query("SELECT typeof(created_at) AS t, created_at AS ms FROM records WHERE id = 'rec_2'").get()).toEqual({ t: "integer", ms: Date.parse("2026-03-01T08:30:00.999Z") });
    const record = getRecord(ctx, "spc_a", "rec_2");
    expect([record.createdAt, record.updatedAt, record.archivedAt, record.fields.made]).toEqual(["2026-03-01T08:30:00.999Z", "2026-03-02T00:00:00.001Z", "2026-03-02T00:00:00.001Z", "2026-03-01T08:30:00.999Z"]);
    expect(recordHistory(ctx, "spc_a", "rec_1", SEES_ALL).map((commit) => [commit.id, commit.createdAt])).toEqual([["cmt_1", "2026-02-01T09:00:00.125Z"]]);
  });

  test("a change request keeps its operations, reviews, attribution, policy and moments: rebuilding its table cascades nothing", () => {
    const cr = getChangeRequest(ctx, "spc_a", SEES_ALL, "crq_01M00000000000000001");
    expect([cr.createdAt, cr.updatedAt, cr.reviewedAt, cr.mergedAt]).toEqual(["2026-02-01T09:00:00.125Z", "2026-02-01T10:00:00.500Z", "2026-02-01T10:00:00.250Z", "2026-02-01T10:00:00.500Z"]);
    expect(cr.operations.map((op) => [op.id, op.createdAt, op.updatedAt, op.headCommit?.payload])).toEqual([["opr_1", "2026-02-01T09:00:00.125Z", "2026-02-01T10:00:00.500Z", { title: "First" }]]);
    expect(cr.reviews.map((review) => review.id)).toEqual(["rev_1"]);
    expect([cr.sourceAttribution, cr.reviewPolicySnapshot, cr.operations[0].mergedRecordId]).toEqual([{ displayName: "k", ownerName: "Ada", channel: "api" }, { kind: "single", requiredApprovals: 2 }, "rec_1"]);
    expect(store.sqlite.query("PRAGMA foreign_key_check").all()).toEqual([]);
    expect(store.sqlite.query("PRAGMA foreign_keys").get()).toEqual({ foreign_keys: 1 });
  });

  test("the fields of the old database are filled into field_values at the upgrade and ready; the old per-field index is gone", () => {
    expect(store.sqlite.query("SELECT id, index_state AS state FROM fields ORDER BY id").all()).toEqual([
      { id: "fld_c", state: "none" },
      { id: "fld_t", state: "ready" },
    ]);
    expect(store.sqlite.query("SELECT field_id, status, value, record_id FROM field_values ORDER BY record_id").all()).toEqual([
      { field_id: "fld_t", status: "active", value: "First", record_id: "rec_1" },
      { field_id: "fld_t", status: "archived", value: "Second", record_id: "rec_2" },
    ]);
    expect(store.sqlite.query("SELECT name FROM sqlite_schema WHERE name GLOB 'records_f_*'").all()).toEqual([]);
    const loaded = findBase(ctx, "spc_a", "papers");
    expect(listRecords(ctx, loaded, { status: "active", filters: [{ fieldSlug: "title", operator: "eq", value: "First" }], limit: 5 }).records.map((r) => r.id)).toEqual(["rec_1"]);
  });

  test("a pending webhook job takes its rule's space, and keeps its attempt and due time", () => {
    expect(store.sqlite.query("SELECT id, rule_id, space_id, attempt, due_at FROM webhook_jobs").all()).toEqual([
      { id: "job_1", rule_id: "whk_1", space_id: "spc_a", attempt: 2, due_at: 1767225600000 },
    ]);
  });

  test("a cursor issued before the upgrade (moments as text) still pages, and filters on a time field read dates", () => {
    const loaded = findBase(ctx, "spc_a", "papers");
    const legacy = Buffer.from(JSON.stringify(["2026-03-01T08:30:00.999Z", "rec_2"])).toString("base64url");
    const page = listRecords(ctx, loaded, { status: "archived", filters: [], limit: 5 });
    expect(page.records.map((r) => r.id)).toEqual(["rec_2"]);
    expect(listRecords(ctx, loaded, { status: "archived", filters: [], limit: 5, cursor: legacy }).records).toEqual([]);
    const after = (value: string) => listRecords(ctx, loaded, { status: "active", filters: [{ fieldSlug: "made", operator: "gte", value }], limit: 5 }).records.map((r) => r.id);
    expect(after("2026-02-01T10:00:00.500Z")).toEqual(["rec_1"]);
    expect(after("2026-02-01T10:00:00.501Z")).toEqual([]);
    expect(after("2026-02")).toEqual(["rec_1"]);
    expect(() => after("last tuesday")).toThrow("must be dates or times");
    const contains = listRecords(ctx, loaded, { status: "active", filters: [{ fieldSlug: "made", operator: "contains", value: "2026-02-01T10:00:00.500" }], limit: 5 });
    expect(contains.records.map((r) => r.id)).toEqual(["rec_1"]);
  });
});

describe("a database a newer version migrated", () => {
  test("is refused with one sentence, and left as it was", () => {
    const dir = tempDir("basalt-newer-");
    const store = openStore(join(dir, "basalt.db"));
    const all = readMigrationFiles({ migrationsFolder: join(REPO, "migrations") });
    migrate(store, all);
    const later = Math.max(...all.map((migration) => migration.folderMillis)) + 86_400_000;
    store.sqlite.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-a-later-version', ?)", [later]);
    const count = () => store.sqlite.query("SELECT count(*) AS n FROM __drizzle_migrations").get();
    const before = count();
    expect(() => migrate(store, all)).toThrow(`This database was migrated by a newer version of Basalt (a migration of ${new Date(later).toISOString().slice(0, 10)} that this one does not know)`);
    expect(count()).toEqual(before);
    store.sqlite.close();
  });
});

describe("starting on a database already migrated", () => {
  test("reads no table for the migrations' foreign key check: only a start that applies migrations checks what they may have broken", async () => {
    const dir = tempDir("basalt-migrated-");
    const store = openStore(join(dir, "basalt.db"));
    try {
      const all = readMigrationFiles({ migrationsFolder: join(REPO, "migrations") });
      migrate(store, all.slice(0, -1));
      // A row whose foreign key points nowhere, which only a tool with foreign keys off could write.
      store.sqlite.run("PRAGMA foreign_keys = OFF");
      store.sqlite.run("INSERT INTO nodes (id, space_id, parent_id, type, slug, name, created_at, updated_at) VALUES ('nod_lost', 'spc_none', NULL, 'folder', 'lost', 'Lost', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')");
      store.sqlite.run("PRAGMA foreign_keys = ON");
      expect(migrate(store, all.slice(0, -1))).toBe(0);
      expect(() => migrate(store, all)).toThrow("the migrations left 1 rows whose foreign keys point nowhere");
    } finally {
      await closeStore(store);
    }
  });
});
