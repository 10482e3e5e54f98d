/**
 * A real S3-protocol server on loopback for tests: s3rver in this process, on a random port, its
 * objects in a temporary folder removed at close, with one bucket made at start.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** The RAW_PAGES_S3_* settings that point a service at this bucket under `prefix`. */
  env(prefix: string): Record<string, string>;
  close(): Promise<void>;
}

export async function startS3(bucket = "raw-pages"): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), "s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: (prefix) => ({
      RAW_PAGES_S3_BUCKET: bucket,
      RAW_PAGES_S3_ENDPOINT: endpoint,
      // s3rver's own pair: it checks the signature.
      RAW_PAGES_S3_ACCESS_KEY_ID: "S3RVER",
      RAW_PAGES_S3_SECRET_ACCESS_KEY: "S3RVER",
      RAW_PAGES_S3_PREFIX: prefix,
    }),
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * For a test file of the page stores: s3rver started before its tests and closed after them, and
 * the temporary folders `tempDir` makes removed then too.
 */
export function localStores(name: string): { s3: () => LocalS3; tempDir: () => string } {
  let s3: LocalS3 | undefined;
  const dirs: string[] = [];
  beforeAll(async () => {
    s3 = await startS3();
  });
  afterAll(async () => {
    await s3?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return {
    s3: () => s3!,
    tempDir: () => {
      const dir = mkdtempSync(join(tmpdir(), `${name}-`));
      dirs.push(dir);
      return dir;
    },
  };
}
