import type { FieldView } from "../../content/bases";
import { type FilterOperator, filterWordsOf, traitsOf, VALUELESS_OPERATORS } from "../../shared/field-types";
import { h } from "./dom";

/**
 * The grid's condition builder (issue 38, item 3): conditions on fields, in words ("Status is
 * Done", "Due is before 2026-12-01"), matched all (AND) or any (OR), and groups of conditions with
 * their own match. Kept in the address as `?where=` (JSON), sent to the listing as its `filters`
 * and `groups`, and saved with a view as the same.
 */

export interface Condition {
  field: string;
  op: FilterOperator;
  value?: string | string[];
}
interface ConditionGroup {
  match: "all" | "any";
  conditions: Condition[];
}
export interface Conditions extends ConditionGroup {
  groups: ConditionGroup[];
}

const isMatch = (value: unknown): value is "all" | "any" => value === "all" || value === "any";

/** The conditions the address holds: `?where=` (JSON), or one condition as `field`, `op` and `value`. */
export function conditionsOf(query: URLSearchParams): Conditions | null {
  const where = query.get("where");
  if (where) {
    try {
      const parsed = JSON.parse(where) as Conditions;
      if (isMatch(parsed.match) && Array.isArray(parsed.conditions) && Array.isArray(parsed.groups)) return parsed;
    } catch {}
    return null;
  }
  const field = query.get("field");
  const op = query.get("op") as FilterOperator | null;
  return field && op ? { match: "all", conditions: [{ field, op, value: query.get("value") ?? undefined }], groups: [] } : null;
}

const listingFilter = (condition: Condition) => ({ fieldSlug: condition.field, operator: condition.op, ...(VALUELESS_OPERATORS.has(condition.op) ? {} : { value: condition.value }) });

/** The conditions as a view's config keeps them: filters (all) and groups. */
export function asConfig(conditions: Conditions | null): { filters: ReturnType<typeof listingFilter>[]; groups?: { match: "all" | "any"; filters: ReturnType<typeof listingFilter>[]; groups?: { match: "all" | "any"; filters: ReturnType<typeof listingFilter>[] }[] }[] } {
  if (!conditions) return { filters: [] };
  const groups = conditions.groups.map((group) => ({ match: group.match, filters: group.conditions.map(listingFilter) }));
  if (conditions.match === "all") return { filters: conditions.conditions.map(listingFilter), ...(groups.length ? { groups } : {}) };
  return { filters: [], groups: [{ match: "any", filters: conditions.conditions.map(listingFilter), groups }] };
}

/** The conditions as a listing's query parameters (`filters[i][…]`, `groups[i][…]`). */
export function listingParams(conditions: Conditions | null): Record<string, string> {
  const params: Record<string, string> = {};
  const put = (prefix: string, filter: ReturnType<typeof listingFilter>) => {
    params[`${prefix}[fieldSlug]`] = filter.fieldSlug;
    params[`${prefix}[operator]`] = filter.operator;
    if (Array.isArray(filter.value)) filter.value.forEach((item, j) => (params[`${prefix}[value][${j}]`] = item));
    else if (filter.value !== undefined) params[`${prefix}[value]`] = filter.value;
  };
  const config = asConfig(conditions);
  config.filters.forEach((filter, i) => put(`filters[${i}]`, filter));
  (config.groups ?? []).forEach((group, i) => {
    params[`groups[${i}][match]`] = group.match;
    group.filters.forEach((filter, j) => put(`groups[${i}][filters][${j}]`, filter));
    (group.groups ?? []).forEach((inner, k) => {
      params[`groups[${i}][groups][${k}][match]`] = inner.match;
      inner.filters.forEach((filter, j) => put(`groups[${i}][groups][${k}][filters][${j}]`, filter));
    });
  });
  return params;
}

/** How many conditions hold a value to compare with (or need none). */
const conditionCount = (conditions: Conditions | null) => (conditions ? conditions.conditions.length + conditions.groups.reduce((sum, group) => sum + group.conditions.length, 0) : 0);

