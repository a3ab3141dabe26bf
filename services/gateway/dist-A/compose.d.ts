import type { Express } from 'express';
import { type Logger, type Registry } from '@vanish/common';
import type { GatewayConfig } from './config';
import type { RateLimiter } from './domain/rate-limiter';
import { type GatewayMetrics } from './gateway-metrics';
import { CertificateReloader } from './tls/certificate-reloader';
export interface GatewayOverrides {
    logger?: Logger;
    registry?: Registry;
    /** A limiter to use instead of the one REDIS_URL selects (tests, all-in-one). */
    limiter?: RateLimiter;
    /** Accepted for the common module contract; the gateway publishes and consumes nothing. */
    bus?: unknown;
}
export interface GatewayService {
    app: Express;
    registry: Registry;
    limiter: RateLimiter;
    metrics: GatewayMetrics;
    start(): Promise<{
        port: number;
        adminPort: number;
    }>;
    stop(): Promise<void>;
    /** With TLS_CERT_FILE/TLS_KEY_FILE, once started: what renews the listener's certificate. */
    readonly certificates: CertificateReloader | undefined;
}
/**
 * The composition root: picks the limiter from config (Redis when REDIS_URL, REDIS_SENTINELS or
 * REDIS_CLUSTER_NODES is set, memory otherwise), builds one keep-alive agent and a proxy per
 * upstream, and owns start and stop.
 */
export declare function createGatewayService(config: Readonly<GatewayConfig>, overrides?: GatewayOverrides): Promise<GatewayService>;
