import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Transporter } from 'nodemailer';
import type StreamTransport from 'nodemailer/lib/stream-transport';
import { maskEmail, type Logger } from '@vanish/common';
import type { MailTransport, OutgoingEmail } from '../../domain/mail-transport';

/**
 * The embedded default (no SMTP_URL): each e-mail becomes an .eml file in a folder, and a log line
 * says so with the recipient masked, so a newcomer can open what would have been sent.
 */
export class FileMailTransport implements MailTransport {
  readonly kind = 'file' as const;
  /**
   * Built with the first e-mail: nodemailer (33 modules, about 0.7 MB of heap) is loaded only by a process
   * that writes one (docs/performance.md, issue 35, "What the heap holds").
   */
  private composer: Transporter<StreamTransport.SentMessageInfo> | undefined;

  constructor(private readonly options: { directory: string; logger: Logger }) {}

  async send(email: OutgoingEmail): Promise<void> {
    this.composer ??= (require('nodemailer') as typeof import('nodemailer')).createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
    const info = await this.composer.sendMail({
      messageId: email.messageId,
      from: email.from,
      to: email.to,
      subject: email.subject,
      text: email.text,
      html: email.html,
      headers: { ...email.headers },
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    await mkdir(this.options.directory, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const name = `${stamp}-${email.messageId.replace(/[^A-Za-z0-9-]/g, '_').slice(0, 80)}.eml`;
    const file = join(this.options.directory, name);
    // Written whole, then renamed: a reader never sees half an e-mail.
    await writeFile(`${file}.tmp`, info.message as Buffer, { mode: 0o600 });
    await rename(`${file}.tmp`, file);
    this.options.logger.info('e-mail written to the mail outbox folder (no SMTP_URL set)', {
      recipient: maskEmail(email.to), file, subject: email.subject,
    });
  }

  async verify(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
