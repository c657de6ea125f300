import type { ChangeRequestView } from "../../changes/views";
import type { BaseView } from "../../content/bases";
import type { ViewView } from "../../content/views";
import { api } from "./api";
import { h } from "./dom";
import { dialogForm, input, menuDialog } from "./ui";

/**
 * A saved view's own menu (docs/admin.md, "Views"): renamed, duplicated, given the filter and sort
 * the grid shows now, or deleted. Each is the view's change request: merged at once where the
 * level allows, else waiting for review.
 */

export interface ViewChanges {
  base: BaseView;
  /** What the grid shows now: the screen's filter and sort, as a view's config keeps them. */
  shown(): { filters?: { fieldSlug: string; operator: string; value?: unknown }[]; sorts?: { fieldSlug: string; direction: "asc" | "desc" }[] };
  /** After a change: merged (the view, or the base after a deletion, is drawn again) or waiting (its change request opens). */
  done(changeRequest: ChangeRequestView & { materialized?: boolean; id: string }, viewId: string | null): void;
}

type Proposed = (ViewView & { materialized: true }) | (ChangeRequestView & { materialized: false });

const proposeView = (body: Record<string, unknown>) => api<Proposed>("POST", "/views/change-requests", body);

/** The view's menu, opened from its tab. */
export function viewMenu(changes: ViewChanges, view: ViewView): void {
  const outcome = (answer: Proposed, viewId: string | null) => changes.done(answer as ChangeRequestView & { materialized?: boolean; id: string }, answer.materialized ? viewId : null);
  const rename = () => {
    const name = input("Name", "name", { required: true, value: view.name });
    dialogForm(`Rename ${view.name}`, [name], "Rename", async () => outcome(await proposeView({ operation: "update", viewId: view.id, name: name.querySelector("input")!.value.trim() }), view.id));
  };
  const duplicate = () => {
    const name = input("Name", "name", { required: true, value: `${view.name} copy` });
    dialogForm(`Duplicate ${view.name}`, [name], "Duplicate", async () => {
      const answer = await proposeView({ operation: "create", baseId: changes.base.id, name: name.querySelector("input")!.value.trim(), type: view.type, config: view.config });
      outcome(answer, answer.materialized ? answer.id : null);
    });
  };
  const keepShown = () => {
    const shown = changes.shown();
    const said = [
      ...(shown.filters ?? []).map((filter) => `${filter.fieldSlug} ${filter.operator}${filter.value === undefined ? "" : ` ${String(filter.value)}`}`),
      ...(shown.sorts ?? []).map((sort) => `sorted by ${sort.fieldSlug}, ${sort.direction === "asc" ? "ascending" : "descending"}`),
    ];
    dialogForm(`Update ${view.name}`, [h("p", {}, said.length ? `The view keeps: ${said.join("; ")}.` : "No filter or sort is shown: the view keeps none.")], "Update view", async () =>
      outcome(await proposeView({ operation: "update", viewId: view.id, config: { ...view.config, filters: shown.filters ?? [], sorts: shown.sorts ?? [] } }), view.id),
    );
  };
  const remove = () =>
    dialogForm(`Delete ${view.name}?`, [h("p", {}, "The view goes; the records stay as they are. The deletion is proposed as the view's change, and a deleted view can be restored.")], "Delete view", async () => outcome(await proposeView({ operation: "delete", viewId: view.id }), null), true);
  menuDialog(view.name, null, [
    { label: "Rename…", run: rename },
    { label: "Duplicate…", run: duplicate },
    { label: "Keep the filter and sort shown…", run: keepShown },
    { label: "Delete…", run: remove, danger: true },
  ]);
}
