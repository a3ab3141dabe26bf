import { Counter, Gauge, type Registry } from '@vanish/common';
import { LIMITED_ACTIONS } from './domain/limit-policy';

export interface GatewayMetrics {
  rateLimited: Counter<'action'>;
  limiterFallback: Counter<'action'>;
  upstreamErrors: Counter<'upstream' | 'code'>;
  sharedReadJoins: Counter<'upstream'>;
  /** DECISIONS 14: bytes of files relayed, upload (client to notes) and download (notes to client). */
  fileBytes: Counter<'direction'>;
}

/** The gateway's own metrics on the injected registry (the HTTP histogram comes from common). */
export function createGatewayMetrics(registry: Registry, storeHealthy: () => boolean): GatewayMetrics {
  const rateLimited = new Counter({
    name: 'gateway_rate_limited_total',
    help: 'Requests refused with 429, by limited action',
    labelNames: ['action'] as const,
    registers: [registry],
  });
  const limiterFallback = new Counter({
    name: 'gateway_limiter_fallback_total',
    help: 'Limit decisions answered from process memory because Redis was unreachable or slow',
    labelNames: ['action'] as const,
    registers: [registry],
  });
  for (const action of LIMITED_ACTIONS) {
    rateLimited.inc({ action }, 0);
    limiterFallback.inc({ action }, 0);
  }
  new Gauge({
    name: 'gateway_limiter_store_up',
    help: '1 while the shared limiter store (Redis) answers, 0 while limits come from memory',
    registers: [registry],
    collect() {
      this.set(storeHealthy() ? 1 : 0);
    },
  });
  const upstreamErrors = new Counter({
    name: 'gateway_upstream_errors_total',
    help: 'Requests the gateway answered 502/504 because an upstream failed',
    labelNames: ['upstream', 'code'] as const,
    registers: [registry],
  });
  const sharedReadJoins = new Counter({
    name: 'gateway_shared_read_joins_total',
    help: 'GETs answered from an upstream read that another request had asked for (routes whose answer is everyone\'s)',
    labelNames: ['upstream'] as const,
    registers: [registry],
  });
  const fileBytes = new Counter({
    name: 'gateway_file_bytes_total',
    help: 'Bytes of files relayed on /files/*, by direction (upload: client to notes; download: notes to client)',
    labelNames: ['direction'] as const,
    registers: [registry],
  });
  fileBytes.inc({ direction: 'upload' }, 0);
  fileBytes.inc({ direction: 'download' }, 0);
  return { rateLimited, limiterFallback, upstreamErrors, sharedReadJoins, fileBytes };
}
