import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { ConsumerSealer, MAIL_SEAL_PURPOSE, createLogger, publicRingOf } from '@vanish/common';
import { InProcessBus } from '@vanish/bus';
import { waitFor } from '@vanish/testkit/net';
import { loadMailerConfig } from '../src/config';
import { createMailerService } from '../src/compose';

/** The embedded defaults, as in the all-in-one process: in-process bus, SQLite, .eml files, generated keys. */
describe('mailer with its embedded defaults', () => {
  it('when a mail command arrives on the shared in-process bus without SMTP_URL, then an .eml is written and logged with the recipient masked', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mailer-embedded-'));
    const logged: string[] = [];
    const logger = createLogger('mailer', 'info', { write: (line: string) => { logged.push(line); } } as never);
    const bus = new InProcessBus();
    const config = loadMailerConfig({ DATA_DIR: dataDir, PORT: '0', ADMIN_PORT: '0' });
    const mailer = await createMailerService(config, { bus, logger });
    try {
      await mailer.start();
      expect(existsSync(join(dataDir, 'mailer.db'))).toBe(true);
      const sealer = new ConsumerSealer(publicRingOf(config.mailPrivateKeys), MAIL_SEAL_PURPOSE);
      const id = randomUUID();
      const sealed = sealer.seal(JSON.stringify({ kind: 'notification', to: 'newcomer@example.com', read_at: '2026-01-01 00:00:00', views_left: 0 }));
      await bus.publish([{ id, routingKey: 'mail.send', body: JSON.stringify({ id, event: 'mail.send', version: 1, timestamp: new Date().toISOString(), sealed }) }]);
      const outbox = join(dataDir, 'outbox');
      const emlFiles = () => (existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.eml')) : []);
      const files = await waitFor(() => (emlFiles().length === 1 ? emlFiles() : undefined));
      const mail = await simpleParser(readFileSync(join(outbox, files[0]!)));
      expect(mail.subject).toBe('Your vanish note was read');
      expect((mail.to as { text: string }).text).toBe('newcomer@example.com');
      await waitFor(() => logged.some((l) => l.includes('mail outbox folder')));
      const text = logged.join('');
      expect(text).toContain('n***@e***.com');
      expect(text).not.toContain('newcomer@');
    } finally {
      await mailer.stop();
      await bus.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
