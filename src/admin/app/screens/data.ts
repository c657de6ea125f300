import { comparable, fieldInput, readField } from "../editors";
import { pageKindOf } from "../kinds/registry";
import { atLeast } from "../../../shared/levels";
import type { CommitView } from "../../../content/commits";
import type { ChangeRequestView } from "../../../changes/views";
import type { BaseView, FieldView } from "../../../content/bases";
import { primaryField, traitsOf } from "../../../shared/field-types";
import type { NodeView } from "../../../content/nodes";
import type { FullRecordView, RecordView } from "../../../content/records/view";
import { api, query } from "../api";
import { type Child, fill, h } from "../dom";
import type { Context, Screen } from "../screen";
import { action, card, commentList, empty, failureText, form, input, link, notice, recordName, screen, select, shown, table, textarea, when } from "../ui";
import { formsCard } from "../forms";
import { GROUP_PAGE, groupedTable } from "../grouped";
import { LIST_PAGE, layoutSwitch, recordList, wantsList } from "../record-list";
import { openChangeRequestsOf, pendingList, pendingValues } from "../pending";
import { saveRecordChange } from "../record-save";
import { browserLayout, layoutConfig, orderedColumns, viewLayout } from "../grid-layout";
import { asConfig, conditionBuilder, type Conditions, conditionsOf, listingParams } from "../conditions";
import { type GridPage, recordGrid, ROWS_A_PAGE } from "../grid";
import type { LiveEvent } from "../live";
import { CARDS_A_COLUMN, kanbanBoard } from "../kanban";
import { CARDS_AT_ONCE, calendar, gallery } from "../gallery";
import { transferCard } from "../transfer";
import { addBase, foldersOf, newDoc, newFolder, type TreeChanges, treeList } from "../tree";
import { type ViewChanges, viewMenu } from "../view-menu";
import type { ViewView } from "../../../content/views";
import type { CommentView } from "../../../changes/comments";
import type { RecordLinkView } from "../../../content/relations/view";

type Proposed<T> = (T & { materialized: true }) | (ChangeRequestView & { materialized: false });

const computed = (field: FieldView) => traitsOf(field.type).computed;

async function dataHome(ctx: Context): Promise<Node> {
  const nodes = await api<NodeView[]>("GET", "/nodes");
  const level = ctx.me.caller.effectiveLevel;
  const canPropose = level !== null && atLeast(level, "changeRequest");
  const status = h("div", { role: "status" });
  const changes: TreeChanges | null = canPropose
    ? {
        canWrite: atLeast(level, "write"),
        done: (changeRequest) => (changeRequest.status === "merged" ? ctx.reload() : ctx.go(`/admin/change-requests/${changeRequest.id}`)),
        opened: (baseId) => ctx.go(`/admin/bases/${baseId}`),
        failed: (failure) => fill(status, notice("error", failureText(failure))),
      }
    : null;
  const folders = foldersOf(nodes);
  const actions = changes
    ? h(
        "div",
        { class: "actions" },
        h("button", { type: "button", onclick: () => addBase(changes, folders) }, "Add a base"),
        h("button", { type: "button", class: "secondary", onclick: () => newFolder(changes, folders) }, "New folder"),
        h("button", { type: "button", class: "secondary", onclick: () => newDoc(changes, folders) }, "New doc"),
      )
    : null;
  const root = nodes[0]?.parentId ?? "";
  return screen(
    "Data",
    card(
      null,
      nodes.length
        ? h("p", { class: "lead" }, canPropose ? "Open a base or a doc; a node's menu renames or moves it, and you can drag it onto a folder." : "Open a base or a doc.")
        : empty(canPropose ? "This space holds nothing yet. Add a base: start empty, or from a CSV or JSON file you already have." : "This space holds nothing yet."),
      actions,
      status,
      nodes.length ? treeList(nodes, changes, root) : null,
    ),
  );
}

