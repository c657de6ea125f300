import type { PullResult, PushResult, RemoteView } from "../../../remotes/remotes";
import { api, session } from "../api";
import { fill, h } from "../dom";
import type { Context, Screen } from "../screen";
import { action, card, confirmDialog, empty, form, input, notice, screen, when } from "../ui";

/**
 * The Remotes screen (docs/remotes.md): the remotes this space follows with where each stands,
 * pull and push at a click, a remote to follow, and, for an instance admin, a clone of another
 * instance's space. Offline is normal: an unreachable remote says so and changes nothing here.
 */

const pulledText = (result: PullResult) =>
  `Pulled: ${result.applied} applied, ${result.merged} merged with changes made here, ${result.conflicts} in conflict${result.conflicts ? " (resolve them in the Inbox)" : ""}, ${result.landed} of your pushed changes landed.`;

const pushedText = (result: PushResult) =>
  `${pulledText(result.pull)} Pushed: ${result.landed} merged on the remote, ${result.pending} waiting in its Inbox, ${result.refused.length} refused${result.refused.length ? `: ${result.refused.map((refused) => refused.reason).join(" ")}` : "."}${result.waiting ? ` ${result.waiting} held here until the conflicts in the Inbox are decided.` : ""}`;

/** One remote: where it stands (as of its last answer) and what can be done with it. */
function remoteCard(ctx: Context, remote: RemoteView, status: HTMLElement) {
  return card(
    remote.name,
    h("p", { class: "url" }, remote.url),
    h("p", {}, `${remote.behind} behind · ${remote.ahead} ahead · ${remote.pending} waiting there · ${remote.refused} refused · ${remote.conflicts} conflict${remote.conflicts === 1 ? "" : "s"} to decide here`),
    remote.lastError
      ? notice("error", `Not answering: ${remote.lastError} (last answered ${when(remote.lastContactAt)}).`)
      : h("p", { class: "muted" }, `Last answered ${when(remote.lastContactAt)}.`),
    h("p", { class: "muted" }, `${remote.lastSyncAt ? `Last synced ${when(remote.lastSyncAt)}.` : "Not synced yet."}${remote.nextSyncAt ? ` Next sync by the server: ${when(remote.nextSyncAt)}.` : ""}`),
    h(
      "div",
      { class: "row-actions" },
      action("Pull", async () => fill(status, notice("success", pulledText(await api<PullResult>("POST", `/remotes/${remote.id}/pull`)))), { status }),
      action("Push", async () => fill(status, notice("success", pushedText(await api<PushResult>("POST", `/remotes/${remote.id}/push`)))), { kind: "secondary", status }),
      action(
        "Remove",
        async () => {
          if (!(await confirmDialog(`Stop following ${remote.name}?`, "The data stays here; changes not pushed stay too.", "Remove remote", true))) return;
          await api("DELETE", `/remotes/${remote.id}`);
          ctx.reload();
        },
        { kind: "danger", status },
      ),
    ),
  );
}

const followForm = (ctx: Context) =>
  form(
    "Follow this remote",
    [
      input("Name", "name", { required: true, value: "origin", hint: "Lowercase letters, digits and dashes." }),
      input("Address", "url", { type: "url", required: true, placeholder: "http://team.example:7431" }),
      input("The remote's space", "remoteSpace", { required: true, hint: "Its id or slug there." }),
      input("API key of the remote", "key", { type: "password", autocomplete: "off", required: true, hint: "Read or more to pull, changeRequest or more to push. Stored sealed, never shown again." }),
    ],
    async (values) => {
      await api("POST", "/remotes", { name: values.get("name"), url: values.get("url"), remoteSpace: values.get("remoteSpace"), key: values.get("key") });
      ctx.reload();
    },
  );

const cloneForm = (ctx: Context) =>
  form(
    "Clone",
    [
      input("Address", "url", { type: "url", required: true, placeholder: "http://team.example:7431" }),
      input("The remote's space", "remoteSpace", { required: true, hint: "Its id or slug there." }),
      input("API key of the remote", "key", { type: "password", autocomplete: "off", required: true, hint: "A key that reads the whole space. Stored sealed, never shown again." }),
      input("Slug here", "slug", { hint: "Optional: by default the remote's." }),
    ],
    async (values) => {
      const slug = String(values.get("slug") ?? "");
      const cloned = await api<{ slug: string }>("POST", "/remotes/clone", { url: values.get("url"), remoteSpace: values.get("remoteSpace"), key: values.get("key"), ...(slug ? { slug } : {}) });
      session.space = cloned.slug;
      await ctx.refreshMe();
      ctx.go("/admin/remotes?cloned=1");
    },
  );

async function remotesScreen(ctx: Context): Promise<Node> {
  const list = await api<RemoteView[]>("GET", "/remotes");
  const status = h("div", { class: "status-area" });
  return screen(
    "Remotes",
    h("p", { class: "lead" }, "Another Basalt this space follows, as git follows a remote: pull brings what was merged there; push proposes what was made here, as change requests there."),
    ctx.query.get("cloned") ? notice("success", "Cloned. This space now follows the remote origin.") : null,
    status,
    ...(list.length ? list.map((remote) => remoteCard(ctx, remote, status)) : [card(null, empty("This space follows no remote."))]),
    list.length ? action("Check the remotes", async () => void (await api("POST", "/remotes/status"), ctx.reload()), { kind: "secondary", status }) : null,
    card("Follow a remote", h("p", {}, "For a space that already holds the remote's data (loaded from its dump): pulls start from the remote's head now."), followForm(ctx)),
    ctx.me.user.admin ? card("Clone a space from another Basalt", h("p", {}, "A new space here, owned by you, with the remote's records, history, views, comments and files; it follows the remote as origin."), cloneForm(ctx)) : null,
  );
}

export const remoteScreens: Screen[] = [{ path: "/admin/remotes", title: "Remotes", render: remotesScreen }];
