import { named as n, rawStatement, type ReadStore } from "../db/client";
import { mergeLog } from "../tables/changes";

/** The space's last merge-log seq as `store` sees it (a snapshot's own moment). */
export const mergeLogHead = (store: ReadStore, spaceId: string): number =>
  rawStatement<{ seq: number | null }, [string]>(store, `SELECT max(${n(mergeLog.seq)}) AS "seq" FROM ${n(mergeLog)} WHERE ${n(mergeLog.spaceId)} = ?1`).get(spaceId)?.seq ?? 0;
