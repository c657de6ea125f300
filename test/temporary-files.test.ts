import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, REPO } from "./helpers";

test("a test run leaves nothing in the temporary directory, even when a test fails holding a server", () => {
  const temporary = mkdtempSync(join(tmpdir(), "basalt-outer-"));
  try {
    const run = Bun.spawnSync([BUN, "test", "./test/fixtures/fails-with-a-server.ts"], { cwd: REPO, env: { ...process.env, TMPDIR: temporary }, stderr: "pipe" });
    expect(run.exitCode).toBe(1);
    expect(run.stderr.toString()).toContain("1 fail");
    expect(readdirSync(temporary)).toEqual([]);
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
});
