import { foldCase } from "../../db/functions";
import { badRequest } from "../../shared/errors";
import { type FieldKind, listItems, NOT_CONVERTIBLE, plainText, textOf } from "./kind";

interface Choice {
  id: string;
  name: string;
}

const choicesOf = (options: Record<string, unknown>): Choice[] => (options.choices as Choice[] | undefined) ?? [];
const choiceNames = (options: Record<string, unknown>) => choicesOf(options).map((choice) => choice.name).join(", ");

/** A choice given by name or id, stored as its name; undefined when it is no choice. */
function choiceName(options: Record<string, unknown>, value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  return choicesOf(options).find((choice) => choice.name === value || choice.id === value)?.name;
}

/** A choice named in any case ("review" for "Review"), as its own name; the text itself when no choice is. */
const choiceInAnyCase = (options: Record<string, unknown>, text: string): string => choicesOf(options).find((choice) => foldCase(choice.name) === foldCase(text))?.name ?? text;

/** The choices new options rename, matched by id: old name -> new name. */
export function renamedChoices(before: Record<string, unknown>, after: Record<string, unknown>): Map<string, string> {
  const names = new Map(choicesOf(after).map((choice) => [choice.id, choice.name]));
  const renames = new Map<string, string>();
  for (const choice of choicesOf(before)) {
    const name = names.get(choice.id);
    if (name !== undefined && name !== choice.name) renames.set(choice.name, name);
  }
  return renames;
}

/** `choices: [{ name, id? }]`, at least one, names unique; a choice without an id takes its name as one. */
const checkChoices =
  (type: string) =>
  (options: Record<string, unknown>): Record<string, unknown> => {
    const choices = options.choices;
    if (!Array.isArray(choices) || choices.length === 0) throw badRequest(`A ${type} field needs options.choices: [{ "name": "…" }].`);
    const normalized = choices.map((choice: unknown) => {
      const { name, id } = (choice ?? {}) as { name?: unknown; id?: unknown };
      if (typeof name !== "string" || name === "") throw badRequest("Every choice needs a non-empty name.");
      return { ...(choice as object), id: typeof id === "string" && id ? id : name, name };
    });
    if (new Set(normalized.map((c) => c.name)).size !== normalized.length) throw badRequest("Choice names must be unique.");
    return { ...options, choices: normalized };
  };

/** One choice of a list the field defines. */
export const selectKind: FieldKind = {
  checkOptions: checkChoices("select"),
  checkValue(value, field) {
    const name = choiceName(field.options, value);
    return name !== undefined ? { value: name } : { error: `must be one of: ${choiceNames(field.options)}` };
  },
  fromText: (text, field) => ({ value: choiceInAnyCase(field.options, text.trim()) }),
  toText: plainText,
  formulaType: "text",
  searched: true,
  convertsFrom: (value) => (!Array.isArray(value) ? textOf(value) : value.length === 1 ? textOf(value[0]) : NOT_CONVERTIBLE),
  choices: true,
};

/** Any of the choices, each once, in the order given. */
export const multiselectKind: FieldKind = {
  checkOptions: checkChoices("multiselect"),
  checkValue(value, field) {
    if (!Array.isArray(value)) return { error: "must be an array of choices" };
    const names = value.map((item) => choiceName(field.options, item));
    return names.every((name) => name !== undefined) ? { value: [...new Set(names)] } : { error: `must hold only: ${choiceNames(field.options)}` };
  },
  fromText: (text, field) => ({ value: listItems(text).map((item) => choiceInAnyCase(field.options, item)) }),
  toText: plainText,
  formulaType: "list",
  searched: true,
  // A value is one choice (a select's "infra, p1" stays one), unless the person asked to split text on its commas.
  convertsFrom: (value, source) => (Array.isArray(value) ? value.map(textOf) : source.split ? listItems(textOf(value)) : [textOf(value).trim()].filter(Boolean)),
  choices: true,
};
