import type { BaseView } from "../../content/bases";
import type { NodeView } from "../../content/nodes";
import type { ChangeRequestView } from "../../changes/views";
import type { ImportPreview } from "../../transfer/import-plan";
import { FIELD_TRAITS, IMPORTABLE_TYPES, traitsOf } from "../../shared/field-types";
import { slugFrom } from "../../shared/formats";
import { formatOf, IMPORT_ACCEPT } from "../../shared/import-formats";
import { api, query, send } from "./api";
import { type Child, fill, h } from "./dom";
import { dialogForm, input, link, menuDialog, select, shown, table } from "./ui";
import { pageOfNode } from "./screens/docs";

/**
 * The space's tree as a team arranges it (docs/admin.md, "The tree"): folders made, anything
 * renamed or moved (its menu, or dragged onto a folder), and bases added empty or from a file in
 * one dialog. Each is a node change request: merged at once where the level allows, else waiting.
 */

export interface TreeChanges {
  /** Whether the caller may merge (write): a move and a base from a file need it. */
  canWrite: boolean;
  /** After a change: merged (the tree is drawn again) or waiting (its change request opens). */
  done(changeRequest: ChangeRequestView): void;
  /** A base was made: it opens. */
  opened(baseId: string): void;
  /** A change that failed outside a dialog (a drop): its sentence is shown. */
  failed(failure: unknown): void;
}

type Folder = { id: string | null; path: string };

/** Every folder a node may go in, with its path ("/" the root). */
export function foldersOf(nodes: NodeView[], above = ""): Folder[] {
  return nodes.flatMap((node) => (node.type === "folder" ? [{ id: node.id, path: `${above}/${node.name}` }, ...foldersOf(node.children, `${above}/${node.name}`)] : []));
}

const folderChoice = (folders: Folder[], selected?: string | null) =>
  select("In folder", "parent", [{ value: "", label: "/ (top level)" }, ...folders.map((folder) => ({ value: folder.id!, label: folder.path }))], selected ?? "");

const proposeNodes = (changes: TreeChanges, operations: Record<string, unknown>[]) => api<ChangeRequestView>("POST", "/nodes/change-requests", { operations }).then(changes.done);

/** A name, and its slug made from it until one is typed. */
function namedInputs(label: string, placeholder: string): { nodes: Child[]; name: () => string; slug: () => string } {
  const name = input(label, "name", { required: true, placeholder });
  const slug = input("Slug", "slug", { required: true, hint: "How links, agents and the API name it: lower-case letters, digits, dashes." });
  const nameInput = name.querySelector("input")!;
  const slugInput = slug.querySelector("input")!;
  let typed = false;
  nameInput.addEventListener("input", () => {
    if (!typed) slugInput.value = slugFrom(nameInput.value);
  });
  slugInput.addEventListener("input", () => (typed = true));
  return { nodes: [name, slug], name: () => nameInput.value.trim(), slug: () => slugInput.value.trim() };
}

export function newFolder(changes: TreeChanges, folders: Folder[], parent?: string | null): void {
  const named = namedInputs("Name", "Projects");
  const where = folderChoice(folders, parent);
  dialogForm("New folder", [...named.nodes, where], "Create folder", () =>
    proposeNodes(changes, [{ kind: "create", nodeType: "folder", name: named.name(), slug: named.slug(), ...parentOf(where) }]),
  );
}

/** "New doc": a markdown document in the tree, empty until it is written on its page. */
export function newDoc(changes: TreeChanges, folders: Folder[], parent?: string | null): void {
  const named = namedInputs("Name", "Onboarding notes");
  const where = folderChoice(folders, parent);
  dialogForm("New doc", [...named.nodes, where], "Create doc", () => proposeNodes(changes, [{ kind: "create", nodeType: "doc", name: named.name(), slug: named.slug(), ...parentOf(where) }]));
}

const parentOf = (where: HTMLElement) => {
  const value = where.querySelector("select")!.value;
  return value ? { parentNodeId: value } : {};
};

