import net from 'node:net';
import { freePort, canConnect } from '@vanish/testkit/net';
import { requireService, SERVICES } from '@vanish/testkit/services';
import { createTestDatabase } from '@vanish/testkit/mariadb';
import mysql from 'mysql2/promise';

describe('freePort and canConnect', () => {
  it('when a free port is asked for, then it can be bound and then accepts connections', async () => {
    const port = await freePort();
    expect(await canConnect('127.0.0.1', port, 300)).toBe(false);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    try {
      expect(await canConnect('127.0.0.1', port, 300)).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('requireService', () => {
  it('when the shared servers run, then it resolves for each', async () => {
    await requireService('mariadb');
    await requireService('redis');
    await requireService('rabbitmq');
  });

  it('when a server is unreachable, then it throws with the exact start command', async () => {
    const saved = SERVICES.redis.port;
    SERVICES.redis.port = await freePort();
    try {
      await expect(requireService('redis', 300)).rejects.toThrow(
        'Start it with: redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
      );
    } finally {
      SERVICES.redis.port = saved;
    }
  });
});

describe('createTestDatabase', () => {
  it('when created, then the url connects to an empty database of its own, and drop() removes it', async () => {
    const db = await createTestDatabase('vanish_testkit');
    expect(db.name).toMatch(/^vanish_testkit_[0-9a-f]{8}$/);
    expect(db.url).toBe(`mysql://root@127.0.0.1:3306/${db.name}`);
    const connection = await mysql.createConnection(db.url);
    try {
      const [tables] = await connection.query('SHOW TABLES');
      expect(tables).toEqual([]);
    } finally {
      await connection.end();
    }
    await db.drop();
    await db.drop();
    const root = await mysql.createConnection('mysql://root@127.0.0.1:3306/');
    try {
      const [rows] = await root.query('SHOW DATABASES LIKE ?', [db.name]);
      expect(rows).toEqual([]);
    } finally {
      await root.end();
    }
  });
});
