import type { ActivityItemSchema } from "../../../changes/activity";
import type { Static } from "@sinclair/typebox";
import { api, query } from "../api";
import { h } from "../dom";
import type { Context, Screen } from "../screen";
import { card, empty, link, proposerName, recordName, screen, when } from "../ui";

type ActivityItem = Static<typeof ActivityItemSchema>;

/** What a person did, by the item's action: a change request's by where it stands now. */
const ACTIONS: Record<string, string> = {
  in_review: "proposed",
  changes_requested: "proposed (sent back)",
  approved: "proposed (approved)",
  rejected: "proposed (rejected)",
  merged: "changed",
  conflict: "proposed (in conflict)",
  record_update: "changed",
  record_delete: "archived",
  record_restore: "restored",
  revised: "revised a proposal",
};

/** One line of what happened: who, what, and where it opens. */
function line(item: ActivityItem): HTMLElement {
  const changeRequest = item.changeRequest;
  const record = item.record ?? null;
  // People by name; a form's answer is its visitor's.
  const who = changeRequest && item.kind === "change_request" ? proposerName(changeRequest) : (item.actorUser?.name ?? "Someone");
  const what = ACTIONS[item.action] ?? item.action.replaceAll("_", " ");
  const about = changeRequest
    ? link(`/admin/change-requests/${changeRequest.id}`, item.summary || changeRequest.primaryOperation?.operation.replaceAll("_", " ") || "a change")
    : record
      ? link(`/admin/records/${record.id}`, recordName(record.base?.fields ?? [], record.fields, record.id))
      : item.summary || "";
  const where = changeRequest?.base?.name ?? record?.base?.name;
  return h("li", {}, h("p", { class: "muted" }, when(item.timestamp)), h("p", {}, h("strong", {}, who), ` ${what}: `, about, where ? h("span", { class: "muted" }, ` in ${where}`) : null));
}

/** Each change once: a record's change, or an audit event, made by a change request the page lists is that change request's line. */
function oncePerChange(items: ActivityItem[]): ActivityItem[] {
  const listed = new Set(items.filter((item) => item.kind === "change_request").map((item) => item.id));
  return items.filter((item) => item.kind === "change_request" || item.kind === "operation" || !item.changeRequestId || !listed.has(item.changeRequestId));
}

/** `/admin/activity`: what changed in the space, newest first, a page at a time (the activity of `GET /activity/paged`). */
async function activity(ctx: Context): Promise<Node> {
  const cursor = ctx.query.get("cursor");
  const page = await api<{ items: ActivityItem[]; nextCursor: string | null }>("GET", `/activity/paged${query({ limit: 50, cursor })}`);
  return screen(
    "Activity",
    card(
      null,
      page.items.length ? h("ol", { class: "activity" }, ...oncePerChange(page.items).map(line)) : empty("Nothing has happened in this space yet."),
      page.nextCursor ? h("p", {}, link(`/admin/activity?cursor=${encodeURIComponent(page.nextCursor)}`, "Older")) : null,
    ),
  );
}

export const activityScreens: Screen[] = [{ path: "/admin/activity", title: "Activity", render: activity, live: (event) => event.type.startsWith("change_request.") || event.type.startsWith("record.") }];
