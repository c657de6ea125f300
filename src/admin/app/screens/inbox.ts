import type { Static } from "@sinclair/typebox";
import type { InboxCountsSchema } from "../../../changes/inbox";
import { pageKindOf } from "../kinds/registry";
import { atLeast } from "../../../shared/levels";
import type { ChangeRequestView, OperationView } from "../../../changes/views";
import type { RecordView } from "../../../content/records/view";
import { api, ApiError, query } from "../api";
import { type Child, h } from "../dom";
import type { Context, Screen } from "../screen";
import { action, card, commentList, empty, form, link, notice, proposerName, reasonDialog, recordName, screen, shown, table, textarea, when } from "../ui";
import type { CommentView } from "../../../changes/comments";
import type { FieldView } from "../../../content/bases";
import type { ConversionSummary } from "../../../content/field-convert";
import type { DeletionSummary } from "../../../content/field-changes";
import { conversionWords, deletionWords } from "../field-previews";

type Counts = Static<typeof InboxCountsSchema>;

/** The Inbox tabs: what each shows, and which count belongs to it. */
const TABS = [
  { id: "review", label: "To review", count: "review", filter: { status: "in_review" } },
  { id: "changes", label: "Changes requested", count: "changes", filter: { status: "changes_requested" } },
  { id: "conflicts", label: "Conflicts", count: "conflict", filter: { status: "conflict" } },
  { id: "mine", label: "Mine", count: "created", filter: { mine: "true" } },
  { id: "approved", label: "Approved", count: "approved", filter: { status: "approved" } },
  { id: "merged", label: "Merged", count: "merged", filter: { status: "merged" } },
  { id: "rejected", label: "Rejected", count: "rejected", filter: { status: "rejected" } },
] as const;

const STATUS_LABELS: Record<string, string> = {
  in_review: "In review",
  changes_requested: "Changes requested",
  approved: "Approved",
  rejected: "Rejected",
  merged: "Merged",
  conflict: "Conflict",
};

const OPERATION_LABELS: Record<string, string> = {
  record_create: "New record",
  record_update: "Record update",
  record_delete: "Record archived",
  record_restore: "Record restored",
  node_create: "New node",
  node_rename: "Rename",
  node_move: "Move",
  node_delete: "Archive node",
  node_restore: "Restore node",
  base_add_field: "New field",
  base_update_field: "Field change",
  base_delete_field: "Field removed",
  base_reorder_fields: "Fields reordered",
  base_convert_field: "Field conversion",
  base_restore_field: "Field restored",
  view_create: "New view",
  view_update: "View change",
  view_delete: "View deleted",
  view_restore: "View restored",
};

export const statusBadge = (status: string) => h("span", { class: `badge status-${status}` }, STATUS_LABELS[status] ?? status);

const TITLE_LENGTH = 120;

/** What the proposer said of the change, "" when nothing. */
const messageOf = (cr: ChangeRequestView): string => (typeof cr.sourceMeta.message === "string" ? cr.sourceMeta.message.trim() : "");

/** A change request's title: the first line of its proposer's message, else a line naming what it does and where. */
function titleOf(cr: ChangeRequestView): string {
  const message = messageOf(cr).split("\n")[0].trim();
  if (message) return message.length > TITLE_LENGTH ? `${message.slice(0, TITLE_LENGTH - 1)}…` : message;
  const first = cr.primaryOperation;
  const changed = first?.operation === "record_update" && cr.operationCount === 1 ? Object.keys(first.headCommit?.payload ?? {}) : [];
  if (changed.length === 1) {
    // One field of one record: what it was and what it becomes.
    const field = cr.base?.fields.find((candidate) => candidate.slug === changed[0]);
    return `${field?.name ?? changed[0]}: ${shown(first!.baseFields[changed[0]])} → ${shown(first!.headCommit!.payload[changed[0]])}${cr.base ? ` in ${cr.base.name}` : ""}`;
  }
  const what = first ? (OPERATION_LABELS[first.operation] ?? first.operation) : "Change";
  const named = first?.operation === "record_create" && cr.operationCount === 1 ? recordName(cr.base?.fields ?? [], first.headCommit?.payload ?? {}, "") : "";
  const where = cr.base?.name ?? cr.node?.name;
  const more = cr.operationCount > 1 ? ` and ${cr.operationCount - 1} more` : "";
  return `${what}${named ? ` “${named}”` : ""}${more}${where ? ` in ${where}` : ""}`;
}

