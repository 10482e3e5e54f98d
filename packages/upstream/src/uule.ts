/**
 * The upstream's `uule` location value for a canonical location name (reference/serpapi-shapes.md
 * §11.3): `w+` and the base64 of a tiny protobuf {1: 2, 2: 32, 4: name}, without `=` padding.
 *
 * The well-known "key table" shortcut (`w+CAIQICI` + one letter + base64(name)) is this same
 * encoding for names under 64 bytes; the protobuf form is also right for longer and non-ASCII names
 * because the length is a varint of the UTF-8 byte length.
 */
export function uule(canonicalName: string): string {
  const name = Buffer.from(canonicalName, "utf8");
  const header = [0x08, 0x02, 0x10, 0x20, 0x22, ...varint(name.length)];
  return "w+" + Buffer.concat([Buffer.from(header), name]).toString("base64").replace(/=+$/, "");
}

function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

/**
 * The canonical spelling of a location name as typed by a person: commas without the spaces
 * around them, runs of spaces folded ("Austin, Texas, United States" → "Austin,Texas,United States").
 */
export function normalizeLocationName(name: string): string {
  return name.trim().replace(/\s*,\s*/g, ",").replace(/\s+/g, " ");
}
