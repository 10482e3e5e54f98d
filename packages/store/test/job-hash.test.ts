/**
 * A job record's hash round trip, now derived from the job's schema (src/job-hash.ts), reads and
 * writes what the store always has. Each hash below was written by the store before that change
 * (JobStore's create, start, finalize and createCached on a real Redis, read with HGETALL), beside
 * the record fromHash read from it then; the job's field order is the JSON the API answers, so it
 * is compared too.
 */
import { jobSchema, pendingJob, type Job } from "@serp/shared";
import { fromHash } from "../src/jobs.js";
import { jobFromHash, jobToHash } from "../src/job-hash.js";

const WRITTEN_BEFORE: { what: string; hash: Record<string, string>; record: object }[] = [
  {
    what: "pending (POST /v1/jobs, fast queue)",
    hash: {
      status: "pending",
      credits: "0",
      attempts: "0",
      id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A1",
      endpoint: "web-search",
      queue: "fast",
      params: '{"query":"coffee","country":"us","language":"en","page":1}',
      createdAt: "2026-11-20T10:00:00.000Z",
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
    },
    record: {
      job: {
        id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A1",
        endpoint: "web-search",
        queue: "fast",
        status: "pending",
        params: { query: "coffee", country: "us", language: "en", page: 1 },
        credits: 0,
        latencyMs: null,
        error: null,
        attempts: 0,
        createdAt: "2026-11-20T10:00:00.000Z",
        completedAt: null,
      },
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      result: null,
      upstreamUrl: null,
    },
  },
  {
    what: "processing (a worker took attempt 1)",
    hash: {
      status: "processing",
      credits: "0",
      attempts: "1",
      id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A1",
      endpoint: "web-search",
      queue: "fast",
      params: '{"query":"coffee","country":"us","language":"en","page":1}',
      createdAt: "2026-11-20T10:00:00.000Z",
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
    },
    record: {
      job: {
        id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A1",
        endpoint: "web-search",
        queue: "fast",
        status: "processing",
        params: { query: "coffee", country: "us", language: "en", page: 1 },
        credits: 0,
        latencyMs: null,
        error: null,
        attempts: 1,
        createdAt: "2026-11-20T10:00:00.000Z",
        completedAt: null,
      },
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      result: null,
      upstreamUrl: null,
    },
  },
  {
    what: "completed, its result inline, with coverage and exit",
    hash: {
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      queue: "fast",
      latencyMs: "1234",
      status: "completed",
      exit: '{"pool":"residential","tier":1,"country":"us"}',
      coverage: '{"ratio":0.9,"links":10,"accounted":9,"layout":"full"}',
      params: '{"query":"coffee","country":"us","language":"en","page":1}',
      error: "",
      createdAt: "2026-11-20T10:00:00.000Z",
      attempts: "1",
      id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A1",
      result: '{"search_parameters":{"engine":"web","query":"coffee","country":"us","language":"en","page":1},"layout":"full","organic_results":[{"position":1,"title":"Coffee","link":"https://example.com/"}]}',
      upstreamUrl: "https://www.google.com/search?q=coffee",
      completedAt: "2026-11-20T10:00:02.000Z",
      endpoint: "web-search",
      credits: "1",
    },
    record: {
      job: {
        id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A1",
        endpoint: "web-search",
        queue: "fast",
        status: "completed",
        params: { query: "coffee", country: "us", language: "en", page: 1 },
        credits: 1,
        latencyMs: 1234,
        error: null,
        attempts: 1,
        createdAt: "2026-11-20T10:00:00.000Z",
        completedAt: "2026-11-20T10:00:02.000Z",
      },
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      result: {
        search_parameters: { engine: "web", query: "coffee", country: "us", language: "en", page: 1 },
        layout: "full",
        organic_results: [{ position: 1, title: "Coffee", link: "https://example.com/" }],
      },
      upstreamUrl: "https://www.google.com/search?q=coffee",
      coverage: { ratio: 0.9, links: 10, accounted: 9, layout: "full" },
      exit: { pool: "residential", tier: 1, country: "us" },
    },
  },
  {
    what: "pending with a postback URL, a cache opt-in and a reply channel (live)",
    hash: {
      replyTo: "p:events:final:api-1",
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      queue: "live",
      postbackUrl: "https://hooks.example.com/serp",
      status: "pending",
      params: '{"query":"coffee","country":"us","language":"en","page":1,"device":"mobile","location":"Austin,Texas,United States"}',
      attempts: "0",
      createdAt: "2026-11-20T10:00:00.000Z",
      id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A2",
      endpoint: "web-search",
      credits: "0",
      cacheMaxAge: "3600",
    },
    record: {
      job: {
        id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A2",
        endpoint: "web-search",
        queue: "live",
        status: "pending",
        params: { query: "coffee", country: "us", language: "en", page: 1, device: "mobile", location: "Austin,Texas,United States" },
        credits: 0,
        latencyMs: null,
        error: null,
        attempts: 0,
        createdAt: "2026-11-20T10:00:00.000Z",
        completedAt: null,
        postbackUrl: "https://hooks.example.com/serp",
        cacheMaxAgeSeconds: 3600,
        cacheHit: false,
      },
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      result: null,
      upstreamUrl: null,
    },
  },
  {
    what: "completed from the result cache by the worker",
    hash: {
      completedAt: "2026-11-20T10:00:01.000Z",
      endpoint: "web-search",
      credits: "0",
      cacheMaxAge: "3600",
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      error: "",
      id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A2",
      cacheHit: "1",
      postbackUrl: "https://hooks.example.com/serp",
      queue: "live",
      replyTo: "p:events:final:api-1",
      status: "completed",
      latencyMs: "3",
      params: '{"query":"coffee","country":"us","language":"en","page":1,"device":"mobile","location":"Austin,Texas,United States"}',
      cachedFrom: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A0",
      createdAt: "2026-11-20T10:00:00.000Z",
      attempts: "2",
      result: '{"search_parameters":{"engine":"web","query":"coffee","country":"us","language":"en","page":1,"device":"mobile"}}',
      upstreamUrl: "https://www.google.com/search?q=coffee",
    },
    record: {
      job: {
        id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A2",
        endpoint: "web-search",
        queue: "live",
        status: "completed",
        params: { query: "coffee", country: "us", language: "en", page: 1, device: "mobile", location: "Austin,Texas,United States" },
        credits: 0,
        latencyMs: 3,
        error: null,
        attempts: 2,
        createdAt: "2026-11-20T10:00:00.000Z",
        completedAt: "2026-11-20T10:00:01.000Z",
        postbackUrl: "https://hooks.example.com/serp",
        cacheMaxAgeSeconds: 3600,
        cacheHit: true,
      },
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      result: { search_parameters: { engine: "web", query: "coffee", country: "us", language: "en", page: 1, device: "mobile" } },
      upstreamUrl: "https://www.google.com/search?q=coffee",
      cachedFrom: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A0",
    },
  },
  {
    what: "failed (web-news, regular queue)",
    hash: {
      status: "failed",
      credits: "0",
      attempts: "3",
      id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A3",
      endpoint: "web-news",
      queue: "regular",
      params: '{"query":"news","country":"gb","language":"en","page":2}',
      createdAt: "2026-11-20T10:00:00.000Z",
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      completedAt: "2026-11-20T10:01:00.000Z",
      latencyMs: "",
      error: "upstream timed out",
      result: "",
      upstreamUrl: "",
    },
    record: {
      job: {
        id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A3",
        endpoint: "web-news",
        queue: "regular",
        status: "failed",
        params: { query: "news", country: "gb", language: "en", page: 2 },
        credits: 0,
        latencyMs: null,
        error: "upstream timed out",
        attempts: 3,
        createdAt: "2026-11-20T10:00:00.000Z",
        completedAt: "2026-11-20T10:01:00.000Z",
      },
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      result: null,
      upstreamUrl: null,
    },
  },
  {
    what: "answered from the result cache at submission",
    hash: {
      latencyMs: "2",
      status: "completed",
      params: '{"query":"coffee","country":"us","language":"en","page":1}',
      error: "",
      cachedFrom: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A0",
      attempts: "0",
      createdAt: "2026-11-20T10:00:00.000Z",
      id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A4",
      result: '{"search_parameters":{"engine":"web","query":"coffee","country":"us","language":"en","page":1}}',
      upstreamUrl: "",
      cacheHit: "1",
      completedAt: "2026-11-20T10:00:00.500Z",
      credits: "0",
      endpoint: "web-search",
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      queue: "live",
      cacheMaxAge: "600",
    },
    record: {
      job: {
        id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A4",
        endpoint: "web-search",
        queue: "live",
        status: "completed",
        params: { query: "coffee", country: "us", language: "en", page: 1 },
        credits: 0,
        latencyMs: 2,
        error: null,
        attempts: 0,
        createdAt: "2026-11-20T10:00:00.000Z",
        completedAt: "2026-11-20T10:00:00.500Z",
        cacheMaxAgeSeconds: 600,
        cacheHit: true,
      },
      accountId: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9",
      result: { search_parameters: { engine: "web", query: "coffee", country: "us", language: "en", page: 1 } },
      upstreamUrl: null,
      cachedFrom: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A0",
    },
  },
];

