import { badRequest } from "../../shared/errors";
import { anyOptions, asText, type FieldKind, plainText, textOf } from "./kind";

const mustBeString = { error: "must be a string" };

/** Text typed in a line or a block, stored as given: `text`, `longtext`, `markdown`, `html` (never rendered as HTML by Basalt). */
export const textKind: FieldKind = {
  checkOptions: anyOptions,
  checkValue: (value) => (typeof value === "string" ? { value } : mustBeString),
  fromText: asText,
  toText: plainText,
  formulaType: "text",
  searched: true,
  convertsFrom: textOf,
};

/** The languages whose `code` values are parsed on write (others are any string). */
const PARSED_LANGUAGES: Record<string, (text: string) => unknown> = { json: JSON.parse, yaml: (text) => Bun.YAML.parse(text) };

/** Why `text` is not valid `language`, or null when it parses (or the language is not checked). */
function parseError(language: string, text: string): string | null {
  const parse = PARSED_LANGUAGES[language];
  if (!parse) return null;
  try {
    parse(text);
    return null;
  } catch (error) {
    return `must be valid ${language.toUpperCase()} (${(error as Error).message})`;
  }
}

const languageOf = (options: Record<string, unknown>): string => ((options.code as { language?: string } | undefined)?.language ?? "").toLowerCase();

/** Source text in a language: `code` (options `code: { language? }`; json and yaml are parsed on write) and `yaml`. */
const sourceKind = (language: (options: Record<string, unknown>) => string, checkOptions: FieldKind["checkOptions"]): FieldKind => ({
  ...textKind,
  checkOptions,
  checkValue(value, field) {
    if (typeof value !== "string") return mustBeString;
    const error = parseError(language(field.options), value);
    return error ? { error } : { value };
  },
});

/** A code field's options: `code: { language? }`, a short name such as `typescript`, `json` or `yaml`. */
function checkCodeOptions(options: Record<string, unknown>): Record<string, unknown> {
  const code = options.code;
  if (code === undefined) return options;
  const language = (code as { language?: unknown } | null)?.language;
  if (typeof code !== "object" || code === null || Array.isArray(code) || (language !== undefined && (typeof language !== "string" || !/^[A-Za-z0-9+#._-]{1,32}$/.test(language)))) {
    throw badRequest('A code field\'s options.code is { "language": "…" }: a name of 1 to 32 letters, digits or + # . _ - (json and yaml values are parsed).');
  }
  return options;
}

export const codeKind = sourceKind(languageOf, checkCodeOptions);
export const yamlKind = sourceKind(() => "yaml", anyOptions);
