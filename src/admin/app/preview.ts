import { h } from "./dom";

/**
 * A file of an attachment or a file tree, opened where it is shown (issue 38, item 7): an image
 * drawn whole, a text file's first 64 KB, a PDF opened in the browser's viewer in a new tab; any
 * of them downloaded. The bytes come from `GET /assets/{id}/content` (the session's, same origin).
 */

export interface ShownFile {
  id: string;
  fileName?: string;
  mimeType?: string;
  url?: string;
  size?: number;
}

const TEXT_PREVIEW_BYTES = 64 * 1024;
const isText = (type: string) => type.startsWith("text/") || /^application\/(json|xml|x-ndjson|yaml|javascript)/.test(type);

/** Where a file's bytes are read: its own path on this site. */
const fileHref = (file: ShownFile) => (file.url ? new URL(file.url, location.href).pathname : `/api/v1/assets/${file.id}/content`);

/** The dialog that shows a file: what it can of it, and Download. */
function previewFile(file: ShownFile): void {
  const name = file.fileName ?? file.id;
  const type = file.mimeType ?? "";
  const body = h("div", { class: "preview-body" });
  const dialog = h(
    "dialog",
    { class: "preview-dialog", "aria-labelledby": "preview-title" },
    h("h2", { id: "preview-title" }, name),
    body,
    h("div", { class: "actions" }, h("a", { class: "button", href: fileHref(file), download: name }, "Download"), h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Close")),
  );
  if (type.startsWith("image/") && type !== "image/svg+xml") body.append(h("img", { src: fileHref(file), alt: name }));
  else if (type === "application/pdf") body.append(h("p", {}, h("a", { href: fileHref(file), target: "_blank", rel: "noopener" }, "Open the PDF in a new tab")));
  else if (isText(type)) {
    const text = h("pre", { class: "doc", "aria-label": `${name}: text` }, "Reading…");
    body.append(text);
    fetch(fileHref(file), { headers: { range: `bytes=0-${TEXT_PREVIEW_BYTES - 1}` }, credentials: "same-origin" })
      .then(async (response) => {
        if (!response.ok) throw new Error(`The file could not be read (${response.status}).`);
        const read = new TextDecoder().decode(await response.arrayBuffer());
        text.textContent = response.status === 206 && (file.size ?? 0) > TEXT_PREVIEW_BYTES ? `${read}\n…` : read;
      })
      .catch((failure: Error) => (text.textContent = failure.message));
  } else body.append(h("p", { class: "muted" }, `${type || "A file"}: no preview. Download it to open it.`));
  dialog.addEventListener("close", () => dialog.remove());
  document.body.appendChild(dialog);
  dialog.showModal();
}

/** A file as a button that opens it: its thumbnail (an image) or its name. */
export function fileButton(file: ShownFile, thumb = true): HTMLButtonElement {
  const name = file.fileName ?? "file";
  const image = thumb && file.mimeType?.startsWith("image/") && file.url ? h("img", { class: "thumb", src: fileHref(file), alt: "", loading: "lazy" }) : null;
  const button = h("button", { type: "button", class: "file-chip", "aria-label": `Open ${name}` }, image ?? name);
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    previewFile(file);
  });
  return button;
}
