import net from 'node:net';
import { hardClose, startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { requireService } from '@vanish/testkit/services';

/** A line-echo server: every chunk it receives it sends back, after a greeting of its own (if any). */
async function startEchoServer(greeting = ''): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (greeting) socket.write(greeting);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A client that collects what it receives and remembers how it ended. */
class Client {
  received = '';
  error: NodeJS.ErrnoException | undefined;
  closed = false;
  private constructor(readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => { this.received += chunk; });
    socket.on('error', (err) => { this.error = err; });
    socket.on('close', () => { this.closed = true; });
  }

  static connect(port: number): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => resolve(new Client(socket)));
      socket.once('error', reject);
    });
  }

  /** Waits up to `ms` for the text to arrive; false when it did not. */
  async receives(text: string, ms = 3000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (this.received.includes(text)) return true;
      if (this.closed) return false;
      await sleep(10);
    }
    return this.received.includes(text);
  }

  async ends(ms = 3000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline && !this.closed) await sleep(10);
    return this.closed;
  }

  destroy(): void { this.socket.destroy(); }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function connectError(port: number): Promise<string | undefined> {
  try {
    const client = await Client.connect(port);
    // Accepted: see whether it is dropped at once.
    const dropped = await client.ends(300);
    client.destroy();
    return dropped ? 'dropped' : undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
}

describe('fault proxy (against an echo server)', () => {
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  let proxy: FaultProxy;
  const clients: Client[] = [];
  const connect = async () => {
    const client = await Client.connect(proxy.port);
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    echo = await startEchoServer();
    proxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: echo.port });
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) client.destroy();
    await proxy.close();
    await echo.close();
  });

  it('when open, then bytes go both ways', async () => {
    const client = await connect();
    client.socket.write('hello\n');
    expect(await client.receives('hello\n')).toBe(true);
  });

  it('when retargeted, then new connections reach the new server while open ones stay on the old one', async () => {
    const other = await startEchoServer('other server\n');
    try {
      const open = await connect();
      proxy.retarget('127.0.0.1', other.port);
      const fresh = await connect();
      expect(await fresh.receives('other server\n')).toBe(true);
      open.socket.write('still here\n');
      expect(await open.receives('still here\n')).toBe(true);
      expect(open.received).not.toContain('other server');
    } finally {
      await other.close();
    }
  });

  it('when cut, then open connections are destroyed and new ones refused; after restore they work again', async () => {
    const open = await connect();
    open.socket.write('one\n');
    expect(await open.receives('one\n')).toBe(true);

    proxy.cut();
    expect(await open.ends()).toBe(true);
    expect(await connectError(proxy.port)).toBe('ECONNREFUSED');

    proxy.restore();
    const again = await connect();
    again.socket.write('two\n');
    expect(await again.receives('two\n')).toBe(true);
  });

  it('when stalled, then open and new connections are held and forward nothing; after restore the held bytes arrive', async () => {
    const open = await connect();
    open.socket.write('before\n');
    expect(await open.receives('before\n')).toBe(true);

    proxy.stall();
    open.socket.write('during\n');
    const fresh = await connect();
    fresh.socket.write('fresh\n');
    expect(await open.receives('during\n', 400)).toBe(false);
    expect(await fresh.receives('fresh\n', 100)).toBe(false);
    expect(open.closed || fresh.closed).toBe(false);

    proxy.restore();
    expect(await open.receives('during\n')).toBe(true);
    expect(await fresh.receives('fresh\n')).toBe(true);
  });

  it('when only the open connections are stalled, then they forward nothing while new ones flow; after restore the held bytes arrive', async () => {
    const open = await connect();
    open.socket.write('before\n');
    expect(await open.receives('before\n')).toBe(true);

    proxy.stallOpenConnections();
    open.socket.write('during\n');
    const fresh = await connect();
    fresh.socket.write('fresh\n');
    expect(await fresh.receives('fresh\n')).toBe(true);
    expect(await open.receives('during\n', 400)).toBe(false);
    expect(open.closed).toBe(false);

    proxy.restore();
    expect(await open.receives('during\n')).toBe(true);
  });

  it('when cut while stalled, then the held connections are destroyed', async () => {
    proxy.stall();
    const held = await connect();
    proxy.cut();
    expect(await held.ends()).toBe(true);
    proxy.restore();
    const again = await connect();
    again.socket.write('x\n');
    expect(await again.receives('x\n')).toBe(true);
  });

  it('when the target is down, then the client connection is closed rather than hung', async () => {
    await echo.close();
    const client = await connect();
    expect(await client.ends()).toBe(true);
  });

  it('when closed, then the port refuses connections', async () => {
    const { port } = proxy;
    await proxy.close();
    expect(await connectError(port)).toBe('ECONNREFUSED');
  });

  it('when given a listenPort, then it listens there, also after a cut and restore', async () => {
    const other = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: echo.port, listenPort: 0 });
    const port = other.port;
    await other.close();
    const fixed = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: echo.port, listenPort: port });
    try {
      expect(fixed.port).toBe(port);
      fixed.cut();
      fixed.restore();
      expect(fixed.port).toBe(port);
      const client = await Client.connect(port);
      clients.push(client);
      client.socket.write('fixed\n');
      expect(await client.receives('fixed\n')).toBe(true);
    } finally {
      await fixed.close();
    }
  });
});

describe('fault proxy (against the real Redis)', () => {
  let proxy: FaultProxy;

  beforeAll(async () => {
    await requireService('redis');
  });

  beforeEach(async () => {
    proxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 6379 });
  });

  afterEach(async () => {
    await proxy.close();
  });

  it('when open, then PING answers PONG; when cut, the connection dies; after restore a new one answers', async () => {
    const client = await Client.connect(proxy.port);
    client.socket.write('PING\r\n');
    expect(await client.receives('+PONG\r\n')).toBe(true);

    proxy.cut();
    expect(await client.ends()).toBe(true);
    expect(await connectError(proxy.port)).toBe('ECONNREFUSED');

    proxy.restore();
    const again = await Client.connect(proxy.port);
    again.socket.write('PING\r\n');
    expect(await again.receives('+PONG\r\n')).toBe(true);
    again.destroy();
  });

  it('when stalled, then a PING gets no answer until restore', async () => {
    const client = await Client.connect(proxy.port);
    proxy.stall();
    client.socket.write('PING\r\n');
    expect(await client.receives('+PONG', 400)).toBe(false);
    proxy.restore();
    expect(await client.receives('+PONG\r\n')).toBe(true);
    client.destroy();
  });
});

describe('fault proxy hard close', () => {
  it('when a connection is cut right after one side ended (its shutdown still pending), then the socket really closes, so the process can exit', async () => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.resume();
    });
    await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, () => resolve()));
    try {
      const socket = net.connect({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port });
      const errors: string[] = [];
      socket.on('error', (err: NodeJS.ErrnoException) => errors.push(`${err.syscall} ${err.code}`));
      await new Promise((resolve) => socket.once('connect', resolve));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      // end() asks for the shutdown a tick later; cut between that and the loop's next turn, as the
      // proxy does when the peer does not read (the shutdown then stays pending for good).
      socket.end();
      await new Promise((resolve) => process.nextTick(resolve));
      await new Promise((resolve) => process.nextTick(resolve));
      hardClose(socket);
      const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('never closed'), 10_000))]);
      expect({ outcome, errors }).toEqual({ outcome: 'closed', errors: [] });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 30_000);
});
