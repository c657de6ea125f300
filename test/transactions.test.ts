import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../src/shared/clock";
import { loadConfig } from "../src/shared/config";
import type { AppContext, Tx } from "../src/context";
import { wire } from "../src/cli/wiring";
import { closeStore, migrate, openStore } from "../src/db/client";
import { CommittedCache } from "../src/db/caches";
import { write } from "../src/db/tx";
import { WriteQueue } from "../src/db/write-queue";
import { recordEvent } from "../src/events/outbox";
import { users } from "../src/tables/auth";

/** The write queue against a bare database: each way the old one could be misused (issue 8). */
describe("the write queue", () => {
  let db: Database;
  let queue: WriteQueue;
  const rows = () => (db.query("SELECT x FROM t ORDER BY rowid").all() as { x: string }[]).map((row) => row.x);
  const insert = (x: string) => () => void db.run("INSERT INTO t (x) VALUES (?)", [x]);

  beforeEach(() => {
    db = new Database(":memory:");
    db.run("CREATE TABLE t (x TEXT NOT NULL)");
    queue = new WriteQueue(db);
  });
  afterEach(() => db.close());

  test("writes of one turn share a transaction, yet each succeeds or fails on its own", async () => {
    const outcomes = await Promise.allSettled([
      queue.write(insert("a")),
      queue.write(() => {
        insert("b")();
        throw new Error("refused");
      }),
      queue.write(insert("c")),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(rows()).toEqual(["a", "c"]);
  });

  test("a write that aborts the whole transaction (disk full) gets its real error; the rest of its batch runs again and succeeds", async () => {
    db.run("PRAGMA max_page_count = 4");
    const outcomes = await Promise.allSettled([queue.write(insert("before")), queue.write(insert("x".repeat(100_000))), queue.write(insert("after"))]);
    expect(outcomes[0].status).toBe("fulfilled");
    expect(outcomes[2].status).toBe("fulfilled");
    const failure = outcomes[1] as PromiseRejectedResult;
    expect((failure.reason as { code?: string }).code).toBe("SQLITE_FULL");
    expect(rows()).toEqual(["before", "after"]);
    expect(db.inTransaction).toBe(false);
  });

  test("a COMMIT that fails runs each write of the batch on its own, so only the guilty one fails", async () => {
    db.run("PRAGMA foreign_keys = ON");
    db.run("CREATE TABLE parent (id TEXT PRIMARY KEY)");
    db.run("CREATE TABLE child (parent_id TEXT REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)");
    const outcomes = await Promise.allSettled([
      queue.write(insert("first")),
      queue.write(() => void db.run("INSERT INTO child VALUES ('nobody')")),
      queue.write(insert("last")),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain("FOREIGN KEY");
    expect(rows()).toEqual(["first", "last"]);
  });

  test("work that returns a promise or a query builder is refused by its type and at run time, and rolls back", async () => {
    const thenable = { then: () => insert("late")() };
    // @ts-expect-error — an async write would commit what follows its first await outside the transaction.
    const asyncWrite = queue.write(async () => insert("early")());
    // @ts-expect-error — a builder is a thenable: it would run after COMMIT.
    const builder = queue.write(() => thenable);
    for (const outcome of await Promise.allSettled([asyncWrite, builder])) {
      expect(String((outcome as PromiseRejectedResult).reason)).toContain("must finish synchronously");
    }
    expect(rows()).toEqual([]);
  });

  test("a write started inside another joins it: it commits with it, and rolls back with it", async () => {
    let joined: Promise<unknown> | undefined;
    await queue.write(() => {
      insert("outer")();
      joined = queue.write(insert("inner"));
    });
    await joined;
    expect(rows()).toEqual(["outer", "inner"]);

    let failedInner: Promise<unknown> | undefined;
    const failed = queue.write(() => {
      failedInner = queue.write(insert("inner 2"));
      throw new Error("outer fails after the inner write");
    });
    await expect(failed).rejects.toThrow("outer fails");
    await expect(failedInner!).rejects.toThrow("outer fails");
    expect(rows()).toEqual(["outer", "inner"]);
  });

  test("afterCommit runs once the write is committed, never when it rolls back", async () => {
    const ran: string[] = [];
    await queue.write((scope) => {
      scope.afterCommit(() => ran.push(`committed, in a transaction: ${db.inTransaction}`));
      insert("a")();
    });
    await queue.write((scope) => {
      scope.afterCommit(() => ran.push("rolled back"));
      throw new Error("no");
    }).catch(() => undefined);
    expect(ran).toEqual(["committed, in a transaction: false"]);
  });

  test("drain waits for every queued write", async () => {
    for (let i = 0; i < 300; i++) void queue.write(insert(String(i)));
    await queue.drain();
    expect(rows()).toHaveLength(300);
  });
});

describe("writes through the context", () => {
  let ctx: AppContext;
  let clock: ManualClock;
  const context = () => {
    const store = openStore(":memory:");
    migrate(store);
    clock = new ManualClock(Date.parse("2026-11-21T12:00:00.000Z"));
    return wire(store, loadConfig({ "data-dir": "/tmp/unused" }, {}), clock, { info() {}, error() {} }).ctx;
  };
  beforeEach(() => (ctx = context()));
  afterEach(() => ctx.store.sqlite.close());

  const userRow = (id: string) => ({ id, email: `${id}@example.com`, name: id, passwordHash: "x", admin: false, banned: false, createdAt: "t", updatedAt: "t" });

  test("the handle of a finished write refuses further use, so an async continuation cannot write in autocommit", async () => {
    let kept: Tx | undefined;
    await write(ctx, (tx) => {
      kept = tx;
      tx.db.insert(users).values(userRow("usr_a")).run();
    });
    expect(() => kept!.db.insert(users).values(userRow("usr_b")).run()).toThrow("already finished");
    expect(ctx.store.sqlite.query("SELECT id FROM users").all()).toEqual([{ id: "usr_a" }]);
  });

  test("a rolled-back write leaves every cache as it was; a committed one empties it; in between it is not read", async () => {
    const cache = new CommittedCache<string, string>(ctx.store.writes, 10);
    cache.set("k", "before");
    await write(ctx, (tx) => {
      cache.invalidate(tx);
      expect(cache.get("k")).toBeUndefined();
      cache.set("k", "uncommitted");
      throw new Error("rolled back");
    }).catch(() => undefined);
    expect(cache.get("k")).toBe("before");
    await write(ctx, (tx) => cache.invalidate(tx));
    expect(cache.get("k")).toBeUndefined();
  });

  test("an event written just before the clock steps back is still read before the next one, in seq order", async () => {
    const origin = (at: number) => ({ spaceId: "spc_gone", baseId: null, at: new Date(at).toISOString() });
    await write(ctx, (tx) => recordEvent(tx, "change_request.created", origin(clock.now()), { changeRequestId: "crq_1", operationCount: 1, submittedBy: "usr_1" }));
    clock.advance(-3_600_000);
    await write(ctx, (tx) => recordEvent(tx, "change_request.created", origin(clock.now()), { changeRequestId: "crq_2", operationCount: 1, submittedBy: "usr_1" }));
    const read = ctx.store.sqlite.query("SELECT seq, id, json_extract(data, '$.changeRequestId') AS cr FROM events ORDER BY seq").all() as { seq: number; id: string; cr: string }[];
    expect(read.map((row) => row.cr)).toEqual(["crq_1", "crq_2"]);
    expect(read[1].seq).toBeGreaterThan(read[0].seq);
  });

  test("closing the store lets every queued write settle first", async () => {
    const closing = context();
    const pending = write(closing, (tx) => tx.db.insert(users).values(userRow("usr_last")).run());
    await closeStore(closing.store);
    await expect(pending).resolves.toBeDefined();
  });
});

describe("a full disk, through HTTP", () => {
  test("writes answer a clean 507 envelope and change nothing; once space is freed they work again", async () => {
    const { freshWorkspace, createBase } = await import("./helpers");
    const { server, ws } = await freshWorkspace();
    try {
      await createBase(server, ws.write);
      const sqlite = server.ctx.store.sqlite;
      const pages = (sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
      sqlite.run(`PRAGMA max_page_count = ${pages + 2}`);
      const count = async () => (await server.call("GET", "/api/v1/records/count?baseId=papers", { key: ws.read })).body.total;
      let full: { status: number; body: { code: string; error: string } } | undefined;
      const before = await count();
      let written = 0;
      for (let i = 0; i < 200 && !full; i++) {
        const reply = await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "x".repeat(3000) } } });
        if (reply.status === 507) full = reply;
        else if (reply.status === 201) written++;
        else throw new Error(`unexpected ${reply.status} ${reply.text}`);
      }
      expect(full?.body.code).toBe("INSUFFICIENT_STORAGE");
      expect(full?.body.error).not.toContain("SQLITE");
      expect(await count()).toBe(before + written);
      expect(sqlite.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      sqlite.run("PRAGMA max_page_count = 1073741823");
      expect((await server.call("POST", "/api/v1/bases/papers/change-requests", { key: ws.write, body: { fields: { title: "after" } } })).status).toBe(201);
    } finally {
      await server.stop();
    }
  });
});
