import { inArray } from "drizzle-orm";
import { adoptAsset } from "../assets/assets";
import { findBaseOrNull } from "../content/bases";
import type { AppContext } from "../context";
import { contentPath } from "../db/content-files";
import { FIELD_TRAITS } from "../shared/field-types";
import { assets } from "../tables/assets";
import { type RemoteClient, RemoteRefused } from "./client";

/**
 * Files travel with the records that name them (docs/remotes.md): a pull fetches the bytes of the
 * assets its commits name that are not here (checked against their SHA-256, as a clone does),
 * before it applies them; a push sends the remote the laptop's files its operations name, each
 * kept with its id there, before the proposal that names them.
 */

const idOf = (file: unknown): string | null => (typeof file === "string" ? file : typeof (file as { id?: unknown } | null)?.id === "string" ? (file as { id: string }).id : null);

/** The assets named by values of a base's file fields (attachments). */
export function filesInValues(ctx: AppContext, spaceId: string, baseId: string | null, values: Record<string, unknown>): string[] {
  const loaded = baseId ? findBaseOrNull(ctx, spaceId, baseId) : null;
  if (!loaded) return [];
  return loaded.fields.flatMap((field) => (FIELD_TRAITS[field.type].holdsFiles && Array.isArray(values[field.slug]) ? (values[field.slug] as unknown[]).flatMap((file) => idOf(file) ?? []) : []));
}

/** The assets a change of structure mounts (a file tree's files, a file node's one): each `assetId` its payload names. */
export function filesInPayload(payload: unknown): string[] {
  if (Array.isArray(payload)) return payload.flatMap(filesInPayload);
  if (payload === null || typeof payload !== "object") return [];
  return Object.entries(payload).flatMap(([key, value]) => (key === "assetId" && typeof value === "string" ? [value] : filesInPayload(value)));
}

const missingHere = (ctx: AppContext, ids: string[]): string[] => {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const here = new Set(ctx.db.select({ id: assets.id }).from(assets).where(inArray(assets.id, unique)).all().map((row) => row.id));
  return unique.filter((id) => !here.has(id));
};

type RemoteAsset = { id: string; status: string; fileName: string; mimeType: string; contentHash: string | null };

/** Fetches the files of `ids` this instance does not hold; answers those the remote did not give (gone there, or not ready), to be named in the pull's warnings. */
export async function fetchFiles(ctx: AppContext, client: RemoteClient, spaceId: string, ids: string[], createdBy: string): Promise<string[]> {
  const missed: string[] = [];
  for (const id of missingHere(ctx, ids)) {
    const asset = await client.call<RemoteAsset>("GET", `/assets/${id}`).catch((error) => (error instanceof RemoteRefused && error.status === 404 ? null : Promise.reject(error)));
    if (!asset || asset.status !== "ready" || !asset.contentHash) {
      missed.push(id);
      continue;
    }
    const bytes = await client.bytes(`/assets/${id}/content`, ctx.config.maxFileBytes);
    await adoptAsset(ctx, spaceId, { id, fileName: asset.fileName, declaredType: asset.mimeType, createdBy, contentHash: asset.contentHash }, bytes);
  }
  return missed;
}

/** Sends the remote each file of `ids` it does not hold yet (`sent` remembers those it holds, across one push). */
export async function sendFiles(ctx: AppContext, client: RemoteClient, ids: string[], sent: Set<string>): Promise<void> {
  const unique = [...new Set(ids)].filter((id) => !sent.has(id));
  if (unique.length === 0) return;
  const rows = ctx.db.select().from(assets).where(inArray(assets.id, unique)).all();
  for (const row of rows) {
    const there = await client.call("GET", `/assets/${row.id}`).then(
      () => true,
      (error) => (error instanceof RemoteRefused && error.status === 404 ? false : Promise.reject(error)),
    );
    if (!there && row.status === "ready" && row.contentHash) {
      const bytes = new Uint8Array(await Bun.file(contentPath(ctx.config.dataDir, row.contentHash)).arrayBuffer());
      const query = new URLSearchParams({ fileName: row.fileName, mimeType: row.declaredType, contentHash: row.contentHash });
      await client.call("PUT", `/sync/assets/${row.id}?${query}`, bytes);
    }
    sent.add(row.id);
  }
}
