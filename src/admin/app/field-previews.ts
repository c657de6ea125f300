import type { ConversionSummary } from "../../content/field-convert";
import type { DeletionSummary } from "../../content/field-changes";
import { FIELD_TRAITS, type FieldType } from "../../shared/field-types";
import { shown } from "./ui";

/**
 * What a field's conversion or deletion does to the records, in the words its proposer reads
 * before proposing it and its reviewer reads on the change request (the same counts, kept with it).
 */

const records = (n: number) => `${n.toLocaleString()} record${n === 1 ? "" : "s"}`;
const labelOf = (type: string) => FIELD_TRAITS[type as FieldType]?.label ?? type;

/** A few of the values a conversion cannot keep, as they read. */
const examples = (lost: { currentValue: unknown }[], lostCount: number) =>
  lost.length === 0 ? "" : `: ${lost.slice(0, 5).map((one) => `“${shown(one.currentValue)}”`).join(", ")}${lostCount > 5 ? ", …" : ""}`;

/** "Status: Single select → Multiple select. 2,002 records keep their value, 0 change, 2 lose it (become empty): “x”, “y”." */
export function conversionWords(summary: Pick<ConversionSummary, "fieldName" | "counts" | "lost" | "unmatched" | "ambiguous"> & { fromType: string; toType: string }): string {
  const head = `${summary.fieldName}: ${labelOf(summary.fromType)} → ${labelOf(summary.toType)}.`;
  const counts = summary.counts;
  if (!counts) return `${head} The base is too large to count what carries over beforehand.`;
  return `${head} Of ${records(counts.totalCount)}, ${counts.keptCount.toLocaleString()} keep their value, ${counts.changedCount.toLocaleString()} change in form, ${counts.lostCount.toLocaleString()} lose it (it becomes empty)${examples(summary.lost, counts.lostCount)}.${namesWords(summary.unmatched, summary.ambiguous)}`;
}

/** A few names, quoted: “Nobody”, “Someone Else”, … */
const someNames = (names: { count: number; examples: string[] }) => `${names.examples.slice(0, 10).map((name) => `“${name}”`).join(", ")}${names.count > 10 ? ", …" : ""}`;

/**
 * " 2 names match no record and are dropped: “Nobody”, “Someone Else”. 1 name matches several
 * records, which it does not tell apart, and is dropped: “Ada”." (a conversion to links).
 */
function namesWords(unmatched: ConversionSummary["unmatched"], ambiguous: ConversionSummary["ambiguous"]): string {
  if (!unmatched) return "";
  const none = unmatched.count === 0 ? "" : ` ${unmatched.count.toLocaleString()} name${unmatched.count === 1 ? " matches" : "s match"} no record and ${unmatched.count === 1 ? "is" : "are"} dropped: ${someNames(unmatched)}.`;
  const several = !ambiguous || ambiguous.count === 0 ? "" : ` ${ambiguous.count.toLocaleString()} name${ambiguous.count === 1 ? " matches" : "s match"} several records, which ${ambiguous.count === 1 ? "it does" : "they do"} not tell apart, and ${ambiguous.count === 1 ? "is" : "are"} dropped (give those records names of their own to link them): ${someNames(ambiguous)}.`;
  return none || several ? `${none}${several}` : " Every name matches one record.";
}

/** "Deletes Priority (Single select): 1,250 of 2,004 records lose their value; it can be restored with them." */
export const deletionWords = (summary: DeletionSummary) =>
  `Deletes ${summary.fieldName} (${labelOf(summary.type)}): ${summary.lostCount.toLocaleString()} of ${records(summary.totalCount)} lose their value; a deleted field can be restored with its values.`;
