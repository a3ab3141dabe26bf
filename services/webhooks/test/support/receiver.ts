import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  payload: { event: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

export type ReceiverMode = { kind: 'ok' } | { kind: 'status'; status: number } | { kind: 'stall' } | { kind: 'late'; delayMs: number };

/**
 * A webhook receiver on loopback for tests: records every request, answers per its mode, and can
 * go down and come back on the same port. `stall` holds the connection open without answering;
 * `late` answers 204, but only after `delayMs`.
 */
export async function startReceiver(port = 0) {
  const received: Received[] = [];
  const held = new Set<ServerResponse>();
  let mode: ReceiverMode = { kind: 'ok' };
  let connections = 0;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body,
        payload: JSON.parse(body) as Received['payload'],
        at: Date.now(),
      });
      if (mode.kind === 'stall') {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      if (mode.kind === 'late') {
        held.add(res);
        res.on('close', () => held.delete(res));
        setTimeout(() => { res.statusCode = 204; res.end(); }, mode.delayMs);
        return;
      }
      res.statusCode = mode.kind === 'status' ? mode.status : 204;
      res.end();
    });
  };
  let server = http.createServer(handler);
  server.on('connection', () => { connections += 1; });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const boundPort = (server.address() as AddressInfo).port;

  const close = async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  return {
    port: boundPort,
    url: (path = '/hook') => `http://127.0.0.1:${boundPort}${path}`,
    received,
    get connections() { return connections; },
    get heldOpen() { return held.size; },
    setMode(next: ReceiverMode) { mode = next; },
    /** Stops listening (connections refused) until up() is called. */
    down: close,
    async up() {
      server = http.createServer(handler);
      server.on('connection', () => { connections += 1; });
      await new Promise<void>((resolve) => server.listen(boundPort, '127.0.0.1', resolve));
    },
    close,
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * Standard Webhooks verification written out here, independent of the library the service signs
 * with: HMAC-SHA256 under the base64 key after `whsec_`, over `id.timestamp.body`.
 */
export function verifySignature(secret: string, received: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${received.id}.${received.timestamp}.${received.body}`).digest();
  return received.signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
