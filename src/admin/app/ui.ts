import { type Expiration, EXPIRATION_LABELS, LEVEL_LABELS, type Level } from "../../shared/levels";
import { isEmpty, primaryField } from "../../shared/field-types";
import { ApiError } from "./api";
import { type Child, fill, h } from "./dom";

/** A screen's frame: its heading (focused on arrival, for keyboard and screen-reader users) and content. */
export const screen = (title: string, ...children: Child[]) => h("div", { class: "screen" }, h("h1", { tabindex: "-1" }, title), ...children);

export const card = (title: string | null, ...children: Child[]) => h("section", { class: "card" }, title ? h("h2", {}, title) : null, ...children);

export const link = (href: string, ...children: Child[]) => h("a", { href }, ...children);

/** What to do when there is nothing yet: a sentence and, where there is one, the next step. */
export const empty = (message: string, ...next: Child[]) => h("p", { class: "empty" }, message, next.length ? " " : null, ...next);

/**
 * Where a part of a screen says what happened: news politely (`role="status"`), an error at once
 * (`role="alert"`), each said by one live region, the other emptied. An alert put inside a status
 * was announced twice.
 */
export function statusLine(className: string): { node: HTMLElement; say(...message: Child[]): void; fail(...message: Child[]): void } {
  const news = h("div", { role: "status" });
  const error = h("div", { class: "error", role: "alert" });
  return {
    node: h("div", { class: className }, news, error),
    say: (...message) => (error.replaceChildren(), fill(news, ...message)),
    fail: (...message) => (news.replaceChildren(), fill(error, ...message)),
  };
}

export const notice = (kind: "success" | "error" | "info", ...children: Child[]) => h("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, ...children);

export const levelName = (level: Level) => LEVEL_LABELS[level].name;
export const expirationName = (expiration: Expiration) => EXPIRATION_LABELS[expiration];

/** A date as people read it, in their own time zone; "—" for none. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "—");

/** A value of any field, in a table cell or a diff. */
export const shown = (value: unknown): string => {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
};

/** Who proposed a change request, as people read it: a form's answer is its visitor's ("A visitor of the form …"), not the form's maker's. */
export const proposerName = (cr: { submittedBy: string; submittedByUser: { name: string } | null; sourceAttribution: { displayName: string; channel: string } }): string =>
  cr.sourceAttribution.channel === "form" ? cr.sourceAttribution.displayName : (cr.submittedByUser?.name ?? cr.submittedBy);

/** A record as people know it: its primary value (see `primaryField`), else its id. */
export const recordName = (fields: readonly { slug: string; type: string }[], values: Record<string, unknown>, id: string): string => {
  const value = values[primaryField(fields)?.slug ?? ""];
  return isEmpty(value) ? id : shown(value);
};

let fieldCounter = 0;
const fieldId = (name: string) => `f-${name}-${++fieldCounter}`;

interface InputOptions {
  type?: string;
  value?: string;
  required?: boolean;
  hint?: string;
  autocomplete?: string;
  placeholder?: string;
}

export function input(label: string, name: string, options: InputOptions = {}): HTMLElement {
  const id = fieldId(name);
  const hintId = options.hint ? `${id}-hint` : undefined;
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    h("input", { id, name, type: options.type ?? "text", value: options.value ?? "", required: options.required ?? false, autocomplete: options.autocomplete, placeholder: options.placeholder, "aria-describedby": hintId }),
    options.hint ? h("small", { id: hintId }, options.hint) : null,
  );
}

export function textarea(label: string, name: string, options: { value?: string; hint?: string; rows?: number } = {}): HTMLElement {
  const id = fieldId(name);
  const area = h("textarea", { id, name, rows: options.rows ?? 3 });
  area.value = options.value ?? "";
  return h("div", { class: "field" }, h("label", { for: id }, label), area, options.hint ? h("small", {}, options.hint) : null);
}

export interface Choice {
  value: string;
  label: string;
}

export function select(label: string, name: string, choices: Choice[], selected?: string, hint?: string): HTMLElement {
  const id = fieldId(name);
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    h("select", { id, name }, ...choices.map((choice) => h("option", { value: choice.value, selected: choice.value === selected }, choice.label))),
    hint ? h("small", {}, hint) : null,
  );
}

