import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  bodyBytes: number;
  body: Buffer;
  /** The client port of the connection it came on: requests with the same one shared a connection. */
  connection: number | undefined;
}

export type UpstreamMode = 'ok' | 'slow' | 'hang' | 'html-500' | 'shaped-503' | 'stack-500' | 'stalled-503' | 'stalled-200' | 'repeated-headers' | 'repeated-retry-after-503' | 'own-headers';

/**
 * A trivial HTTP server standing in for notes, stats or mailer in component tests (a real
 * server on a real port, not a mock of our code). It records what reached it, can hang, answer
 * 5xx, and be stopped and started again on the same port.
 */
export class TestUpstream {
  readonly seen: SeenRequest[] = [];
  /** Requests whose connection closed before this server answered them (the gateway cancelled them). */
  abandoned = 0;
  mode: UpstreamMode = 'ok';
  /** Connections its port accepted (none when the gateway hands requests over in process). */
  connections = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly name: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** This upstream's request listener, for a gateway that calls it in process (InProcessDispatcher). */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => this.handle(req, res);

  /** Whether it is listening (a stopped upstream is not served in process either). */
  get running(): boolean {
    return this.server !== undefined;
  }

  async start(): Promise<this> {
    const server = createServer(this.listener);
    server.keepAliveTimeout = 5000;
    server.on('connection', (socket) => {
      this.connections += 1;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    res.on('close', () => {
      if (!res.writableFinished) this.abandoned += 1;
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      this.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyBytes: body.length, body, connection: req.socket.remotePort });
      switch (this.mode) {
        case 'hang':
          return;
        case 'slow':
          {
            // Which request of this server's this answer is for: tells apart answers of shared reads.
            const sequence = this.seen.length;
            setTimeout(() => {
              res.writeHead(200, { 'Content-Type': 'application/json' });
              res.end(JSON.stringify({ upstream: this.name, slow: true, sequence }));
            }, 400);
          }
          return;
        case 'html-500':
          res.writeHead(500, { 'Content-Type': 'text/html' });
          res.end('<pre>TypeError: boom\n    at Object.handler (/srv/notes/dist/secret.js:12:3)</pre>');
          return;
        case 'stack-500':
          res.writeHead(500, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: 'boom', code: 'INTERNAL_ERROR', details: { parameter: null, message: 'boom' }, stack: 'at secret.js:1:1' }));
          return;
        case 'stalled-503':
          // Headers and half of a shaped body, then nothing: the rest never comes.
          res.writeHead(503, { 'Content-Type': 'application/json' });
          res.write('{"error":"Database down","code":"SERVICE_UNAVAILABLE",');
          return;
        case 'stalled-200':
          // A 200's headers and the first part of its body, then nothing.
          res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '64' });
          res.write('{"upstream":"stalled",');
          return;
        case 'repeated-headers':
          // A header that may appear once, sent twice, and a list header sent twice.
          res.writeHead(200, ['Content-Type', 'application/json', 'Content-Type', 'text/html', 'X-Upstream-Tag', 'one', 'X-Upstream-Tag', 'two']);
          res.end(JSON.stringify({ upstream: this.name }));
          return;
        case 'repeated-retry-after-503':
          res.writeHead(503, ['Content-Type', 'application/json', 'Retry-After', '7', 'Retry-After', '9']);
          res.end(JSON.stringify({ error: 'Database down', code: 'SERVICE_UNAVAILABLE', details: { parameter: null, message: 'Database down' } }));
          return;
        case 'own-headers':
          // Headers the gateway sets itself, as an upstream might send them too, and a page's own CSP.
          res.writeHead(200, {
            'Content-Type': 'application/json',
            'Content-Security-Policy': "default-src 'none'; img-src 'self'; frame-ancestors 'none'",
            'Cache-Control': 'public, max-age=60',
            'API-Version': '0.0.1',
            'X-Frame-Options': 'SAMEORIGIN',
            'RateLimit-Remaining': '123456',
            'Referrer-Policy': 'unsafe-url',
            Vary: 'Accept-Language',
          });
          res.end(JSON.stringify({ upstream: this.name }));
          return;
        case 'shaped-503':
          res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '7' });
          res.end(JSON.stringify({ error: 'Database down', code: 'SERVICE_UNAVAILABLE', details: { parameter: null, message: 'Database down' } }));
          return;
        default:
          res.writeHead(200, { 'Content-Type': 'application/json', 'X-Powered-By': 'leaky', 'Cache-Control': 'public, max-age=60' });
          res.end(JSON.stringify({ upstream: this.name, method: req.method, bodyBytes: body.length }));
      }
    });
  }
}

/** Stand-ins for the three services a gateway relays to, and the gateway settings that point at them. */
export class TestUpstreams {
  readonly notes = new TestUpstream('notes');
  readonly stats = new TestUpstream('stats');
  readonly mailer = new TestUpstream('mailer');

  get env(): Record<string, string> {
    return { NOTES_URL: this.notes.url, STATS_URL: this.stats.url, MAILER_URL: this.mailer.url };
  }

  /** The gateway's localUpstreams for the in-process runs: each running upstream's listener by its origin. */
  readonly inProcess = (origin: string): ((req: IncomingMessage, res: ServerResponse) => void) | undefined =>
    [this.notes, this.stats, this.mailer].find((upstream) => upstream.running && upstream.url === origin)?.listener;

  async start(): Promise<this> {
    await Promise.all([this.notes.start(), this.stats.start(), this.mailer.start()]);
    return this;
  }

  async stop(): Promise<void> {
    await Promise.all([this.notes.stop(), this.stats.stop(), this.mailer.stop()]);
  }
}
