/**
 * A worker thread that keeps the WAL short with passive checkpoints on its own connection, so the
 * fsync a checkpoint ends with never blocks the server's event loop (measured on this project's
 * machines: 300–480 ms pauses of every request and delivery, once every few seconds under 500
 * writes/s, when SQLite checkpointed inside a COMMIT). Started by `serve` (see `startCheckpointer`),
 * which turns automatic checkpoints off on its own connection. A passive checkpoint never waits for
 * and never blocks writers.
 */
import { Database } from "bun:sqlite";

declare const self: Worker;

const INTERVAL_MS = 250;

self.onmessage = ({ data }: MessageEvent<{ path: string }>) => {
  const db = new Database(data.path);
  db.run("PRAGMA busy_timeout = 10000");
  const timer = setInterval(() => {
    try {
      db.run("PRAGMA wal_checkpoint(PASSIVE)");
    } catch (error) {
      postMessage({ error: error instanceof Error ? error.message : String(error) });
    }
  }, INTERVAL_MS);
  self.addEventListener("close", () => {
    clearInterval(timer);
    db.close();
  });
};
