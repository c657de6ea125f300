import type { UserView } from "../../auth/users";
import type { Caller } from "../../spaces/whoami";
import { api, ApiError, forgetEarly, readEarly, session, whenSignedOut } from "./api";
import { fill, h } from "./dom";
import type { Context, Me, Screen } from "./screen";
import { dataScreens } from "./screens/data";
import { deviceScreens } from "./screens/device";
import { inboxScreens } from "./screens/inbox";
import { keyScreens } from "./screens/keys";
import { signInScreens } from "./screens/sign-in";
import { spaceScreens } from "./screens/spaces";
import { webhookScreens } from "./screens/webhooks";
import { remoteScreens } from "./screens/remotes";
import { searchScreens } from "./screens/search";
import { docScreens } from "./screens/docs";
import { formScreens } from "./forms";
import { activityScreens } from "./screens/activity";
import { restoreScreens } from "./screens/restore";
import { failureText, notice } from "./ui";
import { followEvents, type LiveEvent } from "./live";

const SCREENS: Screen[] = [...signInScreens, ...inboxScreens, ...dataScreens, ...restoreScreens, ...docScreens, ...formScreens, ...searchScreens, ...activityScreens, ...webhookScreens, ...remoteScreens, ...keyScreens, ...deviceScreens, ...spaceScreens];

const main = document.getElementById("main")!;
const nav = document.getElementById("nav")!;
let me: Me | null = null;
/** What is on the screen now, for the live events to decide whether to draw it again. */
let shown: { screen: Screen; context: Context } | null = null;
/** The change requests waiting for review, shown beside Inbox and kept current by the events. */
let toReview: number | null = null;
/** The events of the space in effect: followed while someone is signed in, again when the space changes. */
let live: { space: string | null; stop(): void } | null = null;
let redraw: ReturnType<typeof setTimeout> | null = null;
/** What the screen shown applies itself (`Context.onLive`); emptied when another is drawn. */
let listeners: ((event: LiveEvent) => void)[] = [];
/**
 * When the screen was last drawn from fresh answers, and when the last event it should show came:
 * a redraw already waiting is skipped only if the screen was drawn after every such event (an
 * event that came while one waited was lost when this kept the first event's time).
 */
let drawnAt = 0;
let changedAt = 0;

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

/** What `loadMe` reads: sent first of a screen's early reads when no one is known yet (the screen is drawn for them). */
const ME_READS = ["/auth", "/users/me"];

/** The session, the caller and the space in effect; a stale remembered space is forgotten. */
async function loadMe(): Promise<Me | null> {
  if (!session.remembered) return null;
  try {
    // Who the person is does not depend on the space: read beside the caller, not after it.
    const [first, user] = await Promise.all([api<Caller>("GET", ME_READS[0], undefined, { quiet401: true }), api<UserView>("GET", ME_READS[1], undefined, { quiet401: true })]);
    let caller = first;
    if (!caller.space && caller.spaces.length > 0) {
      session.space = caller.spaces[0].slug;
      caller = await api<Caller>("GET", "/auth", undefined, { quiet401: true });
    }
    // The only space, in effect without a header, is named from now on: a space joined or cloned
    // while the page is open must not leave its requests (and its live stream) naming none.
    if (caller.space) session.space ??= caller.space.slug;
    session.csrfToken = caller.credential.type === "session" ? caller.credential.csrfToken : null;
    return { caller, user };
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
    ["/admin/activity", "Activity"],
    ["/admin/webhooks", "Webhooks"],
    ["/admin/remotes", "Remotes"],
    ["/admin/keys", "API keys"],
    ["/admin/spaces", "Spaces"],
    ...(current.user.admin ? ([["/admin/users", "Users"]] as [string, string][]) : []),
  ];
  const here = location.pathname;
  const spaces = current.caller.spaces;
  const count = (href: string) => (href === "/admin/inbox" ? h("span", { id: "to-review" }) : null);
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
  const words = h("input", { type: "search", name: "q", "aria-label": "Search the space", placeholder: "Search", value: location.pathname === "/admin/search" ? (new URLSearchParams(location.search).get("q") ?? "") : "" });
  const search = h("form", { role: "search", class: "search" }, words);
  search.addEventListener("submit", (event) => {
    event.preventDefault();
    if (words.value.trim()) go(`/admin/search?q=${encodeURIComponent(words.value.trim())}`);
  });
  const signOut = h("button", { type: "button", class: "secondary" }, "Sign out");
  signOut.addEventListener("click", async () => {
    await api("POST", "/auth/logout");
    session.csrfToken = null;
    session.remembered = false;
    me = null;
    stopFollowing();
    go("/admin/login");
  });
  // On a phone the links fold behind one button; the search stays in view.
  const menu = h("button", { type: "button", class: "menu-toggle secondary", "aria-expanded": "false", "aria-controls": "nav-links" }, "Menu");
  menu.addEventListener("click", () => menu.setAttribute("aria-expanded", String(nav.classList.toggle("open"))));
  fill(nav, menu, h("ul", { id: "nav-links" }, ...links.map(([href, label]) => h("li", {}, h("a", { href, "aria-current": here.startsWith(href) ? "page" : false }, label, " ", count(href))))), search, switcher, signOut);
  showToReview();
}

/** The count beside Inbox, changed in place (the header is not drawn again under someone typing in its search box). */
function showToReview(): void {
  const slot = document.getElementById("to-review");
  if (slot) fill(slot, toReview ? h("span", { class: "count" }, String(toReview), h("span", { class: "visually-hidden" }, " to review")) : null);
}

