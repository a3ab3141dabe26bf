import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { createTestCa, type IssuedCertificate, type TestCertificateAuthority } from '@vanish/testkit/tls';
import { SmtpMailTransport } from '../src/adapters/mail/smtp-mail-transport';
import type { OutgoingEmail } from '../src/domain/mail-transport';

/**
 * SMTP over TLS against a real smtp-server (the testkit sink) with a certificate from a throwaway
 * CA: smtps:// (TLS from the first byte) and smtp://…?starttls=required (nodemailer requireTLS).
 */
describe('SMTP over TLS (smtp-server with a throwaway CA)', () => {
  let ca: TestCertificateAuthority;
  let otherCa: TestCertificateAuthority;
  let certificate: IssuedCertificate;
  const sinks: SmtpSink[] = [];
  const transports: SmtpMailTransport[] = [];

  const email = (n: number): OutgoingEmail => ({
    messageId: `<tls-${n}@vanish.test>`, from: 'notes@vanish.test', to: 'reader@example.com',
    subject: `over TLS ${n}`, text: 'hello', html: '<p>hello</p>', headers: {},
  });
  const sink = async (tls?: 'implicit' | 'starttls') => {
    const started = await startSmtpSink(tls ? { tls: { mode: tls, cert: certificate.cert, key: certificate.key } } : {});
    sinks.push(started);
    return started;
  };
  const transport = (url: string, trusted?: string) => {
    const made = new SmtpMailTransport({ url, ca: trusted, poolSize: 1, timeoutMs: 10_000 });
    transports.push(made);
    return made;
  };

  beforeAll(() => {
    ca = createTestCa('vanish test CA');
    otherCa = createTestCa('someone else');
    certificate = ca.issue('localhost', { dns: ['localhost'], ip: ['127.0.0.1'] });
  });

  afterAll(async () => {
    for (const made of transports) await made.close();
    for (const started of sinks) await started.close();
    ca?.remove();
    otherCa?.remove();
  });

  it('when SMTP_URL is smtps:// and SMTP_TLS_CA the server\'s CA, then the e-mail arrives over TLS', async () => {
    const server = await sink('implicit');
    expect(server.url).toMatch(/^smtps:/);
    await transport(server.url, ca.ca).send(email(1));
    const [received] = await server.waitForMessages(1);
    expect(received).toMatchObject({ secure: true, to: ['reader@example.com'] });
  });

  it('when SMTP_URL is smtp:// with starttls=required, then the connection is upgraded before the e-mail is sent', async () => {
    const server = await sink('starttls');
    await transport(`${server.url}?starttls=required`, ca.ca).send(email(2));
    const [received] = await server.waitForMessages(1);
    expect(received).toMatchObject({ secure: true });
  });

  it('when the server\'s certificate does not chain to SMTP_TLS_CA, then nothing is sent (a temporary failure, retried later)', async () => {
    const server = await sink('implicit');
    await expect(transport(server.url, otherCa.ca).send(email(3))).rejects.toMatchObject({ kind: 'temporary', message: expect.stringMatching(/self[- ]signed|unable to (verify|get)|certificate/i) });
    const upgraded = await sink('starttls');
    await expect(transport(`${upgraded.url}?starttls=required`, otherCa.ca).send(email(4))).rejects.toMatchObject({ kind: 'temporary' });
    expect(server.messages.length + upgraded.messages.length).toBe(0);
  });

  it('when STARTTLS is required and the server does not offer it (stripped), then nothing is sent in plaintext', async () => {
    const plain = await sink();
    await expect(transport(`${plain.url}?starttls=required`, ca.ca).send(email(5))).rejects.toMatchObject({ kind: 'temporary' });
    expect(plain.messages).toHaveLength(0);
  });
});
