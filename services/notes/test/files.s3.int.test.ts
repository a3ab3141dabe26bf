import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3Server } from '@vanish/testkit/s3-server';
import { S3FileStorage } from '../src/files/storage/s3-file-storage';
import { filesContract } from './contract/files.contract';

// s3rver answers each call in milliseconds alone and in seconds on a loaded machine: generous bounds.
jest.setTimeout(120_000);

// SQLite and S3-compatible object storage (s3rver through testkit): every way a note ends leaves no
// object in the bucket either; the test reads the bucket through a second client.
filesContract('SQLite and an S3 bucket', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-files-s3db-'));
  return { url: `sqlite:${join(dir, 'notes.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}, async () => {
  const server = await startS3Server();
  const open = () => new S3FileStorage({
    endpoint: server.endpoint, region: server.region, bucket: server.bucket,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey }, forcePathStyle: true,
  });
  const storage = open();
  const inspect = open();
  return {
    storage,
    inspect,
    close: async () => {
      await inspect.close();
      await server.close();
    },
  };
});
