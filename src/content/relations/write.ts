import { farHolds, heldLinks, moveLink, removeLink, type SideName } from "./store";
import { idsOf, inverseOf, ownership, targetBaseOf } from "./schema";
import { isRelation, MAX_LINKS } from "../fields/relation";
import type { AppContext, Tx } from "../../context";
import { insertRow } from "../../db/client";
import { newId } from "../../db/ids";
import { badRequest } from "../../shared/errors";
import { type FieldRow, type LoadedBase } from "../bases";
import { holdsMany } from "../../shared/field-types";
import { recordLinks } from "../../tables/content";

/** Writing a record's links (`store.ts` has their SQL). */

/** One side of a pair: the owner's or the inverse's (`store.ts` has its columns). */
interface Side {
  ownerId: string;
  name: SideName;
  /** The owner's base and its target, which every link of the pair carries. */
  baseId: string;
  targetBaseId: string;
  /** Whether a far record may hold more than one link of the pair, and the field it sees them through. */
  farMany: boolean;
  farSlug: string;
}

function sideOf(ctx: AppContext, spaceId: string, field: FieldRow): Side {
  const { ownerId, owns } = ownership(field);
  const inverse = inverseOf(ctx, spaceId, field);
  const farMany = inverse ? holdsMany(inverse.options) : true;
  const farSlug = inverse?.slug ?? "";
  if (owns) return { ownerId, name: "owner", baseId: field.baseId, targetBaseId: targetBaseOf(field), farMany, farSlug };
  return { ownerId, name: "inverse", baseId: targetBaseOf(field), targetBaseId: field.baseId, farMany, farSlug };
}

/**
 * Makes `recordId`'s links in each relation field of `values` exactly the ids given, in order:
 * links kept stay (with their id and creation), others go, new ones are appended to the far
 * record's list. A far record whose field holds one record, or already holds `MAX_LINKS`, refuses
 * the link (400). Runs inside the write of the record's commit; `created` when the record is new.
 */
export function writeLinks(tx: Tx, loaded: LoadedBase, recordId: string, values: Record<string, unknown>, commitId: string, at: string, created = false): void {
  const moment = Date.parse(at);
  for (const field of loaded.fields) {
    if (!isRelation(field) || !Object.hasOwn(values, field.slug)) continue;
    const side = sideOf(tx, loaded.base.spaceId, field);
    const ids = idsOf(values[field.slug]);
    // A record being created holds no links yet.
    const held = new Map(created ? [] : heldLinks(tx, side.name, recordId, side.ownerId).map((row) => [row.far, row.place]));
    const wanted = new Set(ids);
    for (const far of held.keys()) {
      if (!wanted.has(far)) removeLink(tx, side.name, recordId, side.ownerId, far);
    }
    ids.forEach((far, place) => {
      const was = held.get(far);
      if (was === place) return;
      if (was !== undefined) {
        moveLink(tx, side.name, recordId, side.ownerId, far, place, commitId, moment);
        return;
      }
      const { count, last } = farHolds(tx, side.name, far, side.ownerId);
      if (count >= (side.farMany ? MAX_LINKS : 1)) {
        throw badRequest(side.farMany ? `${far} already holds ${MAX_LINKS} links in ${side.farSlug}.` : `${far} already links to a record through ${side.farSlug}, which holds one record.`, {
          errors: [{ slug: field.slug, type: field.type, message: `${field.slug} cannot link ${far}.` }],
        });
      }
      const [source, target] = side.name === "owner" ? [recordId, far] : [far, recordId];
      insertRow(tx, recordLinks, {
        sourceRecordId: source,
        fieldId: side.ownerId,
        targetRecordId: target,
        id: newId("lnk"),
        spaceId: loaded.base.spaceId,
        baseId: side.baseId,
        targetBaseId: side.targetBaseId,
        commitId,
        position: side.name === "owner" ? place : (last ?? -1) + 1,
        targetPosition: side.name === "owner" ? (last ?? -1) + 1 : place,
        createdAt: at,
        updatedAt: at,
      });
    });
  }
}
