/** A result link is an http(s) URL or nothing: the upstream's redirectors unwrapped, any other scheme refused. */
import { targetUrl } from "../src/values.js";

test.each([
  ["/url?q=https://a.test/x&sa=U", "https://a.test/x"],
  ["https://b.test/page", "https://b.test/page"],
  ["/search?q=bikes", "https://www.google.com/search?q=bikes"],
  ["javascript:alert(1)", undefined],
  [" JaVaScRiPt:alert(1)", undefined],
  ["\tjavascript:alert(1)", undefined],
  ["data:text/html,<script>alert(1)</script>", undefined],
  ["vbscript:msgbox(1)", undefined],
  ["/url?q=javascript:alert(1)", "https://www.google.com/url?q=javascript:alert(1)"],
])("%s → %s", (href, expected) => expect(targetUrl(href)).toBe(expected));
