/**
 * Webhook targets are checked at connect time: with private targets not allowed, loopback,
 * private, link-local, metadata and unspecified addresses (literal, or what a host name resolves
 * to) are refused before any connection, recorded as one attempt with the reason, and not retried.
 * A tripwire fails the test if anything dials a non-loopback address; nothing leaves loopback.
 */
import net from "node:net";
import request from "supertest";
import { addressKind, refusedAddress } from "@serp/store";
import { postbackUrlProblem } from "../../apps/api/src/postback-url.js";
import { createTargetAgents, send } from "../../apps/worker/src/webhooks/index.js";
import { waitFor } from "../ops/support.js";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";
import { Receiver } from "./receiver.js";

/** Every outgoing TCP connection's target host, and any that was not loopback. */
const dialled: string[] = [];
const strayDials: string[] = [];
const originalConnect = net.Socket.prototype.connect;

beforeAll(() => {
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    const host = typeof first === "object" && first !== null ? (first as { host?: string }).host : typeof args[1] === "string" ? args[1] : undefined;
    if (host && net.isIP(host)) {
      dialled.push(host);
      if (!["127.0.0.1", "::1"].includes(host) && !host.startsWith("127.")) {
        strayDials.push(host);
        throw new Error(`tripwire: a test tried to connect to ${host}`);
      }
    }
    return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;
});
afterAll(() => {
  net.Socket.prototype.connect = originalConnect;
});
afterEach(() => expect(strayDials).toEqual([]));

describe("address policy", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.5.4", "private"],
    ["192.168.1.1", "private"],
    ["fd12:3456::1", "private"],
    ["100.64.0.1", "cgnat"],
    ["169.254.1.1", "link-local"],
    ["fe80::1", "link-local"],
    ["169.254.169.254", "metadata"],
    ["::ffff:169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["100.100.100.200", "metadata"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["198.18.0.1", "reserved"],
    ["64:ff9b::a00:1", "private"],
    ["2002:a00:1::", "private"],
    ["2001:db8::1", "reserved"],
    // IPv6 forms that embed an IPv4 address take its kind.
    ["64:ff9b::a9fe:a9fe", "metadata"],
    ["64:ff9b::169.254.169.254", "metadata"],
    ["64:ff9b:1::a9fe:a9fe", "metadata"],
    ["2002:a9fe:a9fe::", "metadata"],
    ["2002:a9fe:a9fe:1::42", "metadata"],
    ["::a9fe:a9fe", "metadata"],
    ["::169.254.169.254", "metadata"],
    ["::ffff:a9fe:a9fe", "metadata"],
    ["::ffff:0:a9fe:a9fe", "metadata"],
    ["::ffff:6464:64c8", "metadata"],
    // Teredo: server 65.54.227.120, client 169.254.169.254 stored inverted (XOR 0xffffffff).
    ["2001:0:4136:e378:8000:63bf:5601:5601", "metadata"],
    ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"],
    ["2001:0:a00:1:8000:63bf:f7f7:f7f7", "private"],
    ["64:ff9b::7f00:1", "loopback"],
    ["::7f00:1", "loopback"],
    ["2002:c0a8:101::", "private"],
    ["64:ff9b::0.0.0.0", "unspecified"],
    ["64:ff9b::808:808", "reserved"],
    ["2002:808:808::", "reserved"],
    ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", "reserved"],
    ["::ffff:0:808:808", "reserved"],
  ])("%s is %s", (address, kind) => {
    expect(addressKind(address)).toBe(kind);
    expect(refusedAddress(address, false)).toBe(kind);
  });

  test.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "::ffff:8.8.8.8", "2001:4860:4860::8888", "2606:4700::1111"])("%s is public", (address) => {
    expect(addressKind(address)).toBeNull();
  });

  test("allowing private targets still refuses metadata and unspecified addresses", () => {
    for (const a of ["127.0.0.1", "::1", "10.0.0.1", "fd12::1", "100.64.0.1", "169.254.1.1"]) expect(refusedAddress(a, true)).toBeNull();
    for (const a of ["169.254.169.254", "fd00:ec2::254", "::ffff:a9fe:a9fe", "0.0.0.0", "::"]) expect(refusedAddress(a, true)).not.toBeNull();
  });

  test.each([
    ["NAT64", "64:ff9b::a9fe:a9fe"],
    ["local-use NAT64", "64:ff9b:1::a9fe:a9fe"],
    ["6to4", "2002:a9fe:a9fe::"],
    ["IPv4-compatible", "::a9fe:a9fe"],
    ["IPv4-mapped", "::ffff:a9fe:a9fe"],
    ["IPv4-translated", "::ffff:0:a9fe:a9fe"],
    ["Teredo", "2001:0:4136:e378:8000:63bf:5601:5601"],
    ["NAT64 of Alibaba's", "64:ff9b::6464:64c8"],
  ])("a metadata address written as %s IPv6 (%s) is refused in every mode", (_form, address) => {
    expect(refusedAddress(address, true)).toBe("metadata");
    expect(refusedAddress(address, false)).toBe("metadata");
  });

  test("with private targets allowed, IPv6 forms embedding a private address are allowed; without, refused", () => {
    for (const a of ["64:ff9b::a00:1", "2002:c0a8:101::", "::ffff:10.0.0.1", "2001:0:4136:e378:8000:63bf:f5ff:fffe"]) {
      expect(refusedAddress(a, true)).toBeNull();
      expect(refusedAddress(a, false)).toBe("private");
    }
  });
});

