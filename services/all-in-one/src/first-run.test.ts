import type { Logger } from '@vanish/common';
import { firstRunBanner, RoutineAtDebug, wantsReadableLogs } from './first-run';
import { loadAllInOneConfig } from './config';

describe('wantsReadableLogs', () => {
  it('follows the terminal unless LOG_FORMAT says', () => {
    expect(wantsReadableLogs({}, true)).toBe(true);
    expect(wantsReadableLogs({}, false)).toBe(false);
    expect(wantsReadableLogs({ LOG_FORMAT: 'json' }, true)).toBe(false);
    expect(wantsReadableLogs({ LOG_FORMAT: 'pretty' }, false)).toBe(true);
  });
});

describe('RoutineAtDebug', () => {
  function recorder() {
    const lines: Array<[string, string, string]> = [];
    const make = (category: string): Logger => ({
      debug: (msg) => lines.push(['debug', category, msg]),
      info: (msg) => lines.push(['info', category, msg]),
      warn: (msg) => lines.push(['warn', category, msg]),
      error: (msg) => lines.push(['error', category, msg]),
      child: (name) => make(category === '' ? name : `${category}/${name}`),
    });
    return { lines, logger: new RoutineAtDebug(make('')) };
  }

  it('turns request lines of access categories, service starts and stops, and "shutting down" into debug lines', () => {
    const { lines, logger } = recorder();
    logger.child('notes').child('access').info('request', { route: '/' });
    logger.child('gateway/access').info('request');
    logger.info('started', { component: 'notes' });
    logger.info('stopped', { component: 'notes' });
    logger.info('shutting down', { signal: 'SIGINT' });
    expect(lines.every(([level]) => level === 'debug')).toBe(true);
  });

  it('keeps everything else as it is, the last "stopped" line included', () => {
    const { lines, logger } = recorder();
    logger.child('notes').info('request');
    logger.info('stopped', { signal: 'SIGINT' });
    logger.child('notes/access').warn('request');
    expect(lines.map(([level]) => level)).toEqual(['info', 'info', 'warn']);
  });
});

describe('firstRunBanner', () => {
  it('names the URL, the data and keys folders and the embedded defaults in use', () => {
    const config = loadAllInOneConfig({ DATA_DIR: '/srv/vanish' });
    const banner = firstRunBanner(config, { gateway: { port: 8080, adminPort: 9080 } });
    expect(banner).toContain('open http://localhost:8080/');
    expect(banner).toContain('data:     /srv/vanish');
    expect(banner).toContain('back up:  /srv/vanish/keys');
    expect(banner).toContain('in-memory rate limits');
    expect(banner).toContain('keys generated once: MASTER_KEYS, LOOKUP_KEY, MAIL_PRIVATE_KEYS');
    expect(banner).toContain('files of notes stored under /srv/vanish/files');
  });

  it('leaves out the defaults that configuration replaced, and uses PUBLIC_BASE_URL', () => {
    const config = loadAllInOneConfig({
      DATA_DIR: '/srv/vanish', PUBLIC_BASE_URL: 'http://notes.lan:8080', REDIS_URL: 'redis://127.0.0.1:6379', SMTP_URL: 'smtp://127.0.0.1:25',
      MASTER_KEYS: 'k1:x', LOOKUP_KEY: 'x', MAIL_PRIVATE_KEYS_FILE: '/run/secrets/mail', FILE_STORAGE: 's3',
    });
    const banner = firstRunBanner(config, {});
    expect(banner).not.toContain('files of notes stored under');
    expect(banner).toContain('open http://notes.lan:8080/');
    expect(banner).not.toContain('in-memory rate limits');
    expect(banner).not.toContain('e-mails written as files');
    expect(banner).not.toContain('keys generated');
    expect(banner).toContain('back up:  your key settings');
  });
});
