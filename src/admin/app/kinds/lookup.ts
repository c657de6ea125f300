import { LOOKUP_ROLLUPS } from "../../../shared/field-types";
import { fill, h } from "../dom";
import { select } from "../ui";
import type { PageKind } from "./kind";
import { computedKind } from "./system";

/** Values read through a link: the link, the field read there and how they are summed up. */
export const lookupKind: PageKind = {
  ...computedKind,
  settings: ({ links, bases, options }) => {
    const given = (options.lookup ?? {}) as { relationFieldSlug?: string; targetFieldSlug?: string; rollup?: string };
    if (links.length === 0) return { node: h("p", { class: "empty" }, "A lookup reads through a link: add a “Link to records” field first."), read: () => undefined };
    const link = select("Through the link", "relationFieldSlug", links.map((field) => ({ value: field.slug, label: field.name })), given.relationFieldSlug);
    const target = h("div", {});
    const rollup = select("Show", "rollup", LOOKUP_ROLLUPS.map((value) => ({ value, label: value === "values" ? "each value" : value })), given.rollup ?? "values");
    const drawTargets = () => {
      const field = links.find((candidate) => candidate.slug === link.querySelector("select")!.value)!;
      const far = bases.find((candidate) => candidate.id === field.options.targetBaseId);
      fill(target, select("Field of the linked records", "targetFieldSlug", (far?.fields ?? []).map((f) => ({ value: f.slug, label: f.name })), given.targetFieldSlug));
    };
    link.querySelector("select")!.addEventListener("change", drawTargets);
    drawTargets();
    return {
      node: h("div", {}, link, target, rollup),
      read: () => ({ lookup: { relationFieldSlug: link.querySelector("select")!.value, targetFieldSlug: target.querySelector("select")?.value, rollup: rollup.querySelector("select")!.value } }),
    };
  },
};
