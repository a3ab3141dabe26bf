import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { freePort } from '@vanish/testkit/net';
import { type RunningProcess, runProcess } from '@vanish/testkit/process';
import { CLEARED_ENV } from './api-client';

/** What the browser suites share: Debian's Chromium, and the all-in-one as `npm start` runs it. */
export const ROOT = resolve(__dirname, '../..');
export const ALL_IN_ONE_MAIN = join(ROOT, 'services/all-in-one/dist/main.js');
export const SCREENSHOTS = join(ROOT, 'docs', 'screenshots');
/** No sandbox (containers), no GPU, and nothing that phones home from the test machine. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
// Headless Chromium says "HeadlessChrome", which bot lists rightly flag; this is the reader's browser.
export const DESKTOP_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
export const SLACK_PREVIEW = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';

/** Debian's Chromium (never a downloaded browser), with the suites' arguments and any extra ones. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: [...CHROMIUM_ARGS, ...extraArgs] });
}

const ALL_IN_ONE_PORTS = ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT'];

export interface AllInOne {
  app: RunningProcess;
  /** http://127.0.0.1:<PORT>, also its PUBLIC_BASE_URL. */
  base: string;
}

/**
 * The all-in-one on ports of its own, its data in dataDir, limits raised so that a suite's many requests from one
 * address are not refused; `env` adds to (or overrides) that.
 */
export async function startAllInOne(dataDir: string, env: Record<string, string> = {}, readyTimeoutMs = 90_000): Promise<AllInOne> {
  if (!existsSync(ALL_IN_ONE_MAIN)) throw new Error(`${ALL_IN_ONE_MAIN} is missing: run \`npm run build\` first (npm test does)`);
  const ports: Record<string, string> = {};
  for (const name of ALL_IN_ONE_PORTS) ports[name] = String(await freePort());
  const base = `http://127.0.0.1:${ports.PORT}`;
  const app = await runProcess({
    script: ALL_IN_ONE_MAIN,
    env: {
      ...CLEARED_ENV, ...ports, HOST: '127.0.0.1', DATA_DIR: dataDir, PUBLIC_BASE_URL: base, LOG_LEVEL: 'info',
      RATE_LIMIT_CREATE_PER_HOUR: '100000', RATE_LIMIT_VIEW_PER_HOUR: '100000', RATE_LIMIT_STATS_PER_HOUR: '100000',
      ...env,
    },
    readyLine: 'all-in-one ready',
    readyTimeoutMs,
    stopTimeoutMs: 30_000,
  });
  return { app, base };
}
