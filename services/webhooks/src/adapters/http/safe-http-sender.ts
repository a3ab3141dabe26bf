import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { hostOf, isForbiddenAddress } from '@vanish/common';
import type { SendResult, WebhookRequest, WebhookSender } from '../../domain/ports';

export interface SafeHttpSenderOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS (tests, laptops): private addresses are allowed. */
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
}

/** A target refused before any connection (forbidden address, unresolvable name). */
export class RefusedTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedTargetError';
  }
}

/**
 * POSTs a webhook with SSRF protection (DECISIONS 11): a literal address is checked as it is; a
 * name is resolved by our own lookup, which refuses the whole answer when any address is forbidden
 * and hands the socket exactly the address it checked, so no second resolution (DNS rebinding) can
 * change the target. No redirects are followed (node:http never does), the whole exchange has a
 * deadline, and at most maxResponseBytes of the answer are read.
 */
export class SafeHttpSender implements WebhookSender {
  constructor(private readonly options: SafeHttpSenderOptions) {}

  async send(request: WebhookRequest): Promise<SendResult> {
    const url = new URL(request.url);
    const host = hostOf(url);
    if (isIP(host) && !this.options.allowPrivateNetworks && isForbiddenAddress(host)) {
      throw new RefusedTargetError('the target address is not public');
    }
    const client = url.protocol === 'https:' ? https : http;
    const started = process.hrtime.bigint();
    return new Promise<SendResult>((resolve, reject) => {
      const req = client.request(url, {
        method: 'POST',
        agent: false,
        lookup: this.checkedLookup(),
        headers: { 'content-type': 'application/json', 'user-agent': 'vanish-webhooks/1', ...request.headers, 'content-length': Buffer.byteLength(request.body) },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      }, (res) => {
        let read = 0;
        const finish = () => resolve({ status: res.statusCode ?? 0, durationMs: Number(process.hrtime.bigint() - started) / 1e6 });
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // The status is all we need; a receiver that streams forever is cut here.
          if (read > this.options.maxResponseBytes) { res.destroy(); finish(); }
        });
        res.on('end', finish);
        res.on('error', () => finish());
      });
      req.on('error', (err) => reject(err));
      req.end(request.body);
    });
  }

  private checkedLookup(): LookupFunction {
    const allowPrivate = this.options.allowPrivateNetworks;
    return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses: LookupAddress[]) => {
        if (err) { callback(err); return; }
        if (addresses.length === 0) { callback(new RefusedTargetError('the target host does not resolve')); return; }
        if (!allowPrivate && addresses.some((entry) => isForbiddenAddress(entry.address))) {
          callback(new RefusedTargetError('the target host resolves to an address that is not public'));
          return;
        }
        if (options?.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    }) as unknown as LookupFunction;
  }
}
