import { badRequest } from "../../shared/errors";
import { RATING_MAX } from "../../shared/field-types";
import { type Checked, type FieldKind, NOT_CONVERTIBLE, plainText } from "./kind";

const maxOf = (options: Record<string, unknown>): number => (options.max as number | undefined) ?? RATING_MAX.default;

/** A rating's options: `max`, the most stars, a whole number from 1 to 10 (5 when not given). */
function checkRatingOptions(options: Record<string, unknown>): Record<string, unknown> {
  const max = options.max ?? RATING_MAX.default;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 1 || max > RATING_MAX.most) {
    throw badRequest(`A rating field's options.max is a whole number from 1 to ${RATING_MAX.most} (${RATING_MAX.default} when not given).`);
  }
  return { ...options, max };
}

function checkRating(value: unknown, field: { options: Record<string, unknown> }): Checked {
  const max = maxOf(field.options);
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= max ? { value } : { error: `must be a whole number of stars from 1 to ${max}` };
}

/** Stars out of the field's `max`: a whole number from 1, or no value; sorted and filtered as a number; a cell of a file may hold the digits or the stars (★★★). */
export const ratingKind: FieldKind = {
  checkOptions: checkRatingOptions,
  checkValue: checkRating,
  fromText(text, field) {
    const written = text.trim();
    return checkRating(/^★+$/.test(written) ? written.length : /^\d+$/.test(written) ? Number(written) : Number.NaN, field);
  },
  toText: plainText,
  formulaType: "number",
  searched: false,
  convertsFrom: (value) => (typeof value === "number" && Number.isFinite(value) ? Math.round(value) : typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : NOT_CONVERTIBLE),
};
