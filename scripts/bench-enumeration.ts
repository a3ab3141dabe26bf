// `npm run build && tsc -p scripts/tsconfig.bench.json && node scripts/dist/bench-enumeration.js`
// Enumeration by timing (issue 9): does GET /api/view/{uuid}.php take the same time for a uuid that
// never existed, for a note that was destroyed (read to its max_views: the row is deleted) and for a
// note that expired (its row still present, past expires_at, before the sweeper purged it: the worst
// case)? A notes service (its own MariaDB database, sweeper effectively off) answers over HTTP; the
// three kinds are requested interleaved (the kind going first rotates) by one sequential
// client, SAMPLES each, and the medians are compared. A gap over 5% would be a bug.
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import mysql from 'mysql2/promise';
import { KeyRing, publicRingOf, silentLogger } from '@vanish/common';
import { createNotesService, loadNotesConfig } from '@vanish/notes';
import { freePort, percentile, randomKey, randomSuffix } from './bench-lib';

const MARIADB = (process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306').replace(/\/+$/, '');
const SAMPLES = Number(process.env.BENCH_ENUM_SAMPLES ?? 2_000);
const log = (message: string) => process.stderr.write(`[bench-enumeration ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function main(): Promise<void> {
  const database = `vanish_bench_enum_${randomSuffix()}`;
  const admin = await mysql.createConnection(`${MARIADB}/`);
  await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const port = await freePort();
  const config = loadNotesConfig({
    PORT: String(port), ADMIN_PORT: '0', DATABASE_URL: `${MARIADB}/${database}`, LOG_LEVEL: 'silent',
    MASTER_KEYS: `k1:${randomKey()}`, LOOKUP_KEY: randomKey(), MAIL_PUBLIC_KEYS: publicRingOf(KeyRing.generate('m1')).serialize(),
    SWEEP_INTERVAL_MS: String(24 * 3600 * 1000), DATA_DIR: tmpdir(),
  });
  const service = await createNotesService(config, { logger: silentLogger });
  try {
    await service.start();
    await service.whenMigrated();
    log(`creating ${SAMPLES} destroyed and ${SAMPLES} expired notes`);
    const destroyed: string[] = [];
    const expired: string[] = [];
    const input = { expiryType: 'view' as const, expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null };
    for (let i = 0; i < SAMPLES; i++) {
      const gone = await service.notes.create({ ...input, content: `destroyed ${i}` });
      await service.notes.reveal(gone.uuid, null);
      destroyed.push(gone.uuid);
      expired.push((await service.notes.create({ ...input, content: `expired ${i}`, expiryType: 'time', expiryHours: 1 })).uuid);
    }
    await admin.query(`UPDATE \`${database}\`.notes SET expires_at = ?`, [Date.now() - 60_000]);
    const unknown = Array.from({ length: SAMPLES }, () => randomUUID());

    const origin = `http://127.0.0.1:${port}`;
    const time = async (uuid: string): Promise<number> => {
      const started = process.hrtime.bigint();
      const response = await fetch(`${origin}/api/view/${uuid}.php`);
      await response.arrayBuffer();
      if (response.status !== 404) throw new Error(`expected 404, got ${response.status}`);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    for (let i = 0; i < 200; i++) await time(randomUUID()); // warm-up
    const samples = { unknown: [] as number[], destroyed: [] as number[], expired: [] as number[] };
    const kinds = [['unknown', unknown], ['destroyed', destroyed], ['expired', expired]] as const;
    for (let i = 0; i < SAMPLES; i++) {
      // Rotate which kind goes first, so no kind always follows the same one (position bias).
      for (let k = 0; k < 3; k++) {
        const [name, uuids] = kinds[(i + k) % 3]!;
        samples[name].push(await time(uuids[i]!));
      }
    }
    const median = (values: number[]) => percentile(values, 50);
    const m = { unknown: median(samples.unknown), destroyed: median(samples.destroyed), expired: median(samples.expired) };
    const gap = (a: number) => `${(((a - m.unknown) / m.unknown) * 100).toFixed(1)}%`;
    const lines = [
      `samples per kind: ${SAMPLES} (interleaved, one sequential client, notes on MariaDB)`,
      `median unknown:   ${m.unknown.toFixed(3)} ms`,
      `median destroyed: ${m.destroyed.toFixed(3)} ms (${gap(m.destroyed)} vs unknown)`,
      `median expired:   ${m.expired.toFixed(3)} ms (${gap(m.expired)} vs unknown)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await service.stop();
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
