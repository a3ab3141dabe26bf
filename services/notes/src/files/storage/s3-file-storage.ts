import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { S3Store, type MetadataValue } from '@tus/s3-store';
import { Upload, type DataStore, type KvStore } from '@tus/utils';
import { checkRange } from './fs-file-storage';
import { assertObjectName, isObjectName } from './object-names';
import { StoredObjectNotFoundError, type FileStorage, type StoredObject } from './ports';

export interface S3Settings {
  /** S3_ENDPOINT: unset for AWS itself; e.g. https://minio.internal:9000, https://ACCOUNT.r2.cloudflarestorage.com. */
  endpoint: string | undefined;
  /** S3_REGION (us-east-1 when unset; R2 takes `auto`). */
  region: string;
  bucket: string;
  /** S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY; unset: the SDK's own chain (instance role, web identity). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  /** S3_FORCE_PATH_STYLE: `endpoint/bucket/key` instead of `bucket.endpoint/key` (MinIO, Ceph RGW). */
  forcePathStyle: boolean;
}

/** tus writes 8 MiB parts (S3's minimum is 5 MiB; a shorter tail waits in NAME.part for the next PATCH). */
const PART_SIZE = 8 * 1024 * 1024;

/**
 * S3-compatible object storage (production; AWS S3, MinIO, Ceph RGW, R2). Uploads go through
 * @tus/s3-store, which keeps, per object NAME: a multipart upload of key NAME (one part per 8 MiB
 * received), `NAME.info` (the tus record: declared length and the multipart upload id) and, between
 * two PATCH requests, `NAME.part` (a tail shorter than S3's 5 MiB minimum part). When the last byte
 * arrives the multipart upload is completed into the object NAME. Reads are GetObject with a Range.
 *
 * Why not @aws-sdk/lib-storage's Upload: it sends one stream, start to end, as one multipart upload
 * from one process. A tus upload arrives in many PATCH requests, possibly cut and resumed on another
 * replica, so the multipart upload must outlive a request and its parts be listed to find the
 * offset: that is exactly what @tus/s3-store does on the same SDK, so nothing is left for Upload.
 */
export class S3FileStorage implements FileStorage {
  readonly kind = 's3' as const;
  readonly bucket: string;
  private readonly client: S3Client;
  private readonly store: S3Store;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    const clientConfig: S3ClientConfig = {
      endpoint: settings.endpoint,
      region: settings.region,
      credentials: settings.credentials,
      forcePathStyle: settings.forcePathStyle,
      // Checksums only where S3 requires them: the S3-compatible servers differ in which trailing
      // checksums they accept, and every file is sealed with AES-GCM, which the reader checks anyway.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    this.client = new S3Client(clientConfig);
    this.store = new S3Store({
      partSize: PART_SIZE,
      // Each part is staged in os.tmpdir() until S3 has it: four in flight (plus the one being filled)
      // bound that disk to about 40 MiB per process, and a slow S3 slows the uploader down instead.
      maxConcurrentPartUploads: 4,
      useTags: false,
      // No cache of the .info record: with several notes replicas, and after delete(), a cached record
      // would describe an upload that is gone. One small GET per request is the price.
      cache: new NoCache(),
      s3ClientConfig: { ...clientConfig, bucket: settings.bucket },
    });
  }

  tusDataStore(): DataStore {
    return this.store;
  }

  async createUpload(name: string, size: number): Promise<void> {
    assertObjectName(name);
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError('an upload declares a whole number of bytes, at least 1');
    await this.store.create(new Upload({ id: name, size, offset: 0 }));
  }

  async read(name: string, range?: { start: number; end: number }): Promise<Readable> {
    assertObjectName(name);
    if (range !== undefined) {
      const object = await this.stat(name);
      if (object === null || !object.complete) throw new StoredObjectNotFoundError(name, object !== null);
      checkRange(range, object.size);
    }
    try {
      const answer = await this.client.send(new GetObjectCommand({
        Bucket: this.bucket, Key: name, Range: range && `bytes=${range.start}-${range.end}`,
      }));
      if (!(answer.Body instanceof Readable)) throw new Error('S3 GetObject answered no stream');
      if (range !== undefined && !answer.ContentRange?.startsWith(`bytes ${range.start}-${range.end}/`)) {
        answer.Body.destroy();
        throw new Error(`S3 answered the range "${answer.ContentRange ?? 'none'}" for bytes ${range.start}-${range.end}`);
      }
      return answer.Body;
    } catch (err) {
      if (isNotFound(err)) throw new StoredObjectNotFoundError(name, (await this.stat(name)) !== null);
      throw err;
    }
  }

