import { customType } from "drizzle-orm/sqlite-core";

/**
 * A moment, seen by the code as an ISO 8601 string and stored as milliseconds since the epoch: 6
 * bytes instead of 24 in the row and in every index that holds it. Used by the tables that grow
 * with every record (records, change requests, operations, commits), whose timestamps sit in up to
 * nine indexes per record (docs/performance.md, "Bytes per record").
 */
export const instant = customType<{ data: string; driverData: number }>({
  dataType: () => "integer",
  toDriver: (value) => Date.parse(value),
  fromDriver: isoOf,
});

let lastMoment = Number.NaN;
let lastIso = "";

/**
 * Milliseconds as ISO text, remembering the last one: a record's creation and update times and its
 * head commit's are often the same moment, read one after the other (0.25 us a conversion, about
 * 150 in a page of 50).
 */
function isoOf(moment: number): string {
  if (moment !== lastMoment) {
    lastIso = new Date(moment).toISOString();
    lastMoment = moment;
  }
  return lastIso;
}