const proposer = (cr: ChangeRequestView) => {
  if (cr.sourceAttribution.channel === "form") return `${proposerName(cr)}, through its public link`;
  const who = proposerName(cr);
  const through = cr.sourceAttribution.displayName;
  return `${who} through ${through === who ? "the admin page" : `the key “${through}”`} (${cr.sourceAttribution.channel})`;
};

async function inbox(ctx: Context): Promise<Node> {
  const tab = TABS.find((candidate) => candidate.id === ctx.query.get("tab")) ?? TABS[0];
  const cursor = ctx.query.get("cursor");
  const [counts, page] = await Promise.all([
    api<Counts>("GET", "/change-requests/counts"),
    api<{ changeRequests: ChangeRequestView[]; nextCursor: string | null }>("GET", `/change-requests${query({ ...tab.filter, cursor, limit: 25 })}`),
  ]);
  const tabs = h(
    "nav",
    { class: "tabs", "aria-label": "Inbox tabs" },
    ...TABS.map((candidate) =>
      h("a", { href: `/admin/inbox?tab=${candidate.id}`, "aria-current": candidate.id === tab.id ? "page" : false }, candidate.label, " ", h("span", { class: "count" }, String(counts[candidate.count]))),
    ),
  );
  const rows = page.changeRequests.map((cr) => [link(`/admin/change-requests/${cr.id}`, titleOf(cr)), proposer(cr), statusBadge(cr.status), when(cr.createdAt)]);
  const list = rows.length
    ? table(["Change", "Proposed by", "Status", "Proposed"], rows)
    : empty(tab.id === "review" ? "Nothing waits for review. Proposals made with a Change Request key appear here." : "No change requests here.");
  return screen(
    "Inbox",
    tabs,
    card(null, list, page.nextCursor ? h("p", {}, link(`/admin/inbox${query({ tab: tab.id, cursor: page.nextCursor })}`, "Older change requests →")) : null),
  );
}

/**
 * A conversion or deletion of a field as its proposer was shown it (the preview kept in its
 * payload): the field by name, its types, and how many records keep, change and lose a value.
 * One proposed before previews were kept names the field and its types only. Null for other operations.
 */
function fieldChangeWords(op: OperationView, fields: FieldView[]): string | null {
  const payload = (op.headCommit?.payload ?? {}) as { fieldId?: string; newType?: string; preview?: ConversionSummary & DeletionSummary };
  const field = fields.find((candidate) => candidate.id === payload.fieldId);
  if (op.operation === "base_convert_field") {
    const summary = payload.preview ?? { fieldName: field?.name ?? String(payload.fieldId), fromType: field && field.type !== payload.newType ? field.type : "another type", toType: String(payload.newType), counts: null, lost: [] };
    return conversionWords(summary);
  }
  if (op.operation === "base_delete_field") return payload.preview ? deletionWords(payload.preview) : `Deletes ${field?.name ?? payload.fieldId}; a deleted field can be restored with its values.`;
  if (op.operation === "base_restore_field") return "Restores a deleted field with the values it held.";
  return null;
}

/** Each proposed field against its current value: the record's now (for an update), else the proposal's base. `show` writes a field's value. */
function operationDiff(op: OperationView, fields: FieldView[], fieldNames: Map<string, string>, show: (slug: string, value: unknown) => string, current: Record<string, unknown> | null, merged: boolean): Child {
  const proposed = op.headCommit?.payload ?? {};
  if (op.operation === "record_delete") return h("p", {}, "Archives the record (it can be restored).");
  if (op.operation === "record_restore") return h("p", {}, "Restores the archived record.");
  const fieldChange = fieldChangeWords(op, fields);
  if (fieldChange !== null) return h("p", { class: "field-change" }, fieldChange);
  const slugs = Object.keys(proposed);
  if (slugs.length === 0) return h("p", {}, "No values.");
  const before = (slug: string) => (op.operation === "record_create" ? undefined : current ? current[slug] : op.baseFields[slug]);
  return table(
    ["Field", merged ? "Before" : "Current", "Proposed"],
    slugs.map((slug) => {
      const [was, will] = [show(slug, before(slug)), show(slug, proposed[slug])];
      return [fieldNames.get(slug) ?? slug, h("span", { class: was !== will ? "old" : "" }, was), h("span", { class: was !== will ? "new" : "" }, will)];
    }),
  );
}

