/**
 * What a TLS ClientHello looks like, in the terms the guard refuses clients by. Pure: it reads the hello
 * `read-tls-client-hello` parsed and attached to the socket.
 *
 * Rules (measured against real clients, 2026-11):
 * - browser-shaped: ALPN offers h2, at most 20 non-GREASE cipher suites, renegotiation_info (65281), and
 *   compress_certificate (27) or record_size_limit (28). Node's own TLS (59 suites, no ALPN), curl, undici
 *   and got fail it: many suites or no h2, and neither 27 nor 28.
 * - family: `chrome` with ALPS (17513, or the newer codepoint 17613) and compress_certificate (27);
 *   `firefox` with record_size_limit (28) and delegated_credentials (34); else `other`.
 * - chrome-shaped: browser-shaped, family chrome, and a GREASE cipher suite. A real Chromium and impit's
 *   `chrome142`/`chrome151` profiles send GREASE; impit's older `chrome` (Chrome 124) profile sends none,
 *   so it is browser-shaped but not chrome-shaped. impit's `firefox` is browser-shaped, family firefox.
 */
import { isGREASE, type TlsClientHelloMessage } from "read-tls-client-hello";

export type TlsFamily = "chrome" | "firefox" | "other";

export interface HelloDescription {
  ja4: string;
  family: TlsFamily;
  browserShaped: boolean;
  chromeShaped: boolean;
  /** The protocols the ALPN extension offers, in order (empty without ALPN). */
  alpn: string[];
}

const EXT = {
  alpn: 16,
  compressCertificate: 27,
  recordSizeLimit: 28,
  delegatedCredentials: 34,
  alps: 17513,
  alpsNew: 17613,
  renegotiationInfo: 65281,
} as const;

const MAX_BROWSER_CIPHERS = 20;

function alpnOf(hello: TlsClientHelloMessage): string[] {
  const data = hello.extensions.find((e) => e.id === EXT.alpn)?.data;
  const protocols = data?.protocols;
  return Array.isArray(protocols) ? protocols.filter((p): p is string => typeof p === "string") : [];
}

export function describeHello(hello: TlsClientHelloMessage & { ja4: string }): HelloDescription {
  const ids = new Set(hello.extensions.map((e) => e.id));
  const alpn = alpnOf(hello);
  const ciphers = hello.cipherSuites.filter((c) => !isGREASE(c)).length;
  const browserShaped =
    alpn.includes("h2") &&
    ciphers <= MAX_BROWSER_CIPHERS &&
    ids.has(EXT.renegotiationInfo) &&
    (ids.has(EXT.compressCertificate) || ids.has(EXT.recordSizeLimit));
  const family: TlsFamily =
    (ids.has(EXT.alps) || ids.has(EXT.alpsNew)) && ids.has(EXT.compressCertificate)
      ? "chrome"
      : ids.has(EXT.recordSizeLimit) && ids.has(EXT.delegatedCredentials)
        ? "firefox"
        : "other";
  const chromeShaped = browserShaped && family === "chrome" && hello.cipherSuites.some(isGREASE);
  return { ja4: hello.ja4, family, browserShaped, chromeShaped, alpn };
}
