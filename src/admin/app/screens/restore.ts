import type { ChangeRequestView } from "../../../changes/views";
import type { BaseView, DeletedFieldView } from "../../../content/bases";
import type { RecordView } from "../../../content/records/view";
import type { ViewView } from "../../../content/views";
import { atLeast } from "../../../shared/levels";
import { FIELD_TRAITS } from "../../../shared/field-types";
import { api, query } from "../api";
import { type Child, fill, h } from "../dom";
import type { Context, Screen } from "../screen";
import { action, card, empty, link, notice, recordName, screen, table, when } from "../ui";

/**
 * "Archived and deleted": what a base let go of, and its way back. Archived records, deleted
 * fields (their values kept) and deleted views are listed, each with Restore. A restore is a change
 * request that waits for review where the removal did: a record's always (the contract's rule for
 * both), a field's always (its deletion always did), a view's merged at once with write, as its
 * deletion was.
 */

/** Archived records shown a page. */
const RECORDS_A_PAGE = 50;

type Outcome = { materialized?: boolean; status?: string; id: string };

/** What the screen last said of a base's restores: kept when another client's change draws the screen again. */
const said = new Map<string, Node>();

async function archive(ctx: Context): Promise<Node> {
  const baseId = ctx.params.id;
  const cursor = ctx.query.get("cursor") ?? undefined;
  const [base, archived, fields, views] = await Promise.all([
    api<BaseView>("GET", `/bases/${encodeURIComponent(baseId)}`),
    api<{ records: RecordView[]; nextCursor: string | null }>("GET", `/records${query({ baseId, status: "archived", limit: RECORDS_A_PAGE, cursor, include: "none", sort: "-updatedAt" })}`),
    api<DeletedFieldView[]>("GET", `/bases/${encodeURIComponent(baseId)}/fields/deleted`),
    api<ViewView[]>("GET", `/bases/${encodeURIComponent(baseId)}/views${query({ status: "archived" })}`),
  ]);
  const level = ctx.me.caller.effectiveLevel;
  const canPropose = level !== null && atLeast(level, "changeRequest");
  const status = h("div", { class: "status-area", role: "status" }, said.get(base.id) ?? null);
  /** Says what a restore did: merged (the lists are read again), or waiting with its change request linked. */
  const restored = (what: string, answer: Outcome) => {
    const merged = answer.materialized === true || answer.status === "merged";
    if (merged) return ctx.reload();
    const changeRequestId = answer.id;
    const note = notice("success", `Restoring ${what} is proposed: it waits for review in the Inbox. `, link(`/admin/change-requests/${changeRequestId}`, "See the change request"));
    said.set(base.id, note);
    fill(status, note);
  };
  const restore = (label: string, run: () => Promise<void>): Child => (canPropose ? action(label, run, { kind: "secondary", status }) : null);

  const recordRows = archived.records.map((record) => {
    const name = recordName(base.fields, record.fields, record.id);
    return [
      link(`/admin/records/${record.id}`, name),
      when(record.archivedAt ?? record.updatedAt),
      restore(`Restore ${name}`, async () => restored(name, await api<ChangeRequestView>("POST", `/records/${record.id}/change-requests`, { operation: "restore", message: `Restore ${name}` }))),
    ];
  });
  const restoreAll =
    canPropose && archived.records.length > 1
      ? action(
          `Restore these ${archived.records.length}`,
          async () =>
            restored(
              `${archived.records.length} records`,
              await api<ChangeRequestView>("POST", `/bases/${base.id}/records/bulk-lifecycle-change-request`, { operation: "restore", recordIds: archived.records.map((record) => record.id), message: `Restore ${archived.records.length} records` }),
            ),
          { status },
        )
      : null;
  const fieldRows = fields.map((field) => [
    field.name,
    FIELD_TRAITS[field.type]?.label ?? field.type,
    when(field.deletedAt),
    restore(`Restore ${field.name}`, async () =>
      restored(field.name, await api<ChangeRequestView>("POST", `/bases/${base.id}/fields/change-requests`, { operation: "restore", fieldId: field.id, autoMerge: false, message: `Restore the field ${field.name}` })),
    ),
  ]);
  const viewRows = views.map((view) => [
    view.name,
    view.type,
    when(view.updatedAt),
    restore(`Restore ${view.name}`, async () => restored(`the view ${view.name}`, await api<Outcome>("POST", "/views/change-requests", { operation: "restore", viewId: view.id, message: `Restore the view ${view.name}` }))),
  ]);
  return screen(
    `Archived and deleted in ${base.name}`,
    h("p", { class: "lead" }, "What was archived or deleted here, and its way back: each restore is a change request, reviewed where the removal was. ", link(`/admin/bases/${base.id}`, `Back to ${base.name}`)),
    status,
    card(
      "Archived records",
      recordRows.length ? table(["Record", "Archived", ""], recordRows) : empty(cursor ? "No more archived records." : "No archived records."),
      restoreAll,
      archived.nextCursor ? h("p", {}, link(`/admin/bases/${base.id}/restore${query({ cursor: archived.nextCursor })}`, "More archived records →")) : null,
    ),
    card("Deleted fields", fieldRows.length ? table(["Field", "Type", "Deleted", ""], fieldRows) : empty("No deleted fields."), fieldRows.length ? h("p", { class: "muted" }, "A field comes back with the values it held. A deleted link or computed field cannot: add it again.") : null),
    card("Deleted views", viewRows.length ? table(["View", "Type", "Deleted", ""], viewRows) : empty("No deleted views.")),
  );
}

export const restoreScreens: Screen[] = [
  {
    path: "/admin/bases/:id/restore",
    title: "Archived and deleted",
    render: archive,
    live: (event, ctx) => event.baseId === ctx.params.id && /^(record\.(deleted|restored)|change_request\.merged)/.test(event.type),
  },
];
