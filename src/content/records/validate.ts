import { recordStates } from "../store";
import { idsOf, targetBaseOf } from "../relations/schema";
import { isAttachment } from "../fields/attachment";
import { isRelation } from "../fields/relation";
import { resolveAttachments } from "../../assets/assets";
import type { AppContext } from "../../context";
import { conflict } from "../../shared/errors";
import { findBase, type LoadedBase } from "../bases";
import { type FieldError, invalidValues, recordValueErrors } from "../field-types";
import { holdsMany } from "../../shared/field-types";

/** A record's values as a client gives them, checked: each value by its kind, files against the space's assets, links against the records they name. */

/**
 * Checks the ids of the relation values a write gives, against the database: each must name a
 * record of the field's target base (which is in the same space: a record of another space reads
 * as unknown), and an active one. New links to an archived base are a 409. `current` is the
 * record's values now, for an update.
 */
function linkErrors(ctx: AppContext, loaded: LoadedBase, values: Record<string, unknown>, current?: () => Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of loaded.fields) {
    if (!isRelation(field) || !Object.hasOwn(values, field.slug)) continue;
    const ids = idsOf(values[field.slug]);
    if (ids.length === 0) continue;
    const target = findBase(ctx, loaded.base.spaceId, targetBaseOf(field), { archived: true });
    if (target.node.status === "archived") {
      const had = new Set(idsOf(current?.()[field.slug]));
      if (ids.some((id) => !had.has(id))) throw conflict(`${field.slug} links to the base "${target.node.slug}", which is archived: restore it before linking to its records.`, { reason: "TARGET_BASE_ARCHIVED" });
    }
    const found = new Map(
      recordStates(ctx, ids)
        .filter((row) => row.baseId === target.base.id)
        .map((row) => [row.id, row.status]),
    );
    for (const id of ids) {
      const status = found.get(id);
      if (status === undefined) errors.push({ slug: field.slug, type: field.type, message: `${field.slug} names ${id}, which is not a record of the base "${target.node.slug}".` });
      else if (status !== "active") errors.push({ slug: field.slug, type: field.type, message: `${field.slug} names ${id}, which is archived.` });
    }
  }
  return errors;
}

/** Attachment values name assets by id: each becomes the asset as the space holds it, or an error of its field. */
function resolveAttachmentValues(ctx: AppContext, loaded: LoadedBase, checked: { values: Record<string, unknown>; errors: FieldError[] }): void {
  for (const field of loaded.fields) {
    if (!isAttachment(field) || !Array.isArray(checked.values[field.slug])) continue;
    const resolved = resolveAttachments(ctx, loaded.node.spaceId, field.options, checked.values[field.slug] as string[]);
    if ("value" in resolved) checked.values[field.slug] = resolved.value;
    else checked.errors.push({ slug: field.slug, type: field.type, message: `${field.slug} ${resolved.error}.` });
  }
}

/**
 * How a record's values are checked: `current` is the record's values now (for an update);
 * `linkIds: false` leaves the ids of relation values to the merge in the same write, which checks
 * them in its transaction.
 */
export interface InputCheck {
  current?: () => Record<string, unknown>;
  linkIds?: boolean;
}

/** Every error of a record's values as a client gave them: each value's own, then its links'. */
export function recordInputErrors(ctx: AppContext, loaded: LoadedBase, input: Record<string, unknown>, mode: "create" | "update", { current, linkIds = true }: InputCheck = {}) {
  const checked = recordValueErrors(loaded.fields, input, mode);
  resolveAttachmentValues(ctx, loaded, checked);
  if (!linkIds || !loaded.fields.some(isRelation)) return checked;
  const wrong = new Set(checked.errors.map((error) => error.slug));
  const linked = Object.fromEntries(Object.entries(checked.values).filter(([slug]) => !wrong.has(slug)));
  return { values: checked.values, errors: [...checked.errors, ...linkErrors(ctx, loaded, linked, current)] };
}

/** `recordInputErrors`, throwing the 400 when any value is wrong. */
export function checkRecordInput(ctx: AppContext, loaded: LoadedBase, input: Record<string, unknown>, mode: "create" | "update", check?: InputCheck): Record<string, unknown> {
  const { values, errors } = recordInputErrors(ctx, loaded, input, mode, check);
  if (errors.length > 0) throw invalidValues(loaded.fields, errors, `Invalid field values: ${errors.map((e) => e.message).join(" ")}`);
  return values;
}

/** The relation fields whose values are lists: a merge combines two sides' links instead of choosing one side's list. */
export const linkLists = (loaded: LoadedBase): Set<string> => new Set(loaded.fields.filter((field) => isRelation(field) && holdsMany(field.options)).map((field) => field.slug));
