import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { AppContext } from "../context";
import { exclusiveLock, privateDir } from "../db/files";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { removeSpace } from "../spaces/spaces";
import { remotes } from "../tables/changes";
import { spaces } from "../tables/spaces";
import { pruneImportSessions } from "../transfer/dump-api";

/**
 * A clone killed midway (SIGKILL, a power cut: no `catch` runs) must leave nothing: not the space it
 * made, which would take the slug from the next clone, nor the import session it was filling. So a
 * clone first holds a lock named by the space it is about to make, `<data dir>/clones/<space id>.lock`,
 * until the remote is remembered; the kernel drops the lock when the process dies. A lock no one
 * holds is a clone that was cut: its space, if it was made and follows no remote yet, and its
 * session go, at the start of every clone and of `serve`.
 */

const clonesDir = (ctx: AppContext) => join(ctx.config.dataDir, "clones");

export interface CloneMark {
  spaceId: string;
  /** The clone is whole: the mark goes. */
  done(): void;
}

/** Names the space a clone will make and marks it as being cloned by this process. */
export function markClone(ctx: AppContext): CloneMark {
  privateDir(clonesDir(ctx));
  const spaceId = newId("spc");
  // Locked under a name no sweep reads, then put in place: a sweep never finds the mark before it is held.
  const taking = join(clonesDir(ctx), `.${spaceId}.taking`);
  const lock = exclusiveLock(taking);
  if (!lock) throw new Error(`${taking} is held by another process.`);
  const path = join(clonesDir(ctx), `${spaceId}.lock`);
  renameSync(taking, path);
  return {
    spaceId,
    done: () => {
      rmSync(path, { force: true });
      lock.release();
    },
  };
}

/** Removes what each cut clone left (its space, unless it follows a remote already, and its import session); answers how many clones were cut. */
export async function removeCutClones(ctx: AppContext): Promise<number> {
  if (!existsSync(clonesDir(ctx))) return 0;
  let cut = 0;
  for (const name of readdirSync(clonesDir(ctx))) {
    const path = join(clonesDir(ctx), name);
    const spaceId = /^(spc_[0-9A-Za-z]+)\.lock$/.exec(name)?.[1];
    const lock = spaceId || name.endsWith(".taking") ? exclusiveLock(path) : null;
    if (!lock) continue;
    if (!spaceId) {
      // A mark killed before it was put in place: nothing was made yet.
      rmSync(path, { force: true });
      lock.release();
      continue;
    }
    try {
      await write(ctx, (tx) => {
        const made = tx.db.select({ id: spaces.id }).from(spaces).where(eq(spaces.id, spaceId)).get();
        if (made && !tx.db.select({ id: remotes.id }).from(remotes).where(eq(remotes.spaceId, spaceId)).get()) removeSpace(tx, spaceId);
      });
      pruneImportSessions(ctx, spaceId);
      rmSync(path, { force: true });
      cut++;
    } finally {
      lock.release();
    }
  }
  return cut;
}
