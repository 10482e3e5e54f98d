import { isIP } from "node:net";
import { refusedAddress } from "@serp/store";

/** Host names that only ever mean this machine, its network or a cloud's metadata service. */
const INTERNAL_NAMES = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/i;

/**
 * A cheap submit-time check of a postbackUrl (no DNS): why it is refused, or undefined when it
 * may be accepted. It catches what the URL alone shows (a scheme other than http(s), an internal
 * literal address, `localhost` and similar names); the worker's agent still checks every address
 * actually dialled at connect time, which is what stops names resolving (or rebinding) inward.
 * With `allowPrivateTargets`, only metadata and unspecified addresses are refused.
 */
export function postbackUrlProblem(raw: string, opts: { allowPrivateTargets?: boolean } = {}): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute http(s) URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an absolute http(s) URL";
  const allowPrivate = opts.allowPrivateTargets ?? false;
  // The URL parser has already normalised forms such as 2130706433 or 0x7f.1 to 127.0.0.1.
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  if (isIP(host)) {
    const kind = refusedAddress(host, allowPrivate);
    return kind ? `must not point at a ${kind} address` : undefined;
  }
  if (!allowPrivate && INTERNAL_NAMES.test(host)) return "must not point at an internal host name";
  if (/^metadata(\.google\.internal)?$/i.test(host)) return "must not point at a metadata service";
  return undefined;
}
