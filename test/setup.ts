import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Preloaded by `bun test` (bunfig.toml): once per run, or once per file under `--parallel` (each
 * file in a fresh global of its worker). Every temporary file lives in that run's or file's folder,
 * removed when it ends, failed tests included. Programs the tests start inherit it as their TMPDIR.
 */
const runDir = mkdtempSync(join(tmpdir(), "basalt-run-"));
process.env.TMPDIR = runDir;
afterAll(() => rmSync(runDir, { recursive: true, force: true }));
