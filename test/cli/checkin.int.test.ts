import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ManualClock, silentLogger } from '@vanish/common';
import { createNotesService, loadNotesConfig, type NotesService } from '@vanish/notes';
import { freePort } from '@vanish/testkit/net';
import { runToEnd } from '@vanish/testkit/process';

const BIN = resolve(__dirname, '../../packages/cli/bin/vanish.js');
const HOUR = 3_600_000;

const vanish = (args: string[], stdin = '') => runToEnd(process.execPath, [BIN, ...args], { env: { ...process.env, VANISH_URL: undefined, VANISH_PASSCODE: undefined }, stdin });

/**
 * `vanish receipts checkin` (DECISIONS 16) as a user runs it, against the real notes service in this process
 * (SQLite, its clock moved by the test), and `vanish open` on a note that is not open yet.
 */
describe('vanish receipts checkin and a held note', () => {
  const clock = new ManualClock(new Date('2026-11-27T12:00:00Z'));
  let dataDir: string;
  let notes: NotesService;
  let base: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'vanish-cli-checkin-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    notes = await createNotesService(loadNotesConfig({
      DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`, PORT: String(port), ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent',
      PUBLIC_BASE_URL: base, SWEEP_INTERVAL_MS: '60000', HEARTBEAT_INTERVAL_MS: '60000',
    }), { logger: silentLogger, clock, kdf: { N: 1024, r: 8, p: 1 } });
    await notes.start();
  });
  afterAll(async () => {
    await notes?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('when the creator checks in from the command line, then the switch stays held for its period from then; once a check-in was missed, it says too late and the note opens', async () => {
    const created = await notes.notes.create({
      content: 'if I am gone', expiryType: 'view', expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null, releaseAfterSilenceHours: 48,
    });
    const receiptLink = `${base}/r/${created.receiptUrl!.split('/r/')[1]}`;
    const noteLink = `${base}/${created.uuid}`;

    const held = await vanish(['open', noteLink]);
    expect(held.code).toBe(1);
    expect(held.stderr).toContain('the note is not open yet');
    expect(held.stderr).toContain('Nothing was consumed');

    clock.advance(40 * HOUR);
    const first = await vanish(['receipts', 'checkin', receiptLink]);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    expect(first.stdout).toBe('Checked in. The note stays closed until 2026-12-01 04:00:00 UTC unless you check in again before then.\n');

    clock.advance(49 * HOUR);
    const late = await vanish(['receipts', 'checkin', receiptLink]);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('too late: the note opened at 2026-12-01 04:00:00 UTC');
    const opened = await vanish(['open', noteLink]);
    expect(opened.stdout).toBe('if I am gone');

    const plain = await notes.notes.create({ content: 'no switch', expiryType: 'view', expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null });
    const none = await vanish(['receipts', 'checkin', `${base}/r/${plain.receiptUrl!.split('/r/')[1]}`]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no dead-man\'s switch');
    const usage = await vanish(['receipts', 'checkin', 'http://vanish.example/r/x']);
    expect(usage.code).toBe(2);
  });

  it('when vanish create is given a switch, then it says so, and the receipt link it prints checks in', async () => {
    const made = await vanish(['create', '--server', base, '--release-after-silence', '2', '--shrink-after-first-view', '5'], 'sealed here');
    expect(made.code).toBe(0);
    expect(made.stderr).toContain('It stays closed while you check in at least every 2 hours');
    const receiptLink = /^(http:\/\/\S+\/r\/\S+)$/m.exec(made.stderr)![1]!;
    const checked = await vanish(['receipts', 'checkin', receiptLink]);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toMatch(/^Checked in\. The note stays closed until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    const held = await vanish(['open', made.stdout.trim()]);
    expect(held.stderr).toContain('the note is not open yet');
    expect((await vanish(['create', '--server', base, '--release-after-silence', '2', '--available-from', '2030-01-01 00:00:00'], 'x')).code).toBe(2);
  });
});
