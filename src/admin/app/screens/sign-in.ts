import { api } from "../api";
import { h } from "../dom";
import type { Screen } from "../screen";
import { card, form, input, link, notice, screen } from "../ui";

const needsSetup = async () => (await api<{ needed: boolean }>("GET", "/setup")).needed;

/** What to do before any account exists: the link the server printed, or the command line. */
const setupHelp = () =>
  card(
    "Set up Basalt",
    h("p", {}, "No account exists yet. When the server started, it printed a one-time setup link ending in ", h("code", {}, "/admin/setup?token=…"), ": open it to create the first account and space."),
    h("p", {}, "Lost it? Restart the server to print a new one, or create an instance admin from the command line:"),
    h("pre", {}, "basalt users create --email you@example.com --name You --password '…' --admin"),
  );

export const signInScreens: Screen[] = [
  {
    path: "/admin",
    title: "Basalt",
    render: (ctx) => {
      ctx.go("/admin/data", true);
      return h("p", {}, "Opening your data…");
    },
  },
  {
    path: "/admin/login",
    title: "Sign in",
    signedOut: true,
    async render(ctx) {
      if (await needsSetup()) return screen("Welcome to Basalt", setupHelp());
      return screen(
        "Sign in",
        card(
          null,
          form(
            "Sign in",
            [input("E-mail", "email", { type: "email", required: true, autocomplete: "username" }), input("Password", "password", { type: "password", required: true, autocomplete: "current-password" })],
            async (values) => {
              await api("POST", "/auth/login", { email: values.get("email"), password: values.get("password") });
              ctx.signedIn(ctx.query.get("next"));
            },
          ),
        ),
      );
    },
  },
  {
    path: "/admin/setup",
    title: "Set up Basalt",
    signedOut: true,
    async render(ctx) {
      if (!(await needsSetup())) return screen("Set up Basalt", notice("info", "Setup is done: an account exists. ", link("/admin/login", "Sign in"), "."));
      const token = ctx.query.get("token");
      if (!token) return screen("Set up Basalt", setupHelp());
      return screen(
        "Create the first account",
        card(
          null,
          h("p", {}, "This account is an instance admin and owns the first space."),
          form(
            "Create account",
            [
              input("Your name", "name", { required: true, autocomplete: "name" }),
              input("E-mail", "email", { type: "email", required: true, autocomplete: "username" }),
              input("Password", "password", { type: "password", required: true, autocomplete: "new-password", hint: "8 characters or more." }),
              input("First space", "spaceName", { value: "My space", required: true, hint: "A space holds folders, bases and records; you can rename it later." }),
            ],
            async (values) => {
              await api("POST", "/setup", { token, name: values.get("name"), email: values.get("email"), password: values.get("password"), spaceName: values.get("spaceName") });
              ctx.signedIn("/admin/data");
            },
          ),
        ),
      );
    },
  },
];
