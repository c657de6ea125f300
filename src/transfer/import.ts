import { Column, IMPORT_BOUNDS, ImportPlan, ImportResult, newSlug, Pacer, readInto, uploadRefusal } from "./import-plan";
import { atLeast } from "../shared/levels";
import { type NodeChange, type Proposer, proposeFieldChange, proposeNodeChanges, proposeRecords } from "../changes/proposals";
import { findBase } from "../content/bases";
import type { LoadedBase } from "../tables/content";
import type { AppContext } from "../context";
import { slugify } from "../shared/formats";
import { ApiError, badRequest, conflict, forbidden } from "../shared/errors";
import { endImportJob, type ImportJob, partKey, recordImportPart, startImportJob } from "./import-jobs";

/** An import written: the checked file's rows proposed a part at a time, or a new base made for them first. */


/** A read import that can be written: no line with an error, at least one row. */
function requireImportable(plan: ImportPlan): void {
  if (plan.errorCount > 0) {
    throw badRequest(`${plan.errorCount} error${plan.errorCount === 1 ? "" : "s"} in the file; nothing was imported. Fix the lines named, or preview with preview=true.`, { errors: plan.errors, errorCount: plan.errorCount });
  }
  if (plan.rowCount === 0) throw badRequest("The file has no rows to import.");
}

/** Fields must exist, merged, before a record can hold them: making them from a file needs write. */
function requireWrite(who: Proposer, what: string): void {
  if (!atLeast(who.scope.level, "write")) throw forbidden(`${what} needs write: its records can only be proposed once the fields exist.`, { required: "write", effective: who.scope.level });
}

/** The fields a file's new columns become: named as the columns, of the type their values fit. */
const newFields = (columns: Column[]) => columns.map((column) => ({ slug: newSlug(column.name), name: column.name, required: false, ...column.stats.suggestion(column.chosen) }));

/**
 * Commits an import whose file was read once to check it (`checked`) and can be read again
 * (`reread`): refused whole (400, the errors by line) if any row has one; else the columns to
 * create that the base lacks become fields first (merged), then the file is read again and its rows
 * proposed: merged at once (write, autoMerge not false) a part of `IMPORT_BOUNDS.part` at a time,
 * each part merged before the next is read; waiting for review, as one change request of at most
 * `IMPORT_BOUNDS.review` rows.
 */
export async function commitImport(ctx: AppContext, who: Proposer, checked: ImportPlan, reread: () => ReadableStream<Uint8Array>, baseId: string, review: ImportReview): Promise<ImportResult> {
  requireImportable(checked);
  const { job, done } = await startImportJob(ctx, { spaceId: who.scope.space.id, userId: who.actor.user.id }, baseId, review.idempotencyKey, checked.rowCount);
  if (done) return { importId: job.id, rowCount: job.rowCount, changeRequests: job.changeRequests };
  try {
    const result = await importParts(ctx, who, checked, reread, baseId, review, job);
    await endImportJob(ctx, job);
    return result;
  } catch (error) {
    await endImportJob(ctx, job, error);
    throw error;
  }
}

/** What an import is proposed with; `idempotencyKey` names its job (`import-jobs.ts`). */
export type ImportReview = { message?: string; autoMerge?: boolean; idempotencyKey?: string };

