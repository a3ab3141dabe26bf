import { startS3Server } from '@vanish/testkit/s3-server';
import { S3FileStorage } from '../src/files/storage/s3-file-storage';
import { fileStorageContract } from './contract/file-storage.contract';

// The S3 adapter against s3rver, an S3 server that runs here from npm (with the three multipart calls
// it lacks answered by testkit's s3-server.ts). Production runs MinIO, Ceph RGW, R2 or AWS S3
// (docs/files.md): the adapter speaks only the S3 API, through the official AWS SDK.
fileStorageContract('S3-compatible object storage', async () => {
  const server = await startS3Server();
  const storage = new S3FileStorage({
    endpoint: server.endpoint,
    region: server.region,
    bucket: server.bucket,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    forcePathStyle: true,
  });
  return {
    storage,
    contents: () => server.files(),
    close: async () => {
      await storage.close();
      await server.close();
    },
  };
});
