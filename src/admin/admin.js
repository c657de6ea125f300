// The admin page: plain modules, no framework, only the /api/v1 routes with a session.
const main = document.getElementById("main");
const nav = document.getElementById("nav");
let csrfToken = null;

async function api(method, path, body) {
  const headers = { "content-type": "application/json" };
  if (csrfToken) headers["x-csrf-token"] = csrfToken;
  const response = await fetch(`/api/v1${path}`, { method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(data.error || `HTTP ${response.status}`), { status: response.status, data });
  return data;
}

const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
};

function field(label, name, type = "text", value = "") {
  return [el("label", { for: name }, label), el("input", { id: name, name, type, value, required: "" })];
}

function choice(label, name, options, selected) {
  const select = el("select", { id: name, name }, ...options.map((option) => el("option", option === selected ? { value: option, selected: "" } : { value: option }, option)));
  return [el("label", { for: name }, label), select];
}

function form(title, children, submitText, onSubmit) {
  const error = el("p", { class: "error", role: "alert" });
  const node = el("form", {}, ...children, el("button", { type: "submit" }, submitText), error);
  node.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    try {
      await onSubmit(Object.fromEntries(new FormData(node)));
    } catch (failure) {
      error.textContent = failure.message;
    }
  });
  return el("section", {}, el("h1", {}, title), node);
}

const params = new URLSearchParams(location.search);
const go = (path) => {
  history.pushState(null, "", path);
  route();
};

async function signedIn() {
  try {
    const auth = await api("GET", "/auth");
    csrfToken = auth.credential.csrfToken;
    nav.replaceChildren(el("a", { href: "/admin/keys" }, "API keys"), el("a", { href: "#", onclick: logout }, `Sign out ${auth.user.name}`));
    return auth;
  } catch {
    nav.replaceChildren();
    return null;
  }
}

async function logout(event) {
  event.preventDefault();
  await api("POST", "/auth/logout");
  csrfToken = null;
  go("/admin/login");
}

function setupScreen() {
  main.replaceChildren(
    form("Create the first account", [...field("Name", "name"), ...field("E-mail", "email", "email"), ...field("Password (8 characters or more)", "password", "password")], "Create account", async (values) => {
      await api("POST", "/setup", { token: params.get("token") ?? "", ...values });
      go("/admin/keys");
    }),
  );
}

function loginScreen(next) {
  main.replaceChildren(
    form("Sign in", [...field("E-mail", "email", "email"), ...field("Password", "password", "password")], "Sign in", async (values) => {
      const result = await api("POST", "/auth/login", values);
      csrfToken = result.csrfToken;
      go(next);
    }),
  );
}

const LEVELS = ["read", "changeRequest", "write", "manage"];
const EXPIRATIONS = ["7d", "30d", "90d", "1y", "never"];

async function deviceScreen() {
  const code = params.get("code");
  if (!code) {
    main.replaceChildren(form("Connect a device", field("Code shown by the device", "code"), "Continue", async (values) => go(`/admin/device?code=${encodeURIComponent(values.code)}`)));
    return;
  }
  const request = await api("GET", `/device/requests/${encodeURIComponent(code)}`);
  if (request.status !== "pending") {
    main.replaceChildren(el("section", {}, el("h1", {}, "Connect a device"), el("p", {}, `This request is ${request.status}.`)));
    return;
  }
  const approve = form(
    "Connect a device",
    [
      el("p", {}, `${request.clientName ?? "A device"} asks for an API key. Check that it shows this code:`),
      el("p", { class: "code" }, request.userCode),
      ...field("Key name", "name", "text", request.clientName ?? "device"),
      ...choice("Level", "level", LEVELS, "changeRequest"),
      ...choice("Expires after", "expiration", EXPIRATIONS, "30d"),
    ],
    "Approve",
    async (values) => {
      await api("POST", "/device/approve", { userCode: request.userCode, ...values });
      main.replaceChildren(el("section", {}, el("h1", {}, "Device connected"), el("p", { class: "notice" }, "You can return to your device.")));
    },
  );
  const deny = el("button", { class: "danger", type: "button" }, "Deny");
  deny.addEventListener("click", async () => {
    await api("POST", "/device/deny", { userCode: request.userCode });
    main.replaceChildren(el("section", {}, el("h1", {}, "Request denied"), el("p", {}, "The device did not get a key.")));
  });
  approve.querySelector("button[type=submit]").after(" ", deny);
  main.replaceChildren(approve);
}

async function keysScreen() {
  const keys = await api("GET", "/api-keys");
  const created = el("div");
  const rows = keys.map((key) => {
    const remove = el("button", { class: "secondary", type: "button" }, "Delete");
    remove.addEventListener("click", async () => {
      if (!confirm(`Delete the key "${key.name}"? Every holder loses access at once.`)) return;
      await api("DELETE", `/api-keys/${key.id}`);
      keysScreen();
    });
    return el("tr", {}, el("td", {}, key.name), el("td", {}, `${key.prefix}…`), el("td", {}, key.level), el("td", {}, key.expiresAt ? key.expiresAt.slice(0, 10) : "never"), el("td", {}, key.status), el("td", {}, remove));
  });
  main.replaceChildren(
    form("New API key", [...field("Name", "name"), ...choice("Level", "level", LEVELS, "read"), ...choice("Expires after", "expiration", EXPIRATIONS, "30d"), created], "Create key", async (values) => {
      const result = await api("POST", "/api-keys", values);
      await keysScreen();
      main.prepend(el("section", { class: "notice" }, "Copy this key now; it is shown only once: ", el("code", {}, result.apiKey)));
    }),
    el("section", {}, el("h1", {}, "Your API keys"), el("table", {}, el("tr", {}, ...["Name", "Prefix", "Level", "Expires", "Status", ""].map((h) => el("th", {}, h))), ...rows)),
  );
}

async function route() {
  const path = location.pathname.replace(/\/+$/, "");
  if (path === "/admin/setup") {
    const { needed } = await api("GET", "/setup");
    if (needed) return setupScreen();
  }
  const auth = await signedIn();
  if (!auth) return loginScreen(location.pathname + location.search === "/admin/setup" ? "/admin/keys" : location.pathname + location.search);
  if (path === "/admin/device") return deviceScreen();
  return keysScreen();
}

window.addEventListener("popstate", route);
route().catch((failure) => main.replaceChildren(el("p", { class: "error" }, failure.message)));
