import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, KeyRing, publicRingOf } from '@vanish/common';
import { loadNotesConfig } from '../../config';

let dataDir: string;
beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'notes-files-config-')); });
afterEach(() => { rmSync(dataDir, { recursive: true, force: true }); });

const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const productionEnv = () => ({
  NODE_ENV: 'production',
  DATA_DIR: dataDir,
  DATABASE_URL: 'mysql://notes:secret@db:3306/notes?ssl-mode=VERIFY_IDENTITY',
  AMQP_URL: 'amqps://guest:guest@rabbit:5671',
  PUBLIC_BASE_URL: 'https://notes.example.com',
  MASTER_KEYS: `k1:${KEY(1)}`,
  LOOKUP_KEY: KEY(3),
  MAIL_PUBLIC_KEYS: publicRingOf(KeyRing.parse(`m1:${KEY(4)}`)).serialize(),
  RECEIPT_SIGNING_KEYS: `r1:${KEY(4)}`,
});
const S3 = { FILE_STORAGE: 's3', S3_ENDPOINT: 'https://minio.internal:9000/', S3_BUCKET: 'vanish-files', S3_ACCESS_KEY_ID: 'vanish', S3_SECRET_ACCESS_KEY: 'secret', S3_FORCE_PATH_STYLE: 'true' };

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadNotesConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('file storage settings', () => {
  it('when nothing is set, then files go to the file system under DATA_DIR/files', () => {
    expect(loadNotesConfig({ DATA_DIR: dataDir }).fileStorage).toEqual({ kind: 'fs', directory: join(dataDir, 'files') });
  });

  it('when FILE_STORAGE=s3 is complete, then the S3 settings are read (the secret also from S3_SECRET_ACCESS_KEY_FILE)', () => {
    const secretFile = join(dataDir, 's3-secret');
    writeFileSync(secretFile, 'from-file\n');
    const { S3_SECRET_ACCESS_KEY: _unused, ...withoutSecret } = S3;
    expect(loadNotesConfig({ ...productionEnv(), ...withoutSecret, S3_SECRET_ACCESS_KEY_FILE: secretFile }).fileStorage).toEqual({
      kind: 's3', endpoint: 'https://minio.internal:9000', region: 'us-east-1', bucket: 'vanish-files',
      credentials: { accessKeyId: 'vanish', secretAccessKey: 'from-file' }, forcePathStyle: true,
    });
    expect(loadNotesConfig({ ...productionEnv(), FILE_STORAGE: 's3', S3_BUCKET: 'b-1', S3_REGION: 'eu-west-3' }).fileStorage)
      .toMatchObject({ endpoint: undefined, region: 'eu-west-3', credentials: undefined, forcePathStyle: false });
  });

  it('when the S3 configuration is half given, then loading refuses, naming what is missing', () => {
    expect(problemsOf({ ...productionEnv(), FILE_STORAGE: 's3' })).toEqual([expect.stringMatching(/^S3_BUCKET: required with FILE_STORAGE=s3/)]);
    expect(problemsOf({ DATA_DIR: dataDir, ...S3, S3_SECRET_ACCESS_KEY: '' })).toEqual([expect.stringMatching(/^S3_SECRET_ACCESS_KEY: required with S3_ACCESS_KEY_ID/)]);
    expect(problemsOf({ DATA_DIR: dataDir, ...S3, S3_BUCKET: 'Not_A_Bucket' })).toEqual([expect.stringMatching(/^S3_BUCKET: 3 to 63/)]);
    expect(problemsOf({ DATA_DIR: dataDir, ...S3, S3_ENDPOINT: 'minio:9000' })).toEqual([expect.stringMatching(/^S3_ENDPOINT: /)]);
    expect(problemsOf({ DATA_DIR: dataDir, FILE_STORAGE: 'gcs' })).toEqual([expect.stringMatching(/^FILE_STORAGE: expected one of fs, s3/)]);
  });

  it('when production reaches the S3 endpoint over plain http, then it refuses by name unless S3_ALLOW_PLAINTEXT=true', () => {
    const plain = { ...productionEnv(), ...S3, S3_ENDPOINT: 'http://minio.internal:9000' };
    expect(problemsOf(plain)).toEqual([expect.stringMatching(/^S3_ENDPOINT: http:\/\/ sends the files' ciphertext.*S3_ALLOW_PLAINTEXT=true/)]);
    expect(loadNotesConfig({ ...plain, S3_ALLOW_PLAINTEXT: 'true' }).fileStorage).toMatchObject({ endpoint: 'http://minio.internal:9000' });
    expect(loadNotesConfig({ DATA_DIR: dataDir, ...S3, S3_ENDPOINT: 'http://127.0.0.1:9000' }).fileStorage.kind).toBe('s3');
  });

  it('when S3_* is set but FILE_STORAGE is not s3, then production refuses and elsewhere it is only a warning', () => {
    const { FILE_STORAGE: _fs, ...s3WithoutKind } = S3;
    expect(problemsOf({ ...productionEnv(), ...s3WithoutKind })).toEqual([expect.stringMatching(/^S3_ENDPOINT, S3_BUCKET, S3_FORCE_PATH_STYLE set but FILE_STORAGE is not s3/)]);
    // The keys alone do not say where files go (a Secret may carry them while FILE_STORAGE=fs).
    expect(loadNotesConfig({ ...productionEnv(), S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' }).fileStorage.kind).toBe('fs');
    const config = loadNotesConfig({ DATA_DIR: dataDir, S3_BUCKET: 'vanish-files' });
    expect(config.fileStorage.kind).toBe('fs');
    expect(config.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^S3_BUCKET set but FILE_STORAGE is not s3/)]));
  });
});
