import type { Actor } from "../auth/actor";
import { findUserById } from "../auth/users";
import { proposeDoc, proposeFileTree } from "../changes/node-content";
import { type Proposer, proposeNodeChanges, proposeRecords } from "../changes/proposals";
import { sourceAttribution } from "../changes/propose";
import { listNodes } from "../content/nodes";
import type { AppContext } from "../context";
import { scopeOf } from "../spaces/resolve";
import { SEES_ALL } from "../spaces/sight";
import { findMembership } from "../spaces/spaces";

/**
 * The demo workspace (`basalt serve --demo`): a content team's space, so a newcomer and an agent
 * meet bases with records, a proposal waiting in the Inbox, a doc and a skill at once. It holds what
 * Busabase's seed holds where Busabase's clients look (bases `blog`, `social-content` and
 * `newsletter` with their fields, the skill `ai-research-editor`, a doc, records about AI), so its
 * golden path runs against it. Made through the same proposals as any client's, as the space's
 * owner, into a space with nothing in it yet.
 */

/** A choice whose name is its id: a value written by id reads back as written (Busabase's clients write ids). */
const choices = (...ids: string[]) => ({ choices: ids.map((id) => ({ id, name: id })) });
const STATUS = choices("draft", "in-review", "published", "archived");
const LOCALES = choices("en", "zh-CN", "zh-TW", "ja", "pt");
const TAGS = choices("agents", "video", "policy", "local-first");

/** A post as the blog holds it: Busabase's CMS fields (path, slug, locale, schema-version) with the editorial ones. */
const post = (fields: { title: string; body: string; slug: string; status: string; tags: string[]; priority: number; channel?: string; publish_date?: string; ready?: boolean; source_url?: string }) => ({
  ...fields,
  channel: fields.channel ?? "blog",
  path: `/blog/${fields.slug}`,
  locale: "en",
  "schema-version": 1,
});

const BLOG_POSTS = [
  post({
    title: "AI agents move from demos into daily operations",
    body: "Teams now hand an AI agent the dull half of a workflow.\n\nWhat makes it safe is not the model: every change the agent makes arrives as a proposal, and a person approves it before it lands.",
    slug: "ai-agents-in-operations",
    status: "published",
    tags: ["agents"],
    priority: 1,
    publish_date: "2026-10-02",
    ready: true,
    source_url: "https://example.com/agents-in-operations",
  }),
  post({
    title: "AI video tools become distribution channels",
    body: "Generating the clip is the easy part now; the work is in deciding where it goes and who reviews it.",
    slug: "ai-video-distribution",
    status: "published",
    tags: ["video"],
    priority: 2,
    publish_date: "2026-10-16",
    ready: true,
  }),
  post({
    title: "How we draft the newsletter with an AI agent",
    body: "The agent collects the week's posts; an editor picks and reorders them.",
    slug: "newsletter-with-an-agent",
    status: "in-review",
    tags: ["agents"],
    priority: 1,
    ready: false,
  }),
  post({
    title: "Ideas for the spring series",
    body: "- Offline first\n- Reviews on the phone\n- Importing a spreadsheet",
    slug: "spring-series-ideas",
    status: "draft",
    tags: ["local-first"],
    priority: 3,
    ready: false,
  }),
];

const SKILL_MD =
  "---\nname: ai-research-editor\ndescription: Check an agent's AI research drafts for sources before they are published\n---\n\n# AI research editor\n\nUse this skill when an agent proposes a blog post, a newsletter issue or a social thread about AI.\n\n1. Read the proposal: `GET /api/v1/change-requests/{id}`.\n2. Every factual claim needs a source URL or a record it comes from; flag the ones without.\n3. Send it back with the reason (`verdict: changes_requested`), or approve it.\n";