describe("submit-time postbackUrl check", () => {
  test.each([
    ["ftp://example.com/hook", /http\(s\)/],
    ["not a url", /http\(s\)/],
    ["http://127.0.0.1:8080/hook", /loopback/],
    ["http://2130706433/hook", /loopback/],
    ["http://0x7f.1/hook", /loopback/],
    ["http://[::1]/hook", /loopback/],
    ["http://[::ffff:10.0.0.1]/hook", /private/],
    ["http://10.1.2.3/hook", /private/],
    ["http://169.254.169.254/latest/meta-data/", /metadata/],
    ["http://0.0.0.0:3000/", /unspecified/],
    ["http://localhost:3000/hook", /internal host/],
    ["http://api.localhost/hook", /internal host/],
    ["http://metadata.google.internal/computeMetadata/v1/", /internal host|metadata/],
  ])("refuses %s", (url, why) => {
    expect(postbackUrlProblem(url)).toMatch(why);
  });

  test.each(["https://example.com/hook", "http://hooks.example.org:8443/a?b=c", "https://93.184.216.34/hook", "https://[2606:4700::1111]/hook"])("accepts %s", (url) => {
    expect(postbackUrlProblem(url)).toBeUndefined();
  });

  test("with private targets allowed, only metadata and unspecified addresses are refused", () => {
    expect(postbackUrlProblem("http://127.0.0.1:8080/hook", { allowPrivateTargets: true })).toBeUndefined();
    expect(postbackUrlProblem("http://localhost:8080/hook", { allowPrivateTargets: true })).toBeUndefined();
    expect(postbackUrlProblem("http://10.0.0.1/hook", { allowPrivateTargets: true })).toBeUndefined();
    expect(postbackUrlProblem("http://169.254.169.254/", { allowPrivateTargets: true })).toMatch(/metadata/);
    expect(postbackUrlProblem("http://metadata.google.internal/", { allowPrivateTargets: true })).toMatch(/metadata/);
    for (const host of ["[64:ff9b::a9fe:a9fe]", "[2002:a9fe:a9fe::]", "[::a9fe:a9fe]", "[::ffff:169.254.169.254]", "[2001:0:4136:e378:8000:63bf:5601:5601]"]) {
      expect(postbackUrlProblem(`http://${host}/latest/meta-data/`, { allowPrivateTargets: true })).toMatch(/metadata/);
    }
  });
});

describe("the delivery agent", () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await Receiver.start();
  });
  afterAll(() => receiver.close());

  test("refuses loopback before connecting, literal or by name, and lets it through when private targets are allowed", async () => {
    const strict = createTargetAgents(false);
    for (const url of [receiver.url("/a"), receiver.url("/a", "localhost")]) {
      const r = await send(new URL(url), "{}", {}, strict, 2_000);
      expect(r).toMatchObject({ kind: "error", refused: true, error: expect.stringMatching(/^refused: .*loopback address$/) });
    }
    expect(receiver.connections).toBe(0);
    const r = await send(new URL(receiver.url("/a")), "{}", {}, createTargetAgents(true), 2_000);
    expect(r).toMatchObject({ kind: "response", statusCode: 204 });
    expect(receiver.at("/a")).toHaveLength(1);
    expect(dialled).toContain("127.0.0.1"); // the tripwire sees real connections
  });

  test("refuses metadata addresses even with private targets allowed, without dialling them", async () => {
    for (const host of ["169.254.169.254", "[fd00:ec2::254]", "[::ffff:169.254.169.254]", "[64:ff9b::a9fe:a9fe]", "[2002:a9fe:a9fe::]", "[::a9fe:a9fe]"]) {
      const r = await send(new URL(`http://${host}/latest/meta-data/`), "{}", {}, createTargetAgents(true), 2_000);
      expect(r).toMatchObject({ kind: "error", refused: true, error: expect.stringMatching(/metadata address/) });
    }
  });
});

