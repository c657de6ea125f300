const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export type IdPrefix = "usr" | "spc" | "key" | "dev" | "nod" | "bse" | "fld" | "rec" | "crq" | "opr" | "cmt" | "rev" | "whk" | "whd" | "evt" | "job" | "lnk" | "com" | "viw" | "aud" | "ast" | "imp" | "frm" | "emb" | "nap" | "inv" | "rmt";

let lastTime = -1;
/** `lastTime` as an id's ten time characters, made once a millisecond. */
let lastTimeText = "";
const lastRandom = new Uint8Array(5);

/** Makes an id of a kind: `newId`, or the ids a merge derives from its commit (`derivedIds`). */
export type IdMaker = (prefix: IdPrefix) => string;

/** Every value of ten bits as two Crockford characters. */
const PAIRS = Array.from({ length: 1024 }, (_, n) => CROCKFORD[n >> 5] + CROCKFORD[n & 31]);

/** Five bytes as eight Crockford base32 characters, ten bits at a time (an id is made for every row a write adds: 0.12 µs an id, 1 µs bit by bit). */
const base32Of5 = (b: Uint8Array): string =>
  PAIRS[(b[0] << 2) | (b[1] >> 6)] + PAIRS[((b[1] & 63) << 4) | (b[2] >> 4)] + PAIRS[((b[2] & 15) << 6) | (b[3] >> 2)] + PAIRS[((b[3] & 3) << 8) | b[4]];

/**
 * The ids merging one operation makes (a node, a base, its fields, a view), derived from the
 * operation's commit: every instance that merges that commit, the one where it was proposed and
 * each that pulls it (docs/remotes.md), makes the same ids, so what a later change names is there.
 * The time part is the commit's and the next three characters count the ids made so far, so they
 * sort by when the change was made and then in the order the merge made them (a relation before
 * its inverse); the last five are a hash of the commit and that count.
 */
export function derivedIds(commitId: string): IdMaker {
  let made = 0;
  const time = commitId.slice(commitId.indexOf("_") + 1).slice(0, 10);
  return (prefix) => {
    const n = made++;
    let count = "";
    for (let rest = n, i = 0; i < 3; i++, rest = Math.floor(rest / 32)) count = CROCKFORD[rest % 32] + count;
    const digest = new Bun.CryptoHasher("sha256").update(`${commitId}\n${n}`).digest();
    return `${prefix}_${time}${count}${base32Of5(digest.subarray(0, 5)).slice(0, 5)}`;
  };
}

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
    let time = "";
    for (let t = lastTime, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = CROCKFORD[t % 32] + time;
    lastTimeText = time;
  }
  return `${prefix}_${lastTimeText}${base32Of5(lastRandom)}`;
}

/**
 * Whether `value` has the shape of an id of kind `prefix` (at most 64 characters): what a visitor's
 * id is checked against before anything is counted or looked up for it.
 */
export const isIdOf = (prefix: IdPrefix, value: string): boolean => value.length <= 64 && value.startsWith(`${prefix}_`) && /^[0-9A-Za-z]+$/.test(value.slice(prefix.length + 1));
