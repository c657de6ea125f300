import type { ChangeRequestView } from "../../changes/views";
import type { BaseView, FieldView } from "../../content/bases";
import type { RecordView } from "../../content/records/view";
import { api, ApiError } from "./api";
import type { Child } from "./dom";
import { saveRecordChange } from "./record-save";
import { failureText, link } from "./ui";

/** A cell to write: its record as the grid read it, its field, and the value to give it. */
export interface CellWrite {
  record: RecordView;
  field: FieldView;
  value: unknown;
}

/** What the writes need of their grid: its base, its status line, a re-read of the rows, and the cells marked as waiting for review. */
export interface WritesHome {
  base: BaseView;
  say(...message: Child[]): void;
  /** Says an error, at once. */
  fail(...message: Child[]): void;
  reread(): void;
  /** `recordId:slug` → the change request a cell's new value waits in. */
  waiting: Map<string, string>;
}

/** A change of the page's own that merged, to undo: each cell's value before and after, and the records it added. */
type Step = { label: string; cells: { recordId: string; slug: string; before: unknown; after: unknown }[]; created: string[] };

/**
 * The grid's writes, each a change request (merged at once where the level allows, else waiting
 * for review with its cells marked), and the undo of every one that merged, however it was made:
 * a cell typed in, a checkbox toggled, a paste, a clear, a fill, a value set on chosen rows.
 */
