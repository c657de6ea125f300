import { type FieldRow, findBaseOrNull } from "../bases";
import { formulasReading } from "../fields/formula/plan";
import { isLookup, lookupOf } from "../fields/lookup";
import { isRelation } from "../fields/relation";
import { seenBase } from "./seen-base";
import { seenViewConfig } from "../view-fields";
import type { ViewConfig } from "../../tables/content";
import type { CommitRow } from "../commits";
import type { AppContext } from "../../context";
import type { RecordSnapshot } from "../../events/outbox";
import type { LiveEvent } from "../../shared/event-types";
import type { RecordView } from "./view";
import { nodesOfChange, seesEvent, type Sight } from "../../spaces/sight";

/** The fields of a base a caller does not see (`seenBase`), by slug and by id: none when they see it whole, or it is gone. */
export interface HiddenFields {
  slugs: ReadonlySet<string>;
  ids: ReadonlySet<string>;
}
const NONE: HiddenFields = { slugs: new Set(), ids: new Set() };

export function hiddenFieldsOf(ctx: AppContext, spaceId: string, sight: Sight, baseId: string | null): HiddenFields {
  if (sight.hiddenBases.size === 0 || baseId === null) return NONE;
  const whole = findBaseOrNull(ctx, spaceId, baseId);
  if (!whole) return NONE;
  const seen = seenBase(whole, sight);
  if (seen === whole) return NONE;
  const kept = new Set(seen.fields.map((field) => field.id));
  const hidden = whole.fields.filter((field) => !kept.has(field.id));
  return { slugs: new Set(hidden.map((field) => field.slug)), ids: new Set(hidden.map((field) => field.id)) };
}

/** Values by field slug (a record's fields, a commit's payload) without those of hidden fields. */
export const seenValues = <T extends Record<string, unknown> | null>(values: T, hidden: HiddenFields): T =>
  values === null || hidden.slugs.size === 0 ? values : (Object.fromEntries(Object.entries(values).filter(([slug]) => !hidden.slugs.has(slug))) as T);

/**
 * Commits as a caller sees them: those of a hidden node or base, and those that add or change a
 * field hidden from them, left out; a record's values of hidden fields left out of the rest. Every
 * reader of commits (a record's history, a change request's operations, the merge log) goes
 * through it.
 */
export function seenCommits<C extends CommitRow>(ctx: AppContext, spaceId: string, sight: Sight, rows: C[]): C[] {
  if (sight.hiddenNodes.size === 0) return rows;
  const byBase = new Map<string | null, HiddenFields>();
  const hiddenOf = (baseId: string | null) => byBase.get(baseId) ?? byBase.set(baseId, hiddenFieldsOf(ctx, spaceId, sight, baseId)).get(baseId)!;
  return rows.flatMap((row) => {
    if ((row.baseId && sight.hiddenBases.has(row.baseId)) || (row.nodeId && sight.hiddenNodes.has(row.nodeId))) return [];
    const payload = row.payload as Record<string, unknown>;
    if (Array.isArray(payload.fields)) return [{ ...row, payload: { ...payload, fields: seenDefinitions(ctx, spaceId, sight, payload.fields) } }];
    const hidden = hiddenOf(row.baseId);
    if (hidden.slugs.size === 0) return [row];
    if (row.kind.startsWith("record_")) return [{ ...row, payload: seenValues(payload, hidden) }];
    if (row.kind.startsWith("view_")) return [payload.config ? { ...row, payload: { ...payload, config: seenViewConfig(payload.config as Partial<ViewConfig>, hidden) } } : row];
    if (hidden.slugs.has(payload.slug as string) || hidden.ids.has(payload.fieldId as string)) return [];
    if (Array.isArray(payload.fieldIds)) return [{ ...row, payload: { ...payload, fieldIds: payload.fieldIds.filter((id) => !hidden.ids.has(id as string)) } }];
    return [row];
  });
}

/**
 * The field definitions of a base made with its fields (its commit's payload) as a caller sees
 * them: without a link into a base hidden from them, the lookups through it and the formulas
 * reading either, as `seenBase` leaves them out of the base itself.
 */
function seenDefinitions(ctx: AppContext, spaceId: string, sight: Sight, definitions: FieldRow[]): FieldRow[] {
  const intoHidden = (field: FieldRow) => {
    const target = findBaseOrNull(ctx, spaceId, String(field.options?.targetBaseId ?? field.options?.targetBaseSlug ?? ""));
    return target !== null && sight.hiddenBases.has(target.base.id);
  };
  const hidden = new Set(definitions.filter((field) => isRelation(field) && intoHidden(field)).map((field) => field.slug));
  if (hidden.size === 0) return definitions;
  for (const field of definitions) if (isLookup(field) && hidden.has(lookupOf(field.options).relationFieldSlug)) hidden.add(field.slug);
  for (const field of formulasReading(definitions, hidden)) hidden.add(field.slug);
  return definitions.filter((field) => !hidden.has(field.slug));
}

/** A record as a caller sees it (an answer to a write, a merge's record): without its values of hidden fields, nor those fields in its base. */
export function seenRecord(ctx: AppContext, spaceId: string, sight: Sight, record: RecordView): RecordView {
  const hidden = hiddenFieldsOf(ctx, spaceId, sight, record.baseId);
  if (hidden.slugs.size === 0) return record;
  const fields = seenValues(record.fields, hidden);
  const base = record.base && { ...record.base, fields: record.base.fields.filter((field) => !hidden.ids.has(field.id)) };
  return { ...record, fields, ...(record.headCommit ? { headCommit: { ...record.headCommit, payload: fields } } : {}), ...(base ? { base } : {}) };
}

/**
 * An event as a caller sees it: none when it is about something hidden from them, a record's
 * values of hidden fields left out of the rest. The live stream and MCP's `wait_for_events` send
 * what this answers.
 */
export function seenEvent(ctx: AppContext, sight: Sight, event: LiveEvent): LiveEvent | null {
  if (!seesEvent(sight, event)) return null;
  const data = event.data as { record?: RecordSnapshot; previous?: Record<string, unknown>; changedFields?: string[] };
  // A change request of nodes (a doc, a folder) names no base: the nodes its operations landed in say where it is.
  if (sight.hiddenNodes.size > 0 && nodesOfChange(ctx, event).some((nodeId) => sight.hiddenNodes.has(nodeId))) return null;
  if (!data.record) return event;
  const hidden = hiddenFieldsOf(ctx, event.spaceId, sight, event.baseId);
  if (hidden.slugs.size === 0) return event;
  const narrowed = {
    ...data,
    record: { ...data.record, fields: seenValues(data.record.fields, hidden) },
    ...(data.previous ? { previous: seenValues(data.previous, hidden) } : {}),
    ...(data.changedFields ? { changedFields: data.changedFields.filter((slug) => !hidden.slugs.has(slug)) } : {}),
  };
  return { ...event, data: narrowed };
}
