import type { BaseView } from "../../../content/bases";
import { RULE_EVENT_TYPES } from "../../../shared/event-types";
import type { DeliveryView } from "../../../webhooks/deliveries";
import type { RuleView } from "../../../webhooks/rules";
import { api } from "../api";
import { fill, h } from "../dom";
import type { Context, Screen } from "../screen";
import { action, card, checkbox, confirmDialog, empty, form, input, link, notice, screen, select, table, textarea, when } from "../ui";

const statusBadge = (status: string | null) => (status ? h("span", { class: `badge delivery-${status}` }, status === "success" ? "Delivered" : "Failed") : h("span", { class: "muted" }, "never sent"));

/** `Name: value` lines to a header map, and back. */
const headerLines = (headers: Record<string, string>) =>
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join("\n");
function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const colon = line.indexOf(":");
    if (colon < 1) throw new Error(`"${line}" is not a header line: write Name: value.`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The body of POST and PUT: the rule's settings; an empty secret keeps the stored one. */
function ruleBody(values: FormData) {
  const secret = String(values.get("secret") ?? "");
  return {
    name: values.get("name"),
    eventType: values.get("eventType"),
    actionKind: "webhook",
    baseId: values.get("baseId") || null,
    enabled: values.get("enabled") === "on",
    config: {
      targetUrl: values.get("targetUrl"),
      headers: parseHeaders(String(values.get("headers") ?? "")),
      ...(values.get("removeSecret") === "on" ? { secret: null } : secret ? { secret } : {}),
    },
  };
}

/** PUT takes the whole rule: everything as it is, with `enabled` changed (the secret, omitted, is kept). */
const withEnabled = (rule: RuleView, enabled: boolean) => ({
  name: rule.name,
  eventType: rule.eventType,
  actionKind: "webhook",
  baseId: rule.baseId,
  enabled,
  config: { targetUrl: rule.config.targetUrl, headers: rule.config.headers },
});

const testResult = (delivery: DeliveryView) =>
  notice(delivery.status === "success" ? "success" : "error", `Test event: ${delivery.status === "success" ? "delivered" : "failed"}${delivery.httpStatus ? ` (HTTP ${delivery.httpStatus})` : ""} in ${delivery.durationMs} ms. ${delivery.detail}`);

async function ruleForm(ctx: Context, rule: RuleView | null): Promise<HTMLElement> {
  const bases = await api<BaseView[]>("GET", "/bases");
  return form(
    rule ? "Save rule" : "Create rule",
    [
      input("Name", "name", { value: rule?.name, required: true }),
      select("Event", "eventType", RULE_EVENT_TYPES.map((type) => ({ value: type, label: type === "*" ? "every event (*)" : type })), rule?.eventType ?? "record.created"),
      select("Base", "baseId", [{ value: "", label: "Every base of the space" }, ...bases.map((base) => ({ value: base.id, label: base.name }))], rule?.baseId ?? ""),
      input("Target URL", "targetUrl", { type: "url", value: rule?.config.targetUrl, required: true, placeholder: "https://example.com/hooks/basalt" }),
      input("Signing secret", "secret", {
        type: "password",
        autocomplete: "off",
        hint: rule?.config.hasSecret ? "A secret is stored and never shown; leave empty to keep it." : "Optional: whsec_… (Standard Webhooks) or 16 to 256 characters; write-only.",
      }),
      rule?.config.hasSecret ? checkbox("Remove the stored secret", "removeSecret") : null,
      textarea("Headers", "headers", { value: headerLines(rule?.config.headers ?? {}), hint: "One per line as Name: value." }),
      checkbox("Enabled", "enabled", rule?.enabled ?? true),
    ],
    async (values) => {
      const saved = await api<RuleView>(rule ? "PUT" : "POST", rule ? `/webhooks/${rule.id}` : "/webhooks", ruleBody(values));
      ctx.go(`/admin/webhooks/${saved.id}${rule ? "?saved=1" : ""}`);
    },
  );
}

async function rules(ctx: Context): Promise<Node> {
  const list = await api<RuleView[]>("GET", "/webhooks");
  const status = h("div", { class: "status-area" });
  const rows = list.map((rule) => [
    link(`/admin/webhooks/${rule.id}`, rule.name),
    rule.eventType,
    h("span", { class: "url" }, rule.config.targetUrl),
    rule.enabled ? "Enabled" : h("span", { class: "badge warn" }, rule.disabledReason ? `Disabled: ${rule.disabledReason}` : "Disabled"),
    statusBadge(rule.lastStatus),
    h(
      "div",
      { class: "row-actions" },
      action(
        rule.enabled ? "Disable" : "Enable",
        async () => {
          await api("PUT", `/webhooks/${rule.id}`, withEnabled(rule, !rule.enabled));
          ctx.reload();
        },
        { kind: "secondary", status },
      ),
      action("Test", async () => fill(status, testResult(await api<DeliveryView>("POST", `/webhooks/${rule.id}/test-fire`))), { kind: "secondary", status }),
    ),
  ]);
  return screen(
    "Webhooks",
    h("p", { class: "lead" }, "Rules call a URL when something happens in this space; every attempt is logged. ", link("/admin/webhooks/new", "New rule")),
    status,
    card(null, rows.length ? table(["Name", "Event", "Target", "State", "Last delivery", "Actions"], rows) : empty("No rules yet.", link("/admin/webhooks/new", "Create the first one."))),
  );
}

async function rulePage(ctx: Context): Promise<Node> {
  const rule = await api<RuleView>("GET", `/webhooks/${encodeURIComponent(ctx.params.id)}`);
  const deliveries = await api<DeliveryView[]>("GET", `/webhooks/${rule.id}/deliveries?limit=50`);
  const status = h("div", { class: "status-area" });
  return screen(
    rule.name,
    h("p", { class: "lead" }, link("/admin/webhooks", "← All rules")),
    ctx.query.get("saved") ? notice("success", "Saved.") : null,
    status,
    card(
      "Test",
      h("p", {}, "Sends a test event to the target now and shows what it answered."),
      action("Send a test event", async () => {
        fill(status, testResult(await api<DeliveryView>("POST", `/webhooks/${rule.id}/test-fire`)));
      }, { status }),
    ),
    card(
      "Delivery log",
      deliveries.length
        ? table(
            ["When", "Event", "Attempt", "Result", "HTTP", "Detail", ""],
            deliveries.map((delivery) => [
              when(delivery.createdAt),
              `${delivery.eventType}${delivery.trigger === "event" ? "" : ` (${delivery.trigger})`}`,
              String(delivery.attempt),
              statusBadge(delivery.status),
              delivery.httpStatus ? String(delivery.httpStatus) : "—",
              h("span", { class: "detail" }, delivery.detail || "—"),
              action(
                "Redeliver",
                async () => {
                  await api("POST", `/webhooks/${rule.id}/deliveries/${delivery.id}/redeliver`);
                  ctx.reload();
                },
                { kind: "secondary", status },
              ),
            ]),
          )
        : empty("Nothing sent yet: send a test event above, or wait for an event."),
    ),
    card("Settings", await ruleForm(ctx, rule)),
    card(
      "Delete",
      action(
        "Delete this rule",
        async () => {
          if (!(await confirmDialog(`Delete ${rule.name}?`, "Its delivery log goes with it. This cannot be undone.", "Delete rule", true))) return;
          await api("DELETE", `/webhooks/${rule.id}`);
          ctx.go("/admin/webhooks");
        },
        { kind: "danger", status },
      ),
    ),
  );
}

export const webhookScreens: Screen[] = [
  { path: "/admin/webhooks", title: "Webhooks", render: rules },
  { path: "/admin/webhooks/new", title: "New webhook rule", render: async (ctx) => screen("New webhook rule", card(null, await ruleForm(ctx, null))) },
  { path: "/admin/webhooks/:id", title: "Webhook rule", render: rulePage },
];
