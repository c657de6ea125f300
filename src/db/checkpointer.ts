/**
 * A worker thread that keeps the WAL short with checkpoints on its own connection, so the fsync a
 * checkpoint ends with never blocks the server's event loop (measured on this project's machines:
 * 300–480 ms pauses of every request and delivery, once every few seconds under 500 writes/s, when
 * SQLite checkpointed inside a COMMIT). Started by `serve` (see `startCheckpointer`), which turns
 * automatic checkpoints off on its own connection.
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

const INTERVAL_MS = 250;
/**
 * A passive checkpoint never waits for or blocks writers, but under steady writes a commit always
 * lands while it runs, so no write ever starts on a fully copied log, which is when SQLite rewinds
 * it: the WAL grew without bound (~390 MB after 7 s of 500 creates/s). Past 64 MiB of 4 KiB pages
 * (the store's journal_size_limit) a RESTART checkpoint holds writers back for the last short copy
 * (3–11 ms measured), so the next write rewinds the log.
 */
const REWIND_FRAMES = 16_384;
/** How long a RESTART may wait for readers and the writer before it gives up until the next turn. */
const RESTART_WAIT_MS = 100;

self.onmessage = ({ data }: MessageEvent<{ path: string }>) => {
  const db = new Database(data.path);
  db.run(`PRAGMA busy_timeout = ${RESTART_WAIT_MS}`);
  const checkpoint = db.query<{ busy: number; log: number; checkpointed: number }, []>("PRAGMA wal_checkpoint(PASSIVE)");
  const restart = db.query("PRAGMA wal_checkpoint(RESTART)");
  const timer = setInterval(() => {
    try {
      const { log } = checkpoint.get() ?? { log: 0 };
      if (log > REWIND_FRAMES) restart.get();
    } catch (error) {
      postMessage({ error: error instanceof Error ? error.message : String(error) });
    }
  }, INTERVAL_MS);
  self.addEventListener("close", () => {
    clearInterval(timer);
    db.close();
  });
};
