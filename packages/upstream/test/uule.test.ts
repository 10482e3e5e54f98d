import { normalizeLocationName, uule } from "../src/uule.js";

/** Decodes `w+<base64>` back to {1, 2, 4} to prove the protobuf form beyond the known vectors. */
function decode(value: string): { f1: number; f2: number; name: string } {
  const bytes = Buffer.from(value.slice(2), "base64");
  let i = 0;
  const varint = () => {
    let n = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[i++]!;
      n |= (b & 0x7f) << shift;
      if (!(b & 0x80)) return n;
      shift += 7;
    }
  };
  expect(bytes[i++]).toBe(0x08);
  const f1 = varint();
  expect(bytes[i++]).toBe(0x10);
  const f2 = varint();
  expect(bytes[i++]).toBe(0x22);
  const len = varint();
  const name = bytes.subarray(i, i + len).toString("utf8");
  expect(i + len).toBe(bytes.length);
  return { f1, f2, name };
}

describe("uule", () => {
  test.each([
    ["Austin,Texas,United States", "w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM"],
    ["Austin,TX,Texas,United States", "w+CAIQICIdQXVzdGluLFRYLFRleGFzLFVuaXRlZCBTdGF0ZXM"],
    ["Seattle-Tacoma,WA,Washington,United States", "w+CAIQICIqU2VhdHRsZS1UYWNvbWEsV0EsV2FzaGluZ3RvbixVbml0ZWQgU3RhdGVz"],
    ["Toronto,Ontario,Canada", "w+CAIQICIWVG9yb250byxPbnRhcmlvLENhbmFkYQ"],
    ["33773,Florida,United States", "w+CAIQICIbMzM3NzMsRmxvcmlkYSxVbml0ZWQgU3RhdGVz"],
    ["United States", "w+CAIQICINVW5pdGVkIFN0YXRlcw"],
  ])("encodes %s like the reference API", (name, expected) => {
    expect(uule(name)).toBe(expected);
  });

  test("never pads with =", () => {
    for (const name of ["A", "AB", "ABC", "Toronto,Ontario,Canada"]) expect(uule(name)).not.toContain("=");
  });

  test("uses the UTF-8 byte length, not the character count, for non-ASCII names", () => {
    const name = "Zürich,Zürich,Schweiz"; // 21 characters, 23 bytes
    const value = uule(name);
    expect(value.slice(0, 10)).toBe("w+CAIQICIX"); // X = base64 digit 23
    expect(decode(value)).toEqual({ f1: 2, f2: 32, name });
  });

  test("writes a two-byte length for names of 128 bytes and more, where the key-table shortcut breaks", () => {
    const long = `${"Very Long Place Name,".repeat(7)}United States`; // 160 bytes
    expect(Buffer.byteLength(long)).toBeGreaterThanOrEqual(128);
    expect(decode(uule(long))).toEqual({ f1: 2, f2: 32, name: long });
    const sixtyFour = "x".repeat(64);
    expect(decode(uule(sixtyFour)).name).toBe(sixtyFour);
  });
});

describe("normalizeLocationName", () => {
  test("drops spaces around commas and folds runs of spaces", () => {
    expect(normalizeLocationName(" Austin , Texas,  United   States ")).toBe("Austin,Texas,United States");
  });
});
