import type { UserView } from "../../auth/users";
import type { Caller } from "../../auth/whoami";
import { api, ApiError, session, whenSignedOut } from "./api";
import { fill, h } from "./dom";
import type { Context, Me, Screen } from "./screen";
import { dataScreens } from "./screens/data";
import { deviceScreens } from "./screens/device";
import { inboxScreens } from "./screens/inbox";
import { keyScreens } from "./screens/keys";
import { signInScreens } from "./screens/sign-in";
import { spaceScreens } from "./screens/spaces";
import { webhookScreens } from "./screens/webhooks";
import { failureText, notice } from "./ui";

const SCREENS: Screen[] = [...signInScreens, ...inboxScreens, ...dataScreens, ...webhookScreens, ...keyScreens, ...deviceScreens, ...spaceScreens];

const main = document.getElementById("main")!;
const nav = document.getElementById("nav")!;
let me: Me | null = null;

function match(path: string): { screen: Screen; params: Record<string, string> } | null {
  for (const screen of SCREENS) {
    const names: string[] = [];
    const pattern = new RegExp(`^${screen.path.replace(/:(\w+)/g, (_, name: string) => (names.push(name), "([^/]+)"))}$`);
    const found = pattern.exec(path);
    if (found) return { screen, params: Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1])])) };
  }
  return null;
}

function go(path: string, replace = false): void {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  void route();
}

/** The session, the caller and the space in effect; a stale remembered space is forgotten. */
async function loadMe(): Promise<Me | null> {
  if (!session.remembered) return null;
  try {
    let caller = await api<Caller>("GET", "/auth", undefined, { quiet401: true });
    if (!caller.space && caller.spaces.length > 0) {
      session.space = caller.spaces[0].slug;
      caller = await api<Caller>("GET", "/auth", undefined, { quiet401: true });
    }
    session.csrfToken = caller.credential.type === "session" ? caller.credential.csrfToken : null;
    return { caller, user: await api<UserView>("GET", "/users/me") };
  } catch (failure) {
    if (failure instanceof ApiError && failure.reason === "SPACE_NOT_ALLOWED") {
      session.space = null;
      return loadMe();
    }
    if (failure instanceof ApiError && failure.status === 401) return null;
    throw failure;
  }
}

function navigation(current: Me): void {
  const links: [string, string][] = [
    ["/admin/inbox", "Inbox"],
    ["/admin/data", "Data"],
    ["/admin/webhooks", "Webhooks"],
    ["/admin/keys", "API keys"],
    ["/admin/spaces", "Spaces"],
    ...(current.user.admin ? ([["/admin/users", "Users"]] as [string, string][]) : []),
  ];
  const here = location.pathname;
  const spaces = current.caller.spaces;
  const switcher =
    spaces.length > 1
      ? h(
          "label",
          { class: "switcher" },
          h("span", { class: "visually-hidden" }, "Space"),
          h(
            "select",
            {
              onchange: (event: Event) => {
                session.space = (event.target as HTMLSelectElement).value;
                me = null;
                void route();
              },
            },
            ...spaces.map((space) => h("option", { value: space.slug, selected: space.slug === current.caller.space?.slug }, space.name)),
          ),
        )
      : current.caller.space
        ? h("span", { class: "space-name" }, current.caller.space.name)
        : null;
  const signOut = h("button", { type: "button", class: "secondary" }, "Sign out");
  signOut.addEventListener("click", async () => {
    await api("POST", "/auth/logout");
    session.csrfToken = null;
    session.remembered = false;
    me = null;
    go("/admin/login");
  });
  fill(nav, h("ul", {}, ...links.map(([href, label]) => h("li", {}, h("a", { href, "aria-current": here.startsWith(href) ? "page" : false }, label)))), switcher, signOut);
}

async function route(): Promise<void> {
  const path = location.pathname.replace(/\/+$/, "") || "/admin";
  const found = match(path);
  if (!found) {
    fill(main, h("div", { class: "screen" }, h("h1", { tabindex: "-1" }, "No such screen"), h("p", {}, "This address shows nothing. ", h("a", { href: "/admin" }, "Go to the start"), ".")));
    return;
  }
  const { screen, params } = found;
  try {
    if (!screen.signedOut) {
      me ??= await loadMe();
      if (!me) {
        fill(nav);
        go(`/admin/login?next=${encodeURIComponent(location.pathname + location.search)}`, true);
        return;
      }
      navigation(me);
    } else fill(nav);
    document.title = `${screen.title} · Basalt`;
    const context: Context = {
      params,
      query: new URLSearchParams(location.search),
      me: me!,
      go,
      signedIn: (next) => {
        me = null;
        session.remembered = true;
        go(next?.startsWith("/admin/") ? next : "/admin/inbox", true);
      },
      reload: () => void route(),
      refreshMe: async () => {
        me = await loadMe();
        if (me) navigation(me);
      },
    };
    const view = await screen.render(context);
    fill(main, view);
    main.querySelector<HTMLElement>("h1")?.focus();
  } catch (failure) {
    fill(main, h("div", { class: "screen" }, h("h1", { tabindex: "-1" }, screen.title), notice("error", failureText(failure))));
  }
}

/** Links inside the page change the screen without a reload; the address always names the screen. */
document.addEventListener("click", (event) => {
  const anchor = (event.target as Element).closest("a");
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || anchor.target) return;
  const url = new URL(anchor.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith("/admin")) return;
  event.preventDefault();
  go(url.pathname + url.search);
});

window.addEventListener("popstate", () => void route());
whenSignedOut(() => {
  me = null;
  if (!location.pathname.startsWith("/admin/login")) go(`/admin/login?next=${encodeURIComponent(location.pathname + location.search)}`, true);
});

void route();
