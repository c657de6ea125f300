import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { closeSync, copyFileSync, existsSync, ftruncateSync, linkSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { contentPath, filesDir, holdLanding, tmpDir } from "../db/content-files";
import { makePrivate, occupied, privateDir } from "../db/files";


/** How many first bytes are kept for telling the file's type. */
const HEAD = 16;

export interface Stored {
  hash: string;
  size: number;
  head: Uint8Array;
  /** Called once the write that names the bytes has settled: until then nothing removes them (`holdLanding`). */
  landed: () => void;
}

/**
 * A body to store: the request itself, a multipart file part, or a stream. One that declares its
 * length (a request with `Content-Length`, a file part) is written to the file by Bun as it arrives,
 * so no chunk of it passes through JS (a 200 MB upload grew the server by 1–10 MB this way, against
 * 10–58 MB through JS chunks); a stream, or a request without a length, is written chunk by chunk,
 * counted as it comes.
 */
export type Upload = Request | Blob | ReadableStream<Uint8Array>;

/** An upload's bytes as a stream, for a reader that takes them as they come. */
export const uploadStream = (body: Upload): ReadableStream<Uint8Array> => (body instanceof Request ? (body.body ?? new Blob().stream()) : body instanceof Blob ? body.stream() : body);

/** The length an upload declares before any of it is read; null when it declares none. */
function declaredLength(body: Upload): number | null {
  if (body instanceof Blob) return body.size;
  if (!(body instanceof Request)) return null;
  const length = body.headers.get("content-length");
  return length !== null && /^\d{1,15}$/.test(length) ? Number(length) : null;
}

/**
 * Writes a body to the store: to a temporary file (see `writeTemporary`), hashed as it is read
 * back, then moved to its content path, or dropped when the same bytes are already stored. Files
 * are 0600 in 0700 directories.
 */
export async function storeStream(dataDir: string, body: Upload, max: number, tooLarge: () => Error): Promise<Stored> {
  const { path: tmp, size } = await writeTemporary(dataDir, body, max, tooLarge);
  try {
    const { hash, head } = await digestFile(tmp);
    const landed = holdLanding(hash);
    const path = contentPath(dataDir, hash);
    privateDir(join(filesDir(dataDir), hash.slice(0, 2)));
    if (existsSync(path)) rmSync(tmp);
    else renameSync(tmp, path);
    return { hash, size, head: head.subarray(0, Math.min(size, HEAD)), landed };
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}

/** A file's SHA-256 and first bytes, read through one buffer (no chunk left for the collector). */
async function digestFile(path: string): Promise<{ hash: string; head: Uint8Array }> {
  const hasher = new Bun.CryptoHasher("sha256");
  const buffer = new Uint8Array(1 << 20);
  const head = new Uint8Array(HEAD);
  const file = await open(path, "r");
  try {
    for (let at = 0; ; ) {
      const { bytesRead } = await file.read(buffer, 0, buffer.byteLength, null);
      if (bytesRead === 0) break;
      if (at < HEAD) head.set(buffer.subarray(0, Math.min(bytesRead, HEAD - at)), at);
      hasher.update(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
  } finally {
    await file.close();
  }
  return { hash: hasher.digest("hex"), head };
}

/**
 * A body written to a private temporary file of the data directory as it arrives: a body of
 * declared length by Bun, refused before any byte is read when it declares more than `max`; any
 * other chunk by chunk, each written before the next is read, refused once it passes `max` (the
 * file removed and `tooLarge` thrown). The caller removes the file it gets.
 */
export async function writeTemporary(dataDir: string, body: Upload, max: number, tooLarge: () => Error): Promise<{ path: string; size: number }> {
  privateDir(tmpDir(dataDir));
  const path = join(tmpDir(dataDir), randomBytes(12).toString("hex"));
  const fd = openSync(path, "w", 0o600);
  try {
    const length = declaredLength(body);
    if (length !== null && length > max) throw tooLarge();
    const size = length === null ? await writeChunks(fd, uploadStream(body), max, tooLarge) : await writeDeclared(fd, body as Request | Blob);
    if (length !== null && size !== length) throw new Error(`the upload ended after ${size} of its ${length} bytes`);
    return { path, size };
  } catch (error) {
    // Emptied before it is removed: a write of Bun's may still hold the file open for a moment, and
    // an unlinked file's blocks are freed only when the last handle closes; a full disk must be free again at once.
    emptied(fd);
    rmSync(path, { force: true });
    throw error;
  } finally {
    closeSync(fd);
  }
}

/** Frees a failed upload's blocks; the failure it follows is what the caller hears, whatever this meets. */
function emptied(fd: number): void {
  try {
    ftruncateSync(fd, 0);
  } catch {
    // The file is removed next either way; only its blocks may be freed later.
  }
}

/** A body of declared length, written to the file by Bun. */
const writeDeclared = (fd: number, body: Request | Blob): Promise<number> => Bun.write(Bun.file(fd), body instanceof Blob ? new Response(body) : body);

async function writeChunks(fd: number, body: ReadableStream<Uint8Array>, max: number, tooLarge: () => Error): Promise<number> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) throw tooLarge();
    for (let written = 0; written < chunk.byteLength; ) written += writeSync(fd, chunk, written);
  }
  return size;
}

/** An upload held whole in memory (an archive or a workbook, which is read as one), refused past `max` bytes as they arrive. */
export async function uploadBytes(body: Upload, max: number, tooLarge: () => Error): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of uploadStream(body)) {
    size += chunk.byteLength;
    if (size > max) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const startsWith = (head: Uint8Array, bytes: number[], at = 0) => bytes.every((byte, i) => head[at + i] === byte);
const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));

