import { join } from "node:path";

/**
 * The admin page's script, bundled from `app/main.ts` for the browser. Imported as a macro, so it
 * runs when the server's code is bundled (`bun build --compile`) and the executable carries the
 * result; run from source, it runs when `routes.ts` is loaded. A macro may not call `Bun.build`,
 * so it runs Bun's own CLI.
 */
export function bundleAdminScript(): string {
  const entry = join(import.meta.dir, "..", "admin", "app", "main.ts");
  const result = Bun.spawnSync([process.execPath, "build", entry, "--target=browser", "--format=esm", "--minify"], { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`The admin page did not bundle:\n${result.stderr.toString()}`);
  return result.stdout.toString();
}
