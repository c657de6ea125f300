import { scopeOf } from "../spaces/resolve";
import { findMembership } from "../spaces/spaces";
import type { Actor } from "../auth/actor";
import { findUserById } from "../auth/users";
import { findNode } from "../content/nodes";
import { formOnNode, reserveSubmission } from "../content/forms";
import { isIdOf } from "../db/ids";
import type { AppContext } from "../context";
import { badRequest, forbidden, notFound } from "../shared/errors";
import { isEmpty } from "../shared/field-types";
import type { FormRow } from "../tables/content";
import { type Proposer, proposeRecords } from "./proposals";

/** A form's submission (contract §2.7): its inputs, by the form's bindings, proposed as a record of the form's base. */

/**
 * Who a submission without a key proposes as: the form's creator, through the form, at no more
 * than `changeRequest` (`write` when the form merges its submissions), and only to a form that is
 * public, takes such submissions and asks for no captcha (this server checks none).
 */
export function visitorOf(ctx: AppContext, form: FormRow): Proposer {
  if (!form.share.isPublic) throw forbidden("This form is not public.", { reason: "FORM_NOT_PUBLIC" });
  if (!form.share.anonymousSubmit) throw forbidden("This form takes submissions only with an API key.", { reason: "FORM_NOT_PUBLIC" });
  if (form.share.requireCaptcha) throw forbidden("This form asks for a captcha, which this server does not check: submit with an API key.", { reason: "CAPTCHA_REQUIRED" });
  const creator = findUserById(ctx, form.createdBy);
  const membership = creator ? findMembership(ctx, creator.id, form.spaceId) : undefined;
  if (!creator || creator.banned || !membership) throw forbidden("This form's owner is no longer a member of its space: it takes no submissions.", { reason: "FORM_NOT_PUBLIC" });
  const actor: Actor = { user: creator, credential: { type: "form", formId: form.id }, ceiling: form.mergeSubmissions ? "write" : "changeRequest" };
  return { scope: scopeOf(ctx, actor, membership), actor, attribution: { displayName: `A visitor of the form "${form.name}"`, ownerName: creator.name, channel: "form" } };
}

/**
 * `POST /forms/{nodeId}/submit`: each input becomes the value of the field it is bound to; an input
 * the form does not bind, or a required one left empty, is a 400. The record waits for review
 * unless the form merges its submissions; the submission is counted in the same write.
 */
export async function submitForm(ctx: AppContext, form: FormRow, who: Proposer, values: Record<string, unknown>): Promise<{ changeRequestId: string; status: "pending_review" | "merged" }> {
  if (findNode(ctx, form.spaceId, form.nodeId).status !== "active") throw notFound(`Form not found: ${form.nodeId}`);
  const byInput = new Map(form.bindings.map((binding) => [binding.inputName, binding]));
  const fields: Record<string, unknown> = {};
  for (const [input, value] of Object.entries(values)) {
    const binding = byInput.get(input);
    if (!binding) throw badRequest(`The form has no input "${input}".`);
    fields[binding.fieldSlug] = value;
  }
  const missing = form.bindings.filter((binding) => binding.required && isEmpty(values[binding.inputName])).map((binding) => binding.inputName);
  if (missing.length > 0) throw badRequest(`Missing required fields: ${missing.join(", ")}.`);
  const proposed = await proposeRecords(ctx, who, form.targetBaseId, [{ fields }], { message: `Submitted through the form "${form.name}"`, autoMerge: form.mergeSubmissions ? undefined : false }, (tx) => reserveSubmission(tx, form));
  return { changeRequestId: proposed.changeRequest.id, status: proposed.outcome?.merged ? "merged" : "pending_review" };
}

/**
 * `POST /forms/{nodeId}/submit` without a key. A node id of another shape is not found before
 * anything is counted for it. Every try of an address is counted, refused or not (30 a minute);
 * the form's own count (120 a minute) holds only the submissions it took, so one address, whose
 * tries run out first, cannot close a form for its other visitors.
 */
export async function submitAsVisitor(ctx: AppContext, nodeId: string, address: string, values: Record<string, unknown>): ReturnType<typeof submitForm> {
  if (!isIdOf("nod", nodeId)) throw notFound(`Form not found: ${nodeId}`);
  ctx.limits.formVisitors.take(`address ${address}`);
  const form = formOnNode(ctx, nodeId);
  const formKey = `form ${form.id}`;
  ctx.limits.formSubmissions.take(formKey);
  try {
    return await submitForm(ctx, form, visitorOf(ctx, form), values);
  } catch (error) {
    ctx.limits.formSubmissions.release(formKey);
    throw error;
  }
}
