/**
 * Every validation rule of SPEC §2.1–2.2 for every endpoint, through the real API and Redis.
 * No worker runs here: valid bodies are checked on the async queue (202) with their defaults.
 */
import request from "supertest";
import { ENDPOINTS, type Endpoint } from "@serp/shared";
import { startStack, type Stack } from "../support/stack.js";

let stack: Stack;
let auth: string;
beforeAll(async () => {
  stack = await startStack({ workerQueues: [] });
  auth = (await stack.account(100_000)).auth;
});
afterAll(() => stack.close());

const post = (body: unknown) => request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(body as object);

/** Which optional params each endpoint takes, and its page bound (SPEC §2.2). */
const ACCEPTS: Record<Endpoint, { required: "query" | "product_id"; optional: string[]; pageMax?: number }> = {
  "web-shopping-search": { required: "query", optional: ["country", "language", "page", "location", "uule"], pageMax: 100 },
  "web-shopping-product": { required: "product_id", optional: ["country", "language"] },
  "web-shopping-product-info": { required: "product_id", optional: ["country", "language"] },
  "web-search": { required: "query", optional: ["country", "language", "device", "page", "location", "uule"], pageMax: 10 },
  "web-images": { required: "query", optional: ["country", "language", "page", "location", "uule"], pageMax: 100 },
  "web-news": { required: "query", optional: ["country", "language", "page", "location", "uule"], pageMax: 10 },
  "web-local": { required: "query", optional: ["country", "language", "page", "location", "uule"], pageMax: 10 },
  "web-autocomplete": { required: "query", optional: ["country", "language"] },
};

const VALID: Record<string, unknown> = {
  query: "coffee", product_id: "13239497633151178800", country: "de", language: "de", page: 2, device: "mobile",
  location: "Austin,Texas,United States", uule: "w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM",
};

/** [param, bad value, why] — each must be a 400 naming `params.<param>`. */
const BAD: [string, unknown, string][] = [
  ["query", "", "empty"], ["query", "   ", "blank"], ["query", "x".repeat(501), "501 characters"], ["query", 42, "not a string"],
  ["query", "\u0000", "only a NUL"], ["query", "\u0000\u0001\u001b\u007f", "only control characters"],
  ["query", " \t\u0000\n ", "whitespace and a NUL"], ["query", "coffee\u0000shop", "a NUL inside"], ["query", "coffee\u009b", "a C1 control"],
  ["product_id", "", "empty"], ["product_id", "x".repeat(101), "101 characters"], ["product_id", 7, "not a string"],
  ["product_id", "\u0000", "only a NUL"], ["location", "Austin\u0000", "a NUL inside"],
  ["country", "xx", "not in the list"], ["country", "US", "upper case"], ["country", 1, "not a string"],
  ["language", "eng", "three letters"], ["language", "e1", "a digit"], ["language", "", "empty"],
  ["device", "tablet", "not desktop or mobile"],
  ["location", "A", "1 character"], ["location", "x".repeat(201), "201 characters"],
  ["uule", "x+abcd", "wrong lead letter"], ["uule", "w+ab", "too short"], ["uule", "w+abc$def", "bad character"],
  ["page", 0, "below 1"], ["page", 1.5, "not an integer"], ["page", "2", "a string"],
];

