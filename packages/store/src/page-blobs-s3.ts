/**
 * Pages in an S3-compatible bucket (AWS S3, MinIO, R2, Ceph…), under `<prefix><yyyy-mm-dd>/<hh>/`:
 * any number of API and worker hosts read and write the same pages. Expiry is the workers' sweep
 * (page-blobs.ts PageBlobs.sweep), with a lifecycle rule on the prefix as the backstop
 * (docs/RAW-PAGES.md).
 */
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, type _Object } from "@aws-sdk/client-s3";
import { PageStoreUnavailableError, checkedLocation, partitionStart, type PageBlobs } from "./page-blobs.js";

const HOUR_MS = 3_600_000;

export interface S3PageBlobsOptions {
  bucket: string;
  /** Key prefix, such as `raw/` (ends with `/`, or is empty). */
  prefix: string;
  /** An S3-compatible server's URL; unset: AWS S3 in `region`. */
  endpoint?: string;
  region: string;
  /** Both or neither; neither: the SDK's own chain (AWS_* variables, instance or pod role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `bucket` in the path rather than the host name: what most S3-compatible servers expect. */
  forcePathStyle: boolean;
}

export class S3PageBlobs implements PageBlobs {
  readonly kind = "s3";
  readonly where: string;
  private readonly client: S3Client;

  constructor(private readonly o: S3PageBlobsOptions) {
    this.where = `s3://${o.bucket}/${o.prefix}`;
    this.client = new S3Client({
      region: o.region,
      endpoint: o.endpoint,
      forcePathStyle: o.forcePathStyle,
      credentials: o.accessKeyId && o.secretAccessKey ? { accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey } : undefined,
      // Checksums only where S3 requires them: S3-compatible servers do not all know the newer ones.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      requestHandler: { connectionTimeout: 3_000, requestTimeout: 15_000 },
    });
  }

  async put(location: string, data: Buffer): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.o.bucket, Key: this.o.prefix + checkedLocation(location), Body: data, ContentType: "application/octet-stream" }),
    );
  }

  /** In batches of 1000 (DeleteObjects' most). */
  async delete(locations: readonly string[]): Promise<void> {
    for (let i = 0; i < locations.length; i += 1000) {
      const Objects = locations.slice(i, i + 1000).map((l) => ({ Key: this.o.prefix + checkedLocation(l) }));
      const res = await this.client.send(new DeleteObjectsCommand({ Bucket: this.o.bucket, Delete: { Objects, Quiet: true } }));
      if (res.Errors?.length) throw new Error(`${res.Errors.length} objects not deleted from ${this.where}: ${res.Errors[0]!.Code ?? ""} ${res.Errors[0]!.Message ?? ""}`);
    }
  }

  async get(location: string): Promise<Buffer | null> {
    const Key = this.o.prefix + checkedLocation(location);
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.o.bucket, Key }));
      return Buffer.from(await res.Body!.transformToByteArray());
    } catch (err) {
      const e = err as Error & { $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode;
      if (e.name === "NoSuchKey" || status === 404) return null;
      // No answer at all (not reached, or not in time), or the server's own failure, after the SDK's retries.
      if (e.name !== "CredentialsProviderError" && (status === undefined || status >= 500)) throw new PageStoreUnavailableError(this.where, e);
      throw err;
    }
  }

  /**
   * Keys list in time order (the partitions sort as they were kept), so a pass reads the expired
   * ones and stops at the first partition that starts after the cutoff.
   */
  async sweep(cutoffMs: number): Promise<number> {
    let deleted = 0;
    for await (const objects of this.partitions((start) => start > cutoffMs)) {
      const expired = objects.filter((o) => o.start + HOUR_MS <= cutoffMs || (o.modified && o.modified.getTime() < cutoffMs)).map((o) => o.key);
      if (!expired.length) continue;
      const res = await this.client.send(new DeleteObjectsCommand({ Bucket: this.o.bucket, Delete: { Objects: expired.map((Key) => ({ Key })), Quiet: true } }));
      deleted += expired.length - (res.Errors?.length ?? 0);
    }
    return deleted;
  }

  async *list(beforeMs: number): AsyncIterable<string[]> {
    for await (const objects of this.partitions((start) => start + HOUR_MS > beforeMs)) yield objects.map((o) => o.key.slice(this.o.prefix.length));
  }

  /** The objects in the prefix's partitions, a listing page at a time in time order, up to the first partition `past` says is past the range. */
  private async *partitions(past: (start: number) => boolean): AsyncIterable<{ key: string; start: number; modified?: Date }[]> {
    let token: string | undefined;
    for (;;) {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.o.bucket, Prefix: this.o.prefix, ContinuationToken: token }));
      const found: { key: string; start: number; modified?: Date }[] = [];
      let done = false;
      for (const object of page.Contents ?? []) {
        const start = this.startOf(object);
        if (start === undefined) continue;
        if (past(start)) {
          done = true;
          break;
        }
        found.push({ key: object.Key!, start, modified: object.LastModified });
      }
      if (found.length) yield found;
      token = page.NextContinuationToken;
      if (done || !page.IsTruncated || !token) return;
    }
  }

  /** The start of the hour partition an object is in, or undefined for a key that is not a page's. */
  private startOf(object: _Object): number | undefined {
    const parts = object.Key?.slice(this.o.prefix.length).split("/");
    return parts?.length === 3 ? partitionStart(parts[0]!, parts[1]!) : undefined;
  }

  close(): void {
    this.client.destroy();
  }
}