/**
 * A conflict resolved in place: each field the operation proposes, as it was when proposed, as it
 * is now and as proposed, with a choice to keep the proposal or take the current value; "Revise
 * against the current values" sends the kept ones as a revision made against the record's head.
 */
function resolveConflict(op: OperationView, fieldNames: Map<string, string>, show: (slug: string, value: unknown) => string, current: Record<string, unknown>, done: () => void): HTMLElement {
  const proposed = op.headCommit?.payload ?? {};
  const slugs = Object.keys(proposed);
  const rows = slugs.map((slug) => {
    const name = fieldNames.get(slug) ?? slug;
    const choice = (value: "keep" | "take", label: string, checked: boolean) => h("label", { class: "check" }, h("input", { type: "radio", name: `resolve-${op.id}-${slug}`, value, checked }), ` ${label}`);
    return [name, show(slug, op.baseFields[slug]), h("span", { class: "old" }, show(slug, current[slug])), h("span", { class: "new" }, show(slug, proposed[slug])), h("div", {}, choice("keep", "Keep proposed", true), choice("take", "Take current", false))];
  });
  const status = h("div", { role: "status" });
  const revise = action(
    "Revise against the current values",
    async () => {
      const chosen = (slug: string) => document.querySelector<HTMLInputElement>(`input[name="resolve-${op.id}-${slug}"]:checked`)?.value ?? "keep";
      const fields = Object.fromEntries(slugs.filter((slug) => chosen(slug) === "keep").map((slug) => [slug, proposed[slug]]));
      await api("POST", `/operations/${op.id}/revisions`, { fields, message: "Revised against the current values" });
      done();
    },
    { status },
  );
  return h("div", { class: "resolve" }, h("p", {}, "The record changed since this was proposed. Choose, field by field, what the proposal keeps; it is then proposed again against the record as it is now."), table(["Field", "When proposed", "Now", "Proposed", "Keep"], rows), revise, status);
}

