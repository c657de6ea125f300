import { h } from "../dom";
import { checkbox } from "../ui";
import { plainWords, questionLabel, type PageKind } from "./kind";

/** True or false: toggled in its cell, copied as TRUE or FALSE, pasted from TRUE, yes, 1, x or a tick. */
export const checkboxKind: PageKind = {
  cell: (_field, value) => h("span", { class: "tick", "aria-label": value ? "yes" : "no" }, value ? "✓" : ""),
  toggled: true,
  input: (field, value) => checkbox(field.name, field.slug, value === true),
  readInput: (field, values) => values.get(field.slug) === "on",
  copied: (value) => (value === true ? "TRUE" : "FALSE"),
  pasted: (_field, text) => ({ value: /^(true|yes|y|1|x|✓|✔)$/i.test(text.trim()) }),
  words: plainWords,
  question: (item) => h("label", { class: "check" }, h("input", { type: "checkbox", name: item.inputName, value: "true" }), ` ${questionLabel(item)}`),
  answer: (given) => given.includes("true"),
};