/** A view's sort as the listing's `sort` parameter; the listing's own default (newest first) without one. */
const sortOfView = (view: ViewView | undefined) => {
  const [first] = view?.config.sorts ?? [];
  return first ? `${first.direction === "desc" ? "-" : ""}${first.fieldSlug}` : "-createdAt";
};

/** The same order backwards (every key of the listing's order turns with it, so a page from the end is the start's mirror). */
const reversed = (sort: string) => (sort.startsWith("-") ? sort.slice(1) : `-${sort}`);

/** The tabs over a base: its grid, then each saved view; the view shown has its menu (with `changeRequest` and above). */
function viewTabs(base: BaseView, views: ViewView[], current: ViewView | undefined, changes: ViewChanges | null, saveAs: (() => void) | null): HTMLElement {
  const tab = (href: string, name: string, selected: boolean, view?: ViewView) =>
    h(
      "li",
      {},
      h("a", { href, "aria-current": selected ? "page" : false }, name, view ? h("span", { class: "muted" }, ` ${view.type}`) : null),
      selected && view && changes ? h("button", { type: "button", class: "view-menu", "aria-label": `${view.name}: view menu`, "aria-haspopup": "dialog", onclick: () => viewMenu(changes, view) }) : null,
    );
  return h(
    "nav",
    { class: "tabs", "aria-label": "Views" },
    h(
      "ul",
      {},
      tab(`/admin/bases/${base.id}`, "Grid", !current),
      ...views.map((view) => tab(`/admin/bases/${base.id}?view=${view.id}`, view.name, view.id === current?.id, view)),
      saveAs ? h("li", {}, h("button", { type: "button", class: "secondary small save-as-view", onclick: saveAs }, "+ Save as a view")) : null,
    ),
  );
}

/** "Group by": no grouping, or one of the base's single-choice fields. */
function groupPick(base: BaseView, current: FieldView | undefined, choose: (slug: string) => void): HTMLElement {
  const choices = base.fields.filter((field) => traitsOf(field.type).stacks);
  if (choices.length === 0) return h("span", {});
  const pick = h("select", { "aria-label": "Group by" }, h("option", { value: "" }, "No grouping"), choices.map((field) => h("option", { value: field.slug, selected: field === current }, `Group by ${field.name}`)));
  pick.addEventListener("change", () => choose(pick.value));
  return pick;
}

/** The screen's conditions and sort, as a view's config keeps them. */
function shownAsConfig(conditions: Conditions | null, sort: string | undefined) {
  return {
    ...asConfig(conditions),
    sorts: sort && !["createdAt", "-createdAt", "updatedAt", "-updatedAt"].includes(sort) ? [{ fieldSlug: sort.replace(/^-/, ""), direction: sort.startsWith("-") ? ("desc" as const) : ("asc" as const) }] : [],
  };
}

/** Saving the way the base is looked at now as a view: a change request like every other. */
function saveViewForm(ctx: Context, base: BaseView, shown: ReturnType<typeof shownAsConfig>): HTMLElement {
  const selects = base.fields.filter((field) => traitsOf(field.type).stacks);
  const files = base.fields.filter((field) => traitsOf(field.type).holdsFiles);
  const dates = base.fields.filter((field) => traitsOf(field.type).dated);
  const choices = (fields: FieldView[]) => fields.map((field) => ({ value: field.slug, label: field.name }));
  return card(
    "Save as a view",
    form(
      "Save view",
      [
        input("Name", "name", { required: true, placeholder: "By stage" }),
        select(
          "Type",
          "type",
          [
            { value: "table", label: "Table" },
            ...(selects.length ? [{ value: "kanban", label: "Kanban" }] : []),
            { value: "gallery", label: "Gallery" },
            ...(dates.length ? [{ value: "calendar", label: "Calendar" }] : []),
          ],
          "table",
        ),
        selects.length ? select("Kanban columns from", "stack", choices(selects), selects[0].slug, "A select field: a column per choice.") : null,
        files.length ? select("Gallery covers from", "cover", choices(files), files[0].slug, "An attachment field: its first image.") : null,
        dates.length ? select("Calendar dates from", "date", choices(dates), dates[0].slug) : null,
      ],
      async (values) => {
        const type = String(values.get("type"));
        const config =
          type === "kanban"
            ? { stackByFieldSlug: String(values.get("stack")) }
            : type === "gallery" && values.get("cover")
              ? { coverFieldSlug: String(values.get("cover")) }
              : type === "calendar"
                ? { dateFieldSlug: String(values.get("date")) }
                : {};
        // A view keeps the filter and sort shown when it is saved.
        const answer = await api<Proposed<ViewView>>("POST", "/views/change-requests", { operation: "create", baseId: base.id, name: values.get("name"), type, config: { ...config, ...shown } });
        ctx.go(answer.materialized ? `/admin/bases/${base.id}?view=${answer.id}` : `/admin/change-requests/${answer.id}`);
      },
    ),
  );
}

