import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Whether an Authorization header presents `token`: `Bearer <token>` (scripts, Prometheus's
 * `authorization` or `bearer_token`) or HTTP basic auth with the token as password (browsers,
 * Prometheus's `basic_auth`). Compared as equal-length digests, so in constant time whatever was presented.
 */
export function presentsToken(authorization: string | undefined, token: string): boolean {
  const presented = presentedToken(authorization);
  return presented !== undefined && timingSafeEqual(digest(presented), digest(token));
}

function presentedToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value = ""] = header.trim().split(/\s+/, 2);
  if (/^bearer$/i.test(scheme ?? "")) return value;
  if (/^basic$/i.test(scheme ?? "")) {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 ? decoded.slice(colon + 1) : undefined;
  }
  return undefined;
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}