export function checkbox(label: string, name: string, checked = false): HTMLElement {
  const id = fieldId(name);
  return h("div", { class: "field check" }, h("input", { id, name, type: "checkbox", checked }), h("label", { for: id }, label));
}

/** The level choices: each UI name with one line of what it can do. */
export function levelChoice(name: string, selected: Level): HTMLElement {
  const id = fieldId(name);
  return h(
    "fieldset",
    { class: "levels" },
    h("legend", {}, "Level"),
    ...(Object.entries(LEVEL_LABELS) as [Level, { name: string; can: string }][]).map(([level, label]) =>
      h(
        "div",
        { class: "level" },
        h("input", { type: "radio", name, value: level, id: `${id}-${level}`, checked: level === selected }),
        h("label", { for: `${id}-${level}` }, h("strong", {}, label.name), h("span", {}, label.can)),
      ),
    ),
  );
}

export const expirationChoices = (): Choice[] => (Object.entries(EXPIRATION_LABELS) as [Expiration, string][]).map(([value, label]) => ({ value, label }));

/** The sentence to show for a failure: the server's own, or a plain one for a network error. */
export const failureText = (failure: unknown): string =>
  failure instanceof ApiError ? withIssues(failure) : failure instanceof Error ? `Could not reach the server: ${failure.message}` : String(failure);

/** A schema's refusal says only how many problems; each is in `data.issues` (path and message), shown here. A sentence that already holds its issues is shown as it is. */
function withIssues(failure: ApiError): string {
  const issues = failure.data.issues;
  if (!Array.isArray(issues) || issues.length === 0 || issues.every((issue: { message?: string }) => failure.message.includes(issue.message ?? ""))) return failure.message;
  return `The request is not valid: ${issues.map((issue: { path?: string[]; message?: string }) => `${issue.path?.length ? issue.path.join(".") : "body"}: ${issue.message}`).join("; ")}.`;
}

/**
 * A form that sends its values once at a time: the button is disabled while the request runs, and
 * a failure shows the server's sentence under it, keeping what was typed.
 */
export function form(submitLabel: string, fields: Child[], onSubmit: (values: FormData, form: HTMLFormElement) => Promise<void>, extra: Child[] = []): HTMLFormElement {
  const error = h("p", { class: "error", role: "alert" });
  const submit = h("button", { type: "submit" }, submitLabel);
  const node = h("form", {}, ...fields, h("div", { class: "actions" }, submit, ...extra), error);
  node.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    submit.disabled = true;
    try {
      await onSubmit(new FormData(node), node);
    } catch (failure) {
      error.textContent = failureText(failure);
    } finally {
      submit.disabled = false;
    }
  });
  return node;
}