/** A page of a base's grid (of `ROWS_A_PAGE` rows), numbered from 1. */
const gridPagePath = (baseId: string, viewId: string | undefined, page: number, sort: string | undefined, filter: Record<string, string>) =>
  `/records/page${query({ baseId, viewId, page, pageSize: ROWS_A_PAGE, sort, include: "none", linkedNames: true, ...filter })}`;

/**
 * The grid's first page, where the address alone says the grid is shown without a view (a view's
 * type and grouping are known only once read): null otherwise.
 */
const firstGridPage = (params: Record<string, string>, address: URLSearchParams): string | null =>
  address.has("view") || address.get("group") || wantsList() ? null : gridPagePath(params.id, undefined, 1, address.get("sort") ?? undefined, listingParams(conditionsOf(address)));

/**
 * What a base's screen reads first, named by its address alone (`Screen.reads`): the base and its
 * views; and, when the grid is shown without a view, its first page and the open proposals drawn
 * beside its cells.
 */
function baseReads(params: Record<string, string>, address: URLSearchParams): string[] {
  const ref = encodeURIComponent(params.id);
  const first = firstGridPage(params, address);
  return [`/bases/${ref}`, `/bases/${ref}/views`, ...(first ? [first, openChangeRequestsOf(params.id)] : [])];
}

