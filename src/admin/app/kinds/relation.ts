import type { BaseView } from "../../../content/bases";
import { holdsMany } from "../../../shared/field-types";
import { api } from "../api";
import { h } from "../dom";
import { linkPicker } from "../pickers";
import { checkbox, select } from "../ui";
import type { FieldView } from "../../../content/bases";
import { copiedText, firstAnswer, lineQuestion, type PageKind, type Read } from "./kind";
import { readJson } from "./json";

/** A record id as a copied link cell holds it. */
const RECORD_ID = /^rec_[0-9A-Za-z]{1,64}$/;

/**
 * A pasted link cell: record ids (as a link cell copies) or names, matched by the server to the
 * target base's primary field as a conversion to links matches them (case and accents folded);
 * several in a cell of a field holding many, split on commas. A name matching no record, or
 * several, refuses the cell, saying which: nothing is dropped silently, nothing linked by a guess.
 */
async function pastedLinks(field: FieldView, texts: string[]): Promise<(text: string) => Read> {
  const many = holdsMany(field.options);
  const itemsOf = (text: string) => (many ? text.split(/\s*[,;]\s*/) : [text]).map((item) => item.trim()).filter(Boolean);
  const target = encodeURIComponent(String(field.options.targetBaseId));
  const names = [...new Set(texts.flatMap(itemsOf).filter((item) => !RECORD_ID.test(item)))];
  const [base, { matches }] = await Promise.all([
    api<BaseView>("GET", `/bases/${target}`),
    names.length === 0 ? { matches: [] } : api<{ matches: { name: string; recordId: string | null; recordCount: number }[] }>("POST", `/bases/${target}/records/match`, { names }),
  ]);
  const byName = new Map(matches.map((match) => [match.name, match]));
  const quoted = (names: string[]) => names.map((name) => `“${name}”`).join(", ");
  return (text) => {
    const items = itemsOf(text);
    const named = items.filter((item) => !RECORD_ID.test(item));
    const missing = named.filter((item) => !byName.get(item)?.recordCount);
    if (missing.length > 0) return { refused: `${quoted(missing)} ${missing.length === 1 ? "names" : "name"} no record of ${base.name}` };
    const shared = named.filter((item) => byName.get(item)!.recordCount > 1);
    if (shared.length > 0) return { refused: `${quoted(shared)} ${shared.length === 1 ? "names" : "name"} several records of ${base.name}: paste a record's id (copied from its link cell), or give those records names of their own` };
    const ids = [...new Set(items.map((item) => (RECORD_ID.test(item) ? item : byName.get(item)!.recordId!)))];
    if (!many && ids.length > 1) return { refused: `${field.name} links one record` };
    return { value: many ? ids : (ids[0] ?? null) };
  };
}

/** Links to records of another base: a chip per linked record, by its primary value. */
export const relationKind: PageKind = {
  cell: (_field, value, names) => (Array.isArray(value) ? value : [value]).map(String).map((id) => h("span", { class: "chip link-chip" }, names.get(id) ?? "a record without a name")),
  input: (field, value) => linkPicker(field, value),
  readInput: readJson,
  copied: copiedText,
  pastedTogether: pastedLinks,
  words: (value, names) => [value].flat().map((id) => names[id as string] ?? String(id)).join(", "),
  settings: ({ bases, options }) => {
    const target = select("Links to records of", "targetBaseId", bases.map((base) => ({ value: base.id, label: base.name })), options.targetBaseId as string | undefined);
    const one = checkbox("One record only", "single", options.multiple === false);
    return {
      node: h("div", {}, target, one, h("small", {}, "The linked base gets a field that links back.")),
      read: () => ({ targetBaseId: target.querySelector("select")!.value, multiple: !one.querySelector("input")!.checked }),
    };
  },
  // Text into links: the base whose records the names name (matched by its primary field), and whether "a, b" names two.
  conversion: ({ base, bases }) => {
    const others = bases.filter((other) => other.id !== base.id);
    const target = select("Links to records of", "convert-target", others.map((other) => ({ value: other.id, label: other.name })), others[0]?.id, "Each value is matched to that base's first text field, in any case and with or without accents.");
    const splitNames = checkbox("Split text on commas: “a, b” names two records", "split-names", false);
    return {
      node: h("div", {}, target, splitNames),
      read: () => ({ targetBaseId: target.querySelector("select")!.value, ...(splitNames.querySelector("input")!.checked ? { splitText: true } : {}) }),
    };
  },
  question: lineQuestion("text"),
  answer: firstAnswer,
};
