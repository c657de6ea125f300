import type { SearchAnswer } from "../../../search/search";
import { api, query } from "../api";
import { h } from "../dom";
import type { Context, Screen } from "../screen";
import { pageOfNode } from "./docs";
import { card, empty, link, screen, when } from "../ui";

const RESULTS_A_PAGE = 20;

/** Where a result opens on this page: a record's page, or its node's (a base's grid, a doc, a tree's files, the tree). */
const pageOf = (result: SearchAnswer["results"][number]) => (result.nodeType ? pageOfNode({ id: result.id, type: result.nodeType }) : `/admin/records/${result.id}`);

/** Search across the space (`GET /api/v1/search`): the names of bases and folders, then records by relevance. */
async function searchPage(ctx: Context): Promise<Node> {
  const text = ctx.query.get("q")?.trim() ?? "";
  const offset = Number(ctx.query.get("offset") ?? 0) || 0;
  if (!text) return screen("Search", card(null, empty("Type words in the search box at the top: every word must start a word of a record's text, or of a base's or folder's name.")));
  const answer = await api<SearchAnswer>("GET", `/search${query({ query: text, limit: RESULTS_A_PAGE, offset })}`);
  const results = answer.results.map((result) =>
    h(
      "li",
      { class: "result" },
      h("p", { class: "muted eyebrow" }, result.eyebrow),
      h("h2", {}, link(pageOf(result), result.title || result.id)),
      result.body ? h("p", {}, result.body) : null,
      h("p", { class: "muted" }, `Updated ${when(result.updatedAt)}`),
    ),
  );
  return screen(
    `Search: ${text}`,
    card(
      null,
      results.length ? h("ol", { class: "results", start: offset + 1 }, ...results) : empty(offset ? "No more results." : "Nothing matches every word."),
      h(
        "p",
        { class: "pager" },
        offset > 0 ? link(`/admin/search${query({ q: text, offset: Math.max(0, offset - RESULTS_A_PAGE) || undefined })}`, "← Earlier results") : null,
        answer.hasMore ? link(`/admin/search${query({ q: text, offset: offset + RESULTS_A_PAGE })}`, "More results →") : null,
      ),
    ),
  );
}

export const searchScreens: Screen[] = [{ path: "/admin/search", title: "Search", render: searchPage }];