async function basePage(ctx: Context): Promise<Node> {
  const ref = encodeURIComponent(ctx.params.id);
  // The grid's first page comes with the base: the screen is drawn once, with its rows (a failure is read again, and said, by the grid).
  const firstPath = firstGridPage(ctx.params, ctx.query);
  const [base, views, firstPage] = await Promise.all([
    api<BaseView>("GET", `/bases/${ref}`),
    api<ViewView[]>("GET", `/bases/${ref}/views`),
    firstPath ? api<GridPage>("GET", firstPath).catch(() => undefined) : undefined,
  ]);
  const level = ctx.me.caller.effectiveLevel;
  const forms = formsCard(base, level !== null && atLeast(level, "manage"), () => ctx.reload());
  const view = views.find((candidate) => candidate.id === ctx.query.get("view"));
  const sort = ctx.query.get("sort") ?? undefined;
  const conditions = conditionsOf(ctx.query);
  const where = conditions ? JSON.stringify(conditions) : undefined;
  const here = (extra: Record<string, string | undefined>) => `/admin/bases/${base.id}${query({ view: view?.id, where, sort, group: ctx.query.get("group") ?? undefined, ...extra })}`;
  const opened = ctx.query.get("record");
  const panel = opened ? await recordPanel(ctx, opened, here) : null;
  const filter = listingParams(conditions);
  const canPropose = level !== null && atLeast(level, "changeRequest");
  const stackedBy = view?.type === "kanban" ? base.fields.find((candidate) => candidate.slug === (view.config.stackByFieldSlug ?? view.config.groupByFieldSlug) && traitsOf(candidate.type).stacks) : undefined;
  const dated = view?.type === "calendar" ? base.fields.find((candidate) => candidate.slug === (view.config.dateFieldSlug ?? view.config.startFieldSlug) && traitsOf(candidate.type).dated) : undefined;
  const through = (extra: Record<string, string | number | undefined>) =>
    api<{ records: RecordView[] }>("GET", `/records${query({ baseId: base.id, viewId: view?.id, limit: CARDS_AT_ONCE, include: "none", ...extra })}`).then((page) => page.records);
  const layoutNote = h("div", { class: "notice info layout-note", role: "status", hidden: true });
  const home = view ? viewLayout(base, view, () => (layoutNote.hidden = false)) : browserLayout(base.id);
  if (view && canPropose) {
    const save = action("Save to the view", async () => {
      const answer = await api<Proposed<ViewView>>("POST", "/views/change-requests", { operation: "update", viewId: view.id, config: { ...view.config, ...layoutConfig(base, home.layout) } });
      home.revert();
      if (answer.materialized) ctx.reload();
      else ctx.go(`/admin/change-requests/${answer.id}`);
    });
    const back = action("Put back", async () => (home.revert(), ctx.reload()), { kind: "secondary" });
    layoutNote.append("The columns and rows of this view are changed on this page only. ", save, " ", back);
    layoutNote.hidden = !home.unsaved;
  }
  const tabular = !view || view.type === "table" || view.type === "gantt";
  /** The columns the grid shows, in its order: what an export writes. */
  const shownColumns = () => orderedColumns(base, primaryField(base.fields), home.layout.order).filter((field) => !home.layout.hidden.includes(field.slug)).map((field) => field.slug);
  const listed = tabular && wantsList();
  // Grouped by a single-choice field: the address's `group` (empty for none), else the view's.
  const grouping = ctx.query.get("group") ?? (typeof view?.config.groupByFieldSlug === "string" ? view.config.groupByFieldSlug : "");
  const groupedBy = tabular && !listed ? base.fields.find((candidate) => candidate.slug === grouping && traitsOf(candidate.type).stacks) : undefined;
  /** The listing shown (base, view, filter, sort): a grid or a list drawn again for it keeps its place. */
  const place = JSON.stringify([base.id, view?.id ?? null, where ?? null, sort ?? null]);
  /** The records as the view shows them: a gallery, a calendar, a kanban board, the grid, or a list (a phone's). */
  const drawn = () => {
    if (view?.type === "gallery") return gallery(base, base.fields.find((candidate) => candidate.slug === view.config.coverFieldSlug), () => through({}));
    if (dated) {
      const month = (from: string, to: string) =>
        through({ "filters[0][fieldSlug]": dated.slug, "filters[0][operator]": "gte", "filters[0][value]": from, "filters[1][fieldSlug]": dated.slug, "filters[1][operator]": "lte", "filters[1][value]": `${to}T23:59:59.999Z` });
      return calendar(base, dated, ctx.query.get("month"), (shown) => here({ month: shown }), month);
    }
    if (stackedBy) {
      const column = (choice: string | null) =>
        api<{ records: RecordView[]; total: number }>(
          "GET",
          `/records/page${query({ baseId: base.id, viewId: view?.id, page: 1, pageSize: CARDS_A_COLUMN, include: "none", "filters[0][fieldSlug]": stackedBy.slug, "filters[0][operator]": choice === null ? "isEmpty" : "eq", "filters[0][value]": choice ?? undefined })}`,
        );
      return kanbanBoard({ base, field: stackedBy, canPropose, load: column });
    }
    if (groupedBy) {
      const at = Object.keys(filter).filter((key) => key.startsWith("groups[") && key.endsWith("[match]")).length;
      const columns = orderedColumns(base, undefined, home.layout.order).filter((field) => !home.layout.hidden.includes(field.slug));
      return groupedTable(
        base,
        groupedBy,
        columns,
        (choice, page) =>
          api<{ records: RecordView[]; total: number; linkedRecords?: Record<string, string | null> }>(
            "GET",
            `/records/page${query({ baseId: base.id, viewId: view?.id, page, pageSize: GROUP_PAGE, sort, include: "none", linkedNames: true, ...filter, [`groups[${at}][match]`]: "all", [`groups[${at}][filters][0][fieldSlug]`]: groupedBy.slug, [`groups[${at}][filters][0][operator]`]: choice === null ? "isEmpty" : "eq", [`groups[${at}][filters][0][value]`]: choice ?? undefined })}`,
          ),
        (id) => here({ record: id }),
      );
    }
    if (listed)
      return recordList(
        base,
        (page) =>
          api<{ records: RecordView[]; total: number; linkedRecords?: Record<string, string | null> }>(
            "GET",
            `/records/page${query({ baseId: base.id, viewId: view?.id, page, pageSize: LIST_PAGE, sort, include: "none", linkedNames: true, ...filter })}`,
          ),
        (id) => here({ record: id }),
        place,
        panel !== null,
      );
    return recordGrid({
      base,
      layout: home,
      pending: () => api<{ changeRequests: ChangeRequestView[] }>("GET", openChangeRequestsOf(base.id)).then((page) => pendingValues(page.changeRequests, base.fields)),
      load: (page, fromEnd) => api<GridPage>("GET", gridPagePath(base.id, view?.id, page, fromEnd ? reversed(sort ?? sortOfView(view)) : sort, filter)),
      first: firstPage,
      place,
      keyboardElsewhere: panel !== null,
      sort,
      sortBy: (next) => ctx.go(here({ sort: next })),
      openHref: (id) => here({ record: id }),
      filterBy: (slug) => builder.focusOn(slug),
      canPropose,
      fieldChanges: canPropose ? { base, done: (changeRequest) => (changeRequest.status === "merged" ? ctx.reload() : ctx.go(`/admin/change-requests/${changeRequest.id}`)) } : undefined,
      relayout: () => ctx.reload(),
      unfiltered: conditions || view?.config.filters?.length || view?.config.groups?.length ? api<{ total: number }>("GET", `/records/count${query({ baseId: base.id })}`).then((answer) => answer.total) : undefined,
    });
  };
  const content = drawn();
  const viewChanges: ViewChanges | null = canPropose
    ? {
        base,
        shown: () => ({ ...shownAsConfig(conditions, sort), groupByFieldSlug: groupedBy?.slug ?? null }),
        done: (answer, viewId) => {
          if (!answer.materialized) ctx.go(`/admin/change-requests/${answer.id}`);
          else if (viewId && viewId === view?.id) ctx.reload();
          else ctx.go(`/admin/bases/${base.id}${viewId ? `?view=${viewId}` : ""}`);
        },
      }
    : null;
  ctx.onLive(content.live);
  if (panel && opened) ctx.onLive(followRecord(ctx, panel, opened, here));
  // "Save as a view" sits with the views: a tab's "+" opens it there.
  const saveView = canPropose ? saveViewForm(ctx, base, { ...shownAsConfig(conditions, sort), ...(groupedBy ? { groupByFieldSlug: groupedBy.slug } : {}) }) : null;
  if (saveView) saveView.hidden = true;
  const builder = conditionBuilder(base.fields, conditions, (next) => ctx.go(`/admin/bases/${base.id}${query({ view: view?.id, where: next ? JSON.stringify(next) : undefined, sort })}`));
  const page = screen(
    base.name,
    h(
      "p",
      { class: "lead" },
      base.description || `${base.fields.length} fields.`,
      stackedBy ? " Drag a card to another column, or choose its column; each move is a change request. " : view && view.type !== "table" ? " " : " Arrows move between cells, Enter edits one, Escape cancels; each edit is a change request. ",
      link(`/admin/bases/${base.id}/new`, "New record with every field"),
      " · ",
      link(`/admin/bases/${base.id}/restore`, "Archived and deleted"),
    ),
    viewTabs(base, views, view, viewChanges, saveView ? () => ((saveView.hidden = !saveView.hidden), saveView.querySelector("input")?.focus()) : null),
    saveView,
    card(
      view ? view.name : "Records",
      h(
        "div",
        { class: "records-bar" },
        view && view.type !== "table" ? null : builder.toggle,
        tabular ? layoutSwitch(listed, () => ctx.reload()) : null,
        tabular && !listed ? groupPick(base, groupedBy, (slug) => ctx.go(here({ group: slug }))) : null,
      ),
      view && view.type !== "table" ? null : builder.form,
      layoutNote,
      content.node,
    ),
    transferCard(base, () => ({ viewId: view?.id, sort, ...filter, fields: shownColumns().join(","), headers: "names" }), canPropose, level !== null && atLeast(level, "write")),
    forms,
    panel,
  );
  // A base uses the window's width: a grid of many fields is what it is for.
  page.classList.add("wide");
  return page;
}

