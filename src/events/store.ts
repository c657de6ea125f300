import { getTableName } from "drizzle-orm";
import { rawStatement, type Store } from "../db/client";
import { events } from "../tables/events";

/** The events' raw SQL: what SQLite keeps of the outbox's sequence. */

const LAST_SEQ = `SELECT "seq" FROM "sqlite_sequence" WHERE "name" = '${getTableName(events)}'`;

/** The last `seq` SQLite has given an event (never reused, whatever was deleted since); 0 before any. */
export const lastEventSeq = (store: Store): number => rawStatement<{ seq: number }, []>(store, LAST_SEQ).get()?.seq ?? 0;
