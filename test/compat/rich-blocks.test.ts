/**
 * /search.json carries issue 25's web blocks in the reference API's shape (the real API, Redis,
 * BullMQ workers and the replay upstream serving web/donald-trump-desktop-2026): the knowledge
 * panel with its kgmid, pictures, related entities and each attribute row as a key of its own,
 * and the "What people are saying" posts as `perspectives`.
 */
import request from "supertest";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("rich-blocks: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

const LIVE = 30_000;

d("/search.json: knowledge graph fields and perspectives", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "8000" }, workerQueues: ["live", "fast"] });
  }, LIVE);
  afterAll(() => stack.close());

  test("donald trump: kgmid, header_images, people_also_search_for, attribute keys at the top level, perspectives", async () => {
    const acct = await stack.account(10);
    const res = await request(stack.api.app).get("/search.json").query({ q: "donald trump", api_key: acct.key, no_cache: "true" });
    expect(res.status).toBe(200);
    const kg = res.body.knowledge_graph;
    expect(kg).toMatchObject({ title: "Donald Trump", kgmid: "/m/0cqt90", party: "Republican Party" });
    expect(kg.born).toMatch(/^June 14, 1946/);
    // The structure kept beside the reference's top-level keys.
    expect(kg.attributes).toMatchObject({ party: "Republican Party", born: kg.born });
    expect(kg.header_images).toHaveLength(3);
    expect(kg.people_also_search_for.map((p: { name: string }) => p.name)).toContain("Melania Trump");
    expect(res.body.perspectives).toHaveLength(12);
    expect(res.body.perspectives[0]).toMatchObject({ author: "Jimmy Kimmel Live", source: "YouTube", link: "https://www.youtube.com/watch?v=oC8qsi9Uu7c" });
  }, LIVE);
});
