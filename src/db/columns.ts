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
  fromDriver: (value) => new Date(value).toISOString(),
});