/**
 * The first rows of a file as its preview shows them: a column per field it would make, with the
 * type its values fit, which the person may change (`choose`: the file is previewed again with it).
 */
function previewTable(preview: ImportPreview, choose: (column: string, type: string) => void): HTMLElement {
  const columns = preview.columns.filter((column) => column.action !== "skip");
  const typePick = (column: (typeof columns)[number]) => {
    const pick = h("select", { "aria-label": `Type of ${column.name}` }, ...IMPORTABLE_TYPES.map((type) => h("option", { value: type, selected: type === column.suggestedType }, FIELD_TRAITS[type].label)));
    pick.addEventListener("change", () => choose(column.name, pick.value));
    return h("label", { class: "import-type" }, `${column.name} `, pick);
  };
  return h(
    "div",
    { class: "import-preview" },
    h("p", {}, `${preview.rowCount.toLocaleString()} row${preview.rowCount === 1 ? "" : "s"}; a field for each column, of the type you choose:`),
    h("div", { class: "import-types" }, columns.map(typePick)),
    h(
      "div",
      { class: "grid-scroll" },
      table(
        columns.map((column) => `${column.name} (${traitsOf(column.suggestedType).label})`),
        preview.rows.slice(0, 5).map((row) => columns.map((column) => shown(row.fields[column.fieldSlug ?? column.name]))),
        "The first rows",
      ),
    ),
    preview.errorCount > 0 ? h("ul", { class: "error" }, ...preview.errors.map((error) => h("li", {}, `Line ${error.line}${error.column ? `, ${error.column}` : ""}: ${error.message}`))) : null,
  );
}

/**
 * "Add a base": empty (a Name field to start; fields are added from its grid), or made from a CSV,
 * JSON or JSON lines file: the file is previewed first (its columns, the type each would take, its
 * first rows and any error by line), then the base and its records are made in one request.
 */
export function addBase(changes: TreeChanges, folders: Folder[], parent?: string | null): void {
  const named = namedInputs("Name", "Project tracker");
  const where = folderChoice(folders, parent);
  const picker = h("input", { type: "file", accept: IMPORT_ACCEPT, "aria-label": "Start from a file (CSV, Excel, JSON or JSON lines)" });
  const seen = h("div", { role: "status" });
  let file: File | null = null;
  picker.addEventListener("change", async () => {
    file = picker.files?.[0] ?? null;
    fill(seen);
    if (!file) return;
    const nameInput = named.nodes[0] as HTMLElement;
    const typedName = nameInput.querySelector("input")!;
    if (!typedName.value) {
      typedName.value = file.name.replace(/\.[^.]+$/, "").replace(/[_-]+/g, " ");
      typedName.dispatchEvent(new Event("input"));
    }
    types = {};
    await previewFile();
  });
  // The types chosen in the preview, by column: sent with the preview and with the import.
  let types: Record<string, string> = {};
  const typeParams = () => Object.fromEntries(Object.entries(types).map(([column, type]) => [`types[${column}]`, type]));
  const previewFile = async () => {
    if (!file) return;
    try {
      const preview = (await (await send("POST", `/imports${query({ preview: true, format: formatOf(file.type, file.name), ...typeParams() })}`, file, file.type || "application/octet-stream")).json()) as ImportPreview;
      fill(
        seen,
        previewTable(preview, (column, type) => {
          types[column] = type;
          void previewFile();
        }),
      );
    } catch (failure) {
      fill(seen, h("p", { class: "error", role: "alert" }, failure instanceof Error ? failure.message : String(failure)));
    }
  };
  const fromFile = changes.canWrite ? h("div", { class: "field" }, h("label", {}, "Start from a file (optional)", picker), seen) : h("p", { class: "muted" }, "Making a base from a file needs the Write data level.");
  dialogForm("Add a base", [...named.nodes, where, fromFile], "Create base", async () => {
    if (file) {
      const params = { name: named.name(), slug: named.slug(), format: formatOf(file.type, file.name), ...(parentOf(where) as { parentNodeId?: string }), ...typeParams() };
      const made = (await (await send("POST", `/imports${query(params)}`, file, file.type || "application/octet-stream")).json()) as { base: BaseView };
      changes.opened(made.base.id);
      return;
    }
    const answer = await api<(BaseView & { materialized: true }) | (ChangeRequestView & { materialized: false })>("POST", "/bases", {
      name: named.name(),
      slug: named.slug(),
      ...parentOf(where),
      fields: [{ slug: "name", name: "Name", type: "text" }],
    });
    if (answer.materialized) changes.opened(answer.id);
    else changes.done(answer);
  });
}