/** What a proposal's answer means for the person: saved, or waiting in the Inbox. */
function proposalOutcome(ctx: Context, answer: Proposed<RecordView>, savedAt: (id: string) => string = (id) => `/admin/records/${id}?saved=1`): void {
  if (answer.materialized) ctx.go(savedAt(answer.id));
  else ctx.go(`/admin/change-requests/${answer.id}`);
}

async function newRecord(ctx: Context): Promise<Node> {
  const base = await api<BaseView>("GET", `/bases/${encodeURIComponent(ctx.params.id)}`);
  const editable = base.fields.filter((field) => !computed(field));
  return screen(
    `New record in ${base.name}`,
    card(
      null,
      h("p", {}, "With a Write data level or above this saves at once; otherwise it becomes a change request that waits in the Inbox."),
      form("Save record", editable.map((field) => fieldInput(field, null)), async (values) => {
        const fields = Object.fromEntries(editable.map((field) => [field.slug, readField(field, values)]).filter(([, value]) => value !== null));
        proposalOutcome(ctx, await api<Proposed<RecordView>>("POST", `/bases/${base.id}/change-requests`, { fields }));
      }),
    ),
  );
}

/**
 * A record: its fields to edit (by type), its comments and its history. Shown as its own page, or
 * beside its base's grid (`?record=`), where a save stays beside the grid (`savedAt`).
 */