const filterable = (fields: FieldView[]) => fields.filter((field) => filterWordsOf(field.type).length > 0);
const choicesOf = (field: FieldView) => ((field.options.choices as { name: string }[] | undefined) ?? []).map((choice) => choice.name);

/** The value input a condition's operator asks for, by the field's type: a choice picker, a number, a date, or text. */
function valueInput(field: FieldView, op: FilterOperator, value: Condition["value"]): HTMLElement | null {
  if (VALUELESS_OPERATORS.has(op)) return null;
  const traits = traitsOf(field.type);
  const choices = choicesOf(field);
  const given = Array.isArray(value) ? value : value === undefined ? [] : [value];
  if (choices.length > 0) {
    const many = op === "in";
    return h("select", { name: "value", "aria-label": "Value", multiple: many, size: many ? Math.min(5, choices.length) : null }, choices.map((choice) => h("option", { value: choice, selected: given.includes(choice) }, choice)));
  }
  const inputType = traits.compares === "number" ? "number" : traits.dated ? "date" : "text";
  return h("input", { name: "value", "aria-label": "Value", type: inputType, step: inputType === "number" ? "any" : null, value: given[0]?.slice(0, traits.dated ? 10 : undefined) ?? "" });
}

/** One condition's row: its field, its operator in words, its value, and a button that takes it away. */
function conditionRow(fields: FieldView[], condition: Condition | null): HTMLElement {
  const usable = filterable(fields);
  const field = usable.find((candidate) => candidate.slug === condition?.field) ?? usable[0];
  const row = h("div", { class: "condition" });
  const draw = (chosen: FieldView, op: FilterOperator, value: Condition["value"]) => {
    const words = filterWordsOf(chosen.type);
    const operator = words.some(([candidate]) => candidate === op) ? op : words[0][0];
    const fieldPick = h("select", { name: "field", "aria-label": "Field" }, usable.map((candidate) => h("option", { value: candidate.slug, selected: candidate.slug === chosen.slug }, candidate.name)));
    const operatorPick = h("select", { name: "op", "aria-label": "Operator" }, words.map(([candidate, label]) => h("option", { value: candidate, selected: candidate === operator }, label)));
    fieldPick.addEventListener("change", () => draw(usable.find((candidate) => candidate.slug === fieldPick.value)!, operator, undefined));
    operatorPick.addEventListener("change", () => draw(chosen, operatorPick.value as FilterOperator, readValue(row)));
    row.replaceChildren(fieldPick, operatorPick, valueInput(chosen, operator, value) ?? "", h("button", { type: "button", class: "secondary remove", "aria-label": "Remove this condition", onclick: () => row.remove() }, "×"));
  };
  draw(field, condition?.op ?? filterWordsOf(field.type)[0][0], condition?.value);
  return row;
}

function readValue(row: Element): Condition["value"] {
  const control = row.querySelector<HTMLInputElement | HTMLSelectElement>("[name=value]");
  if (!control) return undefined;
  if (control instanceof HTMLSelectElement && control.multiple) return [...control.selectedOptions].map((option) => option.value);
  return control.value;
}

const matchPick = (label: string, match: "all" | "any") =>
  h("select", { name: "match", "aria-label": label }, h("option", { value: "all", selected: match === "all" }, "all"), h("option", { value: "any", selected: match === "any" }, "any"));

/** The rows of a list of conditions, read back: those whose operator needs a value and has none are left out. */
function readRows(list: Element): Condition[] {
  return [...list.querySelectorAll(":scope > .condition")].flatMap((row) => {
    const field = row.querySelector<HTMLSelectElement>("[name=field]")!.value;
    const op = row.querySelector<HTMLSelectElement>("[name=op]")!.value as FilterOperator;
    const value = readValue(row);
    const missing = !VALUELESS_OPERATORS.has(op) && (value === undefined || value === "" || (Array.isArray(value) && value.length === 0));
    return missing ? [] : [{ field, op, ...(VALUELESS_OPERATORS.has(op) ? {} : { value }) }];
  });
}

