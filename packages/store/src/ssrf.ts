/**
 * Which addresses a webhook may reach. Pure (no I/O): used by the worker's agent at connect time
 * and by the API's cheap check of literal hosts at submit time, so both read one table.
 *
 * IPv6 forms that carry an IPv4 address (IPv4-mapped and -translated, IPv4-compatible, NAT64,
 * 6to4, Teredo) are judged by the IPv4 inside as well: `64:ff9b::a9fe:a9fe` reaches
 * 169.254.169.254 through a NAT64 gateway, so it is a metadata address, refused in every mode.
 */
import { BlockList, isIP } from "node:net";
import ipaddr from "ipaddr.js";

export type AddressKind = "metadata" | "unspecified" | "loopback" | "private" | "cgnat" | "link-local" | "reserved";

/** Cloud instance-metadata endpoints: refused even where private targets are allowed. */
const METADATA: readonly string[] = ["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"];

/** IANA special-purpose ranges (RFC 6890 and successors). IPv4 rules also match IPv4-mapped IPv6. */
const RANGES: readonly [AddressKind, string, number][] = [
  ["unspecified", "0.0.0.0", 8],
  ["unspecified", "::", 128],
  ["loopback", "127.0.0.0", 8],
  ["loopback", "::1", 128],
  ["private", "10.0.0.0", 8],
  ["private", "172.16.0.0", 12],
  ["private", "192.168.0.0", 16],
  ["private", "fc00::", 7],
  ["cgnat", "100.64.0.0", 10],
  ["link-local", "169.254.0.0", 16],
  ["link-local", "fe80::", 10],
  ["reserved", "192.0.0.0", 24],
  ["reserved", "192.0.2.0", 24],
  ["reserved", "192.88.99.0", 24],
  ["reserved", "198.18.0.0", 15],
  ["reserved", "198.51.100.0", 24],
  ["reserved", "203.0.113.0", 24],
  ["reserved", "224.0.0.0", 4],
  ["reserved", "240.0.0.0", 4],
  // IPv4-compatible (deprecated), IPv4-translated, NAT64, Teredo and 6to4: never an ordinary public
  // target, whatever IPv4 they embed (and that IPv4 is judged too, below).
  ["reserved", "::", 96],
  ["reserved", "::ffff:0:0:0", 96],
  ["reserved", "64:ff9b::", 96],
  ["reserved", "64:ff9b:1::", 48],
  ["reserved", "100::", 64],
  ["reserved", "2001::", 23],
  ["reserved", "2001:db8::", 32],
  ["reserved", "2002::", 16],
  ["reserved", "fec0::", 10],
  ["reserved", "ff00::", 8],
];

/** Checked in this order, so an address gets its most specific kind. */
const ORDER: readonly AddressKind[] = ["metadata", "unspecified", "loopback", "private", "cgnat", "link-local", "reserved"];

const BLOCKS = (() => {
  const lists = new Map<AddressKind, BlockList>();
  const family = (a: string) => (isIP(a) === 6 ? "ipv6" : "ipv4");
  const list = (kind: AddressKind) => lists.get(kind) ?? lists.set(kind, new BlockList()).get(kind)!;
  for (const a of METADATA) list("metadata").addAddress(a, family(a));
  for (const [kind, net, prefix] of RANGES) list(kind).addSubnet(net, prefix, family(net));
  return ORDER.map((kind) => [kind, list(kind)] as const);
})();

const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR("::/96");
/** RFC 8215 local-use NAT64; the common /96 layout puts the IPv4 address last, as 64:ff9b::/96 does. */
const LOCAL_NAT64 = ipaddr.IPv6.parseCIDR("64:ff9b:1::/48");

/**
 * The IPv4 addresses an IPv6 address carries (RFC 4291 mapped and compatible, RFC 6145
 * translated, RFC 6052 NAT64, RFC 3056 6to4, RFC 4380 Teredo server and client), or none.
 */
export function embeddedIPv4(address: string): string[] {
  if (isIP(address) !== 6 || !ipaddr.IPv6.isValid(address)) return [];
  const v6 = ipaddr.IPv6.parse(address);
  const p = v6.parts as [number, number, number, number, number, number, number, number];
  const v4 = (hi: number, lo: number) => ipaddr.fromByteArray([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]).toString();
  switch (v6.range()) {
    case "ipv4Mapped":
    case "rfc6145":
    case "rfc6052":
      return [v4(p[6], p[7])];
    case "6to4":
      return [v4(p[1], p[2])];
    case "teredo":
      // The client's address is stored inverted (XOR 0xffffffff).
      return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    default:
      // :: and ::1 are the unspecified and loopback addresses, not IPv4-compatible ones.
      if (v6.match(IPV4_COMPATIBLE) && (p[6] !== 0 || p[7] > 1)) return [v4(p[6], p[7])];
      if (v6.match(LOCAL_NAT64)) return [v4(p[6], p[7])];
      return [];
  }
}

function ownKind(address: string, v: 4 | 6): AddressKind | null {
  for (const [kind, list] of BLOCKS) if (list.check(address, v === 6 ? "ipv6" : "ipv4")) return kind;
  return null;
}

/**
 * The special kind of an IP address, or null for an ordinary public one (or a non-IP string). An
 * IPv6 address embedding a special IPv4 address has that address's kind (the most specific one).
 */
export function addressKind(address: string): AddressKind | null {
  const v = isIP(address);
  if (v === 0) return null;
  const own = ownKind(address, v as 4 | 6);
  if (own !== null && own !== "reserved") return own;
  const inner = embeddedIPv4(address)
    .map((a) => ownKind(a, 4))
    .filter((k): k is AddressKind => k !== null)
    .sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
  return inner[0] ?? own;
}

/**
 * Why a webhook may not connect to `address`, or null when it may. With `allowPrivate`, only
 * metadata and unspecified addresses stay refused (for tests and private deployments), also when
 * written as an IPv6 form that embeds them.
 */
export function refusedAddress(address: string, allowPrivate: boolean): AddressKind | null {
  const kind = addressKind(address);
  if (kind === null) return null;
  if (allowPrivate && kind !== "metadata" && kind !== "unspecified") return null;
  return kind;
}
