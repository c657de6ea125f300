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
 * meet bases with records, a proposal waiting in the Inbox, a doc and a skill at once. Made through
 * the same proposals as any client's, as the space's owner, into a space with nothing in it yet.
 */

const STATUS = { choices: [{ id: "idea", name: "Idea" }, { id: "drafting", name: "Drafting" }, { id: "published", name: "Published" }] };
const CHANNELS = { choices: [{ id: "linkedin", name: "LinkedIn" }, { id: "x", name: "X" }, { id: "mastodon", name: "Mastodon" }] };

const BLOG_POSTS = [
  { title: "Why review-first beats edit-in-place", body: "Every change an agent makes arrives as a proposal.\n\nA person reads it, approves it, and only then does it land.", status: "Published", tags: ["Agents", "Process"], priority: 1, publish_date: "2026-10-02", ready: true },
  { title: "A week of running the workspace on a laptop", body: "One file, one data directory, no other server.", status: "Published", tags: ["Local-first"], priority: 2, publish_date: "2026-10-16", ready: true },
  { title: "How we draft the newsletter with an agent", body: "The agent collects the week's posts; an editor picks and reorders them.", status: "Drafting", tags: ["Agents"], priority: 1, ready: false },
  { title: "Ideas for the spring series", body: "- Offline first\n- Reviews on the phone\n- Importing a spreadsheet", status: "Idea", tags: ["Planning"], priority: 3, ready: false },
];

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
        description: "Long-form posts, from idea to published.",
        fields: [
          { slug: "title", name: "Title", type: "text", required: true },
          { slug: "body", name: "Body", type: "markdown" },
          { slug: "status", name: "Status", type: "select", options: STATUS },
          { slug: "tags", name: "Tags", type: "multiselect", options: { choices: ["Agents", "Process", "Local-first", "Planning"].map((name) => ({ id: name.toLowerCase(), name })) } },
          { slug: "priority", name: "Priority", type: "number" },
          { slug: "publish_date", name: "Publish date", type: "date" },
          { slug: "ready", name: "Ready", type: "checkbox" },
          { slug: "source_url", name: "Source URL", type: "url" },
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
          { slug: "body", name: "Body", type: "longtext" },
          { slug: "channel", name: "Channel", type: "select", options: CHANNELS },
          { slug: "related_blog", name: "Blog post", type: "relation", options: { targetBaseSlug: "blog" } },
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
          { slug: "body", name: "Body", type: "markdown" },
          { slug: "audience", name: "Audience", type: "select", options: { choices: [{ id: "everyone", name: "Everyone" }, { id: "customers", name: "Customers" }] } },
          { slug: "source_posts", name: "Posts", type: "relation", options: { targetBaseSlug: "blog" } },
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
      { fields: { title: "Review-first, in one picture", body: "Agents propose, people decide. Here is why.", channel: "LinkedIn", related_blog: [first] } },
      { fields: { title: "Our laptop week", body: "Seven days, one binary, zero servers.", channel: "Mastodon", related_blog: [second] } },
    ],
    { message: "Demo social posts" },
  );
  await proposeRecords(ctx, who, "newsletter", [{ fields: { title: "Issue 1: review-first", body: "This month: how proposals keep agents honest.", audience: "Everyone", source_posts: [first, second] } }], { message: "Demo newsletter issue" });
  // One proposal left for review, so the Inbox shows what an agent's change looks like.
  const draft = { title: "Draft from an agent: importing a spreadsheet", body: "Drop a CSV on a base; review the rows it proposes.", status: "Drafting", tags: ["Agents"] };
  await proposeRecords(ctx, who, "blog", [{ fields: draft }], { message: "An agent's draft, waiting for your review", autoMerge: false });
  await proposeDoc(
    ctx,
    who,
    {
      slug: "welcome",
      name: "Welcome",
      body: "# Welcome to the demo workspace\n\n- **CMS / Blog Posts**: posts from idea to published.\n- **Marketing**: social posts and newsletter issues, linked to the posts they come from.\n- **Inbox**: an agent's draft waits for your review.\n\nEvery change here, yours or an agent's, is a change request: proposed, reviewed, merged.\n",
    },
    {},
  );
  await proposeFileTree(
    ctx,
    who,
    {
      type: "skill",
      slug: "editorial-review",
      name: "Editorial review",
      description: "How an agent proposes a blog post for review",
      files: [
        {
          path: "SKILL.md",
          content:
            "---\nname: editorial-review\ndescription: Propose a blog post for an editor's review\n---\n\n# Editorial review\n\n1. Read the base: `GET /api/v1/bases/blog`.\n2. Propose the post: `POST /api/v1/bases/blog/change-requests` with `autoMerge: false`.\n3. When the editor sends it back, read the reason and revise the operation.\n",
        },
      ],
    },
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
