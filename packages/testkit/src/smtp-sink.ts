import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type net from 'node:net';
import { startFaultProxy, type FaultProxy } from './fault-proxy';

export interface SinkMessage {
  /** Envelope MAIL FROM. */
  from: string;
  /** Envelope RCPT TO. */
  to: string[];
  parsed: ParsedMail;
  raw: Buffer;
  /** True when the message came over TLS (smtps:// or after STARTTLS). */
  secure: boolean;
}

export interface SmtpSink {
  /** Point SMTP_URL at smtp://127.0.0.1:<port>; it stays the same through goDown/comeBack. */
  readonly port: number;
  readonly url: string;
  /** Messages accepted so far, in order. */
  readonly messages: SinkMessage[];
  /** Resolves once at least `count` messages were accepted (bound catches hangs only). */
  waitForMessages(count: number, timeoutMs?: number): Promise<SinkMessage[]>;
  /** Answer the next `count` transactions with this code at MAIL FROM (451 temporary, 550 permanent). */
  failNext(count: number, code: 451 | 550): void;
  /**
   * Take each message (it is in `messages` at once) but send the final 250 only `ms` later, as a slow
   * or busy server does; 0 answers at once again.
   */
  delayDataReplies(ms: number): void;
  /** Connections refused (and open ones dropped) until comeBack(). */
  goDown(): void;
  /** Accept TCP connections but never send the 220 greeting until comeBack(). */
  neverGreet(): void;
  comeBack(): void;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** Public port; 0 or unset picks a free one. */
  port?: number;
  /**
   * TLS with this certificate: `implicit` from the first byte (smtps://), `starttls` offered after
   * EHLO. Unset: plaintext only, STARTTLS not offered.
   */
  tls?: { mode: 'implicit' | 'starttls'; cert: string; key: string };
}

/**
 * A real SMTP server (smtp-server) that collects what it receives, parsed by mailparser, and can be
 * made to fail: 451/550 answers, down, or silent. A fault proxy in front gives down/silent.
 */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  const failures: Array<451 | 550> = [];
  const waiters = new Set<() => void>();
  let dataReplyDelayMs = 0;

  const serverOptions: SMTPServerOptions = {
    secure: options.tls?.mode === 'implicit',
    ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : {}),
    logger: false,
    disabledCommands: options.tls ? [] : ['STARTTLS'],
    authOptional: true,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? 'anonymous' });
    },
    onMailFrom(_address, _session, callback) {
      const code = failures.shift();
      if (code === undefined) return callback();
      const error = new Error(code === 451 ? 'Try again later' : 'Mailbox unavailable') as Error & { responseCode: number };
      error.responseCode = code;
      return callback(error);
    },
    onData(stream, session, callback) {
      if (options.tls && !session.secure) {
        stream.resume();
        stream.on('end', () => callback(Object.assign(new Error('Must issue a STARTTLS command first'), { responseCode: 530 })));
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (err) => callback(err));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw)
          .then((parsed) => {
            const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
            messages.push({ from, to: session.envelope.rcptTo.map((rcpt) => rcpt.address), parsed, raw, secure: session.secure });
            for (const wake of [...waiters]) wake();
            if (dataReplyDelayMs > 0) setTimeout(() => callback(), dataReplyDelayMs);
            else callback();
          })
          .catch((err: Error) => callback(err));
      });
    },
  };
  const server = new SMTPServer(serverOptions);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.on('error', () => undefined);
  const innerPort = ((server as unknown as { server: net.Server }).server.address() as net.AddressInfo).port;
  const proxy: FaultProxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: innerPort, listenPort: options.port });

  return {
    get port() {
      return proxy.port;
    },
    get url() {
      return `${options.tls?.mode === 'implicit' ? 'smtps' : 'smtp'}://127.0.0.1:${proxy.port}`;
    },
    messages,
    waitForMessages(count, timeoutMs = 10_000) {
      if (messages.length >= count) return Promise.resolve(messages.slice());
      return new Promise((resolve, reject) => {
        const wake = () => {
          if (messages.length < count) return;
          waiters.delete(wake);
          clearTimeout(timer);
          resolve(messages.slice());
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`SMTP sink: ${messages.length} of ${count} messages within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(wake);
      });
    },
    failNext(count, code) {
      for (let i = 0; i < count; i++) failures.push(code);
    },
    delayDataReplies(ms) {
      dataReplyDelayMs = ms;
    },
    goDown() {
      proxy.cut();
    },
    neverGreet() {
      proxy.stall();
    },
    comeBack() {
      proxy.restore();
    },
    async close() {
      await proxy.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
