import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { fetchPage, type FetchSettings } from "../src/fetch.js";
import { makeProxy } from "../src/proxies.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let base = "";
let handler: Handler = (_req, res) => res.end("unset");
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((req, res) => handler(req, res));
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const settings: FetchSettings = { timeoutMs: 1_000, maxBodyBytes: 64 * 1024 };
const get = (path = "/search?q=x", over: Partial<FetchSettings> = {}, signal?: AbortSignal) =>
  fetchPage({ url: base + path, headers: { "user-agent": "test-agent" }, signal }, { ...settings, ...over });

describe("fetchPage", () => {
  test("returns the status, headers and body, sending the profile's headers", async () => {
    let seenUa: string | undefined;
    handler = (req, res) => {
      seenUa = req.headers["user-agent"];
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end("<html>caf\u00e9</html>");
    };
    const r = await get();
    expect(r).toMatchObject({ ok: true, response: { statusCode: 200, body: "<html>caf\u00e9</html>", url: `${base}/search?q=x` } });
    expect(seenUa).toBe("test-agent");
  });

  test("does not follow a redirect: the 302 and its location come back", async () => {
    let followed = false;
    handler = (req, res) => {
      if (req.url?.startsWith("/sorry")) followed = true;
      res.writeHead(302, { location: "/sorry/index?continue=x" }).end();
    };
    const r = await get();
    expect(r.ok && r.response.statusCode).toBe(302);
    expect(r.ok && r.response.headers.location).toBe("/sorry/index?continue=x");
    expect(followed).toBe(false);
  });

  test("returns error statuses instead of throwing, and never retries them", async () => {
    let calls = 0;
    handler = (_req, res) => {
      calls++;
      res.writeHead(429).end("Too Many Requests");
    };
    const r = await get();
    expect(r.ok && r.response.statusCode).toBe(429);
    expect(calls).toBe(1);
  });

  test("decompresses gzip and decodes the declared charset", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-encoding": "gzip", "content-type": "text/html; charset=ISO-8859-1" });
      res.end(gzipSync(Buffer.from("<html>caf\u00e9 cr\u00e8me</html>", "latin1")));
    };
    const r = await get();
    expect(r.ok && r.response.body).toBe("<html>caf\u00e9 cr\u00e8me</html>");
  });

  test("reads a charset declared only in the page", async () => {
    handler = (_req, res) => res.end(Buffer.from('<html><meta charset="windows-1252"><p>\u00fcber</p></html>', "latin1"));
    const r = await get();
    expect(r.ok && r.response.body).toContain("\u00fcber");
  });

  test("a slow answer is a timeout", async () => {
    handler = (_req, res) => setTimeout(() => res.end("late"), 600).unref();
    const r = await get("/search?q=slow", { timeoutMs: 150 });
    expect(r).toMatchObject({ ok: false, failure: "timeout" });
    expect(r.ms).toBeLessThan(550);
  });

  test("a body that stops before its declared length is truncated", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-length": "5000" });
      res.write("<html><body>only part");
      setTimeout(() => res.destroy(), 20).unref();
    };
    expect(await get()).toMatchObject({ ok: false, failure: "truncated" });
  });

  test("a chunked body whose connection drops is truncated", async () => {
    handler = (_req, res) => {
      res.write("<html><body>first chunk");
      setTimeout(() => res.socket?.destroy(), 20).unref();
    };
    expect(await get()).toMatchObject({ ok: false, failure: "truncated" });
  });

  test("a body over the size cap is abandoned", async () => {
    handler = (_req, res) => res.end("x".repeat(200_000));
    expect(await get("/search?q=big", { maxBodyBytes: 50_000 })).toMatchObject({ ok: false, failure: "too_large" });
  });

  test("a refused connection is a network failure", async () => {
    const r = await fetchPage({ url: "http://127.0.0.1:1/search", headers: {} }, settings);
    expect(r).toMatchObject({ ok: false, failure: "network", detail: expect.stringMatching(/^ECONNREFUSED/) });
  });

  test("a name that does not resolve is a network failure (.invalid never resolves, RFC 6761)", async () => {
    const r = await fetchPage({ url: "http://no-such-host.invalid/search", headers: {} }, { ...settings, timeoutMs: 5_000 });
    expect(r).toMatchObject({ ok: false, failure: "network", detail: expect.stringMatching(/^(ENOTFOUND|EAI_AGAIN)/) });
  });

  test("a TLS handshake with a plain-HTTP port is a network failure naming the TLS error", async () => {
    const r = await fetchPage({ url: `${base.replace("http:", "https:")}/search`, headers: {} }, settings);
    expect(r).toMatchObject({ ok: false, failure: "network", detail: expect.stringMatching(/^(ERR_SSL|EPROTO)/) });
  });

  test("a connection reset before any answer is a network failure", async () => {
    handler = (req) => req.socket.resetAndDestroy();
    expect(await get()).toMatchObject({ ok: false, failure: "network", detail: expect.stringMatching(/ECONNRESET|socket hang up/) });
  });

  test("an abort rejects with the signal's reason instead of returning a failure", async () => {
    handler = (_req, res) => setTimeout(() => res.end("late"), 500).unref();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("job deadline")), 50);
    await expect(get("/search?q=abort", { timeoutMs: 5_000 }, controller.signal)).rejects.toThrow("job deadline");
    await expect(get("/search?q=abort", {}, AbortSignal.abort(new Error("already")))).rejects.toThrow("already");
  });
});

describe("fetchPage through a proxy", () => {
  let proxy: Server;
  let proxyUrl = "";
  const tunnels: string[] = [];
  const proxySockets = new Set<Socket>();
  beforeAll(async () => {
    proxy = createServer();
    proxy.on("connect", (req, client: Socket, head) => {
      tunnels.push(req.url ?? "");
      const [host, port] = (req.url ?? "").split(":");
      const upstream = connect(Number(port), host!, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      for (const s of [client, upstream]) {
        proxySockets.add(s);
        s.on("error", () => s.destroy());
        s.on("close", () => proxySockets.delete(s));
      }
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    proxyUrl = `http://user:secret@127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of proxySockets) s.destroy();
    await new Promise((resolve) => proxy.close(resolve));
  });

  test("tunnels the request through the configured proxy", async () => {
    handler = (_req, res) => res.end("<html>via proxy</html>");
    const p = makeProxy(proxyUrl);
    expect(p.label).not.toContain("secret");
    const r = await fetchPage({ url: `${base}/search?q=p`, headers: {}, proxy: p }, settings);
    expect(r.ok && r.response.body).toBe("<html>via proxy</html>");
    expect(tunnels).toContain(base.replace("http://", ""));
    p.agents.http.destroy();
    p.agents.https.destroy();
  });
});