async function recordParts(ctx: Context, id: string, savedAt?: (id: string) => string): Promise<{ title: string; parts: Child[] }> {
  const record = await api<FullRecordView>("GET", `/records/${encodeURIComponent(id)}`);
  const [history, proposals, comments, links] = await Promise.all([
    api<CommitView[]>("GET", `/records/${record.id}/history`),
    api<ChangeRequestView[]>("GET", `/records/${record.id}/change-requests`),
    api<CommentView[]>("GET", `/comments${query({ subjectType: "record", subjectId: record.id })}`),
    api<RecordLinkView[]>("GET", `/records/${record.id}/links`),
  ]);
  // The records linking here, by name (a few: each is read once).
  const linking = new Map<string, string>();
  await Promise.all(
    [...new Set(links.filter((one) => one.targetRecordId === record.id).map((one) => one.sourceRecordId))].slice(0, LINKS_SHOWN).map((id) =>
      api<FullRecordView>("GET", `/records/${id}`).then((other) => linking.set(id, recordName(other.base.fields, other.fields, id)), () => undefined),
    ),
  );
  const level = ctx.me.caller.effectiveLevel;
  const fields = record.base.fields;
  const editable = fields.filter((field) => !computed(field));
  const title = recordName(fields, record.fields, record.id);
  const waiting = pendingList(record.id, proposals, fields, record.fields);
  // A file chosen or removed is saved at once, alone (the form's other edits stay as they are, for its own button).
  const saveFiles = async (field: FieldView, ids: string[]) => {
    const answer = await api<Proposed<RecordView>>("POST", `/records/${record.id}/change-requests`, { operation: "update", fields: { [field.slug]: ids }, message: `${title}: files of ${field.name}` });
    return answer.materialized ? "saved." : "proposed: it waits for review in the Inbox.";
  };
  const shownOnly = fields.filter(computed);
  const parts: Child[] = [
    h("p", { class: "lead" }, "In ", link(`/admin/bases/${record.baseId}`, record.base.name), `, updated ${when(record.updatedAt)}.`, record.status === "archived" ? " Archived." : ""),
    ctx.query.get("saved") ? notice("success", "Saved.") : null,
    waiting ? card("Waiting for review", waiting) : null,
    card(
      "Edit",
      form("Save changes", editable.map((field) => fieldInput(field, record.fields[field.slug], saveFiles)), async (values) => {
        const changed = Object.fromEntries(
          editable.map((field) => [field.slug, readField(field, values), field] as const).filter(([slug, value, field]) => comparable(field, value) !== comparable(field, record.fields[slug])).map(([slug, value]) => [slug, value]),
        );
        if (Object.keys(changed).length === 0) throw new Error("Nothing changed.");
        // Someone's change to the same fields meanwhile is offered field by field, not refused again.
        const answer = await saveRecordChange(record, changed, { fields });
        if (answer) proposalOutcome(ctx, answer, savedAt);
      }),
    ),
    shownOnly.length
      ? card("Computed", h("dl", { class: "computed" }, ...shownOnly.flatMap((field) => [h("dt", {}, field.name, h("span", { class: "muted" }, ` ${field.type}`)), h("dd", {}, inWords(field, record.fields[field.slug], {}))])))
      : null,
    linksCard(links, linking),
    card(
      "Comments",
      comments.length ? commentList(comments) : empty("No comments yet."),
      level !== null && atLeast(level, "changeRequest")
        ? form("Comment", [textarea("Comment", "body", { rows: 3 })], async (values) => {
            await api("POST", "/comments", { subjectType: "record", subjectId: record.id, body: values.get("body") });
            ctx.reload();
          })
        : null,
    ),
    card("History", historyTable(history, fields, await linkedNames(history, fields))),
  ];
  return { title, parts };
}

