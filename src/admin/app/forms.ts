import type { ChangeRequestView } from "../../changes/views";
import type { BaseView } from "../../content/bases";
import type { FormView, PublicFormSchema } from "../../content/forms";
import { isComputed, traitsOf } from "../../shared/field-types";
import { slugFrom } from "../../shared/formats";
import type { Static } from "@sinclair/typebox";
import { api, ApiError } from "./api";
import { h } from "./dom";
import { pageKindOf } from "./kinds/registry";
import { action, card, checkbox, copyable, dialogForm, empty, failureText, input, notice, screen, textarea } from "./ui";
import type { Context, Screen } from "./screen";

/**
 * Forms on a base (issue 38, item 9): designed here (a name, the fields it asks for, which of them
 * are required, whether anyone with the link may answer and whether answers merge at once), shared
 * by the link of their visitors' page, `/admin/f/{node}`, whose answers land in the Inbox.
 */

type PublicForm = Static<typeof PublicFormSchema>;

/** The address a form's visitors open. */
const formLink = (nodeId: string) => `${location.origin}/admin/f/${nodeId}`;

/** The dialog that makes a form, or changes one: every field a client may write, each asked or not, required or not. */
function formDialog(base: BaseView, done: () => void, existing?: FormView): void {
  const writable = base.fields.filter((field) => !isComputed(field.type) && !traitsOf(field.type).holdsFiles);
  const bound = new Map((existing?.bindings ?? writable.map((field) => ({ fieldSlug: field.slug, inputName: field.slug, required: field.required }))).map((binding) => [binding.fieldSlug, binding]));
  const rows = writable.map((field) =>
    h(
      "fieldset",
      { class: "form-field" },
      h("legend", {}, field.name),
      checkbox(`Ask for ${field.name}`, `ask:${field.slug}`, bound.has(field.slug)),
      checkbox("Required", `required:${field.slug}`, bound.get(field.slug)?.required === true || field.required),
    ),
  );
  const body = [
    input("Name", "name", { value: existing?.name ?? `${base.name} form`, required: true }),
    textarea("Description", "description", { value: existing?.description ?? "", rows: 2, hint: "Shown above the questions." }),
    ...rows,
    checkbox("Anyone with the link can answer (no account)", "public", existing ? existing.share.isPublic && existing.share.anonymousSubmit : true),
    checkbox("Answers merge at once, without review", "merge", existing?.mergeSubmissions ?? false),
  ];
  dialogForm(existing ? `Edit ${existing.name}` : `New form on ${base.name}`, body, existing ? "Save" : "Create form", async () => {
    const dialog = document.querySelector<HTMLFormElement>("dialog.form-dialog form")!;
    const values = new FormData(dialog);
    const bindings = writable.filter((field) => values.has(`ask:${field.slug}`)).map((field) => ({ inputName: field.slug, fieldSlug: field.slug, required: values.has(`required:${field.slug}`) }));
    if (bindings.length === 0) throw new Error("Ask for one field at least.");
    const open = values.has("public");
    const settings = { name: String(values.get("name")).trim(), description: String(values.get("description")), bindings, share: { isPublic: open, anonymousSubmit: open }, mergeSubmissions: values.has("merge") };
    if (existing) await api("PUT", `/forms/${existing.nodeId}`, settings);
    else await api("POST", "/forms", { nodeId: await formNode(base, settings.name), targetBaseId: base.id, ...settings });
    done();
  });
}

/** A form node beside the base, its slug made from the form's name (`-2`, `-3`, … when taken). */
async function formNode(base: BaseView, name: string): Promise<string> {
  const { parentId } = await api<{ parentId: string | null }>("GET", `/nodes/${base.nodeId}`);
  const stem = slugFrom(name) || `${base.slug}-form`;
  for (let attempt = 1; ; attempt++) {
    const slug = attempt === 1 ? stem : `${stem.slice(0, 60)}-${attempt}`;
    try {
      const made = await api<ChangeRequestView>("POST", "/nodes/change-requests", { operations: [{ kind: "create", nodeType: "form", slug, name, parentNodeId: parentId ?? undefined }], autoMerge: true });
      return made.operations[0].nodeId!;
    } catch (failure) {
      if (!(failure instanceof ApiError && failure.status === 400 && /slug/.test(failure.message)) || attempt === 5) throw failure;
    }
  }
}

