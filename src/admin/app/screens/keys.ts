import type { ApiKeyView } from "../../../auth/api-keys";
import { atLeast, DEFAULT_EXPIRATION, LEVEL_LABELS, type Level, LEVELS } from "../../../shared/levels";
import { api } from "../api";
import { fill, h } from "../dom";
import type { Screen } from "../screen";
import { action, ask, card, confirmDialog, copyable, empty, expirationChoices, form, input, levelChoice, levelName, notice, screen, select, table, when } from "../ui";

type NewKey = { apiKey: string; key: ApiKeyView };

/** Renames a key or changes its level; raising it asks again, and only then sends the server's `confirm`. */
async function editKey(key: ApiKeyView, done: () => void): Promise<void> {
  const answer = await ask(
    `Edit ${key.name}`,
    [input("Name", "name", { value: key.name, required: true }), select("Level", "level", LEVELS.map((level) => ({ value: level, label: `${levelName(level)}: ${LEVEL_LABELS[level].can}` })), key.level)],
    "Save",
    false,
    (dialog) => ({ name: dialog.querySelector<HTMLInputElement>("[name=name]")!.value, level: dialog.querySelector<HTMLSelectElement>("[name=level]")!.value as Level }),
  );
  if (!answer) return;
  const raising = answer.level !== key.level && atLeast(answer.level, key.level);
  if (raising) {
    const confirmed = await confirmDialog(
      `Raise ${key.name} to ${levelName(answer.level)}?`,
      `Every holder of this key gains the new permissions at once: ${LEVEL_LABELS[answer.level].can}`,
      `Raise to ${levelName(answer.level)}`,
      true,
    );
    if (!confirmed) return;
  }
  await api("PATCH", `/api-keys/${key.id}`, { ...answer, ...(raising ? { confirm: true } : {}) });
  done();
}

async function keyList(status: HTMLElement): Promise<HTMLElement> {
  const keys = await api<ApiKeyView[]>("GET", "/api-keys");
  const section = card("Your API keys");
  const refresh = async () => section.replaceWith(await keyList(status));
  if (keys.length === 0) {
    section.append(empty("You have no API keys yet. Create one above for an agent, a script or the command line."));
    return section;
  }
  section.append(
    table(
      ["Name", "Prefix", "Created", "Expires", "Level", "Last used", "Actions"],
      keys.map((key) => [
        key.name,
        h("code", {}, `${key.prefix}…`),
        when(key.createdAt),
        key.status === "expired" ? h("span", { class: "badge warn" }, `expired ${when(key.expiresAt)}`) : key.expiresAt ? when(key.expiresAt) : "never",
        levelName(key.level),
        key.lastUsedAt ? when(key.lastUsedAt) : "never",
        h(
          "div",
          { class: "row-actions" },
          action("Edit", () => editKey(key, () => void refresh()), { kind: "secondary", status }),
          action(
            "Delete",
            async () => {
              if (!(await confirmDialog(`Delete ${key.name}?`, "Every program using this key loses access at once. This cannot be undone.", "Delete key", true))) return;
              await api("DELETE", `/api-keys/${key.id}`);
              await refresh();
            },
            { kind: "danger", status },
          ),
        ),
      ]),
    ),
  );
  return section;
}

export const keyScreens: Screen[] = [
  {
    path: "/admin/keys",
    title: "API keys",
    async render() {
      const status = h("div", { class: "status-area" });
      const created = h("div");
      let list = await keyList(status);
      const create = card(
        "New API key",
        form("Create key", [input("Name", "name", { required: true, hint: "Who or what will use it, e.g. \"research agent\"." }), levelChoice("level", "read"), select("Expires after", "expiration", expirationChoices(), DEFAULT_EXPIRATION)], async (values, node) => {
          const result = await api<NewKey>("POST", "/api-keys", { name: values.get("name"), level: values.get("level"), expiration: values.get("expiration") });
          fill(created, notice("success", h("p", {}, h("strong", {}, `${result.key.name} is ready. `), "Copy the key now: you will not see it again."), copyable(result.apiKey)));
          node.reset();
          const next = await keyList(status);
          list.replaceWith(next);
          list = next;
        }),
      );
      return screen("API keys", h("p", { class: "lead" }, "Keys let agents and programs act as you, up to the level you give them and never beyond your own role in a space."), created, create, status, list);
    },
  },
];
