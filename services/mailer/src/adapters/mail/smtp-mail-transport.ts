import { connect, type Socket } from 'node:net';
import type { Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { smtpTlsMode, smtpTlsOptions } from './smtp-tls';
import { MailDeliveryError, scrubAddresses, type MailTransport, type OutgoingEmail } from '../../domain/mail-transport';

export interface SmtpMailTransportOptions {
  /**
   * smtp://[user:pass@]host[:port] (STARTTLS when the server offers it; `?starttls=required` refuses
   * to send without it) or smtps://... (TLS from the first byte, port 465 by default).
   */
  url: string;
  /** CA bundle (PEM) to verify the server with (SMTP_TLS_CA_FILE); unset: Node's public roots. */
  ca?: string | Buffer;
  poolSize: number;
  /** Connecting, DNS and the server's greeting. */
  timeoutMs: number;
  /**
   * How long a server that greeted may stay silent, above all before its final reply to a message
   * (default: timeoutMs). Given up on, a message the server took is sent again: a duplicate.
   */
  replyTimeoutMs?: number;
}

/**
 * Sends through a pool of SMTP connections (nodemailer), every phase bounded by a timeout: connecting
 * and the greeting by timeoutMs, a silent server after that by replyTimeoutMs.
 */
export class SmtpMailTransport implements MailTransport {
  readonly kind = 'smtp' as const;
  private readonly transporter: Transporter<SMTPPool.SentMessageInfo>;

  constructor(options: SmtpMailTransportOptions) {
    // Required here, not at the top: a process that sends no SMTP (the all-in-one writes .eml files) does
    // not load nodemailer at all (docs/performance.md, issue 35, "What the heap holds").
    const nodemailer = require('nodemailer') as typeof import('nodemailer');
    this.transporter = nodemailer.createTransport(smtpOptions(options));
  }

  async send(email: OutgoingEmail): Promise<void> {
    try {
      const info = await this.transporter.sendMail({
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
      if (info.rejected && info.rejected.length > 0) {
        throw new MailDeliveryError('permanent', 'recipient rejected', { recipientRejected: true });
      }
    } catch (err) {
      throw classifySmtpError(err);
    }
  }

  async verify(): Promise<boolean> {
    try {
      await this.transporter.verify();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.transporter.close();
  }
}

export function smtpOptions(options: SmtpMailTransportOptions): SMTPPool.Options {
  const url = new URL(options.url);
  const mode = smtpTlsMode(options.url);
  const secure = mode === 'tls';
  return {
    pool: true,
    host: url.hostname,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    requireTLS: mode === 'starttls-required',
    ignoreTLS: mode === 'none',
    auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
    maxConnections: options.poolSize,
    maxMessages: 1000,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: Math.max(options.timeoutMs, options.replyTimeoutMs ?? options.timeoutMs),
    dnsTimeout: options.timeoutMs,
    tls: smtpTlsOptions(options.url, options.ca),
    logger: false,
    // Plain connections (STARTTLS upgrades them in place) without Nagle's algorithm: nodemailer
    // writes a message's end marker as its own small packet, which otherwise waits for the peer's
    // delayed ACK (~40 ms per e-mail). Measured 4x more e-mails/s per connection (docs/mailer.md).
    // The socket is handed over while still connecting: nodemailer's own connection timeout and
    // error handling then cover it (an error reported through getSocket's callback hangs the pool).
    getSocket: secure ? undefined : (_opts: unknown, callback: (err: Error | null, socketOptions?: { connection: Socket }) => void) => {
      const socket = connect({ host: url.hostname, port: url.port ? Number(url.port) : 587, noDelay: true });
      socket.on('error', () => undefined); // reported by nodemailer's own listener
      coalesceWritesPerTurn(socket);
      callback(null, { connection: socket });
    },
  } as SMTPPool.Options;
}

/**
 * nodemailer writes each SMTP command and each chunk of a message with its own write, and without
 * Nagle's algorithm each is its own send. The socket is corked from the first write of an event-loop
 * turn until the turn's I/O callbacks, ticks and promise jobs have run (setImmediate): a message's
 * chunks and its end marker, which its stream writes a tick later, leave as one send. Nothing is held
 * past the turn, so no reply waits on it (docs/mailer.md, Writes).
 */
export function coalesceWritesPerTurn(socket: Socket): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  const uncork = (): void => { socket.uncork(); };
  socket.write = ((...args: unknown[]): boolean => {
    if (socket.writableCorked === 0) {
      socket.cork();
      setImmediate(uncork);
    }
    return write(...args);
  }) as Socket['write'];
}

/**
 * nodemailer's errors → MailDeliveryError. 4xx, connection failures and timeouts are temporary.
 * Any other 5xx is permanent (dead-lettered, never retried); a 5xx at RCPT TO or DATA rejects
 * this recipient or this message, so the address is suppressed too (a 5xx at MAIL FROM refuses
 * our sender, not the recipient: no suppression). Authentication failures (EAUTH) are our own
 * configuration, which an operator can fix: temporary, retried up to the horizon. So is a refused
 * required STARTTLS (ETLS: misconfigured, or stripped on the path): never sent in plaintext.
 */
export function classifySmtpError(err: unknown): MailDeliveryError {
  if (err instanceof MailDeliveryError) return err;
  const e = (err ?? {}) as { code?: string; responseCode?: number; command?: string; message?: string; response?: string };
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const reply = scrubAddresses((e.response ?? e.message ?? 'unknown error').split('\n')[0]!.slice(0, 200));
  const where = e.command ? ` at ${e.command}` : '';
  if (code !== undefined && code >= 500 && code < 600 && e.code !== 'EAUTH' && e.code !== 'ETLS') {
    const recipientRejected = e.command === 'RCPT TO' || e.command === 'DATA';
    return new MailDeliveryError('permanent', `SMTP ${code}${where}: ${reply}`, { responseCode: code, recipientRejected, cause: err });
  }
  const kind = code !== undefined ? `SMTP ${code}${where}` : `${e.code ?? 'error'}${where}`;
  return new MailDeliveryError('temporary', `${kind}: ${reply}`, { responseCode: code, cause: err });
}

