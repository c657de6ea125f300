import type { BaseView, FieldView } from "../../content/bases";
import { primaryField } from "../../shared/field-types";
import type { RecordView } from "../../content/records/view";
import { h } from "./dom";
import type { LiveEvent } from "./live";
import { failureText, link, recordName, shown, statusLine } from "./ui";
import { saveRecordChange } from "./record-save";

/** Cards a column shows (the newest). */
export const CARDS_A_COLUMN = 50;

export interface BoardSetup {
  base: BaseView;
  /** The select field the board is stacked by. */
  field: FieldView;
  /** Reads a column's newest records (those whose value is `choice`, null: none, through the view) and how many it holds. */
  load(choice: string | null): Promise<{ records: RecordView[]; total: number }>;
  canPropose: boolean;
}

/**
 * A kanban board: a column per choice of a select field (and one for records without a value),
 * a card per record. Dragging a card to another column, or choosing the column in the card's own
 * list (the keyboard's way), proposes the change: merged at once where the level allows, else the
 * card stays and says the move waits for review in the Inbox.
 */
export function kanbanBoard(setup: BoardSetup): { node: HTMLElement; live(event: LiveEvent): void } {
  const { base, field } = setup;
  const primary = primaryField(base.fields);
  const shownFields = base.fields.filter((other) => other !== primary && other !== field).slice(0, 2);
  const choices: (string | null)[] = [...((field.options.choices as { name: string }[] | undefined) ?? []).map((choice) => choice.name), null];
  const label = (choice: string | null) => choice ?? `No ${field.name.toLowerCase()}`;
  const status = statusLine("grid-status");
  const board = h("div", { class: "board" });
  const waiting = new Map<string, string | null>();

  const { say, fail } = status;

  function card(record: RecordView): HTMLElement {
    const name = recordName(base.fields, record.fields, record.id);
    const current = (record.fields[field.slug] as string | null | undefined) ?? null;
    const proposedTo = waiting.get(record.id);
    const move = h(
      "select",
      { "aria-label": `Move ${name} to`, disabled: !setup.canPropose },
      ...choices.map((choice) => h("option", { value: choice ?? "", selected: choice === current }, label(choice))),
    );
    move.addEventListener("change", () => void propose(record, move.value === "" ? null : move.value));
    const node = h(
      "article",
      { class: `board-card${proposedTo !== undefined ? " proposed" : ""}`, draggable: setup.canPropose ? "true" : "false", "data-record": record.id, "aria-label": name },
      h("h3", {}, h("a", { href: `/admin/records/${record.id}`, draggable: "false" }, name)),
      ...shownFields.map((other) => h("p", { class: "muted" }, `${other.name}: ${shown(record.fields[other.slug])}`)),
      proposedTo !== undefined ? h("p", { class: "badge status-in_review" }, `Proposed: to ${label(proposedTo)}`) : null,
      h("label", { class: "move" }, move),
    );
    node.addEventListener("dragstart", (event) => {
      (event as DragEvent).dataTransfer?.setData("text/plain", record.id);
      node.classList.add("dragging");
    });
    node.addEventListener("dragend", () => node.classList.remove("dragging"));
    return node;
  }

  const records = new Map<string, RecordView>();

  function column(choice: string | null, rows: RecordView[], total: number): HTMLElement {
    const list = h("div", { class: "board-cards" }, ...rows.map(card));
    const count = h("span", { class: "count", title: total > rows.length ? `The newest ${rows.length} of ${total} are shown` : undefined }, total.toLocaleString());
    const node = h(
      "section",
      { class: "board-column", "aria-label": label(choice), "data-choice": choice ?? "" },
      h("h2", {}, label(choice), " ", count),
      list,
      total > rows.length ? h("p", { class: "muted" }, `${(total - rows.length).toLocaleString()} more: filter the grid to see them.`) : null,
    );
    node.addEventListener("dragover", (event) => {
      event.preventDefault();
      node.classList.add("over");
    });
    node.addEventListener("dragleave", () => node.classList.remove("over"));
    node.addEventListener("drop", (event) => {
      event.preventDefault();
      node.classList.remove("over");
      const record = records.get((event as DragEvent).dataTransfer?.getData("text/plain") ?? "");
      if (record && ((record.fields[field.slug] as string | null | undefined) ?? null) !== choice) void propose(record, choice);
    });
    return node;
  }

  async function propose(record: RecordView, choice: string | null): Promise<void> {
    const name = recordName(base.fields, record.fields, record.id);
    say("Saving…");
    try {
      const from = label((record.fields[field.slug] as string | null | undefined) ?? null);
      // Someone's move of the same card meanwhile is offered (theirs or yours), not refused.
      const answer = await saveRecordChange(record, { [field.slug]: choice }, { fields: base.fields, message: `${name}: ${field.name} ${from} → ${label(choice)}` });
      if (answer === null) say(`${name} stays where it is.`);
      else if (answer.materialized) {
        waiting.delete(record.id);
        say(`Moved ${name} to ${label(choice)}.`);
      } else {
        waiting.set(record.id, choice);
        say(`Moving ${name} to ${label(choice)} is proposed: it waits for review in the Inbox. `, link(`/admin/change-requests/${answer.id}`, "See the change request"));
      }
      await load();
    } catch (failure) {
      fail(failureText(failure));
    }
  }

  async function load(): Promise<void> {
    const columns = await Promise.all(choices.map((choice) => setup.load(choice)));
    records.clear();
    for (const { records: rows } of columns) for (const record of rows) records.set(record.id, record);
    board.replaceChildren(...choices.map((choice, i) => column(choice, columns[i].records, columns[i].total)));
  }

  void load().catch((failure) => fail(failureText(failure)));

  let due: ReturnType<typeof setTimeout> | null = null;
  return {
    node: h("div", { class: "board-frame" }, status.node, board),
    live(event: LiveEvent) {
      if (event.baseId !== base.id || !event.type.startsWith("record.")) return;
      // The record changed for good (a reviewer merged the move, or someone else moved it): no longer "proposed".
      if (event.data.record?.id) waiting.delete(event.data.record.id);
      if (due) return;
      due = setTimeout(() => {
        due = null;
        void load();
      }, 150);
    },
  };
}
