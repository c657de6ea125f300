import type { AppContext } from "../context";
import { notFound } from "../shared/errors";
import { outsiderSight } from "../spaces/sight";
import { baseView, findBase } from "./bases";
import { nodeDetail } from "./node-kinds";
import type { NodeRow } from "./nodes";
import { listRecords } from "./records/list";
import { seenBase } from "./records/seen-base";

/**
 * What a reader without a key sees of one node through a link (an embed link, a public share):
 * its typed detail (a doc's body, a document, a tree's files, a folder's children), and for a base
 * its fields and a page of its active records. Nothing else of the space, and nothing private.
 */
export function readOnlyView(ctx: AppContext, node: NodeRow, page: { cursor?: string; limit: number }) {
  const sight = outsiderSight(ctx, node.spaceId);
  if (sight.hiddenNodes.has(node.id)) throw notFound("Not found");
  const detail = nodeDetail(ctx, node.spaceId, sight, node.id);
  if (node.type !== "base") return detail;
  const loaded = seenBase(findBase(ctx, node.spaceId, node.id), sight);
  const records = listRecords(ctx, loaded, { status: "active", filters: [], cursor: page.cursor, limit: page.limit, shape: { base: false, headCommit: false, fields: null } });
  return { ...detail, base: baseView(loaded), records: records.records, nextCursor: records.nextCursor };
}
