import { Counter, type Registry } from '@vanish/common';
export interface GatewayMetrics {
    rateLimited: Counter<'action'>;
    limiterFallback: Counter<'action'>;
    upstreamErrors: Counter<'upstream' | 'code'>;
    sharedReadJoins: Counter<'upstream'>;
}
/** The gateway's own metrics on the injected registry (the HTTP histogram comes from common). */
export declare function createGatewayMetrics(registry: Registry, storeHealthy: () => boolean): GatewayMetrics;