  async stat(name: string): Promise<StoredObject | null> {
    assertObjectName(name);
    const complete = await this.head(name);
    if (complete !== null) return { name, size: complete.size, complete: true, modifiedAt: complete.modifiedAt };
    const [info, tail] = await Promise.all([this.info(name), this.head(`${name}.part`)]);
    const uploads = info?.uploadId !== undefined ? [info.uploadId] : await this.multipartUploadsOf(name);
    if (info === null && tail === null && uploads.length === 0) return null;
    let size = tail?.size ?? 0;
    for (const uploadId of uploads) size += await this.partsSize(name, uploadId);
    const modifiedAt = new Date(Math.max(info?.modifiedAt.getTime() ?? 0, tail?.modifiedAt.getTime() ?? 0));
    return { name, size, complete: false, modifiedAt };
  }

  async delete(name: string): Promise<void> {
    assertObjectName(name);
    // Abort every multipart upload of the key first (its parts are invisible to ListObjects and
    // would be billed and kept forever), then the objects: the record last, so that a crash half
    // way leaves something list() still finds.
    const info = await this.info(name);
    const uploadIds = new Set(await this.multipartUploadsOf(name));
    if (info?.uploadId !== undefined) uploadIds.add(info.uploadId);
    for (const uploadId of uploadIds) {
      try {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: name, UploadId: uploadId }));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    await Promise.all([name, `${name}.part`].map((key) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }))));
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: `${name}.info` }));
  }

  async *list(): AsyncIterable<StoredObject> {
    // Every key of the bucket, grouped by object name; then the multipart uploads whose key has no
    // object (an upload whose .info is already gone still holds parts).
    const pieces = new Map<string, { complete?: { size: number; at: number }; tail?: number; at: number; info: boolean }>();
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, ContinuationToken: token }));
      for (const entry of page.Contents ?? []) {
        const key = entry.Key ?? '';
        const dot = key.indexOf('.');
        const name = dot === -1 ? key : key.slice(0, dot);
        const suffix = dot === -1 ? '' : key.slice(dot);
        if (!isObjectName(name) || !['', '.info', '.part'].includes(suffix)) continue;
        const at = entry.LastModified?.getTime() ?? 0;
        const piece = pieces.get(name) ?? { at: 0, info: false };
        piece.at = Math.max(piece.at, at);
        if (suffix === '') piece.complete = { size: entry.Size ?? 0, at };
        else if (suffix === '.part') piece.tail = entry.Size ?? 0;
        else piece.info = true;
        pieces.set(name, piece);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    const uploads = await this.allMultipartUploads();
    for (const upload of uploads) {
      if (!pieces.has(upload.key)) pieces.set(upload.key, { at: upload.initiated, info: false });
    }
    for (const name of [...pieces.keys()].sort()) {
      const piece = pieces.get(name)!;
      if (piece.complete !== undefined) {
        yield { name, size: piece.complete.size, complete: true, modifiedAt: new Date(piece.complete.at) };
        continue;
      }
      let size = piece.tail ?? 0;
      for (const upload of uploads) if (upload.key === name) size += await this.partsSize(name, upload.uploadId);
      yield { name, size, complete: false, modifiedAt: new Date(piece.at) };
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private async head(key: string): Promise<{ size: number; modifiedAt: Date } | null> {
    try {
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: answer.ContentLength ?? 0, modifiedAt: answer.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /** The tus record NAME.info: its multipart upload id (in the object's metadata) and when it was written. */
  private async info(name: string): Promise<{ uploadId: string | undefined; modifiedAt: Date } | null> {
    try {
      const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: `${name}.info` }));
      return { uploadId: answer.Metadata?.['upload-id'], modifiedAt: answer.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  private async partsSize(name: string, uploadId: string): Promise<number> {
    let size = 0;
    let marker: string | undefined;
    try {
      do {
        const page = await this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key: name, UploadId: uploadId, PartNumberMarker: marker }));
        for (const part of page.Parts ?? []) size += part.Size ?? 0;
        marker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
      } while (marker !== undefined);
    } catch (err) {
      if (!isNotFound(err)) throw err; // completed or aborted meanwhile
    }
    return size;
  }

  private async multipartUploadsOf(name: string): Promise<string[]> {
    return (await this.allMultipartUploads(name)).filter((u) => u.key === name).map((u) => u.uploadId);
  }

  private async allMultipartUploads(prefix?: string): Promise<Array<{ key: string; uploadId: string; initiated: number }>> {
    const found: Array<{ key: string; uploadId: string; initiated: number }> = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.client.send(new ListMultipartUploadsCommand({
        Bucket: this.bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker,
      }));
      for (const upload of page.Uploads ?? []) {
        if (upload.Key !== undefined && upload.UploadId !== undefined && isObjectName(upload.Key)) {
          found.push({ key: upload.Key, uploadId: upload.UploadId, initiated: upload.Initiated?.getTime() ?? 0 });
        }
      }
      if (!page.IsTruncated) return found;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
  }
}

class NoCache implements KvStore<MetadataValue> {
  async get(): Promise<MetadataValue | undefined> {
    return undefined;
  }
  async set(): Promise<void> {}
  async delete(): Promise<void> {}
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  return ['NotFound', 'NoSuchKey', 'NoSuchUpload'].includes(e?.name ?? e?.Code ?? '') || e?.$metadata?.httpStatusCode === 404;
}
