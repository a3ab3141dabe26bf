import net from 'node:net';

export interface FaultProxyOptions {
  targetHost: string;
  targetPort: number;
  /** Port to listen on (127.0.0.1); 0 or unset picks a free one. */
  listenPort?: number;
}

export interface FaultProxy {
  /** The port the proxy listens on (stays the same across cut/restore). */
  port: number;
  /** Bytes received from clients so far (to cut an upload at a given point). */
  readonly bytesFromClients: number;
  /** Destroy every open connection (RST) and refuse new ones (ECONNREFUSED) until restore(). */
  cut(): void;
  /** Forward again: listen again after a cut, resume held connections after a stall. */
  restore(): void;
  /** Accept and hold connections, forwarding nothing either way, including already-open ones. */
  stall(): void;
  /**
   * Hold only the connections open now (nothing forwarded either way, as stall()); new ones are
   * forwarded as usual. restore() resumes the held ones with their buffered bytes.
   */
  stallOpenConnections(): void;
  /**
   * Send new connections to another server; open ones stay on the old one until they end. Stands in
   * for a writer address (a VIP, a proxy, a cloud's writer endpoint) that a failover repoints.
   */
  retarget(targetHost: string, targetPort: number): void;
  /** Destroy every connection and stop listening. */
  close(): Promise<void>;
}

type Mode = 'open' | 'cut' | 'stall' | 'closed';

interface Link {
  client: net.Socket;
  upstream?: net.Socket;
  piped: boolean;
}

/**
 * A TCP proxy for fault tests: put it between a service and MariaDB, Redis, RabbitMQ or SMTP,
 * then cut, stall and restore the wire while the service runs.
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const links = new Set<Link>();
  let mode: Mode = 'open';
  let target = { host: options.targetHost, port: options.targetPort };
  let server: net.Server;
  let port = options.listenPort ?? 0;
  let listening: Promise<void> = Promise.resolve();
  let fromClients = 0;

  const drop = (link: Link): void => {
    links.delete(link);
    hardClose(link.client);
    if (link.upstream) hardClose(link.upstream);
  };

  const connectUpstream = (link: Link): void => {
    const upstream = net.connect(target);
    link.upstream = upstream;
    upstream.on('error', () => drop(link));
    upstream.on('close', () => drop(link));
  };

  const pipe = (link: Link): void => {
    if (link.piped || !link.upstream) return;
    link.piped = true;
    link.client.pipe(link.upstream);
    link.upstream.pipe(link.client);
  };

  const hold = (link: Link): void => {
    if (link.piped && link.upstream) {
      link.client.unpipe(link.upstream);
      link.upstream.unpipe(link.client);
      link.piped = false;
    }
    link.client.pause();
    link.upstream?.pause();
  };

  const onConnection = (client: net.Socket): void => {
    if (mode === 'cut' || mode === 'closed') {
      hardClose(client);
      return;
    }
    const link: Link = { client, piped: false };
    links.add(link);
    client.on('error', () => drop(link));
    client.on('close', () => drop(link));
    client.on('data', (chunk: Buffer) => { fromClients += chunk.length; });
    if (mode === 'stall') {
      client.pause();
      return;
    }
    connectUpstream(link);
    pipe(link);
  };

  const listen = (): Promise<void> => {
    server = net.createServer({ pauseOnConnect: false }, onConnection);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host: '127.0.0.1' }, () => {
        server.off('error', reject);
        port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  };

  const relisten = (): void => {
    // Binds on the next tick: before any connect issued after this call (also next-tick).
    listening = listen().catch((err: Error) => {
      process.emitWarning(`fault proxy could not listen again on ${port}: ${err.message}`);
    });
  };

  await listen();

  const proxy: FaultProxy = {
    get port() {
      return port;
    },
    get bytesFromClients() {
      return fromClients;
    },
    cut() {
      if (mode === 'closed') return;
      mode = 'cut';
      server.close();
      for (const link of [...links]) drop(link);
    },
    restore() {
      if (mode === 'closed') return;
      const was = mode;
      mode = 'open';
      if (was === 'cut') {
        relisten();
        return;
      }
      for (const link of links) {
        if (!link.upstream) connectUpstream(link);
        pipe(link);
      }
    },
    stallOpenConnections() {
      if (mode !== 'open') return;
      for (const link of links) hold(link);
    },
    stall() {
      if (mode === 'closed') return;
      if (mode === 'cut') {
        mode = 'stall';
        relisten();
        return;
      }
      mode = 'stall';
      for (const link of links) hold(link);
    },
    retarget(targetHost, targetPort) {
      target = { host: targetHost, port: targetPort };
    },
    async close() {
      mode = 'closed';
      for (const link of [...links]) drop(link);
      await listening;
      if (!server.listening) return;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}

/**
 * Closes a socket with an RST where it may. Exported for its test.
 *
 * Not after end(): the proxy ends one side when the other side ended (pipe), and libuv refuses to
 * reset a socket whose shutdown is still pending (uv_tcp_close_reset answers EINVAL while the peer
 * is not reading, e.g. during a stall). Node then marks the handle closing without ever closing
 * it, and the process spins in its exit clean-up forever (`npm run test:resilience` without
 * --forceExit never exited, busy in node::Environment::CleanupHandles). Such a socket is destroyed.
 */
export function hardClose(socket: net.Socket): void {
  if (socket.destroyed) return;
  // RST rather than FIN: the peer notices at once, as when a network path dies.
  if (typeof socket.resetAndDestroy === 'function' && socket.readyState !== 'opening' && !socket.writableEnded) socket.resetAndDestroy();
  else socket.destroy();
}
