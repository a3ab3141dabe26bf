import express, { type RequestHandler } from 'express';
import { type Logger, type Registry } from '@vanish/common';
import type { RateLimiter } from '../domain/rate-limiter';
import type { GatewayMetrics } from '../gateway-metrics';
import { type UpstreamName } from './route-table';
export interface GatewayAppOptions {
    trustProxy: boolean | number | string;
    corsOrigins: readonly string[];
    requireHttps: boolean;
    publicBaseUrl: string | undefined;
    limiterKey: Buffer;
    limiter: RateLimiter;
    proxies: Readonly<Record<UpstreamName, RequestHandler>>;
    /** Per upstream, the relay of GETs that share reads (routes marked sharedRead). */
    sharedReads: Readonly<Record<UpstreamName, RequestHandler>>;
    logger: Logger;
    registry: Registry;
    metrics: GatewayMetrics;
    isDraining: () => boolean;
}
/**
 * The public door, in the order a request meets it: request id and access log; route lookup
 * (unknown /api paths answer 404 here); DECISIONS 8 headers; HTTPS; CORS; methods (OPTIONS 204,
 * others 405 with Allow); the per-client limit; the body limits; the relay (shared for the GETs of
 * routes whose answer is everyone's). Every refusal is
 * answered by the gateway itself in the SPEC 7 error shape.
 */
export declare function createGatewayApp(options: GatewayAppOptions): express.Express;
