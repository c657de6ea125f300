import type { DeviceRequestView } from "../../../auth/device";
import { DEFAULT_EXPIRATION } from "../../../shared/levels";
import { api, ApiError } from "../api";
import { h } from "../dom";
import type { Context, Screen } from "../screen";
import { action, card, expirationChoices, form, input, levelChoice, notice, screen, select } from "../ui";

const codeForm = (ctx: Context, label = "Continue") =>
  form(label, [input("Code shown by the device", "code", { required: true, placeholder: "WDJB-MJHT", autocomplete: "off" })], async (values) => {
    ctx.go(`/admin/device?code=${encodeURIComponent(String(values.get("code")).trim())}`);
  });

const outcome = (title: string, message: string) => screen(title, notice("success", message));

export const deviceScreens: Screen[] = [
  {
    path: "/admin/device",
    title: "Connect a device",
    async render(ctx) {
      const code = ctx.query.get("code");
      if (!code) return screen("Connect a device", card(null, h("p", {}, "Type the code your command line or agent shows."), codeForm(ctx)));
      let request: DeviceRequestView;
      try {
        request = await api<DeviceRequestView>("GET", `/device/requests/${encodeURIComponent(code)}`);
      } catch (failure) {
        if (!(failure instanceof ApiError && failure.status === 404)) throw failure;
        return screen("Connect a device", notice("error", `No device request has the code ${code}. Check it on the device, or start again there.`), card("Try again", codeForm(ctx, "Try this code")));
      }
      if (request.status !== "pending") {
        const why = request.status === "expired" ? "It expired: start the sign-in again on the device to get a new code." : `It was already ${request.status}.`;
        return screen("Connect a device", notice("error", `The request ${request.userCode} cannot be approved. ${why}`), card("Try another code", codeForm(ctx, "Try this code")));
      }
      const client = request.clientName ?? "A device";
      return screen(
        "Connect a device",
        card(
          null,
          h("p", {}, `${client} asks for an API key. Check that the device shows this code:`),
          h("p", { class: "code" }, request.userCode),
          form(
            "Approve",
            [
              input("Key name", "name", { value: request.clientName ?? "device", required: true }),
              levelChoice("level", "changeRequest"),
              select("Expires after", "expiration", expirationChoices(), DEFAULT_EXPIRATION),
            ],
            async (values) => {
              await api("POST", "/device/approve", { userCode: request.userCode, name: values.get("name"), level: values.get("level"), expiration: values.get("expiration") });
              ctx.go("/admin/device/approved", true);
            },
            [
              action(
                "Deny",
                async () => {
                  await api("POST", "/device/deny", { userCode: request.userCode });
                  ctx.go("/admin/device/denied", true);
                },
                { kind: "danger" },
              ),
            ],
          ),
        ),
      );
    },
  },
  { path: "/admin/device/approved", title: "Device connected", render: () => outcome("Device connected", "The device has its key: you can return to it.") },
  { path: "/admin/device/denied", title: "Request denied", render: () => outcome("Request denied", "The device did not get a key.") },
];
