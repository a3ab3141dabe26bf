import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { Readable } from 'node:stream';
// nodemailer's own DATA stream: it escapes dots and writes the end marker from _flush, a tick after the body.
import DataStream from 'nodemailer/lib/smtp-connection/data-stream';
import { coalesceWritesPerTurn } from './smtp-mail-transport';

describe('coalesceWritesPerTurn', () => {
  let server: Server;
  let received: Buffer[];
  let open: Socket[];

  beforeEach(async () => {
    received = [];
    open = [];
    server = createServer((peer) => { open.push(peer); peer.on('data', (chunk: Buffer) => received.push(chunk)); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    for (const socket of open) socket.destroy(); // a failed expectation must not leave the server waiting
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function connected(): Promise<Socket> {
    const socket = connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', noDelay: true });
    open.push(socket);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    return socket;
  }

  /** Counts what reaches the kernel: one _write or _writev call is one send. */
  function countSends(socket: Socket): { sends: number[] } {
    const counted = { sends: [] as number[] };
    const internals = socket as unknown as { _write: (...a: unknown[]) => void; _writev: (chunks: unknown[], cb: unknown) => void };
    const write = internals._write.bind(socket);
    const writev = internals._writev.bind(socket);
    internals._write = (...args: unknown[]) => { counted.sends.push(1); write(...args); };
    internals._writev = (chunks: unknown[], cb: unknown) => { counted.sends.push(chunks.length); writev(chunks, cb); };
    return counted;
  }

  it('when three writes happen in one tick, then they reach the socket as one send, and a write of a later tick is not held', async () => {
    const socket = await connected();
    coalesceWritesPerTurn(socket);
    const counted = countSends(socket);
    socket.write('MAIL FROM:<a@example.com>\r\n');
    socket.write('chunk one\r\n');
    socket.write('.\r\n');
    expect(counted.sends).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted.sends).toEqual([3]);
    socket.write('QUIT\r\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted.sends).toEqual([3, 1]);
    await new Promise<void>((resolve) => socket.end(resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(Buffer.concat(received).toString()).toBe('MAIL FROM:<a@example.com>\r\nchunk one\r\n.\r\nQUIT\r\n');
  });

  it('when a message is piped through nodemailer\'s DATA stream, then its chunks and the end marker written from _flush leave as one send', async () => {
    const socket = await connected();
    coalesceWritesPerTurn(socket);
    const counted = countSends(socket);
    const data = new DataStream();
    data.pipe(socket, { end: false });
    Readable.from([Buffer.from('Subject: hi\r\n\r\n'), Buffer.from('.a line with a dot\r\n'), Buffer.from('bye')]).pipe(data);
    await new Promise((resolve) => data.once('end', resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted.sends.reduce((sum, chunks) => sum + chunks, 0)).toBeGreaterThan(1);
    expect(counted.sends).toHaveLength(1);
    await new Promise<void>((resolve) => socket.end(resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(Buffer.concat(received).toString()).toBe('Subject: hi\r\n\r\n..a line with a dot\r\nbye\r\n.\r\n');
  });

  it('when nothing coalesces, then each write is its own send (what the wrapper changes)', async () => {
    const socket = await connected();
    const counted = countSends(socket);
    socket.write('one\r\n');
    socket.write('two\r\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted.sends.length).toBeGreaterThan(1);
    socket.destroy();
  });
});
