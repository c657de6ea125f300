import type { ChangeRequestView } from "../../changes/views";
import type { FieldView } from "../../content/bases";
import { h } from "./dom";
import type { PendingValue } from "./grid";
import { pageKindOf } from "./kinds/registry";
import { link, proposerName, shown } from "./ui";

/**
 * What open change requests propose for records (issue 38, item 6): each proposed value beside the
 * one it would replace, in the grid and on the record, until it is merged or closed.
 */

/** The statuses of a change request not yet merged or closed. */
const OPEN_STATUSES = ["in_review", "approved", "changes_requested", "conflict"] as const;

/** The listing's query for a base's open change requests (the newest 100). */
export const openChangeRequestsOf = (baseId: string) => `/change-requests?baseId=${encodeURIComponent(baseId)}&${OPEN_STATUSES.map((status, i) => `status[${i}]=${status}`).join("&")}&limit=100`;

/** A proposed value as text: linked records by name, files by name, the rest as shown. */
function valueText(cr: ChangeRequestView, field: FieldView | undefined, value: unknown): string {
  if (value === null || value === undefined) return "";
  return field ? pageKindOf(field.type).words(value, cr.linkedRecords) : shown(value);
}

/** Each cell's proposed value, by `recordId:slug` (the newest proposal of a cell wins). */
export function pendingValues(changeRequests: ChangeRequestView[], fields: FieldView[]): Map<string, PendingValue> {
  const found = new Map<string, PendingValue>();
  for (const cr of [...changeRequests].reverse()) {
    for (const op of cr.operations) {
      if (op.operation !== "record_update" || !op.targetRecordId || op.status !== "pending") continue;
      for (const [slug, value] of Object.entries(op.headCommit?.payload ?? {})) {
        found.set(`${op.targetRecordId}:${slug}`, { text: valueText(cr, fields.find((field) => field.slug === slug), value), by: proposerName(cr), changeRequestId: cr.id });
      }
    }
  }
  return found;
}

/** A record's open proposals as a list: "Status: Backlog → Done, proposed by Bob", each linking to its change request. */
export function pendingList(recordId: string, changeRequests: ChangeRequestView[], fields: FieldView[], current: Record<string, unknown>): HTMLElement | null {
  const open = changeRequests.filter((cr) => (OPEN_STATUSES as readonly string[]).includes(cr.status));
  const items = open.flatMap((cr) =>
    cr.operations
      .filter((op) => op.operation === "record_update" && op.targetRecordId === recordId && op.status === "pending")
      .flatMap((op) =>
        Object.entries(op.headCommit?.payload ?? {}).map(([slug, value]) => {
          const field = fields.find((candidate) => candidate.slug === slug);
          return h(
            "li",
            {},
            h("strong", {}, field?.name ?? slug),
            ": ",
            h("span", { class: "old" }, valueText(cr, field, current[slug]) || "(empty)"),
            " → ",
            h("span", { class: "new" }, valueText(cr, field, value) || "(empty)"),
            h("span", { class: "muted" }, `, proposed by ${proposerName(cr)} `),
            link(`/admin/change-requests/${cr.id}`, cr.status === "conflict" ? "in conflict: resolve" : "review"),
          );
        }),
      ),
  );
  return items.length ? h("ul", { class: "pending" }, items) : null;
}
