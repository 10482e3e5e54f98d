/**
 * The docs page's "Try it out" for POST /v1/jobs sends the request body's documented example: one
 * example per endpoint, each with its endpoint and realistic params, and each must work as it is.
 * Every one is taken from /openapi.json and POSTed to a test stack (with the location list when it
 * is at hand, so a location must be one it holds): 200 (live) or 202 (queued), and the job completes.
 * Every field of the request, and of the job it answers with, carries a description.
 */
import request from "supertest";
import { ENDPOINTS, jobRequestSchema } from "@serp/shared";
import type { OpenApiDocument } from "../../apps/api/src/openapi/document.js";
import { fixturesAvailable, pollUntilFinal, startStack, type Stack } from "../support/stack.js";

type Schema = { $ref?: string; properties?: Record<string, Schema>; description?: string; oneOf?: Schema[] };

const d = fixturesAvailable ? describe : describe.skip;

d("the docs' request examples of POST /v1/jobs", () => {
  let stack: Stack;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    stack = await startStack({ withGeotargets: true, env: { LIVE_DEADLINE_MS: "15000" } });
    doc = (await request(stack.api.app).get("/openapi.json")).body as OpenApiDocument;
  }, 30_000);
  afterAll(() => stack.close());

  const examples = () => {
    const body = (doc.paths!["/v1/jobs"] as { post: { requestBody: { content: Record<string, { examples?: Record<string, { summary?: string; value: unknown }> }> } } }).post.requestBody;
    return body.content["application/json"]!.examples ?? {};
  };

  test("there is one per endpoint, each naming its endpoint and valid as the schema says", () => {
    const all = Object.entries(examples());
    expect(all.map(([name]) => name).sort()).toEqual([...ENDPOINTS].sort());
    for (const [name, example] of all) {
      expect(example.summary).toEqual(expect.any(String));
      expect(example.value).toMatchObject({ endpoint: name, params: expect.any(Object) });
      const parsed = jobRequestSchema.safeParse(example.value);
      expect([name, parsed.success ? "valid" : parsed.error.message]).toEqual([name, "valid"]);
    }
  });

  test("each, sent as it is, is accepted (200 or 202) and its job completes", async () => {
    const { auth } = await stack.account(50);
    for (const [name, example] of Object.entries(examples())) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(example.value as object);
      expect([name, res.status]).toEqual([name, (example.value as { queue?: string }).queue === "live" ? 200 : 202]);
      const final = res.status === 200 ? res : await pollUntilFinal(() => request(stack.api.app).get(`/v1/jobs/${res.body.job.id}`).set("Authorization", auth));
      expect([name, final.body.job.status, final.body.job.error]).toEqual([name, "completed", null]);
    }
  }, 60_000);

  test("every field of the job request and of the job it answers with has a description", () => {
    const schemas = doc.components!.schemas! as Record<string, Schema>;
    const resolve = (s: Schema): Schema => (s.$ref ? schemas[s.$ref.split("/").at(-1)!]! : s);
    const undescribed: string[] = [];
    const names = (schemas.JobRequest!.oneOf ?? []).map((v) => v.$ref!.split("/").at(-1)!);
    expect(names).toHaveLength(ENDPOINTS.length);
    for (const name of [...names, "Job", "JobParams"]) {
      for (const [field, prop] of Object.entries(schemas[name]!.properties ?? {})) {
        if (!resolve(prop).description && !prop.description) undescribed.push(`${name}.${field}`);
        // A nested object (the params) has its own fields described too.
        for (const [inner, innerProp] of Object.entries(resolve(prop).properties ?? {})) {
          if (!innerProp.description) undescribed.push(`${name}.${field}.${inner}`);
        }
      }
    }
    expect(undescribed).toEqual([]);
  });
});
