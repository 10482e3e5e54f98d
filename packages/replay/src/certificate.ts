/** The self-signed certificate an https replay server presents: localhost and 127.0.0.1, a few days valid. */
import { generate } from "selfsigned";

const VALID_DAYS = 3;
const DAY_MS = 86_400_000;

export async function selfSignedCertificate(): Promise<{ key: string; cert: string }> {
  const now = Date.now();
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    // An hour back, for clients whose clock runs a little behind.
    notBeforeDate: new Date(now - 3_600_000),
    notAfterDate: new Date(now + VALID_DAYS * DAY_MS),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [{ type: 2, value: "localhost" }, { type: 7, ip: "127.0.0.1" }] },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}