async function importParts(ctx: AppContext, who: Proposer, checked: ImportPlan, reread: () => ReadableStream<Uint8Array>, baseId: string, review: ImportReview, job: ImportJob): Promise<ImportResult> {
  const mergesAtOnce = atLeast(who.scope.level, "write") && review.autoMerge !== false;
  if (checked.rowCount > IMPORT_BOUNDS.review && !mergesAtOnce) {
    throw badRequest(`The file has ${checked.rowCount.toLocaleString("en")} rows; an import waiting for review holds at most ${IMPORT_BOUNDS.review.toLocaleString("en")} (one change request). Split the file, or import it with write, which merges it in parts.`);
  }
  const part = mergesAtOnce ? IMPORT_BOUNDS.part : IMPORT_BOUNDS.review;
  const missing = checked.columns.filter((column) => column.action === "create" && !findBase(ctx, who.scope.space.id, baseId).fields.some((field) => field.slug === newSlug(column.name)));
  if (missing.length > 0) requireWrite(who, "Creating fields from an import");
  for (const field of newFields(missing)) {
    const proposed = await proposeFieldChange(ctx, who, baseId, { operation: "create", ...field }, { message: review.message, autoMerge: true });
    if (!proposed.outcome?.merged) throw new ApiError(409, "CONFLICT", `The field ${field.name} could not be created at once; nothing more was imported.`, { reason: "NOT_MERGEABLE" });
  }
  const plan = new ImportPlan(ctx, findBase(ctx, who.scope.space.id, baseId), checked.format, { mode: "commit", createFields: false });
  const changeRequests: ImportResult["changeRequests"] = [];
  const propose = async (rows: Record<string, unknown>[]) => {
    const n = changeRequests.length;
    const from = n * part + 1;
    const message = checked.rowCount > part ? `${review.message ?? "Import"} (rows ${from}-${from + rows.length - 1} of ${checked.rowCount})` : review.message;
    // A part merged before (the same file sent again with the same key) answers its change request, and merges nothing twice.
    const { changeRequest } = await proposeRecords(ctx, who, baseId, rows.map((fields) => ({ fields })), { message, autoMerge: review.autoMerge, idempotencyKey: partKey(job, n) });
    const proposed = { id: changeRequest.id, status: changeRequest.status, operationCount: rows.length };
    changeRequests.push(proposed);
    await recordImportPart(ctx, job, n, proposed);
  };
  const pacer = new Pacer(ctx.requests);
  const proposeParts = async (all: boolean) => {
    // Checked once already: a row that fails now met a change of the base made meanwhile.
    if (plan.errorCount > 0) throw conflict(`The base changed while the file was imported: a row no longer fits; ${changeRequests.length} part(s) were proposed before it.`, { reason: "BASE_CHANGED", errors: plan.errors });
    while (plan.kept.length >= part || (all && plan.kept.length > 0)) {
      await propose(plan.kept.splice(0, part));
      await pacer.breathe();
    }
  };
  await readInto(plan, reread(), ctx.config.maxImportBytes, () => uploadRefusal(ctx.config.maxImportBytes), () => proposeParts(false));
  await proposeParts(true);
  return { importId: job.id, rowCount: checked.rowCount, changeRequests };
}

/** A base for reading a file that will become a new base: no fields yet, so every column is one to create. */
export const NO_BASE = { base: { id: "" }, node: {}, fields: [] } as unknown as LoadedBase;

/**
 * A new base from a file, in one call (write): the base with a field per column, of the type its
 * values fit, then its rows, as `commitImport` proposes them.
 */
export async function importNewBase(ctx: AppContext, who: Proposer, checked: ImportPlan, reread: () => ReadableStream<Uint8Array>, base: { name: string; slug?: string; parentNodeId?: string }, review: ImportReview) {
  requireImportable(checked);
  requireWrite(who, "A base made from a file");
  const create: NodeChange = { kind: "create", nodeType: "base", name: base.name, slug: base.slug ?? slugify(base.name, "imported"), parentNodeId: base.parentNodeId, fields: newFields(checked.columns) };
  const proposed = await proposeNodeChanges(ctx, who, [create], { message: review.message, autoMerge: true });
  if (!proposed.outcome?.merged) throw new ApiError(409, "CONFLICT", "The base could not be made at once; nothing was imported.", { reason: "NOT_MERGEABLE" });
  const baseId = proposed.changeRequest.baseId!;
  return { baseId, imported: await commitImport(ctx, who, checked, reread, baseId, review) };
}

