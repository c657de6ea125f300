import { atLeast, type Role, ROLES } from "../../../shared/levels";
import type { UserView } from "../../../auth/users";
import type { MemberView, SpaceView } from "../../../spaces/spaces";
import { api, session } from "../api";
import { fill, h } from "../dom";
import type { Context, Screen } from "../screen";
import { action, card, checkbox, confirmDialog, copyable, empty, form, input, notice, screen, select, table, when } from "../ui";

const ROLE_NAMES: Record<Role, string> = { owner: "Owner", admin: "Admin", editor: "Editor", contributor: "Contributor", viewer: "Viewer" };
const roleChoices = () => ROLES.map((role) => ({ value: role, label: ROLE_NAMES[role] }));

async function spaces(ctx: Context): Promise<Node> {
  const mine = await api<SpaceView[]>("GET", "/spaces");
  const current = ctx.me.caller.space;
  const level = ctx.me.caller.effectiveLevel;
  const manages = level !== null && atLeast(level, "manage");
  const status = h("div", { class: "status-area" });
  const members = current ? await api<MemberView[]>("GET", `/spaces/${current.id}/members`) : [];
  const waiting = current && manages ? await api<{ id: string; role: Role; expiresAt: string }[]>("GET", `/spaces/${current.id}/invitations`) : [];
  return screen(
    "Spaces",
    status,
    card(
      "Your spaces",
      mine.length
        ? table(
            ["Space", "Slug", "Your role", "Created", ""],
            mine.map((space) => [
              space.name,
              h("code", {}, space.slug),
              ROLE_NAMES[space.role],
              when(space.createdAt),
              space.slug === current?.slug
                ? h("span", { class: "muted" }, "current")
                : action(
                    "Switch to it",
                    async () => {
                      session.space = space.slug;
                      await ctx.refreshMe();
                      ctx.reload();
                    },
                    { kind: "secondary", status },
                  ),
            ]),
          )
        : empty("You are not a member of any space yet: create one below, or ask a space's owner to add you."),
    ),
    card(
      "New space",
      form("Create space", [input("Name", "name", { required: true }), input("Slug", "slug", { hint: "Optional: made from the name when empty." })], async (values, node) => {
        const space = await api<SpaceView>("POST", "/spaces", { name: values.get("name"), ...(values.get("slug") ? { slug: values.get("slug") } : {}) });
        node.reset();
        session.space = space.slug;
        await ctx.refreshMe();
        ctx.reload();
      }),
    ),
    current && manages
      ? card(
          `Rename ${current.name}`,
          form("Save", [input("Name", "name", { value: current.name, required: true }), input("Slug", "slug", { value: current.slug, required: true })], async (values) => {
            const space = await api<SpaceView>("PATCH", `/spaces/${current.id}`, { name: values.get("name"), slug: values.get("slug") });
            session.space = space.slug;
            await ctx.refreshMe();
            ctx.reload();
          }),
        )
      : null,
    current
      ? card(
          `Members of ${current.name}`,
          table(
            ["Name", "E-mail", "Role", "Since", ""],
            members.map((member) => [
              member.name,
              member.email,
              manages ? roleSelect(ctx, current.id, member, status) : ROLE_NAMES[member.role],
              when(member.createdAt),
              manages
                ? action(
                    "Remove",
                    async () => {
                      if (!(await confirmDialog(`Remove ${member.name}?`, `They lose access to ${current.name} at once, through every key.`, "Remove member", true))) return;
                      await api("DELETE", `/spaces/${current.id}/members/${member.userId}`);
                      ctx.reload();
                    },
                    { kind: "danger", status },
                  )
                : null,
            ]),
          ),
          manages
            ? form("Add member", [input("E-mail of an existing user", "email", { type: "email", required: true }), select("Role", "role", roleChoices(), "editor")], async (values) => {
                await api("POST", `/spaces/${current.id}/members`, { email: values.get("email"), role: values.get("role") });
                ctx.reload();
              })
            : null,
        )
      : null,
    current && manages ? inviteCard(ctx, current, waiting, status) : null,
  );
}

function roleSelect(ctx: Context, spaceId: string, member: MemberView, status: HTMLElement): HTMLElement {
  const choice = h("select", { "aria-label": `Role of ${member.name}` }, ...roleChoices().map((role) => h("option", { value: role.value, selected: role.value === member.role }, role.label)));
  choice.addEventListener("change", async () => {
    try {
      await api("PATCH", `/spaces/${spaceId}/members/${member.userId}`, { role: choice.value });
      ctx.reload();
    } catch (failure) {
      choice.value = member.role;
      status.append(notice("error", (failure as Error).message));
    }
  });
  return choice;
}

/**
 * Inviting people: a link for one person, with a role and an expiry, shown once to be copied; the
 * links still waiting, each revoked with one button.
 */