/** A button whose action may fail: the failure is announced in `status` (or an alert beside it). */
export function action(label: string, run: () => Promise<void>, options: { kind?: "secondary" | "danger"; status?: HTMLElement } = {}): HTMLButtonElement {
  const button = h("button", { type: "button", class: options.kind ?? "" }, label);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await run();
    } catch (failure) {
      const target = options.status ?? button.parentElement;
      target?.appendChild(notice("error", failureText(failure)));
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/** A table that becomes a list of cards on a narrow screen (each cell shows its column's name). */
export function table(columns: string[], rows: Child[][], caption?: string): HTMLTableElement {
  return h(
    "table",
    { class: "list" },
    caption ? h("caption", {}, caption) : null,
    h("thead", {}, h("tr", {}, ...columns.map((column) => h("th", { scope: "col" }, column)))),
    h("tbody", {}, ...rows.map((cells) => h("tr", {}, ...cells.map((cell, i) => h("td", { "data-label": columns[i] }, cell))))),
  );
}

/** A modal question (native `<dialog>`: focus moves in, Escape cancels). Resolves with the answer or null. */
export function ask<T>(title: string, body: Child[], confirmLabel: string, danger: boolean, read: (dialog: HTMLDialogElement) => T): Promise<T | null> {
  return new Promise((resolve) => {
    const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
    const confirm = h("button", { type: "submit", class: danger ? "danger" : "" }, confirmLabel);
    const dialog = h("dialog", { "aria-labelledby": "dialog-title" }, h("form", { method: "dialog" }, h("h2", { id: "dialog-title" }, title), ...body, h("div", { class: "actions" }, confirm, cancel)));
    let answer: T | null = null;
    cancel.addEventListener("click", () => dialog.close());
    dialog.querySelector("form")!.addEventListener("submit", () => {
      answer = read(dialog);
    });
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}

/** A dialog that stays open while its request runs and shows the server's sentence when it fails. */
export function dialogForm(title: string, body: Child[], submitLabel: string, send: () => Promise<void>, danger = false): void {
  const error = h("p", { class: "error", role: "alert" });
  const submit = h("button", { type: "submit", class: danger ? "danger" : "" }, submitLabel);
  const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
  const formNode = h("form", {}, h("h2", { id: "dialog-title" }, title), ...body, h("div", { class: "actions" }, submit, cancel), error);
  const dialog = h("dialog", { "aria-labelledby": "dialog-title", class: "form-dialog" }, formNode);
  cancel.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  formNode.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    submit.disabled = true;
    try {
      await send();
      dialog.close();
    } catch (failure) {
      error.textContent = failureText(failure);
    } finally {
      submit.disabled = false;
    }
  });
  document.body.appendChild(dialog);
  dialog.showModal();
}

/** One choice of a menu: what it says, and what it does once the menu has closed (`href`: where it goes instead). */
export interface MenuChoice {
  label: string;
  run?: () => unknown;
  href?: string;
  danger?: boolean;
}

/** A menu of a thing (a row, a column, a node, a view) as a small modal dialog: its name, an optional line, and its choices (nulls left out), then Close. */
export function menuDialog(title: string, line: string | null, choices: (MenuChoice | null)[]): void {
  const dialog = h("dialog", { "aria-labelledby": "menu-title", class: "menu-dialog" });
  const button = (choice: MenuChoice) =>
    choice.href
      ? h("a", { href: choice.href, class: "button secondary", onclick: () => dialog.close() }, choice.label)
      : h("button", { type: "button", class: choice.danger ? "danger" : "secondary", onclick: () => (dialog.close(), void choice.run?.()) }, choice.label);
  dialog.append(
    h("h2", { id: "menu-title" }, title),
    line ? h("p", { class: "muted" }, line) : "",
    h("div", { class: "menu-actions" }, ...choices.filter((choice): choice is MenuChoice => choice !== null).map(button), h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Close")),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.appendChild(dialog);
  dialog.showModal();
}

/** A thread of comments, oldest first: each with its author and when. */
export const commentList = (comments: { authorId: string; authorUser: { name: string } | null; createdAt: string; body: string }[]) =>
  h("ol", { class: "comments" }, ...comments.map((comment) => h("li", {}, h("p", { class: "muted" }, h("strong", {}, comment.authorUser?.name ?? comment.authorId), ` · ${when(comment.createdAt)}`), h("p", {}, comment.body))));

export const confirmDialog = (title: string, message: Child, confirmLabel: string, danger = false): Promise<boolean> =>
  ask(title, [h("p", {}, message)], confirmLabel, danger, () => true).then((answer) => answer === true);

/** Asks for a sentence (a reason); resolves with it ("" allowed) or null when cancelled. */
export const reasonDialog = (title: string, label: string, confirmLabel: string): Promise<string | null> =>
  ask(title, [textarea(label, "reason", { rows: 4 })], confirmLabel, false, (dialog) => dialog.querySelector("textarea")!.value.trim());

/** Text the person can copy with one button (the clipboard needs a secure context; localhost is one). */
export function copyable(value: string): HTMLElement {
  const code = h("code", { class: "secret" }, value);
  const status = h("span", { class: "copied", role: "status" });
  const copy = h("button", { type: "button", class: "secondary" }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(value);
      status.textContent = "Copied.";
    } catch {
      getSelection()?.selectAllChildren(code);
      status.textContent = "Selected: press Ctrl+C to copy.";
    }
  });
  return h("div", { class: "copy" }, code, copy, status);
}
