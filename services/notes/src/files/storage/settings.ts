import { join } from 'node:path';
import { refuseInsecureTransportInProduction, type EnvReader } from '@vanish/common';
import type { S3Settings } from './s3-file-storage';

/** FILE_STORAGE and the S3_* variables (docs/configuration.md, docs/files.md). */
export type FileStorageSettings =
  | { kind: 'fs'; directory: string }
  | ({ kind: 's3' } & S3Settings);

/** What says where files go (the keys alone do not: a Secret may hold them while FILE_STORAGE=fs). */
const S3_PLACE = ['S3_ENDPOINT', 'S3_REGION', 'S3_BUCKET', 'S3_FORCE_PATH_STYLE'] as const;

/**
 * Every S3_* variable is read whatever FILE_STORAGE says, so that a half configuration is seen: with
 * FILE_STORAGE=s3 the bucket is required and the two keys go together; a bucket, endpoint, region or
 * path style set while files go to the local file system is refused in production (the operator meant S3 and would lose the files with the
 * container) and only warned about elsewhere.
 */
export function readFileStorageSettings(reader: EnvReader, dataDir: string, warn: (message: string) => void): FileStorageSettings {
  const kind = reader.oneOf('FILE_STORAGE', ['fs', 's3'] as const, 'fs');
  const endpoint = reader.url('S3_ENDPOINT', undefined, ['http:', 'https:']);
  const region = reader.str('S3_REGION', 'us-east-1');
  const bucket = reader.str('S3_BUCKET');
  const accessKeyId = reader.str('S3_ACCESS_KEY_ID');
  const secretAccessKey = reader.str('S3_SECRET_ACCESS_KEY');
  const forcePathStyle = reader.bool('S3_FORCE_PATH_STYLE', false);

  // The keys never travel (requests are signed), but the ciphertext and the object names would.
  refuseInsecureTransportInProduction(reader, {
    variable: 'S3_ENDPOINT',
    risk: kind === 's3' && endpoint !== undefined && /^http:/i.test(endpoint) ? 'http:// sends the files\' ciphertext and object names in plaintext' : undefined,
    optOut: 'S3_ALLOW_PLAINTEXT',
  });
  if (kind === 'fs') {
    const set = S3_PLACE.filter((name) => reader.raw(name) !== undefined);
    if (set.length > 0) {
      const message = `${set.join(', ')} set but FILE_STORAGE is not s3: files are stored under DATA_DIR/files, not in the bucket; set FILE_STORAGE=s3 (docs/files.md) or remove ${set.length > 1 ? 'them' : 'it'}`;
      if (reader.isProduction) reader.problem(message);
      else warn(message);
    }
    return { kind, directory: join(dataDir, 'files') };
  }

  if (bucket === undefined) reader.problem('S3_BUCKET: required with FILE_STORAGE=s3 (the bucket that holds the files)');
  else if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) reader.problem('S3_BUCKET: 3 to 63 lower-case letters, digits, dots and dashes');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    reader.problem(`${accessKeyId === undefined ? 'S3_ACCESS_KEY_ID' : 'S3_SECRET_ACCESS_KEY'}: required with ${accessKeyId === undefined ? 'S3_SECRET_ACCESS_KEY' : 'S3_ACCESS_KEY_ID'} (set both, or neither to use the SDK's own credentials: an instance role, web identity)`);
  }
  const credentials = accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : undefined;
  return { kind, endpoint: endpoint?.replace(/\/+$/, ''), region, bucket: bucket ?? '', credentials, forcePathStyle };
}
