const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export type IdPrefix = "usr" | "spc" | "key" | "dev" | "nod" | "bse" | "fld" | "rec" | "crq" | "opr" | "cmt" | "rev" | "whk" | "whd" | "evt" | "job" | "lnk" | "com" | "viw" | "aud" | "ast" | "imp" | "frm" | "emb" | "nap" | "inv" | "rmt";

let lastTime = -1;
const lastRandom = new Uint8Array(5);

/**
 * `<prefix>_` + 10 characters of milliseconds and 8 of randomness (Crockford base32), monotonic
 * within one millisecond, so ordering by id is creation order and keyset cursors stay simple.
 * Ids are not secrets: 40 random bits keep two processes writing in the same millisecond apart,
 * and each id is stored five to ten times a record (rows and indexes), so its length is disk.
 * Ids of 16 random characters, made before, sort among these by their time as well.
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  if (now <= lastTime) {
    for (let i = lastRandom.length - 1; i >= 0; i--) {
      lastRandom[i] = (lastRandom[i] + 1) & 0xff;
      if (lastRandom[i] !== 0) break;
    }
  } else {
    lastTime = now;
    crypto.getRandomValues(lastRandom);
  }
  let time = "";
  for (let t = lastTime, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
  let random = "";
  let bits = 0;
  let value = 0;
  for (const byte of lastRandom) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      random += CROCKFORD[(value >> bits) & 31];
    }
  }
  return `${prefix}_${time}${random}`;
}