/** A value in words, by its field's kind: linked records by name, files by name, lists joined; "—" when empty. */
const inWords = (field: FieldView, value: unknown, linked: Record<string, string | null>): string =>
  value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0) ? "—" : pageKindOf(field.type).words(value, linked);

/** Records a history's links name, read for their names (at most `LINKS_SHOWN`, each once). */
async function linkedNames(history: CommitView[], fields: FieldView[]): Promise<Record<string, string | null>> {
  const links = fields.filter((field) => traitsOf(field.type).source === "links").map((field) => field.slug);
  const ids = [...new Set(history.flatMap((commit) => links.flatMap((slug) => [commit.payload[slug] ?? []].flat().map(String))))].slice(0, LINKS_SHOWN);
  const names: Record<string, string | null> = {};
  await Promise.all(ids.map((id) => api<FullRecordView>("GET", `/records/${id}`).then((other) => (names[id] = recordName(other.base.fields, other.fields, id)), () => undefined)));
  return names;
}

const RECORD_CHANGES = { record_create: "Created", record_update: "Changed", record_delete: "Archived", record_restore: "Restored" };

/**
 * A record's history, newest first: each change as its fields' old → new values (worked out from
 * the commits before it, oldest first), with who made it and when; a creation lists what it set.
 */
function historyTable(history: CommitView[], fields: FieldView[], linked: Record<string, string | null>): HTMLElement {
  const state: Record<string, unknown> = {};
  const names = new Map(fields.map((field) => [field.slug, field.name]));
  const kinds = new Map(fields.map((field) => [field.slug, field]));
  const said = (slug: string, value: unknown) => {
    const field = kinds.get(slug);
    return field ? inWords(field, value, linked) : shown(value);
  };
  const changes = [...history]
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
    .map((commit) => {
      const created = commit.operation === "record_create";
      const lines = Object.entries(commit.payload)
        .filter(([slug, value]) => created || JSON.stringify(state[slug] ?? null) !== JSON.stringify(value ?? null))
        .map(([slug, value]) => h("li", {}, h("strong", {}, names.get(slug) ?? slug), ": ", created ? said(slug, value) : `${said(slug, state[slug])} → ${said(slug, value)}`));
      Object.assign(state, commit.payload);
      const what = (RECORD_CHANGES as Record<string, string>)[commit.operation] ?? commit.operation;
      return [when(commit.createdAt), commit.authorUser?.name ?? commit.author, `${what}${commit.message ? `: ${commit.message}` : ""}`, lines.length ? h("ul", { class: "changes" }, ...lines) : "—"];
    });
  return table(["When", "By", "Change", "Fields"], changes.reverse());
}