describe.each(ENDPOINTS)("POST /v1/jobs %s", (endpoint) => {
  const spec = ACCEPTS[endpoint];
  const base = () => ({ [spec.required]: VALID[spec.required] });

  test("accepts the minimal body and fills every default", async () => {
    const res = await post({ endpoint, params: base() });
    expect(res.status).toBe(202);
    expect(res.body.job).toMatchObject({ endpoint, queue: "fast", status: "pending", credits: 0, error: null, completedAt: null });
    const params = res.body.job.params;
    expect(params).toMatchObject({ country: "us", language: "en" });
    if (spec.optional.includes("page")) expect(params.page).toBe(1);
    else expect(params.page).toBeUndefined();
    if (spec.optional.includes("device")) expect(params.device).toBe("desktop");
    else expect(params.device).toBeUndefined();
  });

  test("accepts every optional param it takes", async () => {
    const params = base();
    for (const p of spec.optional) if (p !== "uule") params[p] = VALID[p];
    const res = await post({ endpoint, params, queue: "regular" });
    expect(res.status).toBe(202);
    expect(res.body.job.queue).toBe("regular");
    expect(res.body.job.params).toMatchObject({ ...params, country: "de", language: "de" });
  });

  test(`rejects a missing ${spec.required} with 400`, async () => {
    const res = await post({ endpoint, params: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.details).toContainEqual({ field: `params.${spec.required}`, message: "is required" });
  });

  const applicable = BAD.filter(([p]) => p === spec.required || spec.optional.includes(p));
  test.each(applicable)("rejects params.%s = %j (%s) with 400 naming the field", async (param, value) => {
    const res = await post({ endpoint, params: { ...base(), [param]: value } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(`params.${param}`);
  });

  const notTaken = ["query", "product_id", "country", "language", "page", "device", "location", "uule", "num", "safe"].filter(
    (p) => p !== spec.required && !spec.optional.includes(p),
  );
  test.each(notTaken)("rejects params.%s, which this endpoint does not take", async (param) => {
    const res = await post({ endpoint, params: { ...base(), [param]: VALID[param] ?? "x" } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toContainEqual({ field: `params.${param}`, message: "is not a known field" });
  });

  if (spec.pageMax) {
    const max = spec.pageMax;
    test(`accepts page ${max} and rejects page ${max + 1}`, async () => {
      expect((await post({ endpoint, params: { ...base(), page: max } })).status).toBe(202);
      const res = await post({ endpoint, params: { ...base(), page: max + 1 } });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toContainEqual({ field: "params.page", message: `must be at most ${max}` });
    });
  }

  if (spec.optional.includes("location")) {
    test("takes the country of location when country is omitted", async () => {
      const res = await post({ endpoint, params: { ...base(), location: "Toronto,Ontario,Canada" } });
      expect(res.status).toBe(202);
      expect(res.body.job.params.country).toBe("ca");
    });
    test("keeps an explicit country over the location's", async () => {
      const res = await post({ endpoint, params: { ...base(), location: "Toronto,Ontario,Canada", country: "fr" } });
      expect(res.body.job.params.country).toBe("fr");
    });
    test("rejects location and uule together", async () => {
      const res = await post({ endpoint, params: { ...base(), location: VALID.location, uule: VALID.uule } });
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain("params.uule");
    });
    test("accepts a raw uule", async () => {
      expect((await post({ endpoint, params: { ...base(), uule: VALID.uule } })).status).toBe(202);
    });
  }

  test("stores uk as gb", async () => {
    const res = await post({ endpoint, params: { ...base(), country: "uk" } });
    expect(res.status).toBe(202);
    expect(res.body.job.params.country).toBe("gb");
  });

  if (spec.required === "query") {
    test("names control characters in the query, and keeps tabs and newlines inside it", async () => {
      const res = await post({ endpoint, params: { query: "\u0000" } });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toContainEqual({ field: "params.query", message: "must not contain control characters" });
      const ok = await post({ endpoint, params: { query: "\tcoffee\nshop " } });
      expect(ok.status).toBe(202);
      expect(ok.body.job.params.query).toBe("coffee\nshop");
    });
  }

  test("accepts query/product_id of the maximum length", async () => {
    const long = spec.required === "query" ? "q".repeat(500) : "p".repeat(100);
    expect((await post({ endpoint, params: { [spec.required]: long } })).status).toBe(202);
  });
});

describe("POST /v1/jobs body", () => {
  const ok = { endpoint: "web-search", params: { query: "coffee" } };

  test.each([
    [{ ...ok, endpoint: "web-video" }, "endpoint"],
    [{ params: { query: "x" } }, "endpoint"],
    [{ endpoint: "web-search" }, "params"],
    [{ endpoint: "web-search", params: "coffee" }, "params"],
    [{ ...ok, queue: "slow" }, "queue"],
    [{ ...ok, postbackUrl: "ftp://example.com/hook" }, "postbackUrl"],
    [{ ...ok, postbackUrl: "not a url" }, "postbackUrl"],
    [{ ...ok, queue: "live", postbackUrl: "https://example.com/hook" }, "postbackUrl"],
    [{ ...ok, postbackUrl: "http://127.0.0.1:8080/hook" }, "postbackUrl"],
    [{ ...ok, postbackUrl: "http://169.254.169.254/latest/meta-data" }, "postbackUrl"],
    [{ ...ok, postbackUrl: "http://localhost/hook" }, "postbackUrl"],
    [{ ...ok, postbackUrl: "http://[::1]/hook" }, "postbackUrl"],
    [{ ...ok, extra: true }, "extra"],
  ])("rejects %j naming %s", async (body, field) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    expect(typeof res.body.error.message).toBe("string");
  });

  test("names every invalid field at once", async () => {
    const res = await post({ endpoint: "web-search", params: { query: "", page: 11, country: "zz", foo: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(
      ["params.country", "params.foo", "params.page", "params.query"],
    );
  });

  test("rejects a JSON array, a string and null", async () => {
    for (const body of ["[]", '"web-search"', "null"]) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).set("Content-Type", "application/json").send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
  });

  test("answers malformed JSON with 400 invalid_json", async () => {
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).set("Content-Type", "application/json").send('{"endpoint": ');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_json");
  });

  test("answers a wrong content type with 415", async () => {
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).set("Content-Type", "text/plain").send(JSON.stringify(ok));
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe("unsupported_media_type");
  });

  test("answers an oversized body with 413", async () => {
    const res = await post({ ...ok, params: { query: "x".repeat(70_000) } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
  });

  test("accepts a body of 64 KB minus a little (limit is not lower than documented)", async () => {
    const res = await post({ ...ok, params: { query: "x".repeat(400) }, pad: undefined });
    expect(res.status).toBe(202);
  });
});