export function gridWrites(home: WritesHome) {
  const { base, say, fail } = home;
  const undoable: Step[] = [];
  const redoable: Step[] = [];
  const remember = (label: string, cells: CellWrite[], created: string[] = []) => {
    undoable.push({ label, cells: cells.map((cell) => ({ recordId: cell.record.id, slug: cell.field.slug, before: cell.record.fields[cell.field.slug] ?? null, after: cell.value })), created });
    redoable.length = 0;
  };

  /**
   * Writes cells (and new records, a paste's rows past the end) as bulk change requests, up to
   * 1,000 records each; answers whether they were taken (merged, or waiting with their cells marked).
   */
  async function writeCells(label: string, cells: CellWrite[], creates: Record<string, unknown>[] = [], undoing = false): Promise<boolean> {
    const changed = cells.filter((cell) => JSON.stringify(cell.value) !== JSON.stringify(cell.record.fields[cell.field.slug] ?? null));
    if (changed.length === 0 && creates.length === 0) {
      say("Nothing to change.");
      return false;
    }
    const byRecord = new Map<string, { record: RecordView; fields: Record<string, unknown> }>();
    for (const cell of changed) {
      const entry = byRecord.get(cell.record.id) ?? { record: cell.record, fields: {} };
      entry.fields[cell.field.slug] = cell.value;
      byRecord.set(cell.record.id, entry);
    }
    const updates = [...byRecord.values()].map(({ record, fields }) => ({ recordId: record.id, fields, ...(undoing ? {} : { baseCommitId: record.headCommitId }) }));
    say("Saving…");
    try {
      const answers: ChangeRequestView[] = [];
      for (let at = 0; at < updates.length; at += 1000) answers.push(await api<ChangeRequestView>("POST", `/bases/${base.id}/records/bulk-update-change-request`, { updates: updates.slice(at, at + 1000), message: label }));
      const created: string[] = [];
      for (let at = 0; at < creates.length; at += 1000) {
        const answer = await api<ChangeRequestView>("POST", `/bases/${base.id}/records/bulk-change-request`, { records: creates.slice(at, at + 1000).map((fields) => ({ fields })), message: label });
        answers.push(answer);
        if (answer.status === "merged") created.push(...((answer.mergeSummary.recordIds as string[] | undefined) ?? []));
      }
      const waiting = answers.filter((answer) => answer.status !== "merged");
      if (waiting.length === 0) {
        if (!undoing && (changed.length > 0 || created.length > 0)) remember(label, changed, created);
        say(`${label}: saved.${creates.length ? ` ${creates.length} new record${creates.length === 1 ? "" : "s"}.` : ""}`);
      } else {
        for (const cell of changed) home.waiting.set(`${cell.record.id}:${cell.field.slug}`, waiting[0].id);
        say(`${label}: proposed, it waits for review in the Inbox. `, ...waiting.map((answer) => link(`/admin/change-requests/${answer.id}`, "See the change request")));
      }
      // New records are counted when the listing is read again (and as their events come).
      home.reread();
      return true;
    } catch (failure) {
      if (failure instanceof ApiError && failure.reason === "MERGE_CONFLICT") {
        // Someone changed some of these cells meanwhile: nothing was written; the rows are read again, so doing it again writes over what is there now.
        fail(`${label}: nothing was written, as someone changed some of these records meanwhile. The rows show their values now: do it again to write over them.`);
        home.reread();
      } else fail(failureText(failure));
      return false;
    }
  }

  /**
   * One cell typed in or toggled: saved against the record's head as the grid read it (someone's
   * change meanwhile is offered field by field, `record-save.ts`). Answers the record as it now is
   * when it merged, `waiting` when it waits for review, or null when nothing was saved (the
   * refusal said, or the person cancelled).
   */
  async function writeCell(record: RecordView, field: FieldView, value: unknown, message: string): Promise<RecordView | "waiting" | null> {
    say("Saving…");
    let answer: Awaited<ReturnType<typeof saveRecordChange>>;
    try {
      answer = await saveRecordChange(record, { [field.slug]: value }, { fields: base.fields, message });
    } catch (failure) {
      fail(failureText(failure));
      return null;
    }
    if (answer === null) {
      say(`Nothing saved: ${field.name} keeps its value.`);
      home.reread();
      return null;
    }
    const key = `${record.id}:${field.slug}`;
    if (!answer.materialized) {
      home.waiting.set(key, answer.id);
      say(`${field.name} proposed: it waits for review in the Inbox. `, link(`/admin/change-requests/${answer.id}`, "See the change request"));
      return "waiting";
    }
    home.waiting.delete(key);
    if (answer.keptTheirs) say(`${field.name} keeps the value someone else gave it.`);
    else {
      remember(message, [{ record, field, value: answer.fields[field.slug] ?? null }]);
      say(`Saved ${field.name}.`);
    }
    return { ...record, ...answer, fields: { ...record.fields, ...answer.fields } };
  }

  /**
   * Undoes the records a step added: their archive is proposed, as the row menu's is (an archive
   * always waits for review), and the step is done with (restoring them is the Inbox's or the
   * restore screen's, not a redo). Answers whether it was proposed.
   */
  async function removeCreated(step: Step): Promise<boolean> {
    const count = `${step.created.length} new record${step.created.length === 1 ? "" : "s"}`;
    try {
      const answer = await api<ChangeRequestView>("POST", `/bases/${base.id}/records/bulk-lifecycle-change-request`, { operation: "delete", recordIds: step.created, message: `Undid: ${step.label}` });
      say(`Undid: ${step.label}: archiving the ${count} waits for review in the Inbox. `, link(`/admin/change-requests/${answer.id}`, "See the change request"));
      return true;
    } catch (failure) {
      fail(failureText(failure));
      return false;
    }
  }

  /** Writes a step's cells back (undoing) or again (redoing); answers whether they were taken. */
  function writeStep(step: Step, undoing: boolean): Promise<boolean> {
    // Each record as the step left it (its rows may be being read again): only its id and that value matter here.
    const cells = step.cells.flatMap((cell) => {
      const field = base.fields.find((candidate) => candidate.slug === cell.slug);
      const record = { id: cell.recordId, fields: { [cell.slug]: undoing ? cell.after : cell.before } } as unknown as RecordView;
      return field ? [{ record, field, value: undoing ? cell.before : cell.after }] : [];
    });
    return writeCells(`${undoing ? "Undid" : "Redid"}: ${step.label}`, cells, [], true);
  }

  async function replay(from: Step[], to: Step[], undoing: boolean): Promise<void> {
    const step = from.pop();
    if (!step) return void say(undoing ? "Nothing to undo." : "Nothing to redo.");
    if (!undoing || step.created.length === 0) {
      if (await writeStep(step, undoing)) to.push(step);
      else from.push(step);
      return;
    }
    // Its cells first (a paste over the last rows changed some too), then the records it added.
    if (step.cells.length > 0 && !(await writeStep(step, true))) return void from.push(step);
    if (!(await removeCreated(step))) from.push({ ...step, cells: [] });
  }

  return {
    writeCells,
    writeCell,
    /** A record added on the grid (its new-record row) and merged: undone as a paste's new rows are. */
    created: (label: string, recordId: string) => remember(label, [], [recordId]),
    undo: () => replay(undoable, redoable, true),
    redo: () => replay(redoable, undoable, false),
  };
}
