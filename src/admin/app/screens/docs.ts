import type { ChangeRequestView } from "../../../changes/views";
import type { NodeDetailView } from "../../../content/node-kinds";
import { atLeast } from "../../../shared/levels";
import { api } from "../api";
import { h } from "../dom";
import { markdown } from "../markdown";
import type { Context, Screen } from "../screen";
import { card, empty, form, link, screen, textarea } from "../ui";

/** Where a node opens on this page: a base's grid, a doc, a file tree's files, or the tree for anything else. */
export function pageOfNode(node: { id: string; type: string; baseId?: string | null }): string {
  if (node.type === "base") return `/admin/bases/${node.baseId ?? node.id}`;
  if (node.type === "doc") return `/admin/docs/${node.id}`;
  if (node.type === "skill" || node.type === "drive" || node.type === "airapp") return `/admin/trees/${node.id}`;
  return "/admin/data";
}

const canPropose = (ctx: Context) => {
  const level = ctx.me.caller.effectiveLevel;
  return level !== null && atLeast(level, "changeRequest");
};

/** A doc: its markdown drawn, and (for a contributor or more) an editor whose save is a change request like every other. */
async function docPage(ctx: Context): Promise<Node> {
  const doc = await api<NodeDetailView>("GET", `/nodes/${encodeURIComponent(ctx.params.id)}?type=doc`);
  const body = doc.body ?? "";
  const editor = canPropose(ctx)
    ? card(
        "Edit",
        form("Save", [textarea("Markdown", "body", { value: body, rows: 16, hint: "With the write level it is saved at once; otherwise it waits in the Inbox for review." })], async (values) => {
          const proposed = await api<ChangeRequestView>("PUT", `/nodes/${doc.id}/content`, { content: { kind: "doc", body: String(values.get("body")) }, message: "Edited on the page" });
          ctx.go(proposed.status === "merged" ? `/admin/docs/${doc.id}` : `/admin/change-requests/${proposed.id}`);
        }),
      )
    : null;
  return screen(doc.name, card("Doc", body ? markdown(body) : empty("This doc is empty.")), editor);
}

/** A skill's, drive's or airapp's files, and the one opened: its text, or a link to its bytes. */
async function treePage(ctx: Context): Promise<Node> {
  const tree = await api<NodeDetailView>("GET", `/nodes/${encodeURIComponent(ctx.params.id)}`);
  const opened = ctx.query.get("file");
  const file = opened
    ? await api<{ path: string; encoding: "utf8" | "url"; content: string; assetUrl: string | null }>("GET", `/file-trees/${tree.id}/files/${opened.split("/").map(encodeURIComponent).join("/")}`)
    : null;
  const files = tree.files ?? [];
  const list = files.length
    ? h("ul", { class: "tree" }, ...files.map((entry) => h("li", {}, link(`/admin/trees/${tree.id}?file=${encodeURIComponent(entry.path)}`, entry.path), h("span", { class: "muted" }, ` ${entry.size} bytes`))))
    : empty("No files.");
  const shown = file ? card(file.path, file.encoding === "utf8" ? h("pre", { class: "doc" }, file.content) : h("p", {}, h("a", { href: file.assetUrl ?? "#", download: "" }, "Download the file"))) : null;
  return screen(tree.name, card(`Files (entry: ${tree.entryFile ?? "-"})`, list), shown);
}

export const docScreens: Screen[] = [
  { path: "/admin/docs/:id", title: "Doc", render: docPage },
  { path: "/admin/trees/:id", title: "Files", render: treePage },
];