/** The type the first bytes show, for the kinds Basalt serves inline or can tell for sure; null otherwise. */
export function sniffedType(head: Uint8Array): string | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(head, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a"))) return "image/gif";
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8)) return "image/webp";
  if (startsWith(head, ascii("%PDF-"))) return "application/pdf";
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) return "application/zip";
  return null;
}

/** Image types shown inline; every other file is served as a download. SVG is not among them: it can hold script. */
export const INLINE_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * The type a file is served as. What its bytes show wins; a declared image its bytes do not bear
 * out, or a declared type that is not `type/subtype`, is served as bytes. A zip declared as a kind
 * of zip (a .docx, an .xlsx) keeps its declared type.
 */
export function servedType(declared: string, head: Uint8Array): string {
  const sniffed = sniffedType(head);
  const given = declared.split(";")[0].trim().toLowerCase();
  const wellFormed = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(given);
  if (sniffed === "application/zip" && wellFormed && (given.endsWith("+zip") || given.includes("officedocument") || given.includes("opendocument"))) return given;
  if (sniffed) return sniffed;
  if (!wellFormed || given.startsWith("image/")) return "application/octet-stream";
  return given;
}

/** Where a backup's files are kept: a directory beside it, named after it. */
export const backupFilesDir = (backup: string) => `${backup}.files`;

/** The hashes of the stored files a database's assets name. */
function namedHashes(databasePath: string): string[] {
  const db = new Database(databasePath, { readonly: true });
  try {
    const table = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'assets'").get();
    return table ? db.query<{ hash: string }, []>("SELECT DISTINCT content_hash AS hash FROM assets WHERE content_hash IS NOT NULL").all().map((row) => row.hash) : [];
  } finally {
    db.close();
  }
}

/** A stored file put at `to`: a hard link where the disk allows (stored files never change), else a copy. */
function placeFile(from: string, to: string): void {
  privateDir(dirname(to));
  if (existsSync(to)) return;
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
    makePrivate(to);
  }
}

/**
 * Carries a backup's files: every stored file its database (`database`, the copy about to become
 * `backup`: `backupDatabase`'s `beforePublish`) names, into `<backup>.files/<hash[0..2]>/<hash>`.
 * They are gathered in a `.partial` folder beside it, renamed once whole: a copy cut short by a
 * kill never sits under its hash's name, where a restore would take it as it is (the next backup
 * removes the folder). Answers how many, and the hashes the data directory lacks.
 */
export function backupFiles(dataDir: string, backup: string, database = backup): { copied: number; missing: string[] } {
  const target = backupFilesDir(backup);
  // A new backup's folder of files is new too: one found there (a planted link) is never written through.
  if (occupied(target)) throw new Error(`${target} already exists; a backup's files go into a new folder.`);
  const gathering = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.partial`);
  const missing: string[] = [];
  let copied = 0;
  try {
    for (const hash of namedHashes(database)) {
      const from = contentPath(dataDir, hash);
      if (!existsSync(from)) missing.push(hash);
      else (placeFile(from, join(gathering, hash.slice(0, 2), hash)), copied++);
    }
    if (copied > 0) renameSync(gathering, target);
  } finally {
    rmSync(gathering, { recursive: true, force: true });
  }
  return { copied, missing };
}

/** Puts a restored backup's files in the data directory's store; answers the hashes its database names that neither holds. */
export function restoreFiles(backup: string, dataDir: string): { copied: number; missing: string[] } {
  const missing: string[] = [];
  let copied = 0;
  for (const hash of namedHashes(join(dataDir, "basalt.db"))) {
    const to = contentPath(dataDir, hash);
    if (existsSync(to)) continue;
    const from = join(backupFilesDir(backup), hash.slice(0, 2), hash);
    if (!existsSync(from)) missing.push(hash);
    else (placeFile(from, to), copied++);
  }
  return { copied, missing };
}
