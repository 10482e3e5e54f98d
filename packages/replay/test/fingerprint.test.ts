/**
 * describeHello on ClientHellos shaped like the ones measured from real clients (cipher counts, extension
 * ids, GREASE), including a real Chromium's, which no client installed here can send.
 */
import type { TlsClientHelloMessage } from "read-tls-client-hello";
import { describeHello } from "../src/fingerprint.js";

const GREASE = 0x0a0a;

function hello(ciphers: number, extensions: number[], alpn: string[] | undefined, grease = false): TlsClientHelloMessage & { ja4: string } {
  const suites = Array.from({ length: ciphers }, (_, i) => 0x1301 + i);
  const ids = alpn ? extensions : extensions.filter((id) => id !== 16);
  return {
    version: 0x0303,
    random: Buffer.alloc(32),
    sessionId: Buffer.alloc(32),
    cipherSuites: grease ? [GREASE, ...suites] : suites,
    compressionMethods: [0],
    extensions: [...(grease ? [{ id: 0x1a1a, data: null }] : []), ...ids.map((id) => ({ id, data: id === 16 ? { protocols: alpn } : null }))],
    ja4: "t13i_test",
  };
}

const CHROME_124 = [65281, 11, 23, 35, 13, 5, 10, 16, 18, 51, 45, 43, 27, 17513, 65037];
const CHROME_151 = [17613, 11, 65281, 23, 35, 13, 5, 10, 16, 18, 51, 45, 43, 27, 65037];
const FIREFOX = [28, 11, 65281, 34, 23, 35, 13, 5, 10, 16, 51, 45, 43, 65037];
const H2 = ["h2", "http/1.1"];

test.each([
  ["Node's TLS: 59 suites, no ALPN", hello(59, [11, 10, 35, 22, 23, 13, 43, 45, 51], undefined), "other", false, false],
  ["curl-like: h2 but many suites, no 27/28", hello(31, [0, 65281, 11, 10, 16, 22, 23, 13, 43, 45, 51], H2), "other", false, false],
  ["impit chrome (Chrome 124, no GREASE)", hello(15, CHROME_124, H2), "chrome", true, false],
  ["impit chrome151 (GREASE suite, new ALPS)", hello(15, CHROME_151, H2, true), "chrome", true, true],
  ["impit firefox", hello(17, FIREFOX, H2), "firefox", true, false],
  ["a real Chromium (GREASE suites and extensions, ALPS, compress_certificate)", hello(15, CHROME_124, H2, true), "chrome", true, true],
  ["Chrome's extensions over HTTP/1.1 only", hello(15, CHROME_151, ["http/1.1"], true), "chrome", false, false],
] as const)("%s", (_name, clientHello, family, browserShaped, chromeShaped) => {
  expect(describeHello(clientHello)).toMatchObject({ ja4: "t13i_test", family, browserShaped, chromeShaped });
});

test("alpn lists the offered protocols, empty without the extension", () => {
  expect(describeHello(hello(15, CHROME_151, H2, true)).alpn).toEqual(H2);
  expect(describeHello(hello(59, [11, 10, 35], undefined)).alpn).toEqual([]);
});
