import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Preloaded once per `bun test` run (bunfig.toml): every temporary file of the run lives in one
 * folder, removed when the run ends, failed tests included. Programs the tests start inherit it
 * as their TMPDIR.
 */
const runDir = mkdtempSync(join(tmpdir(), "basalt-run-"));
process.env.TMPDIR = runDir;
afterAll(() => rmSync(runDir, { recursive: true, force: true }));