/** A base's forms: each with its link, how many answers it took, and (for a manager) Edit; New form. Drawn at once, filled when read (the grid comes first). */
export function formsCard(base: BaseView, canManage: boolean, reload: () => void): HTMLElement {
  const body = h("div", {}, h("p", { class: "muted" }, "Reading the forms…"));
  api<{ forms: FormView[] }>("GET", `/forms?targetBaseId=${base.id}`).then(
    ({ forms }) => body.replaceChildren(formsList(base, forms, canManage, reload)),
    (failure) => body.replaceChildren(notice("error", failureText(failure))),
  );
  return card("Forms", body, canManage ? action("New form", async () => formDialog(base, reload), { kind: "secondary" }) : null);
}

function formsList(base: BaseView, forms: FormView[], canManage: boolean, reload: () => void): HTMLElement {
  return forms.length
    ? h(
        "ul",
        { class: "forms" },
        forms.map((form) =>
          h(
            "li",
            {},
            h("strong", {}, form.name),
            h("span", { class: "muted" }, ` · ${form.submissionCount} answer${form.submissionCount === 1 ? "" : "s"} · ${form.mergeSubmissions ? "merged at once" : "each waits for review"}`),
            form.share.isPublic && form.share.anonymousSubmit ? copyable(formLink(form.nodeId)) : h("p", { class: "muted" }, "Not shared: answered with an API key only."),
            canManage ? action("Edit", async () => formDialog(base, reload, form), { kind: "secondary" }) : null,
          ),
        ),
      )
    : empty("No form on this base yet.");
}

/** An input for one question of a public form, by its field's page kind. */
const question = (item: PublicForm["inputs"][number]): HTMLElement => pageKindOf(item.type).question(item);

/** The values of a filled-in form, each read by its question's page kind. */
function answersOf(formNode: HTMLFormElement, inputs: PublicForm["inputs"]): Record<string, unknown> {
  const data = new FormData(formNode);
  const values: Record<string, unknown> = {};
  for (const item of inputs) {
    const answer = pageKindOf(item.type).answer(data.getAll(item.inputName).map(String), item);
    if (answer !== undefined) values[item.inputName] = answer;
  }
  return values;
}

/** `/admin/f/{node}`: a public form as its visitors fill it in, signed in or not. */
async function visitorPage(ctx: Context): Promise<Node> {
  const form = await api<PublicForm>("GET", `/forms/${encodeURIComponent(ctx.params.id)}/public`);
  const status = h("div", { role: "status" });
  const submit = h("button", { type: "submit" }, "Send");
  const formNode = h("form", { class: "public-form" }, form.inputs.map(question), h("div", { class: "actions" }, submit), status);
  formNode.addEventListener("submit", async (event) => {
    event.preventDefault();
    submit.disabled = true;
    try {
      const answer = await api<{ status: string }>("POST", `/forms/${encodeURIComponent(form.nodeId)}/submit`, { values: answersOf(formNode, form.inputs) });
      formNode.replaceWith(notice("success", answer.status === "merged" ? "Thank you: your answer is saved." : "Thank you: your answer was sent, and waits for review."));
    } catch (failure) {
      status.replaceChildren(notice("error", failureText(failure)));
      submit.disabled = false;
    }
  });
  return screen(form.name, form.description ? h("p", { class: "lead" }, form.description) : null, card(null, formNode));
}

export const formScreens: Screen[] = [{ path: "/admin/f/:id", title: "Form", signedOut: true, render: visitorPage }];
