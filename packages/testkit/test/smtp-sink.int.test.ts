import nodemailer from 'nodemailer';
import net from 'node:net';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';

function transport(sink: SmtpSink) {
  // host/port rather than { url }: nodemailer ignores the timeouts given beside a url.
  return nodemailer.createTransport({ host: '127.0.0.1', port: sink.port, connectionTimeout: 1000, greetingTimeout: 500, socketTimeout: 2000 });
}

const mail = (n: number) => ({ from: 'notes@localhost', to: `user${n}@example.com`, subject: `subject ${n}`, text: `body ${n}` });

describe('SMTP sink', () => {
  let sink: SmtpSink;
  beforeEach(async () => {
    sink = await startSmtpSink();
  });
  afterEach(async () => {
    await sink.close();
  });

  it('when a message is sent, then it is collected with envelope and parsed content', async () => {
    await transport(sink).sendMail(mail(1));
    const [message] = await sink.waitForMessages(1);
    expect(message.from).toBe('notes@localhost');
    expect(message.to).toEqual(['user1@example.com']);
    expect(message.parsed.subject).toBe('subject 1');
    expect(message.parsed.text?.trim()).toBe('body 1');
  });

  it('when told to fail the next two with 451 and one with 550, then those are refused with those codes and the next accepted', async () => {
    sink.failNext(2, 451);
    sink.failNext(1, 550);
    const codes: Array<number | undefined> = [];
    for (let i = 0; i < 3; i++) {
      const error = await transport(sink).sendMail(mail(i)).then(() => undefined, (err: { responseCode?: number }) => err);
      codes.push(error?.responseCode);
    }
    expect(codes).toEqual([451, 451, 550]);
    await transport(sink).sendMail(mail(9));
    expect(sink.messages.map((m) => m.parsed.subject)).toEqual(['subject 9']);
  });

  it('when down, then connections are refused; when back, then mail is accepted on the same port', async () => {
    const port = sink.port;
    sink.goDown();
    await expect(transport(sink).sendMail(mail(1))).rejects.toMatchObject({ code: 'ESOCKET' });
    sink.comeBack();
    await transport(sink).sendMail(mail(2));
    expect(sink.port).toBe(port);
    expect(sink.messages).toHaveLength(1);
  });

  it('when told never to greet, then a connection is accepted but no 220 comes, and the client times out', async () => {
    sink.neverGreet();
    const socket = net.connect({ host: '127.0.0.1', port: sink.port });
    let received = '';
    socket.on('data', (chunk) => { received += chunk.toString(); });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received).toBe('');
    socket.destroy();
    await expect(transport(sink).sendMail(mail(1))).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    sink.comeBack();
    await transport(sink).sendMail(mail(3));
    expect(sink.messages).toHaveLength(1);
  });
});
