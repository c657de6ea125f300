import type { ChangeRequestView } from "../../changes/views";
import type { FieldView } from "../../content/bases";
import type { RecordView } from "../../content/records/view";
import { api, ApiError } from "./api";
import { h } from "./dom";
import { ask, recordName, shown, table } from "./ui";

/** A record change's answer: merged at once (the record as it now is), or waiting for review. */
type Proposed<T> = (T & { materialized: true }) | (ChangeRequestView & { materialized: false });

/**
 * Two people on one record: a direct save is sent against the record's head as the page read it
 * (`baseCommitId`), and the server refuses it when someone changed those fields since. Rather than
 * repeat that refusal, the page reads the record again and offers, field by field, their value
 * (as it is now) against yours, keeping one or the other (the two merged where they differ by
 * field), as a change request in conflict does; what is kept is saved against the new head.
 * Answers the save's answer (the record as it is, `keptTheirs`, when every field kept their value),
 * or null when the person cancelled.
 */
export async function saveRecordChange(record: Pick<RecordView, "id" | "headCommitId" | "fields">, fields: Record<string, unknown>, described: { fields: FieldView[]; message?: string }): Promise<(Proposed<RecordView> & { keptTheirs?: true }) | null> {
  const send = (values: Record<string, unknown>, baseCommitId: string) =>
    api<Proposed<RecordView>>("POST", `/records/${record.id}/change-requests`, { operation: "update", fields: values, baseCommitId, ...(described.message ? { message: described.message } : {}) });
  try {
    return await send(fields, record.headCommitId);
  } catch (failure) {
    if (!(failure instanceof ApiError && failure.reason === "MERGE_CONFLICT")) throw failure;
  }
  const now = await api<RecordView>("GET", `/records/${record.id}`);
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  const differing = Object.keys(fields).filter((slug) => !same(now.fields[slug], fields[slug]));
  if (differing.length === 0) return { ...now, materialized: true, keptTheirs: true };
  const nameOf = (slug: string) => described.fields.find((field) => field.slug === slug)?.name ?? slug;
  const choice = (slug: string, value: "yours" | "theirs", label: string, checked: boolean) =>
    h("label", { class: "check" }, h("input", { type: "radio", name: `keep-${slug}`, value, checked, "aria-label": `${label} for ${nameOf(slug)}` }), ` ${label}`);
  const kept = await ask(
    "Someone changed this record meanwhile",
    [
      h("p", {}, `${recordName(described.fields, now.fields, now.id)} changed since you opened it. Choose, field by field, which value to keep; nothing is saved until you do.`),
      table(
        ["Field", "Their value (now)", "Your value", "Keep"],
        differing.map((slug) => [nameOf(slug), h("span", { class: "old" }, shown(now.fields[slug])), h("span", { class: "new" }, shown(fields[slug])), h("div", {}, choice(slug, "yours", "Keep yours", true), choice(slug, "theirs", "Keep theirs", false))]),
      ),
    ],
    "Save the values kept",
    false,
    (dialog) => differing.filter((slug) => dialog.querySelector<HTMLInputElement>(`input[name="keep-${CSS.escape(slug)}"]:checked`)?.value !== "theirs"),
  );
  if (kept === null) return null;
  if (kept.length === 0) return { ...now, materialized: true, keptTheirs: true };
  return send(Object.fromEntries(kept.map((slug) => [slug, fields[slug]])), now.headCommitId);
}
