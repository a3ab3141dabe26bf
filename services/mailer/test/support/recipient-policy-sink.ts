import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

/**
 * A real SMTP server (smtp-server) that rejects chosen recipients at RCPT TO, the way a receiving
 * server refuses an unknown mailbox (`550 5.1.1 <addr>: user unknown`). The testkit sink fails at
 * MAIL FROM, which says nothing about the recipient; this one is for recipient rejections.
 */
export interface RecipientPolicySink {
  url: string;
  accepted: string[];
  rcptAttempts: string[];
  /** Answer RCPT TO for this address with this code from now on. */
  reject(address: string, code: 450 | 451 | 550 | 551 | 553): void;
  /** Accept this address again. */
  accept(address: string): void;
  close(): Promise<void>;
}

export async function startRecipientPolicySink(): Promise<RecipientPolicySink> {
  const policies = new Map<string, number>();
  const accepted: string[] = [];
  const rcptAttempts: string[] = [];
  const server = new SMTPServer({
    secure: false, logger: false, disabledCommands: ['STARTTLS', 'AUTH'],
    onRcptTo(address, _session, callback) {
      rcptAttempts.push(address.address);
      const code = policies.get(address.address.toLowerCase());
      if (code === undefined) return callback();
      const error = new Error(`${code >= 500 ? '5.1.1' : '4.2.0'} <${address.address}>: ${code >= 500 ? 'user unknown' : 'try later'}`) as Error & { responseCode: number };
      error.responseCode = code;
      return callback(error);
    },
    onData(stream, session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        accepted.push(...session.envelope.rcptTo.map((r) => r.address));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    accepted,
    rcptAttempts,
    reject: (address, code) => { policies.set(address.toLowerCase(), code); },
    accept: (address) => { policies.delete(address.toLowerCase()); },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