const d = fixturesAvailable ? describe : describe.skip;

d("refused targets through the whole service", () => {
  let stack: Stack;
  let receiver: Receiver;
  beforeAll(async () => {
    stack = await startStack({
      // The API's cheap check (once wired) is loosened so that the workers' connect-time check is what is tested.
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" },
      workerQueues: ["fast"],
      webhooks: { allowPrivateTargets: false, retryDelaysMs: [100, 100, 100], timeoutMs: 1_000 },
    });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await stack.close();
  });

  test("loopback, private, link-local, metadata and unspecified targets, and a name resolving to loopback, are refused once with the reason, and nothing reaches the receiver", async () => {
    const { auth } = await stack.account(20);
    const targets: [string, RegExp][] = [
      [receiver.url("/x"), /127\.0\.0\.1 is a loopback address/],
      [`http://[::1]:${receiver.port}/x`, /::1 is a loopback address/],
      [`http://localhost:${receiver.port}/x`, /localhost resolves to .*, a loopback address/],
      [`http://[::ffff:127.0.0.1]:${receiver.port}/x`, /loopback address/],
      [`http://0.0.0.0:${receiver.port}/x`, /unspecified address/],
      ["http://10.0.0.1/x", /10\.0\.0\.1 is a private address/],
      ["http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a metadata address/],
      ["http://[fd00:ec2::254]/latest/meta-data/", /metadata address/],
      ["http://100.64.0.1/x", /cgnat address/],
    ];
    // Metadata and unspecified targets never get past submission, even with private targets
    // allowed (the API's own check); the agent's refusal of them is proven above.
    const refusedAtSubmit = /metadata|unspecified/;
    const submitted = await Promise.all(
      targets.map(async ([url, why]) => {
        const res = await request(stack.api.app)
          .post("/v1/jobs")
          .set("Authorization", auth)
          .send({ endpoint: "web-search", params: { query: "coffee" }, postbackUrl: url });
        if (refusedAtSubmit.test(why.source)) {
          expect(res.status).toBe(400);
          expect(res.body.error.details).toEqual([{ field: "postbackUrl", message: expect.any(String) }]);
          return undefined;
        }
        expect(res.status).toBe(202);
        return res.body.job.id as string;
      }),
    );
    const kept = targets.filter((_, i) => submitted[i] !== undefined);
    const jobs = submitted.filter((id): id is string => id !== undefined);
    expect(jobs).toHaveLength(6);
    // Each delivery is waited for until it is refused, however busy the machine (a bound, not a measure).
    for (const jobId of jobs) {
      let last: unknown;
      const refused = async () => {
        last = (await request(stack.api.app).get(`/v1/jobs/${jobId}/deliveries`).set("Authorization", auth)).body;
        return (last as { state?: string }).state === "refused";
      };
      await waitFor(`job ${jobId}'s delivery to be refused`, refused, 60_000, 50).catch((err: Error) => {
        throw new Error(`not refused: ${JSON.stringify(last)} (${err.message})`);
      });
    }
    // Past several retry delays: still one attempt each, no retry.
    await new Promise((r) => setTimeout(r, 600));
    for (const [i, jobId] of jobs.entries()) {
      const res = await request(stack.api.app).get(`/v1/jobs/${jobId}/deliveries`).set("Authorization", auth);
      expect(res.body).toMatchObject({ state: "refused", nextAttemptAt: null });
      expect(res.body.attempts).toEqual([{ at: expect.any(String), statusCode: null, error: expect.stringMatching(kept[i]![1]), durationMs: expect.any(Number) }]);
    }
    expect(receiver.connections).toBe(0);
    expect(receiver.received).toHaveLength(0);
  }, 120_000);
});
