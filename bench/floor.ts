/**
 * The floor: a bare Bun.serve + bun:sqlite server doing the same essential work as each Basalt route
 * (hash a key, the same indexed selects, the same rows written with the same group commit, the
 * same JSON written back), with no framework, validation or logging. Usage:
 * `bun bench/floor.ts <database> <port>`; `floorHandler` is the same work without the server, for
 * measuring in process (bench/handle.ts).
 */
import { Database } from "bun:sqlite";

/** The floor's request handler over the database at `path`. */
export function floorHandler(path: string): (request: Request) => Promise<Response> {
  const db = new Database(path);
  for (const pragma of ["busy_timeout = 10000", "journal_mode = WAL", "synchronous = NORMAL"]) db.run(`PRAGMA ${pragma}`);
  const keyByHash = db.query("SELECT k.id, k.level, k.expires_at, u.id AS user_id, u.banned FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.hash = ?");
  const membership = db.query("SELECT s.id, s.name, s.slug, m.role FROM spaces s JOIN members m ON m.space_id = s.id AND m.user_id = ? WHERE s.id = ? OR s.slug = ?");
  const root = db.query("SELECT id FROM nodes WHERE space_id = ? AND parent_id IS NULL");
  const nodes = db.query("SELECT * FROM nodes WHERE space_id = ? AND status = 'active' ORDER BY position, id");
  const recordById = db.query("SELECT * FROM records WHERE id = ? AND space_id = ?");
  const firstPage = db.query("SELECT * FROM records WHERE base_id = ? AND status = 'active' ORDER BY created_at DESC, id DESC LIMIT 51");
  const laterPage = db.query("SELECT * FROM records WHERE base_id = ? AND status = 'active' AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT 51");
  const heads = db.query(
    "SELECT c.id, c.base_id, c.node_id, c.operation_id, c.parent_commit_id, c.message, c.author_id, c.target_type, c.kind, c.created_at, u.name, u.email FROM commits c LEFT JOIN users u ON u.id = c.author_id WHERE c.id IN (SELECT value FROM json_each(?))",
  );
  // A view's page: the view's field walked in its index (`field_values`) from the top down, to the filter's bound, then each row.
  const viewPage = db.query(
    "SELECT r.* FROM field_values v JOIN records r ON r.id = v.record_id WHERE v.field_id = ? AND v.status = 'active' AND v.value >= ? ORDER BY v.value DESC, v.created_at DESC, v.record_id DESC LIMIT 51",
  );
  const baseOf = db.query("SELECT b.id, b.space_id, b.node_id FROM bases b JOIN nodes n ON n.id = b.node_id WHERE n.slug = ? OR b.id = ?");
  const fieldsOf = db.query("SELECT * FROM fields WHERE base_id = ? ORDER BY position");
  const baseRow = db.query("SELECT b.id, b.node_id, b.review_policy, b.created_at, b.updated_at, n.slug, n.name, n.description FROM bases b JOIN nodes n ON n.id = b.node_id WHERE b.id = ?");

  type Row = Record<string, unknown>;

  /** A base's view and field slugs, read once: the bench never changes a base (Basalt caches it too, until a write changes it). */
  const baseViews = new Map<string, { slugs: string[]; base: Row }>();
  function baseViewOf(baseId: string) {
    let cached = baseViews.get(baseId);
    if (cached) return cached;
    const fieldRows = fieldsOf.all(baseId) as Row[];
    const b = baseRow.get(baseId) as Row;
    const base = {
      id: b.id,
      nodeId: b.node_id,
      slug: b.slug,
      name: b.name,
      description: b.description,
      reviewPolicy: JSON.parse(b.review_policy as string),
      createdAt: b.created_at,
      updatedAt: b.updated_at,
      fields: fieldRows.map((f) => ({ id: f.id, baseId: f.base_id, slug: f.slug, name: f.name, type: f.type, required: f.required === 1, position: f.position, options: JSON.parse(f.options as string) })),
    };
    baseViews.set(baseId, (cached = { slugs: fieldRows.map((f) => f.slug as string), base }));
    return cached;
  }

  /** Moments are stored as milliseconds, as Basalt stores them, and written as ISO text. */
  const isoOf = (ms: unknown) => new Date(ms as number).toISOString();

  /** A page of records as the API writes it: every field of the base, and the head commit with its author. */
  function listPage(baseId: string, rows: Row[]) {
    const { slugs, base } = baseViewOf(baseId);
    const byId = new Map((heads.all(JSON.stringify(rows.map((r) => r.head_commit_id))) as Row[]).map((h) => [h.id, h]));
    return rows.map((row) => {
      const data = JSON.parse(row.data as string) as Row;
      const fields: Row = {};
      for (const slug of slugs) fields[slug] = data[slug] ?? null;
      const h = byId.get(row.head_commit_id)!;
      return {
        id: row.id,
        baseId: row.base_id,
        status: row.status,
        fields,
        headCommitId: row.head_commit_id,
        createdBy: row.created_by,
        createdAt: isoOf(row.created_at),
        updatedAt: isoOf(row.updated_at),
        archivedAt: row.archived_at === null ? null : isoOf(row.archived_at),
        headCommit: {
          id: h.id,
          baseId: h.base_id,
          nodeId: h.node_id,
          operationId: h.operation_id,
          parentCommitId: h.parent_commit_id,
          message: h.message ?? "",
          author: h.author_id,
          targetType: h.target_type,
          operation: h.kind,
          payload: fields,
          authorUser: h.name ? { id: h.author_id, name: h.name, email: h.email, image: null } : null,
          createdAt: isoOf(h.created_at),
        },
        parentRecordId: null,
        parentCommitId: h.parent_commit_id,
        base,
      };
    });
  }

  // A direct create writes what Basalt's does: its commit (which stands for its change request and
  // operation, with their attribution and review policy), the record, the base's auto number, three
  // events and the commit's place in the merge log, grouped into one transaction per turn.
  const insert = {
    commit: db.query(
      "INSERT INTO commits (id, space_id, base_id, node_id, operation_id, record_id, author_id, target_type, kind, payload, source_attribution, review_policy_snapshot, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'base', 'record_create', NULL, ?, 1, ?)",
    ),
    autoNumber: db.query("UPDATE bases SET last_auto_number = last_auto_number + 1 WHERE id = ? RETURNING last_auto_number"),
    record: db.query("INSERT INTO records (id, space_id, base_id, status, data, auto_number, head_commit_id, created_by, updated_by, created_at, updated_at) VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?)"),
    event: db.query("INSERT INTO events (id, space_id, base_id, type, data, created_at) VALUES (?, ?, ?, ?, ?, ?)"),
    merged: db.query("INSERT INTO merge_log (space_id, commit_id, change_request_id) VALUES (?, ?, ?)"),
  };
  // What its inserts leave for Basalt's server on the same data to do, taken back in the floor's own
  // transaction: the search staging rows of its records (Basalt's next write would index them all)
  // and its events (Basalt's delivery loop would read and drop them, as it drops its own that no
  // rule wants). Left, 25,000 floor creates cost Basalt's next write 650 ms (docs/performance.md,
  // fourth round of the create).
  const lastSeq = db.query("SELECT coalesce(max(seq), 0) AS seq FROM events");
  const leftBehind = {
    staged: db.query('DELETE FROM "record_search_staged"'),
    events: db.query("DELETE FROM events WHERE seq > ?"),
  };
  // Ids as long as Basalt's, unique across runs on the same data (bench/handle.ts may reuse it).
  let counter = 0;
  const run = Date.now().toString(36);
  const id = (prefix: string) => `${prefix}_${run}${(++counter).toString(36).padStart(10, "0")}`;

  function createRecord(base: { id: string; space_id: string; node_id: string }, userId: string, values: Row) {
    const now = Date.now();
    const at = isoOf(now);
    const [cr, op, rec, commit] = [id("crq"), id("opr"), id("rec"), id("cmt")];
    const payload = JSON.stringify(values);
    const { last_auto_number } = insert.autoNumber.get(base.id) as { last_auto_number: number };
    insert.commit.run(commit, base.space_id, base.id, base.node_id, op, rec, userId, JSON.stringify(["bench", "Bench", "api"]), now);
    insert.record.run(rec, base.space_id, base.id, payload, last_auto_number, commit, userId, userId, now, now);
    const record = { id: rec, baseId: base.id, status: "active", fields: values, headCommitId: commit, createdBy: userId, createdAt: at, updatedAt: at, archivedAt: null };
    insert.event.run(id("evt"), base.space_id, base.id, "change_request.created", JSON.stringify({ changeRequestId: cr, operationCount: 1, submittedBy: userId }), at);
    insert.event.run(id("evt"), base.space_id, base.id, "record.created", JSON.stringify({ record, changeRequestId: cr }), at);
    insert.event.run(id("evt"), base.space_id, base.id, "change_request.merged", JSON.stringify({ changeRequestId: cr, recordIds: [rec] }), at);
    insert.merged.run(base.space_id, commit, cr);
    return record;
  }

  let papers: { id: string; space_id: string; node_id: string } | undefined;

  /** Group commit: the creates of one event-loop turn share a transaction, each in a savepoint, answered after COMMIT. */
  let pending: { run: () => unknown; resolve: (value: unknown) => void }[] = [];
  function grouped<T>(run: () => T): Promise<T> {
    return new Promise((resolve) => {
      if (pending.push({ run, resolve: resolve as (value: unknown) => void }) === 1) {
        setImmediate(() => {
          const batch = pending;
          pending = [];
          db.run("BEGIN IMMEDIATE");
          const { seq } = lastSeq.get() as { seq: number };
          const values = batch.map((item) => {
            db.run("SAVEPOINT w");
            const value = item.run();
            db.run("RELEASE w");
            return value;
          });
          leftBehind.staged.run();
          leftBehind.events.run(seq);
          db.run("COMMIT");
          batch.forEach((item, i) => item.resolve(values[i]));
        });
      }
    });
  }

  function authenticate(request: Request) {
    const key = request.headers.get("authorization")!.slice(7);
    return keyByHash.get(Bun.SHA256.hash(key, "hex") as unknown as string) as { user_id: string } | null;
  }

  return async function fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/health") return Response.json({ status: "ok", version: "floor" });
    const key = authenticate(request);
    if (!key) return Response.json({ error: "unauthorized" }, { status: 401 });
    if (pathname === "/auth") return Response.json(key);
    const space = request.headers.get("x-basalt-space")!;
    const member = membership.get(key.user_id, space, space) as { id: string } | null;
    if (!member) return Response.json({ error: "forbidden" }, { status: 403 });
    if (pathname === "/list") {
      const query = new URL(request.url).searchParams;
      const cursor = query.get("cursor");
      const baseId = query.get("baseId")!;
      const rows = (cursor ? laterPage.all(baseId, ...(JSON.parse(Buffer.from(cursor, "base64url").toString()) as [string, string])) : firstPage.all(baseId)) as Row[];
      const page = rows.slice(0, 50);
      const last = page.at(-1);
      return Response.json({ records: listPage(baseId, page), nextCursor: rows.length > 50 && last ? Buffer.from(JSON.stringify([last.created_at, last.id])).toString("base64url") : null });
    }
    if (pathname === "/view") {
      const query = new URL(request.url).searchParams;
      const baseId = query.get("baseId")!;
      const rows = viewPage.all(query.get("fieldId")!, Number(query.get("min"))) as Row[];
      const page = rows.slice(0, 50);
      const last = page.at(-1);
      return Response.json({ records: listPage(baseId, page), nextCursor: rows.length > 50 && last ? Buffer.from(JSON.stringify([last.created_at, last.id])).toString("base64url") : null });
    }
    if (pathname.startsWith("/records/")) {
      const row = recordById.get(pathname.slice(9), member.id) as Row | null;
      // The same view as a page's records: every field, the head commit with its author, the base.
      return row ? Response.json(listPage(row.base_id as string, [row])[0]) : Response.json({ error: "not found" }, { status: 404 });
    }
    if (pathname === "/records") {
      const body = (await request.json()) as { fields: Row };
      papers ??= baseOf.get("papers", "papers") as { id: string; space_id: string; node_id: string };
      const base = papers;
      return Response.json(await grouped(() => createRecord(base, key.user_id, body.fields)), { status: 201 });
    }
    const rootNode = root.get(member.id) as { id: string };
    return Response.json(nodes.all(member.id).filter((node) => (node as { parent_id: string }).parent_id === rootNode.id));
  };
}

if (import.meta.main) {
  const [path, port] = process.argv.slice(2);
  Bun.serve({ port: Number(port), hostname: "127.0.0.1", fetch: floorHandler(path) });
  console.log(`floor listening on ${port}`);
}
