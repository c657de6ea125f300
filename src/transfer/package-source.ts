import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { uploadBytes } from "../assets/storage";
import { ApiError, badRequest, payloadTooLarge } from "../shared/errors";
import { PACKAGE_LIMITS, type PackageFiles } from "./package-format";
import { TarRefusal, tarFiles } from "./tar";
import { unpacking } from "../shared/turns";

const inflateGzip = promisify(gunzip);

/**
 * Where a package's files come from: a GitHub repository (its tarball, fetched by the server), an
 * uploaded `.tar` or `.tar.gz`, or a directory on this machine (the command line). Each is read
 * into memory within the package's bounds before anything else looks at it: an archive is
 * inflated with a ceiling, so a small bomb is refused before it is large.
 */

interface GithubSource {
  owner: string;
  repo: string;
  ref?: string;
  subdir?: string;
}

const NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const USAGE = "Give https://github.com/<owner>/<repo>[/tree/<ref>[/<subdir>]].";

/** A GitHub repository's address, as its web pages write it; only GitHub's hosts are taken. */
export function parseGithubUrl(given: string): GithubSource {
  let url: URL;
  try {
    url = new URL(given.trim());
  } catch {
    throw badRequest(`repoUrl "${given.slice(0, 200)}" is not a URL. ${USAGE}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw badRequest(`repoUrl must be an https:// address. ${USAGE}`);
  if (!["github.com", "www.github.com"].includes(url.hostname.toLowerCase())) throw badRequest(`repoUrl must be on github.com, not ${url.hostname}. ${USAGE}`);
  const [owner, rawRepo, marker, ref, ...rest] = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const repo = rawRepo?.replace(/\.git$/, "");
  if (!owner || !repo || !NAME.test(owner) || !NAME.test(repo)) throw badRequest(`repoUrl names no owner and repository. ${USAGE}`);
  if (marker === undefined) return { owner, repo };
  if (marker !== "tree" || !ref) throw badRequest(`repoUrl has "/${marker}" where "/tree/<ref>" belongs. ${USAGE}`);
  if (rest.some((segment) => segment === ".." || segment === ".")) throw badRequest("repoUrl's folder may not hold . or .. segments.");
  return { owner, repo, ref, subdir: rest.length ? rest.join("/") : undefined };
}

const unreachable = (why: string) => new ApiError(503, "GITHUB_UNREACHABLE", `This Basalt could not reach GitHub (${why}). Install from an uploaded archive instead: POST /api/v1/install/archive with the package as a .tar.gz, or "basalt install --from DIR" on the server.`);

/** The repository's tarball at its ref (its default branch when none), the folder it names taken as the package. */
export async function githubPackage(archiveOrigin: string, source: GithubSource): Promise<PackageFiles> {
  const path = [source.owner, source.repo, "tar.gz", ...(source.ref ?? "HEAD").split("/")].map(encodeURIComponent).join("/");
  let response: Response;
  try {
    response = await fetch(`${archiveOrigin.replace(/\/+$/, "")}/${path}`, { signal: AbortSignal.timeout(30_000), redirect: "follow" });
  } catch (error) {
    throw unreachable((error as Error).name === "TimeoutError" ? "no answer within 30 s" : (error as Error).message.slice(0, 200));
  }
  if (response.status === 404) throw badRequest(`GitHub has no repository ${source.owner}/${source.repo}${source.ref ? ` with the ref ${source.ref}` : ""} (or it is private).`);
  if (!response.ok) throw unreachable(`GitHub answered ${response.status}`);
  // GitHub's tarballs hold one folder, <repo>-<sha>, with the repository in it.
  const files = await archiveFiles(await uploadBytes(response.body ?? new Blob(), PACKAGE_LIMITS.totalBytes, archiveTooLarge(PACKAGE_LIMITS.totalBytes)));
  const top = files.keys().next().value?.split("/")[0] ?? "";
  const repository = below(files, `${top}/`);
  return source.subdir ? below(repository, `${source.subdir.replace(/\/+$/, "")}/`) : repository;
}

/** What refuses a package archive past `limit` bytes. */
export const archiveTooLarge = (limit: number) => () => payloadTooLarge(`A package archive may be at most ${limit} bytes.`);

/** The files of a package in one folder of a larger tree. */
function below(files: PackageFiles, folder: string): PackageFiles {
  const inside: PackageFiles = new Map();
  for (const [path, bytes] of files) if (path.startsWith(folder)) inside.set(path.slice(folder.length), bytes);
  if (inside.size === 0) throw badRequest(`The repository has no folder ${folder.slice(0, -1)}.`);
  return inside;
}

/** Checks a file's path and size against the package's bounds as it is added. */
function adder(files: PackageFiles) {
  let total = 0;
  return (path: string, bytes: Uint8Array) => {
    if (path.split("/").some((segment) => segment === "" || segment === "." || segment === "..") || path.includes("\\") || path.includes("\0")) throw badRequest(`The package holds a file at "${path.slice(0, 200)}", which is not a relative path.`);
    if (files.size >= PACKAGE_LIMITS.files) throw payloadTooLarge(`A package may hold at most ${PACKAGE_LIMITS.files} files.`);
    if (bytes.byteLength > PACKAGE_LIMITS.fileBytes) throw payloadTooLarge(`${path} is ${bytes.byteLength} bytes; a file of a package may be at most ${PACKAGE_LIMITS.fileBytes}.`);
    total += bytes.byteLength;
    if (total > PACKAGE_LIMITS.totalBytes) throw payloadTooLarge(`A package may hold at most ${PACKAGE_LIMITS.totalBytes} bytes.`);
    files.set(path, bytes);
  };
}

/** The most a package's tar may be: its files and a header block each. */
const MAX_TAR = PACKAGE_LIMITS.totalBytes + PACKAGE_LIMITS.files * 1024;

/**
 * The files of a `.tar` or `.tar.gz`, within the package's bounds. The gzip is inflated off the
 * event loop by zlib, told the most it may put out (it stops there, whatever the archive says);
 * the tar is read by `tar.ts`, which believes no size past the bytes that are there and counts its
 * entries as it reads them. One archive or workbook is opened at a time in the process (`src/shared/turns.ts`).
 */
async function archiveFiles(archive: Uint8Array): Promise<PackageFiles> {
  return unpacking.run(async () => {
    const tooLarge = () => payloadTooLarge(`A package may hold at most ${PACKAGE_LIMITS.totalBytes} bytes.`);
    let tar = archive;
    if (archive[0] === 0x1f && archive[1] === 0x8b) {
      try {
        tar = await inflateGzip(archive, { maxOutputLength: MAX_TAR });
      } catch (error) {
        if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError) throw tooLarge();
        throw badRequest("The archive is not valid gzip.");
      }
    }
    if (tar.byteLength > MAX_TAR) throw tooLarge();
    if (archive[0] === 0x50 && archive[1] === 0x4b) throw badRequest("Send the package as a .tar.gz (tar czf package.tar.gz -C DIR .); zip archives are not read.");
    let entries: { path: string; bytes: Uint8Array }[];
    try {
      entries = tarFiles(tar, PACKAGE_LIMITS.files);
    } catch (error) {
      if (error instanceof TarRefusal) throw error.tooLarge ? payloadTooLarge(error.message) : badRequest(error.message);
      throw error;
    }
    const files: PackageFiles = new Map();
    const add = adder(files);
    for (const { path, bytes } of entries) add(path.replace(/^\.\//, ""), bytes);
    return files;
  });
}

/** An uploaded package archive: its files, the one folder every path starts with taken away when the manifest is inside it (`tar czf p.tar.gz pkg/`). */
export async function unpackArchive(archive: Uint8Array): Promise<PackageFiles> {
  const files = await archiveFiles(archive);
  if (files.has("busabase.json")) return files;
  const tops = new Set([...files.keys()].map((path) => path.split("/")[0]));
  const [top] = tops;
  return tops.size === 1 && files.has(`${top}/busabase.json`) ? below(files, `${top}/`) : files;
}

/** A package in a directory of this machine (the command line's `--from DIR`), `.git` left out. */
export function directoryPackage(root: string): PackageFiles {
  const files: PackageFiles = new Map();
  const add = adder(files);
  const visit = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name === ".git") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path, `${prefix}${entry.name}/`);
      else if (entry.isFile()) {
        if (statSync(path).size > PACKAGE_LIMITS.fileBytes) throw payloadTooLarge(`${prefix}${entry.name} is larger than ${PACKAGE_LIMITS.fileBytes} bytes.`);
        add(`${prefix}${entry.name}`, readFileSync(path));
      }
    }
  };
  visit(root, "");
  return files;
}
