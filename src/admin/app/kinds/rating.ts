import { RATING_MAX } from "../../../shared/field-types";
import { h } from "../dom";
import { input, select } from "../ui";
import { labelOf, lineEditor, textOfValue, type PageKind } from "./kind";
import { numberCell, numberKind } from "./number";

/** Stars, from one to the field's `max`. */
export const ratingKind: PageKind = {
  ...numberKind,
  cell: (field, value) => (typeof value === "number" ? h("span", { class: "stars", "aria-label": `${value} of ${field.options.max ?? RATING_MAX.default}` }, "★".repeat(value)) : numberCell(field, value)),
  cellEditor: lineEditor("text", "numeric"),
  input: (field, value) => {
    const max = Number(field.options.max ?? RATING_MAX.default);
    return select(labelOf(field), field.slug, [{ value: "", label: "—" }, ...Array.from({ length: max }, (_, i) => ({ value: String(i + 1), label: "★".repeat(i + 1) }))], textOfValue(value));
  },
  settings: ({ options }) => {
    const max = input("Stars", "max", { type: "number", value: String(options.max ?? RATING_MAX.default), hint: `1 to ${RATING_MAX.most}.` });
    return { node: max, read: () => ({ max: Number(max.querySelector("input")!.value) }) };
  },
};
