/**
 * The test exits against the replay's exit model, all on loopback: static HTTP and SOCKS5 proxies leave from
 * their own 127.x address (with and without credentials), the fake gateway maps cc-XX/sessid-… to one
 * address per (country, session), and the replay sees each as its own exit with the right country.
 */
import { startReplayServer, type ReplayServer } from "@serp/replay";
import { FIXTURES_DIR, fixturesAvailable } from "../../packages/upstream/test/fixtures-dir.js";
import { parseGatewayUsername, requestVia, startExitFleet, type ExitFleet } from "../support/exits.js";

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;

describe("parseGatewayUsername", () => {
  it.each([
    ["customer-acme-cc-DE-sessid-abc123-sesstime-30", { country: "de", session: "abc123" }],
    ["cust-test-cc-fr-sessid-s_9", { country: "fr", session: "s_9" }],
    ["brd-customer-ID-zone-resi-country-us-session-xyz", { country: "us", session: "xyz" }],
    ["customer-acme-cc-jp", { country: "jp" }],
    ["customer-acme-sessid-only1", { session: "only1" }],
    ["customer-acme", {}],
    // "cc" must be its own dash-separated part, with exactly two letters after it.
    ["customer-acc-de-sessid-1", { session: "1" }],
    ["customer-acme-cc-deu-sessid-1", { session: "1" }],
  ])("%s", (username, expected) => {
    expect(parseGatewayUsername(username)).toEqual(expected);
  });
});

describeIfFixtures("exit fleet against the replay", () => {
  let fleet: ExitFleet;
  let replay: ReplayServer;

  beforeAll(async () => {
    fleet = await startExitFleet({
      staticExits: [{ country: "us" }, { country: "gb", auth: true }, { country: "de", protocol: "socks5", auth: true }, { country: "fr", protocol: "socks5" }],
      gatewayCountries: ["de", "fr", "jp"],
    });
    replay = await startReplayServer({ dir: FIXTURES_DIR, exits: fleet.exits });
  });
  afterAll(async () => {
    await replay?.close();
    await fleet?.close();
  });
  beforeEach(() => {
    replay.resetExitStats();
    replay.clearRequests();
  });

  const search = (query: string, gl?: string) => `${replay.url}/search?q=${query}${gl ? `&gl=${gl}` : ""}`;

  it("each static proxy (http, socks5, with and without credentials) reaches the replay from its own address and country", async () => {
    for (const exit of fleet.static) {
      const res = await requestVia(exit.url, search("coffee", exit.country));
      expect(res.status).toBe(200);
      expect(res.headers["x-replay-exit-country"]).toBe(exit.country);
    }
    const log = replay.requests();
    expect(log.map((r) => [r.address, r.exitCountry, r.exitClass])).toEqual(fleet.static.map((e) => [e.address, e.country, "datacenter"]));
    expect(new Set(log.map((r) => r.address)).size).toBe(fleet.static.length);
    expect(replay.exitStats().totals).toMatchObject({ searches: 4, glMismatches: 0 });
  });

  it("refuses wrong or missing proxy credentials, and destinations off loopback", async () => {
    const withAuth = fleet.static[1]!;
    const noAuth = withAuth.url.replace(/\/\/[^@]*@/, "//");
    expect((await requestVia(noAuth, search("coffee"))).status).toBe(407);
    expect((await requestVia(withAuth.url.replace(":pw-2@", ":wrong@"), search("coffee"))).status).toBe(407);
    const socksAuth = fleet.static[2]!;
    await expect(requestVia(socksAuth.url.replace(/\/\/[^@]*@/, "//"), search("coffee"))).rejects.toThrow(/socks5/);
    expect((await requestVia(fleet.static[0]!.url, "http://192.0.2.1/search?q=coffee")).status).toBe(403);
    expect(replay.requests()).toHaveLength(0);
    expect(withAuth.counts().refused).toBe(2);
  });

  it("the gateway gives each (country, session) its own address in that country, and a session keeps its address", async () => {
    const gateway = fleet.gateway!;
    const asked: [string, string][] = [["de", "a1"], ["de", "a2"], ["fr", "a1"], ["jp", "z"], ["de", "a1"]];
    for (const [country, session] of asked) {
      const res = await requestVia(gateway.urlFor(country, session), search("coffee", country));
      expect(res.status).toBe(200);
      expect(res.headers["x-replay-exit-country"]).toBe(country);
    }
    const log = replay.requests();
    expect(log.map((r) => r.exitCountry)).toEqual(asked.map(([c]) => c));
    expect(log.map((r) => r.exitClass)).toEqual(asked.map(() => "residential"));
    expect(log[0]!.address).toBe(gateway.addressOf("de", "a1"));
    expect(log[4]!.address).toBe(log[0]!.address);
    expect(new Set(log.slice(0, 4).map((r) => r.address)).size).toBe(4);
    expect(gateway.sessions().map((s) => `${s.country}/${s.session}`)).toEqual(["de/a1", "de/a2", "fr/a1", "jp/z"]);
  });

  it("the gateway refuses a bad password (407) and a country it has no exits in (502); no session rotates", async () => {
    const gateway = fleet.gateway!;
    expect((await requestVia(gateway.urlFor("de", "x").replace(":gw-secret@", ":nope@"), search("coffee"))).status).toBe(407);
    const missing = await requestVia(gateway.urlFor("br", "x"), search("coffee"));
    expect(missing.status).toBe(502);
    expect(missing.body).toContain("br");
    const rotating = gateway.template.replace("-sessid-{session}", "").replace("{country}", "fr");
    await requestVia(rotating, search("coffee", "fr"));
    await requestVia(rotating, search("coffee", "fr"));
    const log = replay.requests();
    expect(log).toHaveLength(2);
    expect(log.map((r) => r.exitCountry)).toEqual(["fr", "fr"]);
    expect(log[0]!.address).not.toBe(log[1]!.address);
  });

  it("tunnels https through CONNECT (static proxy and gateway) and SOCKS5, from the exit's address", async () => {
    const secure = await startReplayServer({ dir: FIXTURES_DIR, https: true, exits: fleet.exits });
    try {
      const target = `${secure.url}/search?q=coffee`;
      const via = [fleet.static[1]!, fleet.static[2]!];
      for (const exit of via) expect((await requestVia(exit.url, target, { ca: secure.certPem })).status).toBe(200);
      expect((await requestVia(fleet.gateway!.urlFor("jp", "tls1"), target, { ca: secure.certPem })).status).toBe(200);
      expect(secure.requests().map((r) => [r.address, r.exitCountry, r.httpVersion])).toEqual([
        [via[0]!.address, "gb", "1.1"],
        [via[1]!.address, "de", "1.1"],
        [fleet.gateway!.addressOf("jp", "tls1"), "jp", "1.1"],
      ]);
      await expect(requestVia(fleet.static[1]!.url.replace(":pw-2@", ":wrong@"), target, { ca: secure.certPem })).rejects.toThrow(/CONNECT refused: 407/);
      await expect(requestVia(fleet.static[0]!.url, "https://192.0.2.1/search?q=coffee")).rejects.toThrow(/CONNECT refused: 403/);
    } finally {
      await secure.close();
    }
  });

  it("records a search whose gl disagrees with its exit's country", async () => {
    await requestVia(fleet.static[0]!.url, search("coffee", "de"));
    await requestVia(fleet.static[0]!.url, search("coffee", "us"));
    const us = replay.exitStats().addresses.find((a) => a.address === fleet.static[0]!.address);
    expect(us).toMatchObject({ country: "us", searches: 2, glMismatches: 1, gl: { de: 1, us: 1 } });
  });
});
