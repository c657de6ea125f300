import { type Sight, unseen } from "../spaces/sight";
import { and, desc, eq, lt, or, sql } from "drizzle-orm";
import { type Static, t } from "elysia";
import type { AppContext, Tx } from "../context";
import { newId } from "../db/ids";
import { write } from "../db/tx";
import { iso } from "../shared/clock";
import { ApiError, badRequest, conflict, notFound, notInSpace } from "../shared/errors";
import { isComputed } from "../shared/field-types";
import { Nullable, oneOf, Timestamp, WholeNumber } from "../shared/schemas";
import { type FormBinding, type FormPage, type FormRow, type FormShare, forms, nodes } from "../tables/content";
import { findBase, type LoadedBase } from "./bases";
import { findNode } from "./nodes";

/**
 * Forms (contract §2.7): a `form` node bound to a base; each input of a submission names a field
 * of the base (`bindings`). Made and changed directly by a manager; what is submitted becomes a
 * record proposal (`changes/forms.ts`).
 */

const MAX_BINDINGS = 200;

export const FormBindingSchema = t.Object(
  {
    inputName: t.String({ minLength: 1, maxLength: 100, pattern: "^[A-Za-z0-9_.-]+$" }),
    fieldSlug: t.String({ minLength: 1, maxLength: 64 }),
    required: t.Optional(t.Boolean()),
    label: t.Optional(t.String({ maxLength: 200 })),
    help: t.Optional(t.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export const FormPageSchema = t.Object({
  code: t.Optional(t.String({ maxLength: 100_000 })),
  theme: t.Optional(
    t.Object({
      logoUrl: t.Optional(t.String({ maxLength: 2000 })),
      coverUrl: t.Optional(t.String({ maxLength: 2000 })),
      brandColor: t.Optional(t.String({ maxLength: 50 })),
      hideBranding: t.Optional(t.Boolean()),
    }),
  ),
});
export const FormShareSchema = t.Object({
  isPublic: t.Boolean({ default: false }),
  anonymousSubmit: t.Boolean({ default: false }),
  submitLimit: t.Optional(WholeNumber({ minimum: 1 })),
  requireCaptcha: t.Optional(t.Boolean()),
});

export const FormSchema = t.Object(
  {
    id: t.String(),
    nodeId: t.String(),
    spaceId: t.String(),
    targetBaseId: t.String(),
    name: t.String(),
    description: t.String(),
    bindings: t.Array(FormBindingSchema),
    boundFields: t.Array(t.Object({ slug: t.String(), name: t.String(), type: t.String(), choices: t.Array(t.Object({ id: t.String(), name: t.String() })) })),
    page: FormPageSchema,
    share: FormShareSchema,
    mergeSubmissions: t.Boolean({ description: "Whether a submission merges at once instead of waiting for review." }),
    submissionCount: WholeNumber(),
    status: oneOf(["active", "archived"]),
    createdBy: t.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: "Form" },
);
export type FormView = Static<typeof FormSchema>;
export const FormPageAnswerSchema = t.Object({ forms: t.Array(FormSchema), nextCursor: Nullable(t.String()) });

/** The bindings, each naming an input once and a field of the base a client may write. */
function checkBindings(loaded: LoadedBase, bindings: FormBinding[]): FormBinding[] {
  if (bindings.length > MAX_BINDINGS) throw badRequest(`A form binds at most ${MAX_BINDINGS} inputs.`);
  const inputs = new Set<string>();
  for (const binding of bindings) {
    if (inputs.has(binding.inputName)) throw badRequest(`The input "${binding.inputName}" is bound twice.`);
    inputs.add(binding.inputName);
    const field = loaded.fields.find((candidate) => candidate.slug === binding.fieldSlug);
    if (!field) throw badRequest(`The base "${loaded.node.slug}" has no field "${binding.fieldSlug}".`);
    if (isComputed(field.type)) throw badRequest(`The field "${field.slug}" is computed: no form writes it.`);
  }
  return bindings;
}

function view(ctx: AppContext, row: FormRow): FormView {
  const node = findNode(ctx, row.spaceId, row.nodeId);
  const loaded = findBase(ctx, row.spaceId, row.targetBaseId, { archived: true });
  const boundFields = row.bindings.flatMap((binding) => {
    const field = loaded.fields.find((candidate) => candidate.slug === binding.fieldSlug);
    if (!field) return [];
    const choices = ((field.options.choices as { id: string; name: string }[] | undefined) ?? []).map(({ id, name }) => ({ id, name }));
    return [{ slug: field.slug, name: field.name, type: field.type, choices }];
  });
  const { spaceId, nodeId, targetBaseId, bindings, page, share, mergeSubmissions, submissionCount, createdBy, createdAt, updatedAt } = row;
  return { id: row.id, nodeId, spaceId, targetBaseId, name: row.name, description: row.description, bindings, boundFields, page, share, mergeSubmissions, submissionCount, status: node.status, createdBy, createdAt, updatedAt };
}

/** The form on a node (id or slug) of the space; one on a node, or into a base, hidden from the caller is not found. */
export function findForm(ctx: AppContext, spaceId: string, sight: Sight, nodeRef: string): FormRow {
  const found = ctx.db
    .select({ form: forms })
    .from(forms)
    .innerJoin(nodes, eq(nodes.id, forms.nodeId))
    .where(and(eq(forms.spaceId, spaceId), or(eq(nodes.id, nodeRef), eq(nodes.slug, nodeRef)), unseen(forms.nodeId, sight.hiddenNodes), unseen(forms.targetBaseId, sight.hiddenBases)))
    .get();
  if (!found) throw notInSpace("node", nodeRef);
  return found.form;
}

/** The form on a node, wherever its space (a submission without a key names only the node). */
export function formOnNode(ctx: AppContext, nodeId: string): FormRow {
  const row = ctx.db.select().from(forms).where(eq(forms.nodeId, nodeId)).get();
  if (!row) throw notFound(`Form not found: ${nodeId}`);
  return row;
}

export const getForm = (ctx: AppContext, spaceId: string, sight: Sight, nodeRef: string): FormView => view(ctx, findForm(ctx, spaceId, sight, nodeRef));

/** What a visitor of a public form reads to fill it in: its name, description and inputs, nothing of the space. */
export const PublicFormSchema = t.Object({
  nodeId: t.String(),
  name: t.String(),
  description: t.String(),
  inputs: t.Array(
    t.Object({
      inputName: t.String(),
      label: t.String(),
      help: Nullable(t.String()),
      required: t.Boolean(),
      type: t.String({ description: "The bound field's type: how the input is drawn." }),
      choices: t.Array(t.String({ description: "A choice's name." })),
    }),
  ),
});

/** A public form that takes submissions without a key, as its visitors see it; any other is not found. */
export function publicForm(ctx: AppContext, nodeId: string): Static<typeof PublicFormSchema> {
  const row = formOnNode(ctx, nodeId);
  const form = view(ctx, row);
  if (form.status !== "active" || !row.share.isPublic || !row.share.anonymousSubmit) throw notFound(`Form not found: ${nodeId}`);
  const inputs = row.bindings.flatMap((binding) => {
    const field = form.boundFields.find((candidate) => candidate.slug === binding.fieldSlug);
    return field ? [{ inputName: binding.inputName, label: binding.label ?? field.name, help: binding.help ?? null, required: binding.required === true, type: field.type, choices: field.choices.map((choice) => choice.name) }] : [];
  });
  return { nodeId: row.nodeId, name: form.name, description: form.description, inputs };
}

/** `GET /forms`: the space's forms (of one base when asked), newest first, a page at a time. */
export function listForms(ctx: AppContext, spaceId: string, sight: Sight, query: { targetBaseId?: string; limit: number; cursor?: string }) {
  let after: string | undefined;
  if (query.cursor !== undefined) {
    after = Buffer.from(query.cursor, "base64url").toString();
    if (!/^frm_[0-9A-Za-z]+$/.test(after)) throw badRequest("The form cursor is invalid.");
  }
  const baseId = query.targetBaseId === undefined ? undefined : findBase(ctx, spaceId, query.targetBaseId, { archived: true }).base.id;
  const rows = ctx.db
    .select()
    .from(forms)
    .where(and(eq(forms.spaceId, spaceId), baseId ? eq(forms.targetBaseId, baseId) : undefined, after ? lt(forms.id, after) : undefined, unseen(forms.nodeId, sight.hiddenNodes), unseen(forms.targetBaseId, sight.hiddenBases)))
    .orderBy(desc(forms.id))
    .limit(query.limit + 1)
    .all();
  const page = rows.slice(0, query.limit);
  return { forms: page.map((row) => view(ctx, row)), nextCursor: rows.length > query.limit ? Buffer.from(page.at(-1)!.id).toString("base64url") : null };
}

export interface NewForm {
  nodeId: string;
  targetBaseId: string;
  name: string;
  description?: string;
  bindings?: FormBinding[];
  page?: FormPage;
  share?: Partial<FormShare>;
  mergeSubmissions?: boolean;
}

/** `POST /forms`: a form on an existing form node, bound to a base of the space; one form a node. */
export function createForm(ctx: AppContext, spaceId: string, userId: string, input: NewForm): Promise<FormView> {
  return write(ctx, (tx) => {
    const node = findNode(tx, spaceId, input.nodeId, "active");
    if (node.type !== "form") throw badRequest(`The node "${node.slug}" is a ${node.type}; a form goes on a form node.`);
    const loaded = findBase(tx, spaceId, input.targetBaseId);
    if (tx.db.select({ id: forms.id }).from(forms).where(eq(forms.nodeId, node.id)).get()) {
      throw conflict("A form already exists for this node. Change it with PUT /forms/{nodeId}.", { reason: "FORM_EXISTS" });
    }
    const at = iso(tx.clock.now());
    const row: FormRow = {
      id: newId("frm", tx.clock.now()),
      spaceId,
      nodeId: node.id,
      targetBaseId: loaded.base.id,
      name: input.name,
      description: input.description ?? "",
      bindings: checkBindings(loaded, input.bindings ?? []),
      page: input.page ?? {},
      share: { isPublic: false, anonymousSubmit: false, ...input.share },
      mergeSubmissions: input.mergeSubmissions ?? false,
      submissionCount: 0,
      createdBy: userId,
      createdAt: at,
      updatedAt: at,
    };
    tx.db.insert(forms).values(row).run();
    return view(tx, row);
  });
}

export type FormPatch = Partial<Omit<NewForm, "nodeId" | "targetBaseId">>;

/** `PUT /forms/{nodeId}`: what is given replaces what the form had (`share` merged into it). */
export function updateForm(ctx: AppContext, spaceId: string, sight: Sight, nodeRef: string, patch: FormPatch): Promise<FormView> {
  return write(ctx, (tx) => {
    const row = findForm(tx, spaceId, sight, nodeRef);
    const changes: Partial<FormRow> = { updatedAt: iso(tx.clock.now()) };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.description !== undefined) changes.description = patch.description;
    if (patch.bindings !== undefined) changes.bindings = checkBindings(findBase(tx, spaceId, row.targetBaseId), patch.bindings);
    if (patch.page !== undefined) changes.page = patch.page;
    if (patch.share !== undefined) changes.share = { ...row.share, ...patch.share };
    if (patch.mergeSubmissions !== undefined) changes.mergeSubmissions = patch.mergeSubmissions;
    tx.db.update(forms).set(changes).where(eq(forms.id, row.id)).run();
    return view(tx, { ...row, ...changes });
  });
}

/**
 * Counts a submission in the write that proposes it, within the form's `submitLimit` (429 once
 * reached): concurrent submissions cannot pass the limit together, and a refused one counts nothing.
 */
export function reserveSubmission(tx: Tx, row: FormRow): void {
  const limit = row.share.submitLimit;
  const taken = tx.db
    .update(forms)
    .set({ submissionCount: sql`${forms.submissionCount} + 1` })
    .where(and(eq(forms.id, row.id), limit === undefined ? undefined : lt(forms.submissionCount, limit)))
    .returning({ id: forms.id })
    .all();
  if (taken.length === 0) throw new ApiError(429, "TOO_MANY_REQUESTS", `This form takes no more submissions: it has reached its limit of ${limit}.`);
}
