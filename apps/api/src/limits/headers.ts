/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy`
 * describes each quota, `RateLimit` its current state. Both are Structured Field lists (RFC 9651)
 * of policy names with parameters, e.g.
 *   RateLimit-Policy: "rate";q=600;w=60, "concurrency";q=100;qu="concurrent-requests"
 *   RateLimit: "rate";r=599;t=60, "concurrency";r=99
 */
export interface PolicyState {
  /** Policy name (an sf-string: letters, digits, `-`). */
  name: string;
  /** q: the quota. */
  quota: number;
  /** w: window in seconds (absent for concurrency, which has no window). */
  windowSeconds?: number;
  /** qu: quota unit; the draft's default is `requests`. */
  unit?: "requests" | "concurrent-requests";
  /** r: quota left (undefined while not yet known: the policy is then left out of RateLimit). */
  remaining?: number;
  /** t: seconds until the quota resets (delta seconds, never a timestamp). */
  resetSeconds?: number;
}

const sfString = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

export function formatRateLimitPolicy(policies: readonly PolicyState[]): string {
  return policies
    .map((p) => {
      let item = `${sfString(p.name)};q=${p.quota}`;
      if (p.unit && p.unit !== "requests") item += `;qu=${sfString(p.unit)}`;
      if (p.windowSeconds !== undefined) item += `;w=${p.windowSeconds}`;
      return item;
    })
    .join(", ");
}

export function formatRateLimit(policies: readonly PolicyState[]): string {
  return policies
    .map((p) => `${sfString(p.name)};r=${Math.max(0, p.remaining ?? 0)}${p.resetSeconds !== undefined ? `;t=${p.resetSeconds}` : ""}`)
    .join(", ");
}
