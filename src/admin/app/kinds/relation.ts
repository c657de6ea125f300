import { h } from "../dom";
import { linkPicker } from "../pickers";
import { checkbox, select } from "../ui";
import { copiedText, firstAnswer, lineQuestion, type PageKind } from "./kind";
import { readJson } from "./json";

/** Links to records of another base: a chip per linked record, by its primary value. */
export const relationKind: PageKind = {
  cell: (_field, value, names) => (Array.isArray(value) ? value : [value]).map(String).map((id) => h("span", { class: "chip link-chip" }, names.get(id) ?? "a record without a name")),
  input: (field, value) => linkPicker(field, value),
  readInput: readJson,
  copied: copiedText,
  words: (value, names) => [value].flat().map((id) => names[id as string] ?? String(id)).join(", "),
  settings: ({ bases, options }) => {
    const target = select("Links to records of", "targetBaseId", bases.map((base) => ({ value: base.id, label: base.name })), options.targetBaseId as string | undefined);
    const one = checkbox("One record only", "single", options.multiple === false);
    return {
      node: h("div", {}, target, one, h("small", {}, "The linked base gets a field that links back.")),
      read: () => ({ targetBaseId: target.querySelector("select")!.value, multiple: !one.querySelector("input")!.checked }),
    };
  },
  question: lineQuestion("text"),
  answer: firstAnswer,
};
