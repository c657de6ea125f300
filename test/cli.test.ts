import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isWellFormedKey } from "../src/auth/key-format";
import { VERSION } from "../src/shared/version";
import { BUN, REPO, tempDir } from "./helpers";

const dir = tempDir("basalt-cli-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function basalt(...args: string[]) {
  const result = Bun.spawnSync([BUN, join(REPO, "src/main.ts"), ...args, ...(args[0]?.startsWith("-") || args[0] === "version" ? [] : ["--data-dir", dir])], {
    env: { ...process.env, BASALT_DATA_DIR: undefined },
  });
  return { code: result.exitCode, out: result.stdout.toString(), err: result.stderr.toString() };
}

describe("basalt command line", () => {
  test("--help lists every command; version prints the health version", () => {
    const help = basalt("--help");
    expect(help.code).toBe(0);
    for (const command of ["serve", "users create", "users list", "keys create", "keys list", "spaces create", "spaces list", "migrate", "backup", "export", "version"]) {
      expect(help.out).toContain(command);
    }
    expect(basalt("version").out.trim()).toBe(VERSION);
    expect(basalt("--version").out.trim()).toBe(VERSION);
  });

  test("users create and list; a duplicate e-mail fails with one sentence", () => {
    const created = basalt("users", "create", "--email", "ada@example.com", "--name", "Ada", "--password", "correct horse", "--admin");
    expect(created.code).toBe(0);
    expect(created.out).toContain("ada@example.com");
    const duplicate = basalt("users", "create", "--email", "ada@example.com", "--name", "Ada", "--password", "correct horse");
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.err.trim()).toBe("basalt: A user with the e-mail ada@example.com already exists.");
    const list = basalt("users", "list");
    expect(list.out).toContain("ada@example.com");
    expect(list.out).toMatch(/true/);
  });

  test("keys create prints the value once; keys list never shows it", () => {
    const created = basalt("keys", "create", "--email", "ada@example.com", "--name", "ci", "--level", "write", "--expires", "90d");
    expect(created.code).toBe(0);
    const value = created.out.trim();
    expect(isWellFormedKey(value)).toBe(true);
    const list = basalt("keys", "list", "--email", "ada@example.com");
    expect(list.out).toContain(value.slice(0, 12));
    expect(list.out).not.toContain(value);
    expect(basalt("keys", "create", "--email", "ada@example.com", "--name", "x", "--level", "root").err).toContain("--level must be one of");
    expect(basalt("keys", "create", "--email", "nobody@example.com", "--name", "x", "--level", "read").err).toContain("No user has the e-mail");
  });

  test("spaces create and list", () => {
    expect(basalt("spaces", "create", "--name", "Research", "--owner", "ada@example.com").code).toBe(0);
    const list = basalt("spaces", "list");
    expect(list.out).toContain("research");
    expect(list.out).toContain("ada@example.com");
  });

  test("migrate reports an up-to-date database", () => {
    expect(basalt("migrate").out).toContain("up to date");
  });

  test("backup writes a plain SQLite copy and refuses to overwrite", () => {
    const out = join(dir, "copy.db");
    expect(basalt("backup", "--out", out).code).toBe(0);
    const copy = new Database(out, { readonly: true });
    expect(copy.query("SELECT email FROM users").all()).toEqual([{ email: "ada@example.com" }]);
    copy.close();
    const again = basalt("backup", "--out", out);
    expect(again.code).not.toBe(0);
    expect(again.err).toContain("already exists");
  });

  test("backup never writes through a link planted at --out, and its file is 0600 whatever the umask", () => {
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "someone else's file");
    const planted = join(dir, "planted.db");
    symlinkSync(victim, planted);
    const refused = basalt("backup", "--out", planted);
    expect([refused.code, refused.err.trim()]).toEqual([1, `basalt: ${planted} already exists; choose a new file.`]);
    expect(readFileSync(victim, "utf8")).toBe("someone else's file");
    const dangling = join(dir, "dangling.db");
    symlinkSync(join(dir, "nowhere.db"), dangling);
    expect(basalt("backup", "--out", dangling).code).toBe(1);
    expect(existsSync(join(dir, "nowhere.db"))).toBe(false);
    const previous = process.umask(0o000);
    try {
      expect(basalt("backup", "--out", join(dir, "open-umask.db")).code).toBe(0);
    } finally {
      process.umask(previous);
    }
    expect(statSync(join(dir, "open-umask.db")).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((name) => name.endsWith(".partial"))).toEqual([]);
  });

  test("restore keeps the replaced database 0600, and every file a command leaves in the data directory is 0600", () => {
    const previous = process.umask(0o000);
    try {
      expect(basalt("restore", "--from", join(dir, "copy.db")).code).toBe(0);
      expect(basalt("users", "list").code).toBe(0);
    } finally {
      process.umask(previous);
    }
    const files = readdirSync(dir).filter((name) => name.startsWith("basalt.db"));
    expect(files.some((name) => name.includes("before-restore"))).toBe(true);
    for (const name of files) expect([name, statSync(join(dir, name)).mode & 0o777]).toEqual([name, 0o600]);
  });

  test("mistakes are one clear sentence on stderr and a non-zero exit", () => {
    for (const [args, message] of [
      [["frobnicate"], 'Unknown command "frobnicate"'],
      [["users", "create", "--name", "X"], "The option --email is required."],
      [["users", "list", "--bogus"], "Unknown option '--bogus'"],
      [["serve", "--port", "http"], '"http" is not a port number'],
      [["serve", "--max-body", "lots"], '"lots" is not a size'],
      [["serve", "--host", "999.1.1.1"], '"999.1.1.1" is not an address or host name to listen on'],
      [["serve", "--public-url", "ftp://files.example"], 'The public URL "ftp://files.example" must be an http:// or https:// URL'],
      [["backup", "--out", "/nonexistent/folder/copy.db"], "There is no directory /nonexistent/folder to write copy.db in."],
    ] as const) {
      const result = basalt(...args);
      expect(result.code).not.toBe(0);
      expect(result.err).toContain(message);
      expect(result.err.trim().split("\n")).toHaveLength(1);
    }
    const notADirectory = Bun.spawnSync([BUN, join(REPO, "src/main.ts"), "users", "list", "--data-dir", join(REPO, "package.json")]);
    expect([notADirectory.exitCode, notADirectory.stderr.toString().trim()]).toEqual([1, `basalt: ${join(REPO, "package.json")} is a file; a directory is needed there (--data-dir).`]);
  });
});
