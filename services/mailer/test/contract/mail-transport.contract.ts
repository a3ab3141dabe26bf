import type { ParsedMail } from 'mailparser';
import type { MailTransport, OutgoingEmail } from '../../src/domain/mail-transport';

export interface TransportHarness {
  transport: MailTransport;
  /** The messages the far side received so far, parsed. */
  received(): Promise<ParsedMail[]>;
}

export const sampleEmail = (n: number): OutgoingEmail => ({
  messageId: `<cmd-${n}@vanish.test>`,
  from: 'vanish <notes@vanish.test>',
  to: `reader${n}@example.com`,
  subject: `A note was shared with you on vanish (${n})`,
  text: `Hello,\n\nhttps://vanish.test/abc-${n}\n\nÜnïcödé ✓\n`,
  html: `<p>Hello,</p><p><a href="https://vanish.test/abc-${n}">https://vanish.test/abc-${n}</a></p>`,
  headers: {
    'List-Unsubscribe': '<https://vanish.test/unsubscribe/u1.abc.def>',
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    'Auto-Submitted': 'auto-generated',
  },
});

/** The MailTransport contract, run against the SMTP and the file transport. */
export function mailTransportContract(name: string, open: () => Promise<TransportHarness>, close: () => Promise<void>): void {
  describe(`MailTransport contract: ${name}`, () => {
    let h: TransportHarness;
    beforeEach(async () => { h = await open(); });
    afterEach(async () => { await close(); });

    it('when an e-mail is sent, then it arrives whole: recipient, subject, text, HTML, Message-ID and unsubscribe headers', async () => {
      await h.transport.send(sampleEmail(1));
      const [mail] = await h.received();
      expect(mail).toBeDefined();
      expect((mail!.to as { text: string }).text).toBe('reader1@example.com');
      expect(mail!.from?.value).toEqual([{ name: 'vanish', address: 'notes@vanish.test' }]);
      expect(mail!.subject).toBe('A note was shared with you on vanish (1)');
      expect(mail!.text).toContain('https://vanish.test/abc-1');
      expect(mail!.text).toContain('Ünïcödé ✓');
      expect(mail!.html).toContain('<a href="https://vanish.test/abc-1">');
      expect(mail!.messageId).toBe('<cmd-1@vanish.test>');
      const header = (key: string) => mail!.headerLines.find((line) => line.key === key)?.line;
      expect(header('list-unsubscribe')).toBe('List-Unsubscribe: <https://vanish.test/unsubscribe/u1.abc.def>');
      expect(header('list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    });

    it('when the text has lines of a single dot or starting with dots, long lines and other scripts, then it arrives exactly as written', async () => {
      const text = ['.', '..two dots', `${'x'.repeat(75)}.dot after a soft break`, 'Ваша заметка прочитана ✓ '.repeat(6), 'a = b', ''].join('\n');
      await h.transport.send({ ...sampleEmail(6), subject: 'Ваша заметка на vanish была прочитана', text });
      const [mail] = await h.received();
      expect(mail!.text).toBe(text);
      expect(mail!.subject).toBe('Ваша заметка на vanish была прочитана');
    });

    it('when several e-mails are sent at once, then each arrives once', async () => {
      await Promise.all([2, 3, 4, 5].map((n) => h.transport.send(sampleEmail(n))));
      const mails = await h.received();
      expect(mails.map((m) => m.messageId).sort()).toEqual(['<cmd-2@vanish.test>', '<cmd-3@vanish.test>', '<cmd-4@vanish.test>', '<cmd-5@vanish.test>']);
    });

    it('when verified while the far side is reachable, then it reports true', async () => {
      await expect(h.transport.verify()).resolves.toBe(true);
    });
  });
}