async function recordPage(ctx: Context): Promise<Node> {
  const { title, parts } = await recordParts(ctx, ctx.params.id);
  return screen(title, ...parts);
}

/** Records linked to a record that its page names (each is read for its name). */
const LINKS_SHOWN = 20;

/** The records that link to this one, by the field they link through (those it links to are its relation fields above). */
function linksCard(links: RecordLinkView[], names: Map<string, string>): Child {
  const incoming = links.filter((one) => names.has(one.sourceRecordId));
  if (incoming.length === 0) return null;
  return card("Linked from", h("ul", {}, ...incoming.map((one) => h("li", {}, link(`/admin/records/${one.sourceRecordId}`, names.get(one.sourceRecordId)!), h("span", { class: "muted" }, ` through ${one.fieldSlug}`)))));
}

/** The record beside the grid: a labelled region after it, with a way back and a way to its own page. */
async function recordPanel(ctx: Context, recordId: string, here: (extra: Record<string, string | undefined>) => string): Promise<HTMLElement> {
  const { title, parts } = await recordParts(ctx, recordId, (id) => here({ record: id, saved: "1" }));
  const closed = here({ record: undefined, saved: undefined });
  const panel = h(
    "aside",
    { class: "record-panel", "aria-label": `Record ${title}` },
    h("div", { class: "panel-head" }, h("h2", { tabindex: "-1", "data-focus": "" }, title), link(closed, "Close"), link(`/admin/records/${recordId}`, "Open as a page")),
    ...parts,
  );
  panel.addEventListener("keydown", (event) => {
    if ((event as KeyboardEvent).key === "Escape" && !(event.target as HTMLElement).matches("input, textarea, select")) ctx.go(closed);
  });
  return panel;
}

/**
 * The record beside the grid follows another client's changes to it (its values, history and
 * comments), drawn again in place at most every 150 ms, and never under someone typing in it.
 */
function followRecord(ctx: Context, first: HTMLElement, recordId: string, here: (extra: Record<string, string | undefined>) => string): (event: LiveEvent) => void {
  let panel = first;
  let due: ReturnType<typeof setTimeout> | null = null;
  return (event) => {
    const data = event.data as { record?: { id?: string }; comment?: { recordId?: string | null } };
    if ((data.record?.id ?? data.comment?.recordId) !== recordId || due) return;
    due = setTimeout(async () => {
      due = null;
      if (panel.contains(document.activeElement) && (document.activeElement as HTMLElement).matches("input, textarea, select")) return;
      const fresh = await recordPanel(ctx, recordId, here);
      if (!panel.isConnected) return;
      panel.replaceWith(fresh);
      panel = fresh;
    }, 150);
  };
}

export const dataScreens: Screen[] = [
  { path: "/admin/data", title: "Data", render: dataHome },
  { path: "/admin/bases/:id", title: "Base", render: basePage, reads: baseReads },
  { path: "/admin/bases/:id/new", title: "New record", render: newRecord },
  {
    path: "/admin/records/:id",
    title: "Record",
    render: recordPage,
    live: (event, ctx) => (event.type.startsWith("record.") && event.data.record?.id === ctx.params.id) || event.data.comment?.recordId === ctx.params.id,
  },
];