function renameNode(changes: TreeChanges, node: NodeView): void {
  const name = input("Name", "name", { required: true, value: node.name });
  dialogForm(`Rename ${node.name}`, [name, h("p", { class: "muted" }, `Its slug stays ${node.slug}, so links and agents still find it.`)], "Rename", () =>
    proposeNodes(changes, [{ kind: "rename", nodeId: node.id, name: name.querySelector("input")!.value.trim() }]),
  );
}

const moveTo = (changes: TreeChanges, node: { id: string }, parentId: string | null, root: string) =>
  proposeNodes(changes, [{ kind: "move", nodeId: node.id, parentNodeId: parentId ?? root }]);

function moveNode(changes: TreeChanges, node: NodeView, folders: Folder[], root: string): void {
  const inside = (folder: Folder) => folder.id === node.id || folder.path.startsWith(`${folders.find((f) => f.id === node.id)?.path ?? "\0"}/`);
  const where = folderChoice(folders.filter((folder) => !inside(folder)), node.parentId === root ? null : node.parentId);
  dialogForm(`Move ${node.name}`, [where], "Move", () => moveTo(changes, node, where.querySelector("select")!.value || null, root));
}

/** The tree: each node opens where it lives; with changeRequest and above, a menu renames or moves it, and it can be dragged onto a folder. */
export function treeList(nodes: NodeView[], changes: TreeChanges | null, root: string): HTMLElement {
  const folders = foldersOf(nodes);
  const list = (level: NodeView[]): HTMLElement =>
    h(
      "ul",
      { class: "tree" },
      ...level.map((node) => {
        const menu = changes
          ? h("button", { type: "button", class: "node-menu", "aria-label": `${node.name}: menu`, "aria-haspopup": "dialog", onclick: () => nodeMenu(changes, node, folders, root) })
          : null;
        const item = h(
          "li",
          { draggable: changes ? "true" : undefined, "data-node": node.id },
          h("span", { class: "node-row" }, node.type === "folder" ? h("span", { class: "folder" }, node.name) : link(pageOfNode(node), node.name), h("span", { class: "muted" }, ` ${node.type}`), menu),
          node.children.length ? list(node.children) : null,
        );
        if (changes) {
          item.addEventListener("dragstart", (event) => {
            event.stopPropagation();
            (event as DragEvent).dataTransfer?.setData("text/x-basalt-node", node.id);
          });
          if (node.type === "folder") {
            item.addEventListener("dragover", (event) => event.preventDefault());
            item.addEventListener("drop", (event) => {
              event.preventDefault();
              event.stopPropagation();
              const moved = (event as DragEvent).dataTransfer?.getData("text/x-basalt-node");
              if (moved && moved !== node.id) void moveTo(changes, { id: moved }, node.id, root).catch(changes.failed);
            });
          }
        }
        return item;
      }),
    );
  return list(nodes);
}

function nodeMenu(changes: TreeChanges, node: NodeView, folders: Folder[], root: string): void {
  menuDialog(node.name, null, [
    { label: "Rename…", run: () => renameNode(changes, node) },
    { label: "Move to…", run: () => moveNode(changes, node, folders, root) },
    node.type === "folder" ? { label: "New folder inside…", run: () => newFolder(changes, folders, node.id) } : null,
    node.type === "folder" ? { label: "Add a base inside…", run: () => addBase(changes, folders, node.id) } : null,
    node.type === "folder" ? { label: "New doc inside…", run: () => newDoc(changes, folders, node.id) } : null,
  ]);
}
