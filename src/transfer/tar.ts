/**
 * The files of an uncompressed tar, read here rather than by a general archive library, so that
 * nothing an entry declares is believed past the bytes that are there: an entry is its own bytes of
 * the archive or the archive is refused, and kinds that expand (GNU and PAX sparse files, which
 * declare gigabytes over a few blocks) or compress are refused. Regular files only; folders, links
 * and devices are passed over. Long names (PAX `path`, GNU `L`) and the ustar prefix are read.
 */

/** Why an archive is not read: not a tar, or (`tooLarge`) more than it may hold. */
export class TarRefusal extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

const NOT_A_TAR = "The body is not a .tar or .tar.gz archive.";

const BLOCK = 512;
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0) < 0 ? bytes.byteLength : bytes.indexOf(0)));

/** A header's number: octal text, or base-256 when its first byte has the high bit. */
function numberAt(header: Uint8Array, at: number, length: number): number {
  const field = header.subarray(at, at + length);
  if (field[0] & 0x80) {
    let value = field[0] & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    if (!Number.isSafeInteger(value)) throw new TarRefusal("The archive declares an entry larger than any file.");
    return value;
  }
  const digits = text(field).trim();
  if (!/^[0-7]*$/.test(digits)) throw new TarRefusal(NOT_A_TAR);
  return digits === "" ? 0 : Number.parseInt(digits, 8);
}

/** A header block whose checksum holds (the sum of its bytes, the checksum field counted as spaces). */
function checksumHolds(header: Uint8Array): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : header[i];
  return numberAt(header, 148, 8) === sum;
}

/** A PAX header's records (`<length> <key>=<value>\n`). */
function paxRecords(data: Uint8Array): Map<string, string> {
  const records = new Map<string, string>();
  const all = new TextDecoder().decode(data);
  for (const line of all.split("\n")) {
    const match = /^\d+ ([^=]+)=(.*)$/s.exec(line);
    if (match) records.set(match[1], match[2]);
  }
  return records;
}

/**
 * The regular files of `tar`, at most `mostFiles` of them, read from at most four headers a file
 * (a PAX or long-name header, and folders, count too): an archive of empty entries is 512 bytes an
 * entry, and a 2 MB gzip of 490,000 of them held the server's thread 3 s before its files were
 * counted.
 */
export function tarFiles(tar: Uint8Array, mostFiles: number): { path: string; bytes: Uint8Array }[] {
  if (tar.byteLength < BLOCK) throw new TarRefusal(NOT_A_TAR);
  const files: { path: string; bytes: Uint8Array }[] = [];
  let longName: string | null = null;
  let pax = new Map<string, string>();
  let headers = 0;
  for (let at = 0; at + BLOCK <= tar.byteLength; ) {
    if (++headers > mostFiles * 4) throw new TarRefusal(`The archive holds more than ${mostFiles * 4} entries; a package may hold at most ${mostFiles} files.`, true);
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    if (!checksumHolds(header)) throw new TarRefusal(NOT_A_TAR);
    const type = String.fromCharCode(header[156] || 0x30);
    const size = pax.has("size") ? Number(pax.get("size")) : numberAt(header, 124, 12);
    const start = at + BLOCK;
    if (!Number.isSafeInteger(size) || size < 0 || start + size > tar.byteLength) throw new TarRefusal("An entry of the archive declares more bytes than the archive holds: it is not read.");
    const data = tar.subarray(start, start + size);
    at = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x") {
      pax = paxRecords(data);
      if ([...pax.keys()].some((key) => key.startsWith("GNU.sparse"))) throw new TarRefusal("The archive holds a sparse file, which declares more bytes than it holds: it is not read.");
      continue;
    }
    if (type === "g") continue;
    if (type === "L") {
      longName = text(data);
      continue;
    }
    if (type === "S") throw new TarRefusal("The archive holds a sparse file, which declares more bytes than it holds: it is not read.");
    const ustar = text(header.subarray(257, 263)).startsWith("ustar");
    const prefix = ustar ? text(header.subarray(345, 500)) : "";
    const name = pax.get("path") ?? longName ?? (prefix ? `${prefix}/${text(header.subarray(0, 100))}` : text(header.subarray(0, 100)));
    longName = null;
    pax = new Map();
    if (type !== "0" && type !== "7") continue;
    if (files.length >= mostFiles) throw new TarRefusal(`A package may hold at most ${mostFiles} files.`, true);
    files.push({ path: name, bytes: data });
  }
  return files;
}
