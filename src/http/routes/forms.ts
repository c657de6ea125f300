import { Elysia, t } from "elysia";
import { submitAsVisitor, submitForm } from "../../changes/forms";
import { createForm, findForm, FormBindingSchema, FormPageAnswerSchema, FormPageSchema, FormSchema, getForm, listForms, PublicFormSchema, publicForm, updateForm } from "../../content/forms";
import type { AppContext } from "../../context";
import { limitParam } from "../../shared/query-params";
import { Name } from "../../shared/schemas";
import { access, grantedSpace } from "../access";
import { answers } from "../openapi";
import { clientAddress, type ServerLike } from "../plumbing";
import { proposer } from "./content";

const Share = t.Object({
  isPublic: t.Optional(t.Boolean()),
  anonymousSubmit: t.Optional(t.Boolean({ description: "Whether a submission needs no key (the form must be public, and ask for no captcha)." })),
  submitLimit: t.Optional(t.Integer({ minimum: 1, description: "The most submissions it takes; 429 after." })),
  requireCaptcha: t.Optional(t.Boolean({ description: "This server checks no captcha: a form that asks for one takes submissions only with a key." })),
});
const FormFields = {
  description: t.Optional(t.String({ maxLength: 10_000 })),
  bindings: t.Optional(t.Array(FormBindingSchema, { maxItems: 200 })),
  page: t.Optional(FormPageSchema),
  share: t.Optional(Share),
  mergeSubmissions: t.Optional(t.Boolean({ description: "true: a submission merges at once (the form's creator must be able to write); default false: it waits for review." })),
};

/** A request that presents a credential is a member's; one with none, a visitor's. */
const presentsCredential = (request: Request) => request.headers.has("authorization") || request.headers.has("x-api-key") || (request.headers.get("cookie") ?? "").includes("basalt_session=");

/** Forms on a base, and their submissions (contract §2.7). */
export function formRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/api/v1" })
    .use(access(ctx))
    .use(answers)
    .get("/forms", ({ space, query }) => listForms(ctx, space.space.id, space.sight, { targetBaseId: query.targetBaseId, limit: limitParam(query.limit, 50, 100), cursor: query.cursor }), {
      answers: { 200: FormPageAnswerSchema },
      level: "read",
      query: t.Object({ targetBaseId: t.Optional(t.String({ minLength: 1 })), limit: t.Optional(t.String({ description: "1..100, default 50." })), cursor: t.Optional(t.String()) }),
    })
    .get("/forms/:nodeId", ({ space, params }) => getForm(ctx, space.space.id, space.sight, params.nodeId), { answers: { 200: FormSchema }, level: "read" })
    .post(
      "/forms",
      ({ space, actor, body, set }) => {
        set.status = 201;
        return createForm(ctx, space.space.id, actor.user.id, body);
      },
      { answers: { 201: FormSchema, 409: ["FORM_EXISTS"] }, level: "manage", body: t.Object({ nodeId: t.String({ minLength: 1 }), targetBaseId: t.String({ minLength: 1 }), name: Name, ...FormFields }) },
    )
    .put("/forms/:nodeId", ({ space, params, body }) => updateForm(ctx, space.space.id, space.sight, params.nodeId, body), {
      answers: { 200: FormSchema },
      level: "manage",
      body: t.Object({ name: t.Optional(Name), ...FormFields }),
    })
    .get("/forms/:nodeId/public", ({ params, set }) => {
      set.headers["cache-control"] = "no-store";
      return publicForm(ctx, params.nodeId);
    }, {
      answers: { 200: PublicFormSchema },
      public: true,
      detail: { description: "A public form that takes anonymous submissions, as its visitors fill it in (its inputs, labels and choices); any other form is not found. No key." },
    })
    .post(
      "/forms/:nodeId/submit",
      ({ params, body, request, server }) => {
        if (presentsCredential(request)) {
          const { actor, space } = grantedSpace(ctx, request, "changeRequest");
          return submitForm(ctx, findForm(ctx, space.space.id, space.sight, params.nodeId), proposer(space, actor, request), body.values);
        }
        return submitAsVisitor(ctx, params.nodeId, clientAddress(server as ServerLike, request), body.values);
      },
      {
        answers: { 200: t.Object({ changeRequestId: t.String(), status: t.Union([t.Literal("pending_review"), t.Literal("merged")], { description: "merged only for a form that merges its submissions." }) }), 403: ["FORM_NOT_PUBLIC", "CAPTCHA_REQUIRED"], 429: [] },
        public: true,
        body: t.Object({ values: t.Record(t.String(), t.Unknown(), { description: "Each input's value, by its inputName." }), captchaToken: t.Optional(t.String({ maxLength: 4096 })) }),
        detail: { description: "With a key (changeRequest level), in the space it names; without one, to a public form that takes anonymous submissions, named by its node's id (30 tries a minute per address, refused ones included; 120 submissions taken a minute per form)." },
      },
    );
}