/** A group of conditions with its own match, inside the builder. */
function groupBox(fields: FieldView[], group: ConditionGroup): HTMLElement {
  const list = h("div", { class: "conditions-list" }, group.conditions.map((condition) => conditionRow(fields, condition)));
  const box = h(
    "fieldset",
    { class: "condition-group" },
    h("legend", {}, "Group: ", matchPick("Group match", group.match), " of"),
    list,
    h("div", { class: "actions" }, h("button", { type: "button", class: "secondary", onclick: () => list.append(conditionRow(fields, null)) }, "+ Condition in group"), h("button", { type: "button", class: "secondary", onclick: () => box.remove() }, "Remove group")),
  );
  return box;
}

/**
 * The builder: "Match all|any of" its conditions and groups, then Filter (`apply` with what it
 * holds, null when nothing) and Clear. A builder with no conditions starts with one row to fill.
 */
export function conditionBuilder(fields: FieldView[], shown: Conditions | null, apply: (conditions: Conditions | null) => void): { form: HTMLFormElement; toggle: HTMLButtonElement; focusOn(slug: string): void } {
  const start: Conditions = shown ?? { match: "all", conditions: [], groups: [] };
  const list = h("div", { class: "conditions-list" }, (start.conditions.length ? start.conditions : [null]).map((condition) => conditionRow(fields, condition)));
  const groups = h("div", { class: "condition-groups" }, start.groups.map((group) => groupBox(fields, group)));
  const form = h(
    "form",
    { class: "filter conditions", role: "search", "aria-label": "Filter records" },
    h("p", { class: "match" }, "Records that match ", matchPick("Match", start.match), " of these:"),
    list,
    groups,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", class: "secondary", onclick: () => list.append(conditionRow(fields, null)) }, "+ Condition"),
      h("button", { type: "button", class: "secondary", onclick: () => groups.append(groupBox(fields, { match: "any", conditions: [] })) }, "+ Group"),
      h("button", { type: "submit" }, "Filter"),
      shown ? h("button", { type: "button", class: "secondary", onclick: () => apply(null) }, "Clear") : null,
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const read: Conditions = {
      match: form.querySelector<HTMLSelectElement>(":scope > .match [name=match]")!.value as "all" | "any",
      conditions: readRows(list),
      groups: [...groups.querySelectorAll(":scope > .condition-group")].map((box) => ({ match: box.querySelector<HTMLSelectElement>("legend [name=match]")!.value as "all" | "any", conditions: readRows(box.querySelector(".conditions-list")!) })).filter((group) => group.conditions.length > 0),
    };
    apply(conditionCount(read) > 0 ? read : null);
  });
  // Folded into a toolbar, so the first screen is the data: open when conditions are in effect, or when asked.
  const toggle = h("button", { type: "button", class: "secondary filter-toggle", "aria-expanded": shown ? "true" : "false", "aria-controls": "filter-records" }, shown ? `Filtered by ${conditionCount(shown)} condition${conditionCount(shown) === 1 ? "" : "s"}` : "Filter records…");
  form.id = "filter-records";
  form.hidden = !shown;
  const open = (opened: boolean) => {
    form.hidden = !opened;
    toggle.setAttribute("aria-expanded", String(opened));
  };
  toggle.addEventListener("click", () => open(Boolean(form.hidden)));
  const focusOn = (slug: string) => {
    open(true);
    const row = list.querySelector(":scope > .condition:last-child") ?? list.appendChild(conditionRow(fields, null));
    const pick = row.querySelector<HTMLSelectElement>("[name=field]")!;
    pick.value = slug;
    pick.dispatchEvent(new Event("change"));
    (list.querySelector(":scope > .condition:last-child [name=value]") as HTMLElement | null)?.focus();
  };
  return { form, toggle, focusOn };
}
