import type { AppContext } from "../context";
import { insertRow } from "../db/client";
import { newId } from "../db/ids";
import { events } from "./schema";

export const EVENT_TYPES = [
  "record.created",
  "record.updated",
  "record.deleted",
  "record.restored",
  "change_request.created",
  "change_request.approved",
  "change_request.changes_requested",
  "change_request.rejected",
  "change_request.merged",
  "change_request.conflict",
  "base.created",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Writes one event row. Callers are inside the transaction of the change itself, so an event
 * exists exactly when its change does (the webhook worker delivers from this outbox).
 */
export function recordEvent(ctx: AppContext, event: { spaceId: string; baseId: string | null; type: EventType; data: Record<string, unknown>; at: string }): void {
  insertRow(ctx.db, events, { id: newId("evt"), spaceId: event.spaceId, baseId: event.baseId, type: event.type, data: event.data, createdAt: event.at });
}