async function countToReview(): Promise<void> {
  toReview = (await api<{ review: number }>("GET", "/change-requests/counts").catch(() => null))?.review ?? toReview;
  showToReview();
}

/** Follows the space's events while signed in: the Inbox count, and the screen drawn again when they change what it shows. */
function followSpace(): void {
  if (live && live.space === session.space) return;
  live?.stop();
  const stop = followEvents((event) => onLiveEvent(event));
  live = { space: session.space, stop };
  void countToReview();
}

function stopFollowing(): void {
  live?.stop();
  live = null;
  toReview = null;
}

function onLiveEvent(event: LiveEvent): void {
  if (event.type === "reset" || event.type.startsWith("change_request.")) void countToReview();
  for (const listener of listeners) listener(event);
  if (shown && (event.type === "reset" || shown.screen.live?.(event, shown.context))) {
    changedAt = performance.now();
    drawAgainSoon();
  }
}

/**
 * Whether the screen holds what the person typed or chose and did not send (a picker's hidden
 * value included): drawing it again would lose it (a click on the form's button, leaving the
 * field, came just before the redraw).
 */
const unsentInput = () =>
  [...main.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>("input:not([type=file]), textarea")].some((control) => {
    if (control.matches("[type=checkbox], [type=radio]")) return (control as HTMLInputElement).checked !== (control as HTMLInputElement).defaultChecked;
    if (control.type === "hidden") return control.dataset.sent !== undefined && control.value !== control.dataset.sent;
    return control.value !== control.defaultValue;
  });

/**
 * Draws the screen again in place (a burst of events once), but not under someone typing, nor
 * over what they typed and did not send: then once they have; not at all when it was drawn since
 * (the page's own action, whose answer came with the event, already showed it).
 */
function drawAgainSoon(): void {
  if (redraw) return;
  redraw = setTimeout(function again() {
    if (drawnAt > changedAt) {
      redraw = null;
      return;
    }
    const editing = document.activeElement?.closest("main") && document.activeElement.matches("input, textarea, select, [contenteditable]");
    if (editing || unsentInput()) {
      redraw = setTimeout(again, 1000);
      return;
    }
    redraw = null;
    void route({ inPlace: true });
  }, 150);
}

/**
 * The control the keyboard is on inside the screen, as a way to put it back on the same control of
 * a screen drawn again in place (another client's write must not throw a keyboard user out of a
 * grid's header or a list): the same tag, role and name, the same one of those in order.
 */
function focusedControl(): (() => void) | null {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || active === main || !main.contains(active)) return null;
  const name = (node: Element) => `${node.getAttribute("role") ?? ""}|${node.getAttribute("aria-label") ?? node.getAttribute("name") ?? node.textContent?.trim() ?? ""}`;
  const wanted = name(active);
  const alike = () => [...main.querySelectorAll<HTMLElement>(active.tagName)].filter((node) => name(node) === wanted);
  const place = alike().indexOf(active);
  return () => alike()[place]?.focus({ preventScroll: true });
}

/** Counts the screens asked for: a screen whose answers come after a newer one was asked for is dropped, not drawn over it. */
let routes = 0;

async function route(options: { inPlace?: boolean } = {}): Promise<void> {
  const began = performance.now();
  const serial = ++routes;
  const current = () => serial === routes;
  const path = location.pathname.replace(/\/+$/, "") || "/admin";
  const found = match(path);
  if (!found) {
    fill(main, h("div", { class: "screen" }, h("h1", { tabindex: "-1" }, "No such screen"), h("p", {}, "This address shows nothing. ", h("a", { href: "/admin" }, "Go to the start"), ".")));
    return;
  }
  const { screen, params } = found;
  shown = null;
  const heard: ((event: LiveEvent) => void)[] = [];
  try {
    // The screen's first reads travel with the check of who is signed in, after it (the server answers in turn, and the screen waits for that check first); those its render did not take are forgotten after it.
    if (!screen.signedOut && session.remembered) readEarly([...(me ? [] : ME_READS), ...(screen.reads?.(params, new URLSearchParams(location.search)) ?? [])]);
    if (!screen.signedOut) {
      me ??= await loadMe();
      if (!me) {
        fill(nav);
        go(`/admin/login?next=${encodeURIComponent(location.pathname + location.search)}`, true);
        return;
      }
      navigation(me);
      followSpace();
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
        go(next?.startsWith("/admin/") ? next : "/admin/data", true);
      },
      reload: () => void route(),
      refreshMe: async () => {
        me = await loadMe();
        if (me) navigation(me);
      },
      onLive: (listener) => heard.push(listener),
    };
    let view: Node;
    try {
      view = await screen.render(context);
    } finally {
      if (current()) forgetEarly();
    }
    if (!current()) return;
    const scrolled = window.scrollY;
    const refocus = options.inPlace ? focusedControl() : null;
    fill(main, view);
    shown = { screen, context };
    listeners = heard;
    drawnAt = began;
    if (options.inPlace) {
      window.scrollTo(0, scrolled);
      refocus?.();
    } else (main.querySelector<HTMLElement>("[data-focus]") ?? main.querySelector<HTMLElement>("h1"))?.focus();
  } catch (failure) {
    if (current()) fill(main, h("div", { class: "screen" }, h("h1", { tabindex: "-1" }, screen.title), notice("error", failureText(failure))));
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
  stopFollowing();
  if (!location.pathname.startsWith("/admin/login")) go(`/admin/login?next=${encodeURIComponent(location.pathname + location.search)}`, true);
});

void route();
