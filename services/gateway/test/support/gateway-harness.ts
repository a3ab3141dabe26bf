import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@vanish/common';
import { createGatewayService, loadGatewayConfig, type GatewayOverrides, type GatewayService } from '../../src';
import { TestUpstreams } from './test-upstream';

export interface CapturedLog {
  lines: string[];
  logger: Logger;
  text(): string;
  entries(): Array<Record<string, unknown>>;
}

/** A real pino logger writing into memory, so tests can read exactly what would be logged. */
export function captureLogs(): CapturedLog {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const logger = createLogger('gateway', 'debug', sink as unknown as Parameters<typeof createLogger>[2]);
  return {
    lines,
    logger,
    text: () => lines.join('\n'),
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

export interface RunningGateway {
  url: string;
  adminUrl: string;
  service: GatewayService;
  logs: CapturedLog;
  stop(): Promise<void>;
}

export const TEST_LIMITER_KEY = randomBytes(32).toString('base64');

/** Loads the gateway's config from a test environment (ephemeral ports) and starts it in-process. */
export async function startGateway(env: Record<string, string | undefined>, overrides: GatewayOverrides = {}): Promise<RunningGateway> {
  const logs = captureLogs();
  const config = loadGatewayConfig({ PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LIMITER_KEY: TEST_LIMITER_KEY, LOG_LEVEL: 'debug', ...env });
  const service = await createGatewayService(config, { ...overrides, logger: logs.logger });
  const { port, adminPort } = await service.start();
  const scheme = config.tls ? 'https' : 'http';
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    service,
    logs,
    stop: () => service.stop(),
  };
}

/** A Redis key prefix of this test's own (tests share the machine's Redis). */
export function testPrefix(name: string): string {
  return `vanish:test:gateway:${name}:${randomBytes(4).toString('hex')}`;
}

/**
 * Test upstreams on their own ports and a gateway in front of them (environment `env` added to theirs), started
 * before and stopped after the calling describe block; the limiter is the gateway's in-memory one.
 */
export function gatewayInFrontOfUpstreams(env: Record<string, string>): { upstreams: TestUpstreams; gateway: () => RunningGateway } {
  const upstreams = new TestUpstreams();
  let gw: RunningGateway | undefined;
  beforeAll(async () => {
    await upstreams.start();
    gw = await startGateway({ ...upstreams.env, ...env });
  });
  afterAll(async () => {
    await gw?.stop();
    await upstreams.stop();
  });
  return { upstreams, gateway: () => gw! };
}

/** Polls `condition` every 5 ms until it holds; fails naming `what` after `withinMs`. */
export async function until(condition: () => boolean, what: string, withinMs = 5000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