function inviteCard(ctx: Context, space: { id: string; name: string }, waiting: { id: string; role: Role; expiresAt: string }[], status: HTMLElement): HTMLElement {
  const made = h("div", { role: "status" });
  return card(
    "Invite people",
    h("p", {}, `A link lets one person join ${space.name} with the role you choose, setting their own password (or joining as themselves if they have an account). It works once.`),
    form(
      "Make a link",
      [select("Role", "role", roleChoices().filter((role) => role.value !== "owner"), "editor"), select("Works for", "days", [1, 7, 30].map((days) => ({ value: String(days), label: `${days} day${days === 1 ? "" : "s"}` })), "7")],
      async (values) => {
        const link = await api<{ path: string; role: Role; expiresAt: string }>("POST", `/spaces/${space.id}/invitations`, { role: values.get("role"), expiresInDays: Number(values.get("days")) });
        fill(made, h("p", {}, `A link for one ${ROLE_NAMES[link.role].toLowerCase()}, until ${when(link.expiresAt)}; it is shown only now:`), copyable(new URL(link.path, location.origin).href));
      },
    ),
    made,
    waiting.length
      ? table(
          ["Role", "Until", ""],
          waiting.map((invitation) => [
            ROLE_NAMES[invitation.role],
            when(invitation.expiresAt),
            action(
              "Revoke",
              async () => {
                await api("DELETE", `/spaces/${space.id}/invitations/${invitation.id}`);
                ctx.reload();
              },
              { kind: "danger", status },
            ),
          ]),
          "Links waiting to be used",
        )
      : null,
  );
}

/** `/admin/invite?token=…`: what the link offers; a new person makes their account, a signed-in one joins as themselves. */
async function acceptScreen(ctx: Context): Promise<Node> {
  const token = ctx.query.get("token") ?? "";
  let offer: { spaceName: string; role: Role; expiresAt: string };
  try {
    offer = await api("GET", `/invitations/${encodeURIComponent(token)}`, undefined, { quiet401: true });
  } catch (failure) {
    return screen("Invitation", notice("error", (failure as Error).message));
  }
  const joined = (spaceSlugOrId: string) => {
    session.space = spaceSlugOrId;
    ctx.signedIn("/admin/data");
  };
  const here = `/admin/invite?token=${encodeURIComponent(token)}`;
  return screen(
    `Join ${offer.spaceName}`,
    card(
      null,
      h("p", {}, `You are invited to ${offer.spaceName} as ${ROLE_NAMES[offer.role].toLowerCase()}. The link works until ${when(offer.expiresAt)}.`),
      session.remembered
        ? action("Join as yourself", async () => joined((await api<{ spaceId: string }>("POST", `/invitations/${encodeURIComponent(token)}/join`)).spaceId))
        : form(
            "Create account and join",
            [
              input("Your name", "name", { required: true, autocomplete: "name" }),
              input("E-mail", "email", { type: "email", required: true, autocomplete: "username" }),
              input("Password", "password", { type: "password", required: true, autocomplete: "new-password", hint: "8 characters or more." }),
            ],
            async (values) => {
              const answer = await api<{ csrfToken: string; spaceId: string }>("POST", `/invitations/${encodeURIComponent(token)}/accept`, { name: values.get("name"), email: values.get("email"), password: values.get("password") });
              session.csrfToken = answer.csrfToken;
              session.remembered = true;
              joined(answer.spaceId);
            },
          ),
      session.remembered ? null : h("p", { class: "muted" }, "Already have an account? ", h("a", { href: `/admin/login?next=${encodeURIComponent(here)}` }, "Sign in"), ", and you come back here to join."),
    ),
  );
}

async function users(ctx: Context): Promise<Node> {
  if (!ctx.me.user.admin) return screen("Users", notice("error", "Only instance admins manage users."));
  const list = await api<UserView[]>("GET", "/users");
  const status = h("div", { class: "status-area" });
  const patch = (user: UserView, change: Partial<Pick<UserView, "admin" | "banned">>, question: string) =>
    action(
      question,
      async () => {
        if (change.banned && !(await confirmDialog(`Ban ${user.name}?`, "They are signed out and every key of theirs stops working at once.", "Ban", true))) return;
        await api("PATCH", `/users/${user.id}`, change);
        ctx.reload();
      },
      { kind: change.banned ? "danger" : "secondary", status },
    );
  return screen(
    "Users",
    status,
    card(
      "Users of this server",
      table(
        ["Name", "E-mail", "Role", "State", "Actions"],
        list.map((user) => [
          user.name,
          user.email,
          user.admin ? "Instance admin" : "User",
          user.banned ? h("span", { class: "badge warn" }, "Banned") : "Active",
          user.id === ctx.me.user.id
            ? h("span", { class: "muted" }, "you")
            : h(
                "div",
                { class: "row-actions" },
                patch(user, { admin: !user.admin }, user.admin ? "Remove admin" : "Make admin"),
                patch(user, { banned: !user.banned }, user.banned ? "Unban" : "Ban"),
              ),
        ]),
      ),
    ),
    card(
      "New user",
      form(
        "Create user",
        [
          input("Name", "name", { required: true }),
          input("E-mail", "email", { type: "email", required: true }),
          input("Password", "password", { type: "password", required: true, autocomplete: "new-password", hint: "8 characters or more; they can change it later." }),
          checkbox("Instance admin", "admin"),
        ],
        async (values) => {
          await api("POST", "/users", { name: values.get("name"), email: values.get("email"), password: values.get("password"), admin: values.get("admin") === "on" });
          ctx.reload();
        },
      ),
    ),
  );
}

export const spaceScreens: Screen[] = [
  { path: "/admin/spaces", title: "Spaces", render: spaces },
  { path: "/admin/users", title: "Users", render: users },
  { path: "/admin/invite", title: "Invitation", signedOut: true, render: acceptScreen },
];