/** A flat field list (name, value, …) as a hash. */
const hashOf = (fields: string[]): Record<string, string> => {
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) h[fields[i]!] = fields[i + 1]!;
  return h;
};

describe("a hash the store wrote before", () => {
  test.each(WRITTEN_BEFORE)("reads back as it did: $what", ({ hash, record }) => {
    const read = fromHash(hash);
    expect(read).toEqual(record);
    expect(JSON.stringify(read)).toBe(JSON.stringify(record));
  });
});

describe("jobToHash", () => {
  test("writes a new job's fields as the store wrote them before (the pending hashes above, less the record's own fields)", () => {
    const [pending, , , withOptIn] = WRITTEN_BEFORE;
    for (const { hash, record } of [pending!, withOptIn!]) {
      const { job } = record as { job: Job };
      const { accountId: _account, replyTo: _reply, ...jobFields } = hash;
      expect(hashOf(jobToHash(pendingJob(job)))).toEqual(jobFields);
    }
  });

  test("every field of the job's schema goes to the hash and back", () => {
    const job: Job = {
      id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8A5",
      endpoint: "web-images",
      queue: "regular",
      status: "completed",
      params: { query: "tea", country: "de", language: "de", page: 3, device: "mobile" },
      credits: 2,
      latencyMs: 0,
      error: "partial page",
      attempts: 4,
      createdAt: "2026-11-21T08:00:00.000Z",
      completedAt: "2026-11-21T08:00:09.000Z",
      postbackUrl: "https://hooks.example.com/x",
      cacheMaxAgeSeconds: 0,
      cacheHit: true,
    };
    expect(Object.keys(job)).toEqual(Object.keys(jobSchema.shape));
    const read = jobFromHash(hashOf(jobToHash(job)));
    expect(read).toEqual(job);
    expect(JSON.stringify(read)).toBe(JSON.stringify(job));
  });
});
