/** The upstream's hosts, written once: which links stay on the engine. */
import { ENGINE_ORIGIN, engineHostPattern, engineHostname, engineUrl } from "../src/hosts.js";

test("by default the engine in every country counts, bare or on www, and none of its other subdomains", () => {
  const page = engineUrl({ then: "/" });
  for (const url of ["https://www.google.com/search?q=x", "http://google.co.uk/", "https://WWW.GOOGLE.DE/maps"]) expect(page.test(url)).toBe(true);
  for (const url of ["https://maps.google.com/", "https://www.googleadservices.com/", "https://example.com/www.google.com/", "//www.google.com/"]) expect(page.test(url)).toBe(false);
});

test("`any` takes subdomains at any depth; a list takes at most one of the labels named", () => {
  expect(engineUrl({ subdomains: "any", then: "/" }).test("https://a.b.google.com/x")).toBe(true);
  const maps = engineUrl({ subdomains: ["www", "maps"], then: "/" });
  expect([maps.test("https://maps.google.com/"), maps.test("https://news.google.com/"), maps.test("https://www.maps.google.com/")]).toEqual([true, false, false]);
});

test("the engine's other domains count only where a caller names them, and the host ends at a port, path, query or fragment", () => {
  const own = engineUrl({ subdomains: "any", also: ["gstatic"] });
  expect(own.test("https://encrypted-tbn0.gstatic.com/images?q=tbn:1")).toBe(true);
  expect(own.test("https://lh3.googleusercontent.com/p")).toBe(false);
  expect(own.test("https://www.google.com:443")).toBe(true);
  expect(own.test("https://www.google.com.example.org.evil/")).toBe(true);
  expect(own.test("https://www.googlex.com/")).toBe(false);
});

test("`none` takes the domain with anything before it in the host, as a host ending google.<tld>", () => {
  const ending = new RegExp(String.raw`^https?:\/\/[^/?#]*${engineHostPattern({ subdomains: "none" })}(?:[:/?#]|$)`, "i");
  expect([ending.test("https://newsinitiative.withgoogle.com/x"), ending.test("https://example.com/?google.com")]).toEqual([true, false]);
});

test("a host name is the engine's when it is one of the domains named or below one", () => {
  const host = engineHostname(["doubleclick"]);
  expect(["www.google.com", "google.fr", "ad.doubleclick.net"].map((h) => host.test(h))).toEqual([true, true, true]);
  expect(["googleusercontent.com", "example.com", "notdoubleclick.net"].map((h) => host.test(h))).toEqual([false, false, false]);
  expect(new URL("/url?q=x", ENGINE_ORIGIN).href).toBe("https://www.google.com/url?q=x");
});
