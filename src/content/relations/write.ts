import { idsOf, inverseOf, ownership, targetBaseOf } from "./schema";
import { isRelation } from "../fields/relation";
import type { AppContext, Tx } from "../../context";
import { insertRow } from "../../db/client";
import { newId } from "../../db/ids";
import { badRequest } from "../../shared/errors";
import { type FieldRow, type LoadedBase } from "../bases";
import { MAX_LINKS } from "../fields/relation";
import { holdsMany } from "../../shared/field-types";
import { recordLinks } from "../../tables/content";

/** Writing a record's links, and removing a deleted field's. */

/** One side of a pair as SQL sees it: the record's own column, the other's, and their places in each list. */
interface Side {
  ownerId: string;
  near: "source_record_id" | "target_record_id";
  far: "source_record_id" | "target_record_id";
  nearPlace: "position" | "target_position";
  farPlace: "position" | "target_position";
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
  if (owns) return { ownerId, near: "source_record_id", far: "target_record_id", nearPlace: "position", farPlace: "target_position", baseId: field.baseId, targetBaseId: targetBaseOf(field), farMany, farSlug };
  return { ownerId, near: "target_record_id", far: "source_record_id", nearPlace: "target_position", farPlace: "position", baseId: targetBaseOf(field), targetBaseId: field.baseId, farMany, farSlug };
}

/**
 * Makes `recordId`'s links in each relation field of `values` exactly the ids given, in order:
 * links kept stay (with their id and creation), others go, new ones are appended to the far
 * record's list. A far record whose field holds one record, or already holds `MAX_LINKS`, refuses
 * the link (400). Runs inside the write of the record's commit; `created` when the record is new.
 */
export function writeLinks(tx: Tx, loaded: LoadedBase, recordId: string, values: Record<string, unknown>, commitId: string, at: string, created = false): void {
  const sqlite = tx.store.sqlite;
  const moment = Date.parse(at);
  for (const field of loaded.fields) {
    if (!isRelation(field) || !Object.hasOwn(values, field.slug)) continue;
    const side = sideOf(tx, loaded.base.spaceId, field);
    const ids = idsOf(values[field.slug]);
    // A record being created holds no links yet.
    const held = new Map(
      created
        ? []
        : sqlite
            .query<{ far: string; place: number }, [string, string]>(`SELECT "${side.far}" AS "far", "${side.nearPlace}" AS "place" FROM "record_links" WHERE "${side.near}" = ?1 AND "field_id" = ?2`)
            .all(recordId, side.ownerId)
            .map((row) => [row.far, row.place]),
    );
    const wanted = new Set(ids);
    for (const far of held.keys()) {
      if (!wanted.has(far)) sqlite.query(`DELETE FROM "record_links" WHERE "${side.near}" = ?1 AND "field_id" = ?2 AND "${side.far}" = ?3`).run(recordId, side.ownerId, far);
    }
    ids.forEach((far, place) => {
      const was = held.get(far);
      if (was === place) return;
      if (was !== undefined) {
        sqlite.query(`UPDATE "record_links" SET "${side.nearPlace}" = ?4, "commit_id" = ?5, "updated_at" = ?6 WHERE "${side.near}" = ?1 AND "field_id" = ?2 AND "${side.far}" = ?3`).run(recordId, side.ownerId, far, place, commitId, moment);
        return;
      }
      const { count, last } = sqlite
        .query<{ count: number; last: number | null }, [string, string]>(`SELECT count(*) AS "count", max("${side.farPlace}") AS "last" FROM "record_links" WHERE "${side.far}" = ?1 AND "field_id" = ?2`)
        .get(far, side.ownerId)!;
      if (count >= (side.farMany ? MAX_LINKS : 1)) {
        throw badRequest(side.farMany ? `${far} already holds ${MAX_LINKS} links in ${side.farSlug}.` : `${far} already links to a record through ${side.farSlug}, which holds one record.`, {
          errors: [{ slug: field.slug, type: field.type, message: `${field.slug} cannot link ${far}.` }],
        });
      }
      const [source, target] = side.near === "source_record_id" ? [recordId, far] : [far, recordId];
      insertRow(tx, recordLinks, {
        sourceRecordId: source,
        fieldId: side.ownerId,
        targetRecordId: target,
        id: newId("lnk"),
        spaceId: loaded.base.spaceId,
        baseId: side.baseId,
        targetBaseId: side.targetBaseId,
        commitId,
        position: side.near === "source_record_id" ? place : (last ?? -1) + 1,
        targetPosition: side.near === "source_record_id" ? (last ?? -1) + 1 : place,
        createdAt: at,
        updatedAt: at,
      });
    });
  }
}


/** Removes up to `limit` links of a deleted field (the upkeep's step); answers how many went. */
export function dropLinks(tx: Tx, fieldId: string, limit: number): number {
  return tx.store.sqlite.run(
    `DELETE FROM "record_links" WHERE "field_id" = ?1 AND ("source_record_id", "target_record_id") IN (SELECT "source_record_id", "target_record_id" FROM "record_links" WHERE "field_id" = ?1 LIMIT ?2)`,
    [fieldId, limit],
  ).changes;
}
