import { mkdtempSync, rmSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@vanish/common';
import { InProcessBus } from '@vanish/bus';
import { createGatewayService, loadGatewayConfig } from '@vanish/gateway';
import { createMailerService, loadMailerConfig } from '@vanish/mailer';
import { createNotesService, loadNotesConfig } from '@vanish/notes';
import { createStatsService, loadStatsConfig } from '@vanish/stats';

export type Door = 'gateway' | 'notes' | 'stats' | 'mailer';

export interface Topology {
  /** Public ports of each service, the gateway's included. */
  ports: Record<Door, number>;
  adminPorts: Record<Door, number>;
  /** Every log line every service wrote, raw, in order. */
  lines: string[];
  /** Issues an unsubscribe token as the mailer would put it in an e-mail. */
  unsubscribeToken(): string;
  stop(): Promise<void>;
}

/**
 * The four real services in this process on port 0, each on its own SQLite file in a temp
 * directory, joined by an in-process bus, the gateway pointed at the others: the all-in-one's
 * wiring, with every log line captured.
 */
export async function startTopology(): Promise<Topology> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vanish-odd-paths-'));
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const logger = createLogger('topology', 'debug', sink as unknown as Parameters<typeof createLogger>[2]);
  const bus = new InProcessBus({ logger });
  const base = { DATA_DIR: dataDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'debug', PUBLIC_BASE_URL: 'http://127.0.0.1:8080' };
  const stops: Array<() => Promise<void>> = [];
  const ports = {} as Record<Door, number>;
  const adminPorts = {} as Record<Door, number>;
  try {
    const notes = await createNotesService(loadNotesConfig({ ...base, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}` }), { bus, logger: logger.child('notes') });
    stops.push(() => notes.stop());
    ({ port: ports.notes, adminPort: adminPorts.notes } = await notes.start());
    await notes.whenMigrated();
    const stats = await createStatsService(loadStatsConfig({ ...base, DATABASE_URL: `sqlite:${join(dataDir, 'stats.db')}` }), { bus, logger: logger.child('stats') });
    stops.push(() => stats.stop());
    ({ port: ports.stats, adminPort: adminPorts.stats } = await stats.start());
    const mailer = await createMailerService(loadMailerConfig({ ...base, DATABASE_URL: `sqlite:${join(dataDir, 'mailer.db')}` }), { bus, logger: logger.child('mailer') });
    stops.push(() => mailer.stop());
    ({ port: ports.mailer, adminPort: adminPorts.mailer } = await mailer.start());
    const gateway = await createGatewayService(loadGatewayConfig({
      ...base,
      NOTES_URL: `http://127.0.0.1:${ports.notes}`,
      STATS_URL: `http://127.0.0.1:${ports.stats}`,
      MAILER_URL: `http://127.0.0.1:${ports.mailer}`,
      RATE_LIMIT_CREATE_PER_HOUR: '1000000',
      RATE_LIMIT_VIEW_PER_HOUR: '1000000',
      RATE_LIMIT_STATS_PER_HOUR: '1000000',
    }), { logger: logger.child('gateway') });
    stops.push(() => gateway.stop());
    ({ port: ports.gateway, adminPort: adminPorts.gateway } = await gateway.start());

    return {
      ports,
      adminPorts,
      lines,
      unsubscribeToken: () => mailer.tokens.issue('ab'.repeat(32)),
      async stop() {
        for (const stop of stops.reverse()) await stop();
        await bus.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await bus.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * Sends `target` as the request line's target exactly as given: no URL parsing, no normalising of
 * `..` or percent-escapes (fetch and `new URL` would repair the very paths under test).
 */
export function rawRequest(port: number, method: string, target: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: target, headers, agent: false, timeout: 20_000 });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${method} ${target} within 20 s`)));
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.end(body);
  });
}
