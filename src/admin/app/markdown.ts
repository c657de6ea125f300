import { Lexer, type Token, type Tokens } from "marked";
import { type Child, h } from "./dom";

/**
 * Markdown drawn as DOM: `marked` reads it into tokens, and each token becomes elements through
 * `h()`, so nothing is ever parsed as HTML. Raw HTML in a doc is shown as the text it is; a link
 * goes only to http(s), mailto or this site, an image only from this site (the page's policy).
 */

const SAFE_LINK = /^(https?:|mailto:|\/|#)/i;

/** What a token is (a paragraph, a list, text…): marked's own names, not field types. */
const kindOf = (token: Token): string => token.type;

function inline(tokens: Token[] | undefined): Child[] {
  return (tokens ?? []).map((token): Child => {
    const t = token as Tokens.Generic;
    switch (kindOf(token)) {
      case "strong":
        return h("strong", {}, inline(t.tokens));
      case "em":
        return h("em", {}, inline(t.tokens));
      case "del":
        return h("del", {}, inline(t.tokens));
      case "codespan":
        return h("code", {}, t.text);
      case "br":
        return h("br");
      case "link":
        return SAFE_LINK.test(t.href) ? h("a", { href: t.href, title: t.title ?? null, rel: "noopener noreferrer" }, inline(t.tokens)) : inline(t.tokens);
      case "image":
        return t.href.startsWith("/") ? h("img", { src: t.href, alt: t.text, title: t.title ?? null, loading: "lazy" }) : h("span", { class: "muted" }, `[${t.text || "image"}]`);
      case "text":
        return t.tokens ? inline(t.tokens) : t.text;
      case "escape":
        return t.text;
      default:
        return t.raw;
    }
  });
}

function block(token: Token): Child {
  const t = token as Tokens.Generic;
  switch (kindOf(token)) {
    case "heading":
      // The screen's own title is the page's h1: a doc's headings sit one level below it.
      return h(`h${Math.min(6, Math.max(1, t.depth) + 1)}` as "h2", {}, inline(t.tokens));
    case "paragraph":
      return h("p", {}, inline(t.tokens));
    case "text":
      return h("p", {}, t.tokens ? inline(t.tokens) : t.text);
    case "code":
      return h("pre", { class: "doc" }, h("code", { "data-lang": t.lang || null }, t.text));
    case "blockquote":
      return h("blockquote", {}, (t.tokens ?? []).map(block));
    case "hr":
      return h("hr");
    case "list": {
      const items = (t.items as Tokens.ListItem[]).map((item) =>
        h("li", {}, item.task ? h("input", { type: "checkbox", checked: item.checked === true, disabled: true, "aria-label": item.checked ? "done" : "not done" }) : null, item.tokens.map((child) => (kindOf(child) === "text" ? inline((child as Tokens.Text).tokens ?? [child]) : block(child)))),
      );
      return t.ordered ? h("ol", { start: typeof t.start === "number" && t.start !== 1 ? t.start : null }, items) : h("ul", {}, items);
    }
    case "table": {
      const table = token as Tokens.Table;
      return h(
        "div",
        { class: "table-scroll" },
        h("table", {}, h("thead", {}, h("tr", {}, table.header.map((cell) => h("th", {}, inline(cell.tokens))))), h("tbody", {}, table.rows.map((row) => h("tr", {}, row.map((cell) => h("td", {}, inline(cell.tokens))))))),
      );
    }
    case "space":
      return null;
    default:
      return h("p", {}, t.raw);
  }
}

/** A doc's markdown as elements. */
export const markdown = (source: string): HTMLElement => h("div", { class: "markdown" }, Lexer.lex(source, { gfm: true }).map(block));
