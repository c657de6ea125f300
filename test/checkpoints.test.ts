import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { closeStore, openStore, startCheckpointer } from "../src/db/client";
import { tempDir } from "./helpers";

const MiB = 1024 * 1024;

/**
 * `serve` checkpoints from a worker thread. Under writes that never pause, a passive checkpoint
 * alone never lets SQLite rewind the WAL, and the file grows with every byte written.
 */
test("under writes that never pause, the WAL is rewound and stays near its 64 MiB limit", async () => {
  const path = join(tempDir(), "basalt.db");
  const store = openStore(path);
  store.sqlite.run("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)");
  const errors: string[] = [];
  const checkpoints = startCheckpointer(store, path, { error: (line) => errors.push(line) });
  const replace = store.sqlite.prepare("INSERT OR REPLACE INTO blobs (id, data) VALUES (?, ?)");
  const blob = new Uint8Array(256 * 1024).fill(7);
  let largestWal = 0;
  // 256 MiB through the WAL over a few seconds, rewriting the same 1 MiB of rows.
  for (let i = 0; i < 1024; i++) {
    replace.run(i % 4, blob);
    if (i % 4 === 3) {
      largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
      await Bun.sleep(2);
    }
  }
  checkpoints.stop();
  await closeStore(store);
  expect(errors).toEqual([]);
  expect(largestWal).toBeGreaterThan(64 * MiB);
  expect(largestWal).toBeLessThan(192 * MiB);
});