async function changeRequestPage(ctx: Context): Promise<Node> {
  const cr = await api<ChangeRequestView & { comments: CommentView[] }>("GET", `/change-requests/${encodeURIComponent(ctx.params.id)}`);
  const fields = cr.base?.fields ?? [];
  const fieldNames = new Map(fields.map((field) => [field.slug, field.name]));
  // A value in words, by its field's kind: a relation's as the linked records' names, an attachment's as its files' names.
  const kinds = new Map(fields.map((field) => [field.slug, pageKindOf(field.type)]));
  const show = (slug: string, value: unknown) => {
    const kind = kinds.get(slug);
    return value === null || value === undefined || !kind ? shown(value) : shown(kind.words(value, cr.linkedRecords));
  };
  // The records the operations name, as they are now: their names, and an unmerged update's current values.
  const targets = new Map<string, RecordView | null>();
  await Promise.all(
    [...new Set(cr.operations.flatMap((op) => (op.targetRecordId ? [op.targetRecordId] : [])))].map(async (id) =>
      targets.set(id, await api<RecordView>("GET", `/records/${id}`).catch((failure) => (failure instanceof ApiError && failure.status === 404 ? null : Promise.reject(failure)))),
    ),
  );
  const current = (op: OperationView) => (op.operation === "record_update" && cr.status !== "merged" && op.targetRecordId ? (targets.get(op.targetRecordId)?.fields ?? null) : null);
  const target = (id: string) => link(`/admin/records/${id}`, recordName(fields, targets.get(id)?.fields ?? {}, id));
  const message = messageOf(cr);
  const status = h("div", { class: "status-area" });
  const canReview = ctx.me.caller.effectiveLevel !== null && atLeast(ctx.me.caller.effectiveLevel, "write");
  const open = ["in_review", "changes_requested", "approved", "conflict"].includes(cr.status);
  const canRevise = cr.submittedBy === ctx.me.user.id || canReview;
  const act = async (run: () => Promise<unknown>) => {
    try {
      await run();
      ctx.reload();
    } catch (failure) {
      if (failure instanceof ApiError && failure.reason === "MERGE_CONFLICT") {
        status.append(notice("error", "This change conflicts with what was merged since it was proposed, so nothing was merged. Its author can revise it against the current values; then review it again."));
        return;
      }
      throw failure;
    }
  };
  const review = (verdict: "approved" | "rejected", reason?: string) => act(() => api("POST", `/change-requests/${cr.id}/reviews`, { verdict, reason }));
  const actions =
    canReview && open
      ? h(
          "div",
          { class: "actions" },
          cr.status === "approved"
            ? action("Merge", () => act(() => api("POST", `/change-requests/${cr.id}/merge`)), { status })
            : action("Approve", () => review("approved"), { status }),
          action(
            "Request changes",
            async () => {
              const reason = await reasonDialog("Request changes", "What should change?", "Request changes");
              if (reason !== null) await review("rejected", reason || undefined);
            },
            { kind: "secondary", status },
          ),
          action(
            "Close",
            async () => {
              const reason = await reasonDialog("Close this change request", "Why? (optional)", "Close it");
              if (reason !== null) await act(() => api("POST", `/change-requests/${cr.id}/close`, { reason: reason || undefined }));
            },
            { kind: "danger", status },
          ),
        )
      : null;
  return screen(
    titleOf(cr),
    h("p", { class: "lead" }, statusBadge(cr.status), " Proposed by ", proposer(cr), ", ", when(cr.createdAt), "."),
    message.includes("\n") || message.length > TITLE_LENGTH ? h("p", { class: "message" }, message) : null,
    cr.status === "approved" && canReview ? notice("info", "Approved: merge it to apply the change.") : null,
    cr.status === "conflict" ? notice("error", canRevise ? "In conflict: the data changed since this was proposed. Resolve it below: it is then proposed again against the current values." : "In conflict: the data changed since this was proposed. Its author can revise it against the current values.") : null,
    status,
    actions,
    ...cr.operations.map((op, i) =>
      card(
        `${i + 1}. ${OPERATION_LABELS[op.operation] ?? op.operation}`,
        op.targetRecordId && op.operation !== "record_create" ? h("p", {}, "Record ", target(op.targetRecordId)) : null,
        op.headCommit?.message && op.headCommit.message !== message ? h("p", { class: "message" }, op.headCommit.message) : null,
        cr.status === "conflict" && canRevise && op.operation === "record_update" && current(op)
          ? resolveConflict(op, fieldNames, show, current(op)!, () => ctx.reload())
          : operationDiff(op, fields, fieldNames, show, current(op), cr.status === "merged"),
      ),
    ),
    card(
      "Reviews",
      cr.reviews.length
        ? table(
            ["Reviewer", "Verdict", "Reason", "When"],
            cr.reviews.map((r) => [r.reviewer?.name ?? r.reviewerId, r.verdict === "approved" ? "Approved" : "Changes requested", r.reason ?? "—", when(r.createdAt)]),
          )
        : empty(canReview ? "No reviews yet: approve it or request changes above." : "No reviews yet."),
    ),
    card(
      "Comments",
      cr.comments.length ? commentList(cr.comments) : empty("No comments yet."),
      ctx.me.caller.effectiveLevel !== null && atLeast(ctx.me.caller.effectiveLevel, "changeRequest")
        ? form("Comment", [textarea("Comment", "body", { rows: 3 })], async (values) => {
            await api("POST", "/comments", { subjectType: "change_request", subjectId: cr.id, body: values.get("body") });
            ctx.reload();
          })
        : null,
    ),
    cr.rejectedReason ? card("Closed", h("p", {}, cr.rejectedReason)) : null,
  );
}

export const inboxScreens: Screen[] = [
  { path: "/admin/inbox", title: "Inbox", render: inbox, live: (event) => event.type.startsWith("change_request.") },
  {
    path: "/admin/change-requests/:id",
    title: "Change request",
    render: changeRequestPage,
    live: (event, ctx) => event.data.changeRequestId === ctx.params.id || event.data.comment?.changeRequestId === ctx.params.id,
  },
];