/** What a new space of the demo holds, in the order it is proposed. */
async function seed(ctx: AppContext, who: Proposer): Promise<void> {
  await proposeNodeChanges(
    ctx,
    who,
    [
      { kind: "create", ref: "cms", nodeType: "folder", slug: "cms", name: "CMS", description: "Website content: blog posts and pages." },
      { kind: "create", ref: "marketing", nodeType: "folder", slug: "marketing", name: "Marketing", description: "Social posts and newsletters." },
      {
        kind: "create",
        parentNodeRef: "cms",
        nodeType: "base",
        slug: "blog",
        name: "Blog Posts",
        description: "Long-form posts on AI at work, from draft to published.",
        fields: [
          { slug: "title", name: "Title", type: "text", required: true },
          { slug: "body", name: "Body", type: "markdown", required: true },
          { slug: "channel", name: "Channel", type: "text" },
          { slug: "priority", name: "Priority", type: "number" },
          { slug: "publish_date", name: "Publish date", type: "date" },
          { slug: "ready", name: "Ready", type: "checkbox" },
          { slug: "status", name: "Status", type: "select", options: STATUS },
          { slug: "tags", name: "Tags", type: "multiselect", options: TAGS },
          { slug: "source_url", name: "Source URL", type: "url" },
          { slug: "path", name: "Path", type: "text" },
          { slug: "slug", name: "Slug", type: "text" },
          { slug: "locale", name: "Locale", type: "select", options: LOCALES },
          { slug: "schema-version", name: "Schema version", type: "number" },
        ],
      },
    ],
    { message: "The demo workspace" },
  );
  // Bases that link to the blog are proposed once it exists.
  await proposeNodeChanges(
    ctx,
    who,
    [
      {
        kind: "create",
        parentNodeId: "marketing",
        nodeType: "base",
        slug: "social-content",
        name: "Social Content",
        description: "Short posts for each channel, each from a blog post.",
        fields: [
          { slug: "title", name: "Title", type: "text", required: true },
          { slug: "body", name: "Body", type: "markdown", required: true },
          { slug: "channel", name: "Channel", type: "text" },
          { slug: "related_blogs", name: "Related blog posts", type: "relation", options: { targetBaseSlug: "blog" } },
        ],
      },
      {
        kind: "create",
        parentNodeId: "marketing",
        nodeType: "base",
        slug: "newsletter",
        name: "Newsletter",
        description: "Issues for subscribers, each gathering posts.",
        fields: [
          { slug: "title", name: "Title", type: "text", required: true },
          { slug: "body", name: "Body", type: "html", required: true },
          { slug: "audience", name: "Audience", type: "text" },
          { slug: "source_posts", name: "Source blog posts", type: "relation", options: { targetBaseSlug: "blog" } },
        ],
      },
    ],
    { message: "The demo's marketing bases" },
  );
  const posts = await proposeRecords(ctx, who, "blog", BLOG_POSTS.map((fields) => ({ fields })), { message: "Demo blog posts" });
  const [first, second] = posts.outcome?.merged ? posts.outcome.recordIds : [];
  await proposeRecords(
    ctx,
    who,
    "social-content",
    [
      { fields: { title: "Thread: what AI agents change about operations", body: "Agents propose, people decide. Here is why that matters.", channel: "linkedin", related_blogs: [first] } },
      { fields: { title: "AI video, one week in", body: "Seven days of clips, one review queue.", channel: "x", related_blogs: [second] } },
    ],
    { message: "Demo social posts" },
  );
  await proposeRecords(
    ctx,
    who,
    "newsletter",
    [{ fields: { title: "Weekly AI briefing: agents and video", body: "<p>This week: how proposals keep AI agents honest, and where video goes next.</p>", audience: "AI founders and operators", source_posts: [first, second] } }],
    { message: "Demo newsletter issue" },
  );
  // One proposal left for review, so the Inbox shows what an agent's change looks like.
  const draft = post({ title: "Draft from an agent: importing a spreadsheet", body: "Drop a CSV on a base; review the rows it proposes.", slug: "importing-a-spreadsheet", status: "draft", tags: ["agents"], priority: 2 });
  await proposeRecords(ctx, who, "blog", [{ fields: draft }], { message: "An agent's draft, waiting for your review", autoMerge: false });
  await proposeDoc(
    ctx,
    who,
    {
      slug: "welcome",
      name: "Welcome",
      body: "# Welcome to the demo workspace\n\n- **CMS / Blog Posts**: posts on AI at work, from draft to published.\n- **Marketing**: social posts and newsletter issues, linked to the posts they come from.\n- **Inbox**: an AI agent's draft waits for your review.\n- **ai-research-editor**: the skill an agent reads before it proposes.\n\nEvery change here, yours or an agent's, is a change request: proposed, reviewed, merged.\n",
    },
    {},
  );
  await proposeFileTree(
    ctx,
    who,
    { type: "skill", slug: "ai-research-editor", name: "AI research editor", description: "Checks an agent's AI research drafts for sources before they are published", files: [{ path: "SKILL.md", content: SKILL_MD }] },
    {},
  );
}

/**
 * Fills a space with the demo when it holds nothing yet (only its root folder), proposing as its
 * owner; answers whether it did.
 */
export async function fillDemo(ctx: AppContext, spaceId: string, ownerId: string): Promise<boolean> {
  if (listNodes(ctx, spaceId, SEES_ALL, { depth: 1 }).length > 0) return false;
  const owner = findUserById(ctx, ownerId);
  const membership = owner ? findMembership(ctx, owner.id, spaceId) : undefined;
  if (!owner || !membership) return false;
  const actor: Actor = { user: owner, credential: { type: "operator" }, ceiling: "manage" };
  await seed(ctx, { scope: scopeOf(ctx, actor, membership), actor, attribution: sourceAttribution(actor, undefined) });
  return true;
}
