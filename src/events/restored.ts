import type { AppContext } from "../context";
import { write } from "../db/tx";
import { iso } from "../shared/clock";
import { spaces } from "../tables/spaces";
import { recordEvent } from "./outbox";

/**
 * After `basalt restore`, each space's webhook receivers are told that its history went back
 * (`space.restored`), as live-stream clients are told `reset`: changes they received after the
 * backup was taken are no longer there. One event a space, in one write, before any server starts.
 */
export function announceRestore(ctx: AppContext, restoredFrom: string): Promise<number> {
  return write(ctx, (tx) => {
    const at = iso(tx.clock.now());
    const all = tx.db.select({ id: spaces.id }).from(spaces).all();
    for (const space of all)
      recordEvent(tx, "space.restored", { spaceId: space.id, baseId: null, at }, { reason: "The instance was restored from a backup: changes after the backup was taken are gone. Read the space again.", restoredFrom, restoredAt: at });
    return all.length;
  });
}
