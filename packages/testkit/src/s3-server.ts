import { mkdtemp, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

/**
 * An S3 server on this machine for tests: s3rver (the maintained @20minutes fork, Node 24), on
 * 127.0.0.1 and a free port, storing in a temp folder. Production uses MinIO, Ceph RGW, R2 or AWS S3
 * (docs/files.md); no registry here offers any of them.
 *
 * s3rver implements CreateMultipartUpload, UploadPart and CompleteMultipartUpload but not the three
 * multipart calls that resumable uploads and deletion need: ListParts (`GET /bucket/key?uploadId=`)
 * and AbortMultipartUpload (`DELETE /bucket/key?uploadId=`) answer 405 MethodNotAllowed, and
 * ListMultipartUploads (`GET /bucket?uploads`) answers 501 NotImplemented. This module answers those
 * three from s3rver's own upload folder (`BUCKET/._S3rver_uploads/UPLOAD_ID/PART` and `PART.md5`), as
 * S3 documents them. It also answers `GET` with `Range: bytes=0-0` (one byte), which s3rver reads as
 * the whole object (it takes an end of 0 for "no end"). Every other call is s3rver's. `files()` lists what the bucket holds on disk, so
 * a test can look in the bucket itself rather than ask the API.
 */
export interface S3TestServer {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** Every file s3rver keeps for the bucket (objects, their metadata, multipart parts), relative paths. */
  files(): Promise<string[]>;
  close(): Promise<void>;
}

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
  set(name: string, value: string): void;
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;
interface S3rverInstance {
  middleware: Middleware[];
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

const UPLOADS = '._S3rver_uploads';

export async function startS3Server(options: { bucket?: string } = {}): Promise<S3TestServer> {
  const bucket = options.bucket ?? 'vanish-files';
  const directory = await mkdtemp(join(tmpdir(), 'vanish-s3-'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const S3rver = require('@20minutes/s3rver') as S3rverClass;
  // allowMismatchedSignatures: s3rver canonicalizes the path `/bucket/` as `/bucket`, while the AWS SDK
  // signs ListObjectsV2 with the slash, so s3rver would refuse every listing as SignatureDoesNotMatch.
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }], allowMismatchedSignatures: true });
  server.middleware.unshift(multipartGaps(directory));
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    region: 'us-east-1',
    files: async () => (await walk(join(directory, bucket))).map((p) => relative(join(directory, bucket), p)).sort(),
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

function multipartGaps(root: string): Middleware {
  return async (ctx, next) => {
    const [bucket, ...keyParts] = ctx.path.replace(/^\//, '').split('/').map(decodeURIComponent);
    const key = keyParts.join('/');
    const uploadId = typeof ctx.query.uploadId === 'string' ? ctx.query.uploadId : undefined;
    if (bucket && key && uploadId !== undefined && /^[0-9a-f]+$/.test(uploadId)) {
      const dir = join(root, bucket, UPLOADS, uploadId);
      if (ctx.method === 'GET') return listParts(ctx, dir, bucket, key, uploadId);
      if (ctx.method === 'DELETE') {
        if (!(await exists(dir))) return noSuchUpload(ctx);
        await rm(dir, { recursive: true, force: true });
        ctx.status = 204;
        return;
      }
    }
    if (bucket && key && uploadId === undefined && ctx.method === 'GET' && ctx.headers.range === 'bytes=0-0') {
      return firstByte(ctx, join(root, bucket, ...key.split('/').slice(0, -1), `${key.split('/').pop()}._S3rver_object`), next);
    }
    if (bucket && !key && ctx.method === 'GET' && 'uploads' in ctx.query) {
      return listMultipartUploads(ctx, join(root, bucket, UPLOADS), bucket, typeof ctx.query.prefix === 'string' ? ctx.query.prefix : '');
    }
    return next();
  };
}

async function listParts(ctx: KoaContext, dir: string, bucket: string, key: string, uploadId: string): Promise<void> {
  if (!(await exists(dir))) return noSuchUpload(ctx);
  const marker = Number(ctx.query['part-number-marker'] ?? 0);
  const numbers = (await readdir(dir)).filter((f) => /^\d+$/.test(f)).map(Number).filter((n) => n > marker).sort((a, b) => a - b);
  const parts = await Promise.all(numbers.map(async (n) => {
    const [s, md5] = await Promise.all([stat(join(dir, String(n))), readFile(join(dir, `${n}.md5`), 'utf8')]);
    return `<Part><PartNumber>${n}</PartNumber><LastModified>${s.mtime.toISOString()}</LastModified><ETag>&quot;${md5.trim()}&quot;</ETag><Size>${s.size}</Size></Part>`;
  }));
  xml(ctx, `<ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${esc(bucket)}</Bucket><Key>${esc(key)}</Key>` +
    `<UploadId>${uploadId}</UploadId><PartNumberMarker>${marker}</PartNumberMarker><MaxParts>10000</MaxParts><IsTruncated>false</IsTruncated>` +
    `${parts.join('')}</ListPartsResult>`);
}

async function listMultipartUploads(ctx: KoaContext, uploadsDir: string, bucket: string, prefix: string): Promise<void> {
  const ids = (await exists(uploadsDir)) ? await readdir(uploadsDir) : [];
  const uploads: string[] = [];
  for (const id of ids.sort()) {
    const key = await readFile(join(uploadsDir, id, 'key'), 'utf8').catch(() => undefined);
    if (key === undefined || !key.startsWith(prefix)) continue;
    const initiated = (await stat(join(uploadsDir, id, 'key'))).mtime.toISOString();
    uploads.push(`<Upload><Key>${esc(key)}</Key><UploadId>${id}</UploadId><Initiated>${initiated}</Initiated><StorageClass>STANDARD</StorageClass></Upload>`);
  }
  xml(ctx, `<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${esc(bucket)}</Bucket>` +
    `<Prefix>${esc(prefix)}</Prefix><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated>${uploads.join('')}</ListMultipartUploadsResult>`);
}

async function firstByte(ctx: KoaContext, objectPath: string, next: () => Promise<void>): Promise<void> {
  const size = await stat(objectPath).then((s) => s.size, () => undefined);
  if (size === undefined || size === 0) return next(); // s3rver's own answer (NoSuchKey, InvalidRange)
  const handle = await open(objectPath, 'r');
  try {
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, 0);
    ctx.status = 206;
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('Content-Range', `bytes 0-0/${size}`);
    ctx.type = 'application/octet-stream';
    ctx.body = byte;
  } finally {
    await handle.close();
  }
}

function noSuchUpload(ctx: KoaContext): void {
  ctx.status = 404;
  xml(ctx, '<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>', 404);
}

function xml(ctx: KoaContext, body: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(path)));
    else out.push(path);
  }
  return out;
}
