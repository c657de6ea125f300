import { api } from "../api";
import { h } from "../dom";
import { failureText, textarea } from "../ui";
import type { PageKind } from "./kind";
import { computedKind } from "./system";

/** A formula over the record's fields: its expression checked by the server as it is typed, saying what it yields or why it cannot be. */
export const formulaKind: PageKind = {
  ...computedKind,
  settings: ({ base, options }) => {
    const area = textarea("Formula", "expression", { value: ((options.formula as { expression?: string } | undefined)?.expression ?? "") as string, hint: "Fields by {slug}, e.g. {price} * {quantity}.", rows: 3 });
    const verdict = h("p", { class: "formula-check", role: "status" });
    const text = area.querySelector("textarea")!;
    let asked = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    text.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const mine = ++asked;
        if (!text.value.trim()) return void (verdict.textContent = "");
        try {
          const checked = await api<{ valid: boolean; resultType: string | null; computedAtRead: boolean | null; error: string | null }>("POST", `/bases/${base.id}/formulas/check`, { expression: text.value });
          if (mine !== asked) return;
          verdict.className = `formula-check ${checked.valid ? "ok" : "bad"}`;
          verdict.textContent = checked.valid ? `Gives ${checked.resultType}${checked.computedAtRead ? ", worked out when read (not filtered or sorted)" : ""}.` : (checked.error ?? "");
        } catch (failure) {
          if (mine === asked) verdict.textContent = failureText(failure);
        }
      }, 250);
    });
    return { node: h("div", {}, area, verdict), read: () => ({ formula: { expression: text.value } }) };
  },
};
