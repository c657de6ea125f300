/**
 * The floor: a bare Bun.serve + bun:sqlite server doing the same essential work as each Basalt route
 * (hash a key, the same indexed selects, one insert in an immediate transaction), with no
 * framework, validation or logging. Usage:
 * `bun bench/floor.ts <database> <port>`.
 */
import { Database } from "bun:sqlite";

const [path, port] = process.argv.slice(2);
const db = new Database(path);
for (const pragma of ["busy_timeout = 10000", "journal_mode = WAL", "synchronous = NORMAL"]) db.run(`PRAGMA ${pragma}`);
db.run("CREATE TABLE IF NOT EXISTS floor_records (id TEXT PRIMARY KEY, base_id TEXT NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL)");
const keyByHash = db.query("SELECT k.id, k.level, k.expires_at, u.id AS user_id, u.banned FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.hash = ?");
const membership = db.query("SELECT s.id, s.name, s.slug, m.role FROM spaces s JOIN members m ON m.space_id = s.id AND m.user_id = ? WHERE s.id = ? OR s.slug = ?");
const root = db.query("SELECT id FROM nodes WHERE space_id = ? AND parent_id IS NULL");
const nodes = db.query("SELECT * FROM nodes WHERE space_id = ? AND status = 'active' ORDER BY position, id");
const recordById = db.query("SELECT * FROM records WHERE id = ? AND space_id = ?");
const firstPage = db.query("SELECT * FROM records WHERE base_id = ? AND status = 'active' ORDER BY created_at DESC, id DESC LIMIT 51");
const laterPage = db.query("SELECT * FROM records WHERE base_id = ? AND status = 'active' AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT 51");
const insertRecord = db.query("INSERT INTO floor_records (id, base_id, data, created_at) VALUES (?, ?, ?, ?)");
const insertOne = db.transaction((values: [string, string, string, string]) => insertRecord.run(...values));

function authenticate(request: Request) {
  const key = request.headers.get("authorization")!.slice(7);
  return keyByHash.get(Bun.SHA256.hash(key, "hex") as unknown as string) as { user_id: string } | null;
}

Bun.serve({
  port: Number(port),
  hostname: "127.0.0.1",
  async fetch(request) {
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
      const rows = cursor ? laterPage.all(baseId, ...(JSON.parse(Buffer.from(cursor, "base64url").toString()) as [string, string])) : firstPage.all(baseId);
      return Response.json({ records: rows.slice(0, 50), nextCursor: rows.length > 50 ? "more" : null });
    }
    if (pathname.startsWith("/records/")) return Response.json(recordById.get(pathname.slice(9), member.id));
    if (pathname === "/records") {
      const body = (await request.json()) as { fields: Record<string, unknown> };
      const id = `rec_${crypto.randomUUID()}`;
      insertOne([id, "bench", JSON.stringify(body.fields), new Date().toISOString()]);
      return Response.json({ id, fields: body.fields }, { status: 201 });
    }
    const rootNode = root.get(member.id) as { id: string };
    return Response.json(nodes.all(member.id).filter((node) => (node as { parent_id: string }).parent_id === rootNode.id));
  },
});
console.log(`floor listening on ${port}`);
