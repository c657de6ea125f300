import { randomString, toBase62 } from "./secrets";

const KEY_PATTERN = /^bsk_[0-9A-Za-z]{42}$/;

/** CRC32 (IEEE) of the first 40 characters, in 6 base62 digits. */
const checksum = (body: string): string => toBase62(Bun.hash.crc32(body), 6);

export function generateKeyValue(): string {
  const body = `bsk_${randomString(36)}`;
  return body + checksum(body);
}

/** Format and checksum only: a value failing this is rejected before any lookup. */
export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value) && checksum(value.slice(0, 40)) === value.slice(40);
}

export const keyPrefix = (value: string): string => value.slice(0, 12);
